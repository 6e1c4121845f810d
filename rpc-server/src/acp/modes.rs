//! Session modes and config options: the legacy `modes` state and the `configOptions` list
//! (`mode`, `model`), built from one source so the two always agree.

use larik_core::Mode;
use larik_core::ThoughtLevel;
use larik_protocol::acp;

pub const MODE_OPTION: &str = "mode";
pub const MODEL_OPTION: &str = "model";
pub const THOUGHT_OPTION: &str = "thought_level";

fn mode_name(mode: Mode) -> (&'static str, &'static str) {
    match mode {
        Mode::Default => (
            "Default",
            "Ask before changing files; commands run in the sandbox without asking, or ask where there is none",
        ),
        Mode::AcceptEdits => ("Accept edits", "Edit files in the project without asking; ask for commands"),
        Mode::Plan => ("Plan", "Read and plan only; nothing is changed"),
        Mode::Yolo => ("Yolo", "Run everything without asking (deny rules and project bounds still hold)"),
    }
}

/// The modes offered (the organisation's policy may leave yolo out), the current one marked.
pub fn mode_state(current: Mode, offered: &[Mode]) -> acp::SessionModeState {
    let modes = offered
        .iter()
        .copied()
        .map(|mode| {
            let (name, description) = mode_name(mode);
            acp::SessionMode::new(mode.id(), name).description(description.to_owned())
        })
        .collect();
    acp::SessionModeState::new(current.id(), modes)
}

/// The complete option list, as `session/new` returns it and every change re-sends it.
pub fn config_options(
    current_mode: Mode,
    offered_modes: &[Mode],
    current_model: &str,
    models: &[String],
    thought: Option<ThoughtLevel>,
) -> Vec<acp::SessionConfigOption> {
    let mode_choices: Vec<acp::SessionConfigSelectOption> = offered_modes
        .iter()
        .copied()
        .map(|mode| {
            let (name, description) = mode_name(mode);
            acp::SessionConfigSelectOption::new(mode.id(), name).description(description.to_owned())
        })
        .collect();
    let mut model_choices: Vec<acp::SessionConfigSelectOption> =
        models.iter().map(|model| acp::SessionConfigSelectOption::new(model.clone(), model.clone())).collect();
    if !models.iter().any(|model| model == current_model) {
        model_choices
            .insert(0, acp::SessionConfigSelectOption::new(current_model.to_owned(), current_model.to_owned()));
    }
    vec![
        acp::SessionConfigOption::select(MODE_OPTION, "Mode", current_mode.id(), mode_choices)
            .category(acp::SessionConfigOptionCategory::Mode),
        acp::SessionConfigOption::select(MODEL_OPTION, "Model", current_model.to_owned(), model_choices)
            .category(acp::SessionConfigOptionCategory::Model),
        acp::SessionConfigOption::select(
            THOUGHT_OPTION,
            "Thinking",
            thought.unwrap_or(ThoughtLevel::Off).id(),
            thought_choices(),
        )
        .category(acp::SessionConfigOptionCategory::ThoughtLevel),
    ]
}

fn thought_choices() -> Vec<acp::SessionConfigSelectOption> {
    ThoughtLevel::ALL.into_iter().map(|level| acp::SessionConfigSelectOption::new(level.id(), level.id())).collect()
}
