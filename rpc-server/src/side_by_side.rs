//! Runs a turn and the front end showing its events in one task, each polled only when its own
//! waker fired. `tokio::join!` polls every branch whenever any is woken: with a model streaming
//! thousands of deltas, each delta handed to the front end would also walk the whole turn's
//! future again, and each chunk from the network would walk the front end's.

use std::future::Future;

use futures::FutureExt;
use futures::future::Either;
use futures::stream::{FuturesUnordered, StreamExt};

/// Runs `turn` and `show` to completion side by side; returns what the turn returned.
pub async fn side_by_side<T>(turn: impl Future<Output = T>, show: impl Future<Output = ()>) -> T {
    let turn = turn.map(Either::Left).left_future();
    let show = show.map(Either::Right).right_future();
    let mut both: FuturesUnordered<_> = [turn, show].into_iter().collect();
    let mut outcome = None;
    while let Some(done) = both.next().await {
        if let Either::Left(value) = done {
            outcome = Some(value);
        }
    }
    outcome.unwrap_or_else(|| unreachable!("the set held the turn and ran it to completion"))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::mpsc;

    use super::*;

    /// A future that counts how often it is polled, around an inner one.
    async fn counted<F: Future>(polls: &AtomicUsize, inner: F) -> F::Output {
        let mut inner = std::pin::pin!(inner);
        std::future::poll_fn(|context| {
            polls.fetch_add(1, Ordering::Relaxed);
            inner.as_mut().poll(context)
        })
        .await
    }

    #[tokio::test(flavor = "current_thread")]
    async fn each_side_is_polled_only_when_woken_and_both_finish() {
        let (sender, mut receiver) = mpsc::channel(1);
        let (turn_polls, show_polls) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let turn = counted(&turn_polls, async move {
            for number in 0..100 {
                sender.send(number).await.unwrap();
            }
            "done"
        });
        let mut seen = Vec::new();
        let show = counted(&show_polls, async {
            while let Some(number) = receiver.recv().await {
                seen.push(number);
            }
        });
        assert_eq!(side_by_side(turn, show).await, "done");
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        // A channel of one: the turn is woken once per number taken, the front end once per
        // number sent. Polling both at every wake-up would be about twice as many each.
        assert!(turn_polls.load(Ordering::Relaxed) <= 110, "turn polled {turn_polls:?} times");
        assert!(show_polls.load(Ordering::Relaxed) <= 110, "front end polled {show_polls:?} times");
    }
}
