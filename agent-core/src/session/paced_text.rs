//! Streamed text on its way to the front end, paced: the first delta after a quiet frame goes at
//! once; what arrives within a frame of the last text sent is merged into the next one. Nothing
//! is dropped: the rest goes when the frame ends, or before anything else the turn reports. A
//! fast stream of thousands of deltas becomes a few events a front end can keep up with, and
//! the front end is not woken per delta.

use std::pin::Pin;
use std::time::{Duration, Instant};

use crate::event::AgentEvent;

/// How often streamed text goes out at most. Below what anyone can see.
const TEXT_FRAME: Duration = Duration::from_millis(4);

/// Text held for one event at most: a model stream faster than the front end reads is merged
/// into events of this size, so the queues behind, bounded in events, are bounded in bytes too.
const MAX_HELD_BYTES: usize = 8 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum TextKind {
    Message,
    Thought,
}

pub(crate) struct PacedText {
    frame_length: Duration,
    kind: Option<TextKind>,
    text: String,
    last_sent: Option<Instant>,
    /// Fires when the current frame ends; one timer, moved at each take, not one per delta.
    frame: Pin<Box<tokio::time::Sleep>>,
}

impl Default for PacedText {
    fn default() -> Self {
        Self::with_frame(TEXT_FRAME)
    }
}

impl PacedText {
    fn with_frame(frame_length: Duration) -> Self {
        Self {
            frame_length,
            kind: None,
            text: String::new(),
            last_sent: None,
            frame: Box::pin(tokio::time::sleep(Duration::ZERO)),
        }
    }

    /// Adds a delta. Returns what must go out now: text of the other kind that was waiting,
    /// and this text when its frame is over.
    pub fn push(&mut self, kind: TextKind, delta: &str) -> (Option<AgentEvent>, Option<AgentEvent>) {
        let other = if self.kind.is_some_and(|pending| pending != kind) { self.take() } else { None };
        self.kind = Some(kind);
        self.text.push_str(delta);
        let due =
            self.text.len() >= MAX_HELD_BYTES || self.last_sent.is_none_or(|sent| sent.elapsed() >= self.frame_length);
        (other, if due { self.take() } else { None })
    }

    /// Resolves when waiting text is due; never while nothing waits.
    pub async fn frame_ends(&mut self) {
        match self.kind {
            Some(_) => self.frame.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// The waiting text as one event, if any; starts a new frame.
    pub fn take(&mut self) -> Option<AgentEvent> {
        let kind = self.kind.take()?;
        let text = std::mem::take(&mut self.text);
        let now = Instant::now();
        self.last_sent = Some(now);
        self.frame.as_mut().reset((now + self.frame_length).into());
        Some(match kind {
            TextKind::Message => AgentEvent::TextDelta(text),
            TextKind::Thought => AgentEvent::ThinkingDelta(text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(event: Option<AgentEvent>) -> Option<String> {
        match event? {
            AgentEvent::TextDelta(text) => Some(format!("text {text}")),
            AgentEvent::ThinkingDelta(text) => Some(format!("thought {text}")),
            _ => Some("other".into()),
        }
    }

    #[tokio::test]
    async fn first_delta_goes_at_once_the_rest_merged_and_kinds_never_mix() {
        // A frame far longer than the test: nothing here is due by time.
        let mut paced = PacedText::with_frame(Duration::from_secs(600));
        let (other, now) = paced.push(TextKind::Message, "a");
        assert_eq!((text(other), text(now)), (None, Some("text a".into())));
        for delta in ["b", "c"] {
            let (other, now) = paced.push(TextKind::Message, delta);
            assert_eq!((text(other), text(now)), (None, None), "held within the frame");
        }
        // A thought arrives: the waiting text goes first, the thought waits for its frame.
        let (other, now) = paced.push(TextKind::Thought, "t");
        assert_eq!((text(other), text(now)), (Some("text bc".into()), None));
        assert_eq!(text(paced.take()), Some("thought t".into()));
        assert_eq!(text(paced.take()), None, "nothing waits");
    }

    #[tokio::test]
    async fn text_within_a_frame_goes_once_it_fills_an_event() {
        let mut paced = PacedText::with_frame(Duration::from_secs(600));
        let _ = paced.push(TextKind::Message, "a");
        let delta = "b".repeat(1000);
        let held: Vec<usize> = (0..9)
            .filter_map(|_| paced.push(TextKind::Message, &delta).1)
            .map(|event| text(Some(event)).map_or(0, |text| text.len()))
            .collect();
        assert_eq!(held, ["text ".len() + 9000], "nine deltas of 1000 bytes fill an event of 8 KiB at the ninth");
    }

    #[tokio::test]
    async fn waiting_text_is_due_when_its_frame_ends_and_a_quiet_frame_sends_at_once() {
        let mut paced = PacedText::with_frame(Duration::from_millis(20));
        assert!(
            tokio::time::timeout(Duration::from_millis(50), paced.frame_ends()).await.is_err(),
            "nothing waits, nothing is due"
        );
        let (_, now) = paced.push(TextKind::Message, "a");
        assert_eq!(text(now), Some("text a".into()));
        // Unless the machine stalled past the frame between the two pushes, "b" waits for it.
        let (_, now) = paced.push(TextKind::Message, "b");
        if now.is_none() {
            tokio::time::timeout(Duration::from_secs(5), paced.frame_ends()).await.expect("the frame ends");
            assert_eq!(text(paced.take()), Some("text b".into()));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        let (_, now) = paced.push(TextKind::Message, "c");
        assert_eq!(text(now), Some("text c".into()), "after a quiet frame the next delta goes at once");
    }
}
