//! The requests sent and not yet answered: each waits on its own channel, found by id when its
//! answer arrives. A waiter that goes away forgets its entry; the connection's end fails all.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::RpcError;

/// The answer to one request: its result, or the other side's error.
pub type Answer = Result<Value, RpcError>;

#[derive(Debug)]
pub struct Pending {
    waiting: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    next_id: AtomicI64,
}

impl Pending {
    /// Ids are numbered from `first_id` up.
    pub fn new(first_id: i64) -> Self {
        Self { waiting: Mutex::new(HashMap::new()), next_id: AtomicI64::new(first_id) }
    }

    /// A new request's id and where its answer will arrive; the channel closes without an
    /// answer when the connection ends first ([`Self::fail_all`]).
    pub fn open(&self) -> (i64, oneshot::Receiver<Answer>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, answer);
        }
        (id, answered)
    }

    /// Hands `answer` to the request `id` waits for; `false` when none does (answered already,
    /// forgotten, or never sent).
    pub fn answer(&self, id: &Value, answer: Answer) -> bool {
        let Some(id) = id.as_i64() else { return false };
        let Some(waiter) = self.waiting.lock().ok().and_then(|mut waiting| waiting.remove(&id)) else {
            return false;
        };
        waiter.send(answer).is_ok()
    }

    /// The request's waiter went away: a late answer is ignored.
    pub fn forget(&self, id: i64) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(&id);
        }
    }

    /// The connection ended: every waiter hears there will be no answer.
    pub fn fail_all(&self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn answers_reach_their_own_request_once() {
        let pending = Pending::new(1);
        let (first, first_answer) = pending.open();
        let (second, second_answer) = pending.open();
        assert_eq!((first, second), (1, 2));
        assert!(pending.answer(&json!(2), Ok(json!("two"))));
        assert!(!pending.answer(&json!(2), Ok(json!("again"))), "answered once");
        assert!(!pending.answer(&json!("1"), Ok(json!("a string id is not ours"))));
        assert!(pending.answer(&json!(1), Err(RpcError::new(-1, "no"))));
        assert_eq!(second_answer.await.unwrap(), Ok(json!("two")));
        assert_eq!(first_answer.await.unwrap(), Err(RpcError::new(-1, "no")));
    }

    #[tokio::test]
    async fn a_forgotten_request_ignores_its_answer_and_the_end_fails_the_rest() {
        let pending = Pending::new(0);
        let (forgotten, _) = pending.open();
        let (_, waiting) = pending.open();
        pending.forget(forgotten);
        assert!(!pending.answer(&json!(forgotten), Ok(Value::Null)));
        pending.fail_all();
        assert!(waiting.await.is_err(), "no answer will come");
    }
}
