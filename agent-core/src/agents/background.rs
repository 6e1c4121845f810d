//! Subagents running in the background (`task` with `run_in_background`): `bg-N` comes back at
//! once and the child runs on a token of the session, not of the turn, so cancelling the turn
//! does not stop it; `task_stop`, closing the session or exiting does. At most
//! [`MAX_RUNNING`] run together. A finished task's result is delivered once: with the next model
//! request of a running turn, at the start of the next prompt, or to `task_wait`.

use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::tools::ToolOutput;

/// Background tasks running at once, at most.
pub const MAX_RUNNING: usize = 8;

/// A task was not started: [`MAX_RUNNING`] run already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{MAX_RUNNING} background tasks are running already; wait for one (task_wait) or stop one (task_stop) first.")]
pub struct TooManyTasks;

/// Where one background task is.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    Running,
    Finished { text: String, is_error: bool },
    Stopped,
}

struct Entry {
    id: String,
    label: String,
    state: TaskState,
    delivered: bool,
    cancel: CancellationToken,
}

impl Entry {
    /// Its report, now delivered.
    fn deliver(&mut self) -> TaskReport {
        self.delivered = true;
        TaskReport { id: self.id.clone(), label: self.label.clone(), state: self.state.clone() }
    }
}

/// What a delivered task says: its id, label and result.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskReport {
    pub id: String,
    pub label: String,
    pub state: TaskState,
}

impl TaskReport {
    /// The notification the model reads.
    pub fn notification(&self) -> crate::llm::Note {
        let (status, text) = match &self.state {
            TaskState::Finished { text, is_error: false } => ("completed", text.as_str()),
            TaskState::Finished { text, is_error: true } => ("failed", text.as_str()),
            TaskState::Stopped => ("stopped", "It was stopped before it finished."),
            TaskState::Running => ("running", "It is still running."),
        };
        crate::llm::Note::TaskNotification {
            id: self.id.clone(),
            task: self.label.clone(),
            status: status.to_owned(),
            text: text.to_owned(),
        }
    }
}

/// A task that runs: `/tasks` lists them, `/tasks stop ID` and the `task_stop` tool stop one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTask {
    pub id: String,
    pub label: String,
}

/// Why a task was not stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StopTaskError {
    #[error("There is no background task `{0}`.")]
    NoSuchTask(String),
    #[error("The background task `{}` ({}) is not running.", .0.id, .0.label)]
    NotRunning(RunningTask),
}

/// Why a wait for background tasks ended without their reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    #[error("There is no background task `{0}`.")]
    NoSuchTask(String),
    #[error("the session ended")]
    SessionEnded,
    #[error("The wait was cancelled; the tasks go on.")]
    Cancelled,
}

/// The session's background tasks.
pub struct BackgroundTasks {
    entries: Mutex<Vec<Entry>>,
    next: std::sync::atomic::AtomicUsize,
    changed: tokio::sync::watch::Sender<u64>,
    /// The session's token: closing the session stops them all.
    session: CancellationToken,
    /// Where a front end that shows children as sessions of their own takes background
    /// children's events, for as long as they run (the turn that started one may be long over).
    watcher: Mutex<Option<tokio::sync::mpsc::Sender<crate::event::AgentEvent>>>,
}

