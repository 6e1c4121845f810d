//! What a session spent, in tokens and money, its children and hooks included, and the budget
//! it is held to: checked before each model request, and shown by `/budget`.

use larik_settings::Budget;

use crate::llm::Usage;

/// Tokens and cost so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub usage: Usage,
    pub cost_usd: f64,
}

fn tokens(spent: &Spent) -> u64 {
    let usage = &spent.usage;
    usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
}

/// A budget checked against what a session spent.
pub trait SpendingLimits {
    /// Why no further request may be made, when the budget is spent.
    fn exceeded(&self, spent: &Spent) -> Option<String>;
}

/// `/budget`: what a session spent so far, against its limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spending {
    pub budget: Budget,
    pub spent: Spent,
}

impl SpendingLimits for Budget {
    fn exceeded(&self, spent: &Spent) -> Option<String> {
        if let Some(limit) = self.max_cost_usd
            && spent.cost_usd >= limit
        {
            return Some(format!(
                "The session's budget is spent: ${:.4} of ${limit}. Raise budget.maxCostUsd in settings to go on.",
                spent.cost_usd
            ));
        }
        if let Some(limit) = self.max_tokens
            && tokens(spent) >= limit
        {
            return Some(format!(
                "The session's token budget is spent: {} of {limit} tokens. Raise budget.maxTokens in settings to go on.",
                tokens(spent)
            ));
        }
        None
    }
}

impl std::fmt::Display for Spending {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (budget, spent) = (&self.budget, &self.spent);
        let cost = match budget.max_cost_usd {
            Some(limit) => format!("${:.4} of ${limit}", spent.cost_usd),
            None => format!("${:.4} (no cost limit; set budget.maxCostUsd)", spent.cost_usd),
        };
        let limit = budget.max_tokens.map(|limit| format!(" of {limit}")).unwrap_or_default();
        write!(out, "Spent {cost}; {}{limit} tokens ({}).", tokens(spent), TokenKinds(spent))
    }
}

/// `1234 tokens (1000 input, 200 read from cache, 0 written to cache, 34 output), $0.0123`: the
/// cost where it is known.
impl std::fmt::Display for Spent {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "{} tokens ({})", tokens(self), TokenKinds(self))?;
        if self.cost_usd > 0.0 {
            write!(out, ", ${:.4}", self.cost_usd)?;
        }
        Ok(())
    }
}

/// The tokens by kind, as every report names them.
struct TokenKinds<'a>(&'a Spent);

impl std::fmt::Display for TokenKinds<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let usage = &self.0.usage;
        write!(
            out,
            "{} input, {} read from cache, {} written to cache, {} output",
            usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_stops_at_its_cost_or_its_tokens() {
        let spent = Spent {
            usage: Usage { input_tokens: 900, output_tokens: 100, cache_read_tokens: 500, cache_write_tokens: 0 },
            cost_usd: 0.25,
        };
        assert_eq!(Budget::default().exceeded(&spent), None);
        assert_eq!(Budget { max_cost_usd: Some(1.0), max_tokens: None }.exceeded(&spent), None);
        assert!(
            Budget { max_cost_usd: Some(0.25), max_tokens: None }
                .exceeded(&spent)
                .unwrap()
                .contains("$0.2500 of $0.25")
        );
        assert!(
            Budget { max_cost_usd: None, max_tokens: Some(1_500) }
                .exceeded(&spent)
                .unwrap()
                .contains("1500 of 1500 tokens")
        );
        let user = Budget { max_cost_usd: Some(2.0), max_tokens: None };
        let project = Budget { max_cost_usd: Some(50.0), max_tokens: Some(10) };
        assert_eq!(
            Budget::tighter(Some(user), Some(project)),
            Some(Budget { max_cost_usd: Some(2.0), max_tokens: Some(10) }),
            "a project cannot raise the user's limit"
        );
        let report = Spending { budget: Budget { max_cost_usd: Some(2.0), max_tokens: None }, spent }.to_string();
        assert_eq!(
            report,
            "Spent $0.2500 of $2; 1500 tokens (900 input, 500 read from cache, 0 written to cache, 100 output)."
        );
        assert_eq!(
            spent.to_string(),
            "1500 tokens (900 input, 500 read from cache, 0 written to cache, 100 output), $0.2500"
        );
        let unpriced = Spent { cost_usd: 0.0, ..spent };
        assert!(!unpriced.to_string().contains('$'), "no price is not a price of nothing");
    }
}
