//! The chat file's account of a turn: each assistant message as its own paragraph, each tool
//! call as one line with its status (a command with the last lines it printed), a question for
//! the user as a block saying what will happen and where to answer, replaced by the answer once
//! given, and the user's heading again at the end.
//!
//! Tool calls since the last text are the chat's provisional tail: they are rewritten in place
//! as they progress, and become permanent when the model writes again or the turn ends.

use larik_core::event::{Display, PlanStatus, ToolCallView, ToolKind, ToolStatus};

use super::chat::{ChatWriter, Headings};

/// Lines of a command's output the chat keeps; the model sees all of it.
const OUTPUT_LINES: usize = 5;

/// How a tool call ended.
pub struct Finished {
    pub failed: bool,
    pub output: Option<String>,
    pub display: Option<Display>,
}

/// The user's answer to a call's question, as the chat words it.
pub struct Answer {
    /// Once the call has run: "allowed once", "2 of 2 hunks applied, saved".
    pub done: String,
    /// While it runs, if that differs (it may wait on the user again).
    pub meanwhile: Option<String>,
}

impl Answer {
    pub fn new(done: impl Into<String>) -> Self {
        Self { done: done.into(), meanwhile: None }
    }
}

struct Entry {
    view: ToolCallView,
    answer: Option<Answer>,
    /// The question waiting on the user, shown instead of the entry's line.
    question: Option<String>,
    finished: Option<Finished>,
}

pub struct Story {
    writer: ChatWriter,
    headings: Headings,
    entries: Vec<Entry>,
    /// Blank lines that separate the tail from the text before it.
    tail_prefix: Option<String>,
    /// The model is in the middle of a message: its next delta continues the paragraph.
    in_message: bool,
    /// The turn's plan is written (see [`Story::show_plan`]).
    has_plan: bool,
}

impl Story {
    pub fn new(writer: ChatWriter, headings: Headings) -> Self {
        Self { writer, headings, entries: Vec::new(), tail_prefix: None, in_message: false, has_plan: false }
    }

    pub async fn begin(&mut self) {
        let heading = format!("{}{}\n\n", self.blank_line(), self.headings.reply);
        self.writer.push(&heading).await;
    }

    pub async fn text(&mut self, delta: &str) {
        if !self.in_message {
            self.settle().await;
            let separation = self.blank_line();
            self.writer.push(&separation).await;
            self.in_message = true;
        }
        self.writer.push(delta).await;
    }

    pub async fn tool_started(&mut self, view: ToolCallView) {
        self.in_message = false;
        self.entries.push(Entry { view, answer: None, question: None, finished: None });
        self.show_tail().await;
    }

    /// A question about call `id` waits on the user.
    pub async fn question(&mut self, id: &str, block: String) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.view.id == id) {
            entry.question = Some(block);
        }
        self.show_tail().await;
    }

    /// Call `id` moved on: the user's answer (if one was given), or how it ended.
    pub async fn tool_updated(&mut self, id: &str, answer: Option<Answer>, finished: Option<Finished>) {
        if let Some(Display::Plan(plan)) = finished.as_ref().and_then(|finished| finished.display.as_ref()) {
            self.show_plan(&plan_line(plan)).await;
        }
        let Some(entry) = self.entries.iter_mut().find(|entry| entry.view.id == id) else { return };
        entry.question = None;
        if answer.is_some() {
            entry.answer = answer;
        }
        if finished.is_some() {
            entry.finished = finished;
        }
        self.show_tail().await;
    }

    pub async fn end(&mut self) {
        self.settle().await;
        let next = format!("{}{}\n\n", self.blank_line(), self.headings.next);
        self.writer.push(&next).await;
        self.writer.flush().await;
    }

    /// The turn's plan: one line, written where the first plan stood and rewritten there as it
    /// moves on, never a second copy.
    async fn show_plan(&mut self, line: &str) {
        if !self.has_plan {
            self.settle().await;
            let separation = self.blank_line();
            self.writer.push(&separation).await;
            self.has_plan = true;
            self.in_message = false;
        }
        self.writer.set_region(&format!("- Plan: {line}\n")).await;
    }

    /// Makes the tail permanent as it stands.
    async fn settle(&mut self) {
        if !self.entries.is_empty() {
            self.show_tail().await;
            self.entries.clear();
            self.tail_prefix = None;
            self.writer.push("").await;
        }
    }

    async fn show_tail(&mut self) {
        let lines: Vec<String> = self.entries.iter().filter_map(render).collect();
        if lines.is_empty() {
            self.writer.set_tail("").await;
            self.tail_prefix = None;
            return;
        }
        let prefix = match &self.tail_prefix {
            Some(prefix) => prefix.clone(),
            None => {
                // Measured against the permanent text alone, with no tail shown.
                self.writer.set_tail("").await;
                let prefix = self.blank_line();
                self.tail_prefix = Some(prefix.clone());
                prefix
            }
        };
        self.writer.set_tail(&format!("{prefix}{}\n", lines.join("\n"))).await;
    }

    /// What makes the next block start after one blank line.
    fn blank_line(&self) -> String {
        if self.writer.ends_with("\n\n") {
            String::new()
        } else if self.writer.ends_with("\n") {
            "\n".into()
        } else {
            "\n\n".into()
        }
    }
}

