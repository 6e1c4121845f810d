//! What Larik knows about models by name: context window and price, for usage reports. Unknown
//! models get a conservative window and no price (a cost is never guessed).

use super::Usage;

struct Known {
    prefix: &'static str,
    window: u64,
    /// US dollars per million tokens: input, output, cache read, cache write.
    price: Option<[f64; 4]>,
}

/// Longest prefixes first, so `claude-opus-4` is not taken for `claude-`.
///
/// Prices as Anthropic's model pages (platform.claude.com, "Models & pricing") and OpenAI's
/// pricing page list them, read 2026-12-02: base input, output, cache hits, 5-minute cache
/// writes. Models priced in tiers by prompt length (Claude Haiku 5.5) and those not checked are
/// left without a price: their tokens are reported, their cost is not guessed.
const MODELS: &[Known] = &[
    Known { prefix: "claude-opus-5-5", window: 1_000_000, price: Some([4.0, 20.0, 0.2, 5.0]) },
    Known { prefix: "claude-opus-5", window: 1_000_000, price: Some([5.0, 25.0, 0.5, 6.25]) },
    Known { prefix: "claude-sonnet-5-5", window: 1_000_000, price: Some([2.0, 10.0, 0.2, 2.5]) },
    Known { prefix: "claude-sonnet-5", window: 1_000_000, price: Some([2.0, 10.0, 0.2, 2.5]) },
    Known { prefix: "claude-haiku-5", window: 1_000_000, price: None },
    Known { prefix: "claude-opus-4-5", window: 200_000, price: Some([5.0, 25.0, 0.5, 6.25]) },
    Known { prefix: "claude-opus-4", window: 200_000, price: Some([15.0, 75.0, 1.5, 18.75]) },
    Known { prefix: "claude-sonnet-4", window: 200_000, price: Some([3.0, 15.0, 0.3, 3.75]) },
    Known { prefix: "claude-haiku-4", window: 200_000, price: Some([1.0, 5.0, 0.1, 1.25]) },
    Known { prefix: "claude-3-5-haiku", window: 200_000, price: Some([0.8, 4.0, 0.08, 1.0]) },
    Known { prefix: "claude-", window: 200_000, price: None },
    Known { prefix: "gpt-4.1-mini", window: 1_047_576, price: Some([0.4, 1.6, 0.1, 0.0]) },
    Known { prefix: "gpt-4.1", window: 1_047_576, price: Some([2.0, 8.0, 0.5, 0.0]) },
    Known { prefix: "gpt-4o-mini", window: 128_000, price: Some([0.15, 0.6, 0.075, 0.0]) },
    Known { prefix: "gpt-4o", window: 128_000, price: Some([2.5, 10.0, 1.25, 0.0]) },
    Known { prefix: "gpt-5", window: 400_000, price: None },
    Known { prefix: "o3", window: 200_000, price: None },
    Known { prefix: "o4", window: 200_000, price: None },
];
const DEFAULT_WINDOW: u64 = 128_000;

fn find(model: &str) -> Option<&'static Known> {
    let model = model.rsplit(':').next().unwrap_or(model);
    MODELS.iter().find(|known| model.starts_with(known.prefix))
}

pub fn context_window(model: &str) -> u64 {
    find(model).map_or(DEFAULT_WINDOW, |known| known.window)
}

/// The price of one response in US dollars, when the model's price is known.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    let [input, output, cache_read, cache_write] = find(model)?.price?;
    let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    Some(
        per_token(usage.input_tokens, input)
            + per_token(usage.output_tokens, output)
            + per_token(usage.cache_read_tokens, cache_read)
            + per_token(usage.cache_write_tokens, cache_write),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_prices_by_prefix() {
        assert_eq!(context_window("claude-sonnet-4-5"), 200_000);
        assert_eq!(context_window("anthropic:claude-opus-4-1"), 200_000);
        assert_eq!(context_window("qwen3-coder"), DEFAULT_WINDOW);
        let usage =
            Usage { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_tokens: 0, cache_write_tokens: 0 };
        assert!((cost_usd("claude-sonnet-4-5", &usage).unwrap() - 4.5).abs() < 1e-9);
        assert_eq!(cost_usd("qwen3", &usage), None);
        assert_eq!(context_window("claude-sonnet-5-5"), 1_000_000);
        // Opus 4.5 is priced apart from the Opus 4 and 4.1 before it.
        assert!((cost_usd("claude-opus-4-5-20251101", &usage).unwrap() - 7.5).abs() < 1e-9);
        assert!((cost_usd("claude-opus-4-1", &usage).unwrap() - 22.5).abs() < 1e-9);
        assert_eq!(cost_usd("claude-haiku-5-5", &usage), None, "priced in tiers: no guess");
    }
}