impl BackgroundTasks {
    pub fn new(session: CancellationToken) -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            next: std::sync::atomic::AtomicUsize::new(1),
            changed: tokio::sync::watch::channel(0).0,
            session,
            watcher: Mutex::new(None),
        }
    }

    /// Sends background children's events (their start, calls, prompts and end) to `events`
    /// from now on, instead of the turn that started them.
    pub fn watch(&self, events: tokio::sync::mpsc::Sender<crate::event::AgentEvent>) {
        *self.watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(events);
    }

    /// The watcher's sender, held weakly: a child's hold does not keep the stream open.
    pub fn watcher(&self) -> Option<tokio::sync::mpsc::WeakSender<crate::event::AgentEvent>> {
        self.watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(tokio::sync::mpsc::Sender::downgrade)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts `run` (given its own token) as `bg-N`; `Err` when [`MAX_RUNNING`] already run.
    pub fn start<F>(
        self: &std::sync::Arc<Self>,
        label: String,
        run: impl FnOnce(CancellationToken) -> F,
    ) -> Result<String, TooManyTasks>
    where
        F: Future<Output = ToolOutput> + Send + 'static,
    {
        let cancel = self.session.child_token();
        let id = {
            let mut entries = self.entries();
            if entries.iter().filter(|entry| entry.state == TaskState::Running).count() >= MAX_RUNNING {
                return Err(TooManyTasks);
            }
            let id = format!("bg-{}", self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            entries.push(Entry {
                id: id.clone(),
                label,
                state: TaskState::Running,
                delivered: false,
                cancel: cancel.clone(),
            });
            id
        };
        let future = run(cancel.clone());
        let tasks = std::sync::Arc::clone(self);
        let finished_id = id.clone();
        tokio::spawn(async move {
            let output = future.await;
            let state = if cancel.is_cancelled() {
                TaskState::Stopped
            } else {
                TaskState::Finished { text: output.text_content(), is_error: output.is_error }
            };
            tasks.set(&finished_id, state);
        });
        Ok(id)
    }

    fn set(&self, id: &str, state: TaskState) {
        if let Some(entry) = self.entries().iter_mut().find(|entry| entry.id == id && entry.state == TaskState::Running)
        {
            entry.state = state;
        }
        self.changed.send_modify(|count| *count += 1);
    }

    /// Stops a running task; which it was, or why not.
    pub fn stop(&self, id: &str) -> Result<RunningTask, StopTaskError> {
        let entries = self.entries();
        let entry =
            entries.iter().find(|entry| entry.id == id).ok_or_else(|| StopTaskError::NoSuchTask(id.to_owned()))?;
        let task = RunningTask { id: entry.id.clone(), label: entry.label.clone() };
        if entry.state != TaskState::Running {
            return Err(StopTaskError::NotRunning(task));
        }
        entry.cancel.cancel();
        Ok(task)
    }

    /// The running tasks.
    pub fn running(&self) -> Vec<RunningTask> {
        self.entries()
            .iter()
            .filter(|entry| entry.state == TaskState::Running)
            .map(|entry| RunningTask { id: entry.id.clone(), label: entry.label.clone() })
            .collect()
    }

    /// Whether a finished task's result was not delivered yet.
    pub fn undelivered(&self) -> bool {
        self.entries().iter().any(|entry| entry.state != TaskState::Running && !entry.delivered)
    }

    /// Changes whenever a task finishes or stops.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Whether any task is running or has a result not delivered yet.
    pub fn pending(&self) -> bool {
        self.entries().iter().any(|entry| entry.state == TaskState::Running || !entry.delivered)
    }

    /// The finished tasks whose results were not delivered yet, now delivered.
    pub fn take_finished(&self) -> Vec<TaskReport> {
        let mut entries = self.entries();
        entries
            .iter_mut()
            .filter(|entry| entry.state != TaskState::Running && !entry.delivered)
            .map(Entry::deliver)
            .collect()
    }

    /// Waits until no task runs (their results stay to be delivered), or `cancel` fires.
    pub async fn settle(&self, cancel: &CancellationToken) {
        let mut changed = self.changed.subscribe();
        while !self.running().is_empty() {
            tokio::select! {
                result = changed.changed() => if result.is_err() { return },
                () = cancel.cancelled() => return,
            }
        }
    }

    /// Waits until the named tasks (all of them, when `ids` is empty) are no longer running, or
    /// `cancel` fires; their reports, delivered now.
    pub async fn wait(&self, ids: &[String], cancel: &CancellationToken) -> Result<Vec<TaskReport>, WaitError> {
        let mut changed = self.changed.subscribe();
        loop {
            {
                let mut entries = self.entries();
                if let Some(unknown) = ids.iter().find(|id| !entries.iter().any(|entry| &entry.id == *id)) {
                    return Err(WaitError::NoSuchTask(unknown.clone()));
                }
                let wanted = |entry: &Entry| ids.is_empty() || ids.contains(&entry.id);
                if !entries.iter().any(|entry| wanted(entry) && entry.state == TaskState::Running) {
                    return Ok(entries
                        .iter_mut()
                        .filter(|entry| wanted(entry) && !(ids.is_empty() && entry.delivered))
                        .map(Entry::deliver)
                        .collect());
                }
            }
            tokio::select! {
                result = changed.changed() => if result.is_err() { return Err(WaitError::SessionEnded) },
                () = cancel.cancelled() => return Err(WaitError::Cancelled),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn tasks_run_apart_are_stopped_one_by_one_and_delivered_once() {
        let session = CancellationToken::new();
        let tasks = Arc::new(BackgroundTasks::new(session.clone()));
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = tasks
            .start("explore: slow".into(), |_| async move {
                let _ = released.await;
                ToolOutput::text("slow result")
            })
            .unwrap();
        let second = tasks.start("explore: stuck".into(), |cancel| async move {
            cancel.cancelled().await;
            ToolOutput::error("cancelled")
        });
        let second = second.unwrap();
        assert_eq!((first.as_str(), second.as_str()), ("bg-1", "bg-2"));
        assert_eq!(tasks.running().len(), 2);
        assert!(tasks.take_finished().is_empty());
        tasks.stop(&second).unwrap();
        let stopped = tasks.wait(std::slice::from_ref(&second), &CancellationToken::new()).await.unwrap();
        assert_eq!(stopped[0].state, TaskState::Stopped);
        assert!(tasks.stop(&second).is_err(), "not running any more");
        release.send(()).unwrap();
        let all = tasks.wait(&[], &CancellationToken::new()).await.unwrap();
        assert_eq!(all.len(), 1, "bg-2 was delivered already: {all:?}");
        assert!(all[0].notification().render().contains("status=\"completed\">\nslow result"));
        assert!(tasks.take_finished().is_empty() && !tasks.pending());
        assert_eq!(
            tasks.wait(&["bg-9".into()], &CancellationToken::new()).await.unwrap_err(),
            WaitError::NoSuchTask("bg-9".into())
        );
    }

    #[tokio::test]
    async fn at_most_eight_run_and_the_session_stops_them() {
        let session = CancellationToken::new();
        let tasks = Arc::new(BackgroundTasks::new(session.clone()));
        for _ in 0..MAX_RUNNING {
            tasks
                .start("t".into(), |cancel| async move {
                    cancel.cancelled().await;
                    ToolOutput::text("")
                })
                .unwrap();
        }
        assert!(tasks.start("one more".into(), |_| async { ToolOutput::text("") }).is_err());
        session.cancel();
        let all = tasks.wait(&[], &CancellationToken::new()).await.unwrap();
        assert!(all.iter().all(|report| report.state == TaskState::Stopped));
    }
}