/// One tool call as the chat shows it; `None` for calls shown elsewhere (the plan's own tool:
/// the plan has one line of its own, see [`Story::show_plan`]).
fn render(entry: &Entry) -> Option<String> {
    if let Some(question) = &entry.question {
        return Some(question.clone());
    }
    let view = &entry.view;
    if view.name == "todo" {
        return None;
    }
    let mark = match &entry.finished {
        None => "…",
        Some(finished) if finished.failed => "✗",
        Some(_) => "✓",
    };
    let command = (view.kind == ToolKind::Execute).then(|| view.input["command"].as_str()).flatten();
    let label = match command {
        Some(_) => view.input["description"]
            .as_str()
            .filter(|text| !text.trim().is_empty())
            .unwrap_or("Run a command")
            .trim()
            .to_owned(),
        None => view.title.clone(),
    };
    let mut notes = Vec::new();
    if let Some(answer) = &entry.answer {
        let meanwhile = answer.meanwhile.as_ref().filter(|_| entry.finished.is_none());
        notes.push(meanwhile.unwrap_or(&answer.done).clone());
    }
    if let Some(finished) = &entry.finished
        && !finished.failed
        && view.kind == ToolKind::Read
        && let Some(output) = &finished.output
    {
        let count = output.lines().count();
        notes.push(format!("{count} line{}", if count == 1 { "" } else { "s" }));
    }
    let mut line = format!("- {mark} {label}");
    if !notes.is_empty() {
        line.push_str(&format!(" ({})", notes.join(", ")));
    }
    if let Some(command) = command {
        line.push_str(&command_block(command, entry.finished.as_ref()));
    } else if let Some(finished) = entry.finished.as_ref().filter(|finished| finished.failed)
        && let Some(reason) =
            finished.output.as_deref().and_then(|output| output.lines().map(str::trim).find(|line| !line.is_empty()))
    {
        line.push_str(&format!(": {reason}"));
    }
    Some(line)
}

/// The command and, once it ran, the last lines it printed, indented under the list item as
/// plain text (Helix shows a chat file as written: no fences).
fn command_block(command: &str, finished: Option<&Finished>) -> String {
    let mut lines: Vec<String> = command.lines().map(|line| format!("$ {line}")).collect();
    if let Some(finished) = finished {
        let (printed, exit_code) = match &finished.display {
            Some(Display::Command { output, exit_code, .. }) => (output.as_str(), *exit_code),
            _ => (finished.output.as_deref().unwrap_or_default(), None),
        };
        let printed: Vec<&str> = printed.lines().filter(|line| !line.trim().is_empty()).collect();
        if printed.len() > OUTPUT_LINES {
            lines.push(format!("… {} lines before", printed.len() - OUTPUT_LINES));
        }
        lines.extend(printed[printed.len().saturating_sub(OUTPUT_LINES)..].iter().map(|line| (*line).to_owned()));
        if let Some(code) = exit_code.filter(|code| *code != 0) {
            lines.push(format!("exit code {code}"));
        }
    }
    let indented: Vec<String> = lines.iter().map(|line| format!("    {line}")).collect();
    format!("\n{}", indented.join("\n"))
}

