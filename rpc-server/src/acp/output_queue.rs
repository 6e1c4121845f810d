//! The lines waiting for the output stream, bounded by their bytes, not only by their count.
//!
//! A client that stops reading stdout must not make the agent hold what a fast model stream
//! sends meanwhile: once [`BUDGET`] bytes wait, a sender waits too, so the turn stops reading the
//! model and the rest stays in the model's socket. A line holds its share of the budget until it
//! has been written. A line larger than the whole budget takes all of it, so it still goes,
//! alone.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Bytes queued for the output at most, beyond the one line being written.
pub const BUDGET: usize = 1024 * 1024;

/// A line with its share of the budget.
pub struct QueuedLine {
    pub text: String,
    share: Share,
}

/// A line's room in the queue, given back when dropped: after the line was written.
pub struct Share(#[allow(dead_code, reason = "held for its drop")] OwnedSemaphorePermit);

impl QueuedLine {
    /// The text, and the room it holds until the writer has written it.
    pub fn split(self) -> (String, Share) {
        (self.text, self.share)
    }
}

#[derive(Clone)]
pub struct OutputSender {
    lines: mpsc::UnboundedSender<QueuedLine>,
    budget: Arc<Semaphore>,
    budget_bytes: usize,
}

pub type OutputReceiver = mpsc::UnboundedReceiver<QueuedLine>;

/// A queue that lets `budget_bytes` wait at most.
pub fn bounded(budget_bytes: usize) -> (OutputSender, OutputReceiver) {
    let (lines, receiver) = mpsc::unbounded_channel();
    (OutputSender { lines, budget: Arc::new(Semaphore::new(budget_bytes)), budget_bytes }, receiver)
}

/// Why a line was not queued: the writer is gone.
#[derive(Debug)]
pub struct OutputClosed;

impl OutputSender {
    /// Queues a line, waiting while the queue holds its budget.
    pub async fn send(&self, text: String) -> Result<(), OutputClosed> {
        // The newline the writer adds counts too; every line costs at least one byte, so the
        // count of lines is bounded as well.
        let cost = (text.len() + 1).min(self.budget_bytes);
        let share = Arc::clone(&self.budget)
            .acquire_many_owned(u32::try_from(cost).unwrap_or(u32::MAX))
            .await
            .map_err(|_| OutputClosed)?;
        self.lines.send(QueuedLine { text, share: Share(share) }).map_err(|_| OutputClosed)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn senders_wait_once_the_budget_is_queued_and_go_on_as_lines_are_written() {
        let (sender, mut receiver) = bounded(100);
        for _ in 0..3 {
            sender.send("x".repeat(29)).await.unwrap();
        }
        // 90 bytes wait; a fourth line of 30 would make 120.
        let fourth = tokio::spawn({
            let sender = sender.clone();
            async move { sender.send("y".repeat(29)).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!fourth.is_finished(), "the fourth line waits for room");
        let written = receiver.recv().await.unwrap();
        assert!(!fourth.is_finished(), "a line taken but not yet written still holds its room");
        drop(written);
        tokio::time::timeout(Duration::from_secs(5), fourth).await.unwrap().unwrap().unwrap();
        let texts: Vec<String> = std::iter::from_fn(|| receiver.try_recv().ok()).map(|line| line.text).collect();
        assert_eq!(texts, ["x".repeat(29), "x".repeat(29), "y".repeat(29)], "in order, none lost");
    }

    #[tokio::test]
    async fn a_line_larger_than_the_budget_goes_alone() {
        let (sender, mut receiver) = bounded(100);
        sender.send("a".repeat(1000)).await.unwrap();
        let next = tokio::spawn({
            let sender = sender.clone();
            async move { sender.send("b".into()).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!next.is_finished(), "the large line holds the whole budget");
        assert_eq!(receiver.recv().await.unwrap().text.len(), 1000);
        tokio::time::timeout(Duration::from_secs(5), next).await.unwrap().unwrap().unwrap();
        assert_eq!(receiver.recv().await.unwrap().text, "b");
    }
}
