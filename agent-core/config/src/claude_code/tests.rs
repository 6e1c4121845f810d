use std::collections::HashMap;
use std::path::Path;

use crate::{Writer, load_permissions, load_settings, rule_files};

use crate::test_files::write;

fn env(home: &Path) -> HashMap<String, String> {
    HashMap::from([
        ("HOME".to_owned(), home.display().to_string()),
        ("XDG_CONFIG_HOME".to_owned(), home.join(".config").display().to_string()),
    ])
}

#[test]
fn the_users_claude_code_rules_are_the_users_own() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &home.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm run test:*)"], "ask": ["Bash"], "deny": ["WebFetch"], "defaultMode": "acceptEdits"}}"#,
    );
    let permissions = load_permissions(project.path(), &env(home.path())).unwrap();
    assert_eq!(permissions.allow, ["Bash(npm run test:*)"], "not waiting for a project approval");
    assert!(permissions.project_allow.is_empty());
    assert_eq!(
        (permissions.ask.as_slice(), permissions.deny.as_slice()),
        (&["Bash".to_owned()][..], &["WebFetch".to_owned()][..])
    );
    assert_eq!(crate::initial_mode(&permissions), (larik_settings::Mode::AcceptEdits, None));
}

#[test]
fn a_project_that_is_the_home_directory_reads_the_users_files_once_as_theirs() {
    let home = tempfile::tempdir().unwrap();
    write(
        &home.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Write"], "defaultMode": "acceptEdits"}}"#,
    );
    let files = rule_files(home.path(), &env(home.path()));
    let claude = home.path().join(".claude/settings.json");
    assert_eq!(files.iter().filter(|(path, _)| *path == claude).collect::<Vec<_>>(), [&(claude.clone(), Writer::User)]);
    let permissions = load_permissions(home.path(), &env(home.path())).unwrap();
    assert_eq!((permissions.allow.len(), permissions.project_allow.len()), (1, 0));
    assert_eq!(crate::initial_mode(&permissions).0, larik_settings::Mode::AcceptEdits);
}

#[test]
fn sandboxed_commands_ask_when_any_file_says_so_and_a_project_cannot_say_otherwise() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let auto_allow = |project: &Path| {
        let settings = load_settings(project, &env(home.path())).unwrap();
        (settings.sandbox.and_then(|sandbox| sandbox.auto_allow_bash_if_sandboxed), settings.problems)
    };
    assert_eq!(auto_allow(project.path()).0, None);
    write(&project.path().join(".claude/settings.json"), r#"{"sandbox": {"autoAllowBashIfSandboxed": false}}"#);
    assert_eq!(auto_allow(project.path()), (Some(false), Vec::new()));
    // The user's own file turning it on does not undo the project's narrowing.
    write(&home.path().join(".claude/settings.json"), r#"{"sandbox": {"autoAllowBashIfSandboxed": true}}"#);
    assert_eq!(auto_allow(project.path()).0, Some(false));
    // A project's file cannot turn it on, nor turn the sandbox off.
    write(
        &project.path().join(".claude/settings.json"),
        r#"{"sandbox": {"autoAllowBashIfSandboxed": true, "enabled": false}}"#,
    );
    write(&home.path().join(".claude/settings.json"), r#"{"sandbox": {"autoAllowBashIfSandboxed": false}}"#);
    let (value, problems) = auto_allow(project.path());
    assert_eq!(value, Some(false));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("`sandbox.enabled` is not honoured"), "{problems:?}");
    let settings = load_settings(project.path(), &env(home.path())).unwrap();
    assert_eq!(settings.sandbox.unwrap().enabled, None);
}

#[test]
fn larik_s_own_user_file_wins_over_the_users_claude_code_file() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(&home.path().join(".claude/settings.json"), r#"{"sandbox": {"enabled": false}}"#);
    let enabled = || load_settings(project.path(), &env(home.path())).unwrap().sandbox.unwrap().enabled;
    assert_eq!(enabled(), Some(false));
    write(&home.path().join(".config/larik/settings.json"), r#"{"sandbox": {"enabled": true}}"#);
    assert_eq!(enabled(), Some(true));
}

/// The keys of the Claude Code table in `protocol-spec/spec/settings.md` whose "Larik" cell
/// starts with one of `kinds`.
fn table_rows(kinds: &[&str]) -> Vec<String> {
    let table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../protocol-spec/spec/settings.md"))
            .unwrap();
    let section = table.split("## Claude Code's settings files").nth(1).unwrap();
    section
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix("| `")?.splitn(2, "` | ");
            let (key, rest) = (cells.next()?, cells.next()?);
            kinds.iter().any(|kind| rest.starts_with(kind)).then(|| key.to_owned())
        })
        .collect()
}

#[test]
fn what_the_code_honours_and_passes_over_is_what_the_table_says() {
    let mut honoured: Vec<&str> = super::HONOURED_FROM_USER
        .iter()
        .chain(crate::managed::ENFORCED)
        .copied()
        .filter(|key| *key != "$schema")
        .collect();
    honoured.sort_unstable();
    assert_eq!(table_rows(&["honoured", "mapped"]), honoured);
    assert_eq!(table_rows(&["not applicable"]), super::NOT_APPLICABLE);
}