fn plan_line(plan: &[larik_core::event::PlanEntry]) -> String {
    let done = plan.iter().filter(|entry| entry.status == PlanStatus::Completed).count();
    let items: Vec<String> = plan
        .iter()
        .map(|entry| {
            let mark = match entry.status {
                PlanStatus::Completed => "✓",
                PlanStatus::InProgress => "◐",
                PlanStatus::Pending => "○",
            };
            format!("{mark} {}", entry.content)
        })
        .collect();
    format!("{done} of {} done: {}", plan.len(), items.join(" · "))
}

/// What a tool call's running status is, as the chat names it.
pub fn finished(status: ToolStatus, output: Option<String>, display: Option<Display>) -> Option<Finished> {
    match status {
        ToolStatus::Completed => Some(Finished { failed: false, output, display }),
        ToolStatus::Failed => Some(Finished { failed: true, output, display }),
        ToolStatus::Pending | ToolStatus::InProgress => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn view(name: &str, kind: ToolKind, title: &str, input: serde_json::Value) -> ToolCallView {
        ToolCallView {
            id: "t1".into(),
            name: name.into(),
            title: title.into(),
            kind,
            input,
            locations: Vec::new(),
            streams_output: false,
            report_only: false,
        }
    }

    fn entry(view: ToolCallView, answer: Option<&str>, finished: Option<Finished>) -> Entry {
        Entry { view, answer: answer.map(Answer::new), question: None, finished }
    }

    #[test]
    fn a_read_is_one_line_with_its_length() {
        let read = view("read", ToolKind::Read, "Read calc.py", json!({"path": "calc.py"}));
        let done = Finished { failed: false, output: Some("1\ta\n2\tb\n3\tc\n".into()), display: None };
        assert_eq!(render(&entry(read.clone(), None, None)).as_deref(), Some("- … Read calc.py"));
        assert_eq!(render(&entry(read, None, Some(done))).as_deref(), Some("- ✓ Read calc.py (3 lines)"));
    }

    #[test]
    fn a_command_shows_its_answer_and_last_lines() {
        let bash = view(
            "bash",
            ToolKind::Execute,
            "Run the tests (`python3 -m unittest`)",
            json!({"command": "python3 -m unittest", "description": "Run the tests"}),
        );
        let printed: String = (1..=7).map(|n| format!("line {n}\n")).collect();
        let display = Display::command("python3 -m unittest".into(), printed, Some(1), None);
        let done = Finished { failed: true, output: None, display: Some(display) };
        let shown = render(&entry(bash, Some("allowed once"), Some(done))).unwrap_or_default();
        assert_eq!(
            shown,
            "- ✗ Run the tests (allowed once)\n    $ python3 -m unittest\n    … 2 lines before\n    line 3\n    line 4\n    line 5\n    line 6\n    line 7\n    exit code 1"
        );
    }

    #[test]
    fn the_plan_is_one_line_and_its_tool_shows_nothing_else() {
        let todo = view("todo", ToolKind::Think, "Plan: 1 of 2 done", json!({}));
        assert_eq!(render(&entry(todo.clone(), None, None)), None);
        let plan = vec![
            larik_core::event::PlanEntry {
                content: "Read".into(),
                status: PlanStatus::Completed,
                priority: larik_core::event::PlanPriority::Medium,
            },
            larik_core::event::PlanEntry {
                content: "Fix".into(),
                status: PlanStatus::InProgress,
                priority: larik_core::event::PlanPriority::Medium,
            },
        ];
        let done = Finished { failed: false, output: Some("Plan updated".into()), display: Some(Display::Plan(plan)) };
        // The plan has a line of its own, rewritten in place; the call itself shows nothing.
        let Some(Display::Plan(plan)) = done.display.clone() else { unreachable!() };
        assert_eq!(plan_line(&plan), "1 of 2 done: ✓ Read · ◐ Fix");
        assert_eq!(render(&entry(todo, None, Some(done))), None);
    }
}
