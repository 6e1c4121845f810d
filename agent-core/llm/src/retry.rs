//! Retrying a model call: rate limits and overload back off (honouring `retry-after`), network
//! failures retry, everything else is final. Only the opening of a stream is retried here; a stream
//! that breaks after output was shown is reported by the turn, never silently truncated.

use std::time::Duration;

use super::ProviderError;

/// How many attempts a call gets and how long to wait between them.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_attempts: 4, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1`, or `None` when the error is final or attempts ran out.
    pub fn delay_after(&self, error: &ProviderError, attempt: u32) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        let requested = error.retry_hint()?;
        let backoff = self.base_delay.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
        Some(requested.unwrap_or(backoff).min(self.max_delay))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_retry_after_and_gives_up_on_final_errors() {
        let policy = RetryPolicy::default();
        let limited = ProviderError::RateLimited { retry_after: Some(Duration::from_secs(2)), message: String::new() };
        assert_eq!(policy.delay_after(&limited, 1), Some(Duration::from_secs(2)));
        assert_eq!(policy.delay_after(&limited, 4), None);
        let network = ProviderError::Network { message: String::new() };
        assert_eq!(policy.delay_after(&network, 1), Some(Duration::from_millis(500)));
        assert_eq!(policy.delay_after(&network, 2), Some(Duration::from_millis(1000)));
        assert_eq!(policy.delay_after(&ProviderError::Auth { message: String::new() }, 1), None);
    }
}
