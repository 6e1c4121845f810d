//! The skills index in the system prompt: one `name: description` line per skill the model may
//! load, within a size budget, so a thousand skills cannot crowd out the conversation.

use std::collections::BTreeMap;

use super::Skill;

/// The whole index, at most (bytes).
const BUDGET: usize = 8 * 1024;
/// One description, at most (characters); longer ones are cut with an ellipsis.
pub(super) const MAX_DESCRIPTION_CHARS: usize = 300;

/// The index for the prompt; empty when the model may load no skill.
pub fn index(skills: &BTreeMap<String, Skill>) -> String {
    let offered: Vec<&Skill> = skills.values().filter(|skill| skill.model_invocable).collect();
    if offered.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "<skills>\nSkills hold instructions for particular tasks. When a task matches one, load it with the skill tool before you start, then follow it.\n",
    );
    let mut listed = 0;
    for skill in &offered {
        let line = format!("- {}: {}\n", skill.name, crate::event::one_line(&skill.description, MAX_DESCRIPTION_CHARS));
        if text.len() + line.len() > BUDGET {
            break;
        }
        text.push_str(&line);
        listed += 1;
    }
    if listed < offered.len() {
        text.push_str(&format!(
            "({} more skills are not listed here for space; the skill tool loads any of them by name.)\n",
            offered.len() - listed
        ));
    }
    text.push_str("</skills>");
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::Kind;

    fn skill(name: &str, description: &str, model_invocable: bool) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            body: format!("BODY OF {name}"),
            argument_hint: None,
            model_invocable,
            user_invocable: true,
            license: None,
            compatibility: None,
            metadata: None,
            kind: Kind::Command,
            path: "/x".into(),
            plugin: None,
        }
    }

    #[test]
    fn lists_names_and_descriptions_not_bodies_within_its_budget() {
        let mut skills = BTreeMap::new();
        skills.insert("review".into(), skill("review", "Review a change\nagainst the checklist.", true));
        skills.insert("secret".into(), skill("secret", "Only on request", false));
        let text = index(&skills);
        assert!(text.contains("- review: Review a change against the checklist.\n"), "{text}");
        assert!(!text.contains("secret") && !text.contains("BODY OF"), "{text}");
        assert_eq!(index(&BTreeMap::from([("s".to_owned(), skill("s", "d", false))])), "", "nothing to offer");

        let many: BTreeMap<String, Skill> = (0..400)
            .map(|n| (format!("skill-{n:03}"), skill(&format!("skill-{n:03}"), &"long words ".repeat(50), true)))
            .collect();
        let text = index(&many);
        assert!(text.len() <= BUDGET + 200, "{}", text.len());
        assert!(text.contains("more skills are not listed here"), "cut with a note");
        assert!(text.contains('…'), "long descriptions are cut");
    }
}
