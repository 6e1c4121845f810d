//! The `skill` tool: loads a skill's (or a command's) full instructions for the model, with the
//! list of files bundled beside it, which the model then reads with the normal tools. Read-only:
//! it shows what is on disk and runs nothing (a command's inline `` !`cmd` `` stays as text).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::Kind;
use crate::event::ToolKind;
use crate::tools::{CallDescription, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput};

/// Bundled files listed, at most.
const MAX_LISTED: usize = 100;

#[derive(Deserialize, JsonSchema)]
pub struct SkillInput {
    /// The skill's name, as listed under <skills>.
    pub skill: String,
    /// Arguments for the skill, if it takes any.
    #[serde(default)]
    pub args: Option<String>,
}

/// Holds the session's skills, read again at each fresh context.
pub struct SkillTool(pub std::sync::Arc<super::Skills>);

impl Tool for SkillTool {
    type Input = SkillInput;
    const NAME: &'static str = "skill";
    const DESCRIPTION: &'static str = "Load a skill's full instructions by name (the skills are listed under <skills> in the system prompt), with the files bundled beside it. Load it before starting a task it matches, then follow it; read the bundled files it points to with the read tool.";
    const KIND: ToolKind = ToolKind::Read;
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Skill", fields: &[], response: HookResponse::Output });

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &SkillInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Skill {}", input.skill))
    }

    async fn run(&self, input: SkillInput, ctx: &ToolContext) -> ToolOutput {
        let skills = self.0.all();
        let Some(skill) = skills.get(input.skill.trim()).filter(|skill| skill.model_invocable) else {
            let offered: Vec<&str> =
                skills.values().filter(|skill| skill.model_invocable).map(|skill| skill.name.as_str()).collect();
            return ToolOutput::error(format!(
                "There is no skill `{}` to load; the skills are: {}.",
                input.skill,
                if offered.is_empty() { "none".to_owned() } else { offered.join(", ") }
            ));
        };
        let body = super::expand::substitute(skill, input.args.as_deref().unwrap_or_default(), &ctx.env);
        let mut text = format!("<skill name=\"{}\" path=\"{}\">\n{body}\n</skill>", skill.name, skill.path.display());
        if let Kind::Skill { dir } = &skill.kind {
            let files = bundled(dir);
            if !files.is_empty() {
                let listed: Vec<String> =
                    files.iter().take(MAX_LISTED).map(|file| format!("- {}", file.display())).collect();
                text.push_str(&format!("\n\nFiles bundled with it (in {}):\n{}", dir.display(), listed.join("\n")));
                if files.len() > MAX_LISTED {
                    text.push_str(&format!("\n({} more)", files.len() - MAX_LISTED));
                }
            }
        }
        ToolOutput::text(text)
    }
}

/// Puts the tool in `registry` when the model may load some skill, and takes it out when not:
/// a session without skills does not pay for the tool's description in every request.
pub fn offer_if_any(registry: &crate::tools::Registry, skills: &std::sync::Arc<super::Skills>) {
    if skills.all().values().any(|skill| skill.model_invocable) {
        if registry.get(SkillTool::NAME).is_none() {
            registry.add(std::sync::Arc::new(SkillTool(std::sync::Arc::clone(skills))));
        }
    } else {
        registry.remove(SkillTool::NAME);
    }
}

/// The files under a skill's directory but its SKILL.md, relative to it, sorted.
fn bundled(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            // Not followed: a link out of the skill is not its file.
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && files.len() < MAX_LISTED * 2 {
                pending.push(path);
            } else if kind.is_file() && path != dir.join("SKILL.md") {
                files.push(path.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(path));
            }
        }
    }
    files.sort();
    files
}
