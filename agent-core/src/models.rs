//! The model a session talks to: the provider, the model's settings, and where they came from,
//! switchable while the session lives. Shared by a session, its children and the `task` tool,
//! which picks a child's model from them.

use std::sync::{Arc, Mutex};

use crate::config::ModelConfig;
use crate::llm::{Provider, ProviderError};

/// How a session talks to its model.
#[derive(Clone)]
pub struct ModelSettings {
    pub model: String,
    pub max_tokens: u32,
    pub max_turn_requests: u32,
    pub thought_level: Option<crate::llm::ThoughtLevel>,
}

impl ModelSettings {
    /// No model configured: prompts report what to set up.
    pub fn none() -> Self {
        Self { model: String::new(), max_tokens: 0, max_turn_requests: 0, thought_level: None }
    }
}

/// The provider and model the session talks to; switchable while it lives (a running turn keeps
/// the ones it started with).
pub struct Models {
    provider: Mutex<Result<Arc<dyn Provider>, ProviderError>>,
    settings: Mutex<ModelSettings>,
    /// Where the model came from (provider, endpoint, key), for a subagent that asks for another
    /// model of the same provider or another; `None` when the session was given a provider.
    config: Mutex<Option<ModelConfig>>,
}

impl Models {
    pub fn new(provider: Result<Arc<dyn Provider>, ProviderError>, settings: ModelSettings) -> Self {
        Self { provider: Mutex::new(provider), settings: Mutex::new(settings), config: Mutex::new(None) }
    }

    pub fn config(&self) -> Option<ModelConfig> {
        self.config.lock().ok().and_then(|config| config.clone())
    }

    /// Switches to `config`'s model (and provider).
    pub fn switch(&self, config: &ModelConfig) {
        self.set(config.build_provider(), ModelSettings::from(config));
        self.remember(config);
    }

    /// Records where the current model came from.
    pub fn remember(&self, config: &ModelConfig) {
        if let Ok(mut current) = self.config.lock() {
            *current = Some(config.clone());
        }
    }

    pub fn provider(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        self.provider
            .lock()
            .map(|provider| provider.clone())
            .unwrap_or_else(|_| Err(ProviderError::BadRequest { message: "session state poisoned".into() }))
    }

    pub fn settings(&self) -> ModelSettings {
        self.settings.lock().map(|settings| settings.clone()).unwrap_or_else(|_| ModelSettings::none())
    }

    pub fn set(&self, provider: Result<Arc<dyn Provider>, ProviderError>, settings: ModelSettings) {
        if let (Ok(mut current_provider), Ok(mut current_settings)) = (self.provider.lock(), self.settings.lock()) {
            *current_provider = provider;
            *current_settings = settings;
        }
    }

    pub fn update(&self, change: impl FnOnce(&mut ModelSettings)) {
        if let Ok(mut settings) = self.settings.lock() {
            change(&mut settings);
        }
    }
}

impl From<&ModelConfig> for ModelSettings {
    fn from(model: &ModelConfig) -> Self {
        Self {
            model: model.model.clone(),
            max_tokens: model.max_tokens,
            max_turn_requests: model.max_turn_requests,
            thought_level: model.thought_level,
        }
    }
}
