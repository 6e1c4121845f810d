//! Claude Code's names for what Larik has too, where its users' hooks read them. Tools declare
//! their own Claude Code names ([`crate::tools::ToolNames`]); this holds the permission modes'.

/// Claude Code's `permission_mode` for a Larik mode id (`Mode::id`).
pub fn claude_permission_mode(larik_mode_id: &str) -> &'static str {
    match larik_mode_id {
        "accept-edits" => "acceptEdits",
        "plan" => "plan",
        "yolo" => "bypassPermissions",
        _ => "default",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_modes_use_claude_codes_names() {
        let cases = [
            ("default", "default"),
            ("accept-edits", "acceptEdits"),
            ("plan", "plan"),
            ("yolo", "bypassPermissions"),
            ("other", "default"),
        ];
        for (larik, claude) in cases {
            assert_eq!(claude_permission_mode(larik), claude);
        }
        // Every Larik mode has a name Claude Code reads back as the same mode.
        for mode in crate::permission::Mode::ALL {
            assert_eq!(
                crate::permission::Mode::from_setting(claude_permission_mode(mode.id())),
                Some(mode),
                "{mode:?}"
            );
        }
    }
}
