//! Roles and the choice of a subagent's model. A role is a name (`worker`, `explore`, or any
//! other) that settings map to a model and to how its children run:
//!
//! ```json
//! "roles": {"explore": "claude-haiku-4-5", "worker": {"model": "openai:gpt-5", "maxTurns": 40, "context": "minimal", "isolation": "worktree"}}
//! ```
//!
//! The task's `model` input, else the definition's `model`, names a role or a model; an unset
//! role inherits the parent's model. Claude Code's `opus`, `sonnet` and `haiku` resolve on
//! Anthropic only; elsewhere the child keeps the parent's model and the user is told.

use std::collections::BTreeMap;
use std::sync::Arc;

use larik_settings::RoleSettings;

use crate::config::{ModelConfig, ProviderKind};
use crate::llm::{Provider, ProviderError};
use crate::models::{ModelSettings, Models};

/// Claude Code's model aliases, as Anthropic's model ids.
const ALIASES: &[(&str, &str)] =
    &[("opus", "claude-opus-4-5"), ("sonnet", "claude-sonnet-4-5"), ("haiku", "claude-haiku-4-5")];

/// Whether some role names a model: only then is the task's `model` input offered.
pub fn any_model(roles: &BTreeMap<String, RoleSettings>) -> bool {
    roles.values().any(|role| role.model.as_deref().is_some_and(|model| !model.trim().is_empty()))
}

/// The model a child talks to, the role it runs in, and what the user should hear about it.
pub struct ChildModel {
    pub provider: Result<Arc<dyn Provider>, ProviderError>,
    pub settings: ModelSettings,
    pub role: RoleSettings,
    pub notice: Option<String>,
}

/// Chooses the child's model for `named` (a role or a model; `None` is the parent's).
pub fn choose(
    named: Option<&str>,
    roles: &BTreeMap<String, RoleSettings>,
    parent: &Models,
    env: &std::collections::HashMap<String, String>,
) -> ChildModel {
    let named = named.map(str::trim).filter(|name| !name.is_empty());
    let role = named.and_then(|name| roles.get(name)).cloned().unwrap_or_default();
    let model = match named {
        Some(name) if roles.contains_key(name) => role.model.clone().filter(|model| !model.trim().is_empty()),
        // A role nobody mapped (the built-ins' `worker` and `explore`) inherits.
        Some("worker" | "explore") => None,
        other => other.map(str::to_owned),
    };
    let inherited = |notice: Option<String>| ChildModel {
        provider: parent.provider(),
        settings: parent.settings(),
        role: role.clone(),
        notice,
    };
    let Some(model) = model else { return inherited(None) };
    let parent_provider = match parent.provider() {
        // Signed out, or no key: the child cannot do better than its parent.
        Err(error) => return ChildModel { provider: Err(error), settings: parent.settings(), role, notice: None },
        Ok(provider) => provider,
    };
    let Some(config) = parent.config() else { return inherited(None) };
    let alias = ALIASES.iter().find(|(alias, _)| *alias == model).map(|(_, id)| *id);
    let target = match alias {
        Some(id) if config.provider == ProviderKind::Anthropic => id.to_owned(),
        Some(_) => {
            let notice = format!(
                "The subagent uses this session's model `{}`: `{model}` names a Claude model, which only the Anthropic provider serves.",
                config.model
            );
            return inherited(Some(notice));
        }
        None => model,
    };
    if target == config.model {
        return ChildModel { provider: Ok(parent_provider), settings: parent.settings(), role, notice: None };
    }
    let switched: ModelConfig = config.with_model(&target, env);
    let settings = ModelSettings { thought_level: parent.settings().thought_level, ..ModelSettings::from(&switched) };
    ChildModel { provider: switched.build_provider(), settings, role, notice: None }
}

#[cfg(test)]
mod tests {
    use larik_settings::ContextSize;

    use super::*;

    fn parent(provider: ProviderKind, model: &str) -> Models {
        let config = ModelConfig {
            provider,
            model: model.into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: Some("k".into()),
            key_helper: None,
            max_tokens: 1000,
            thought_level: None,
            max_turn_requests: 100,
            models: vec![model.into()],
        };
        let models = Models::new(config.build_provider(), ModelSettings::from(&config));
        models.remember(&config);
        models
    }

    fn roles(json: &str) -> BTreeMap<String, RoleSettings> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_role_names_a_model_an_unset_role_inherits_and_aliases_need_anthropic() {
        let env = std::collections::HashMap::new();
        let mapped = roles(r#"{"explore": "gpt-5-mini", "worker": {"maxTurns": 7, "context": "minimal"}}"#);
        let openai = parent(ProviderKind::Openai, "gpt-5");
        let explore = choose(Some("explore"), &mapped, &openai, &env);
        assert_eq!(explore.settings.model, "gpt-5-mini");
        assert!(explore.provider.is_ok() && explore.notice.is_none());
        let worker = choose(Some("worker"), &mapped, &openai, &env);
        assert_eq!(
            (worker.settings.model.as_str(), worker.role.max_turns, worker.role.context),
            ("gpt-5", Some(7), Some(ContextSize::Minimal))
        );
        assert_eq!(
            choose(Some("worker"), &BTreeMap::new(), &openai, &env).settings.model,
            "gpt-5",
            "an unmapped built-in role inherits"
        );
        assert_eq!(choose(None, &mapped, &openai, &env).settings.model, "gpt-5");
        assert_eq!(
            choose(Some("qwen3-coder"), &mapped, &openai, &env).settings.model,
            "qwen3-coder",
            "a model by name"
        );

        let haiku = choose(Some("haiku"), &mapped, &openai, &env);
        assert_eq!(haiku.settings.model, "gpt-5", "no Claude model on this provider");
        assert!(haiku.notice.unwrap().contains("`haiku` names a Claude model"));
        let anthropic = parent(ProviderKind::Anthropic, "claude-sonnet-4-5");
        let haiku = choose(Some("haiku"), &mapped, &anthropic, &env);
        assert_eq!((haiku.settings.model.as_str(), haiku.notice), ("claude-haiku-4-5", None));
        let aliased_role = choose(Some("explore"), &roles(r#"{"explore": "opus"}"#), &anthropic, &env);
        assert_eq!(aliased_role.settings.model, "claude-opus-4-5", "a role may name an alias");

        assert!(any_model(&mapped) && !any_model(&roles(r#"{"worker": {"maxTurns": 3}}"#)));
    }

    #[test]
    fn a_signed_out_parent_gives_its_children_no_model() {
        let openai = parent(ProviderKind::Openai, "gpt-5");
        openai.set(Err(ProviderError::Auth { message: "signed out".into() }), openai.settings());
        let child = choose(Some("gpt-5-mini"), &roles(r#"{}"#), &openai, &std::collections::HashMap::new());
        assert!(matches!(child.provider, Err(ProviderError::Auth { .. })));
    }
}
