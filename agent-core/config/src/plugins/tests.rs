use super::*;

use crate::test_files::write;

struct Setup {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let setup = Setup { home: tempfile::tempdir().unwrap(), project: tempfile::tempdir().unwrap() };
        let cache = setup.home.path().join(".claude/plugins/cache/tools-market");
        for name in ["formatter", "reviewer", "teamtool"] {
            write(&cache.join(name).join("1.0.0/.claude-plugin/plugin.json"), &format!(r#"{{"name": "{name}"}}"#));
        }
        let project = setup.project.path().display();
        write(
            &setup.home.path().join(".claude/plugins/installed_plugins.json"),
            &format!(
                r#"{{"version": 2, "plugins": {{
                    "formatter@tools-market": [{{"scope": "user", "installPath": "~/.claude/plugins/cache/tools-market/formatter/1.0.0", "version": "1.0.0"}}],
                    "reviewer@tools-market": [{{"scope": "user", "installPath": "{home}/.claude/plugins/cache/tools-market/reviewer/1.0.0"}}],
                    "teamtool@tools-market": [
                        {{"scope": "project", "projectPath": "/somewhere/else", "installPath": "/nowhere"}},
                        {{"scope": "project", "projectPath": "{project}", "installPath": "cache/tools-market/teamtool/1.0.0"}}
                    ],
                    "elsewhere@tools-market": [{{"scope": "local", "projectPath": "/somewhere/else", "installPath": "/nowhere"}}]
                }}}}"#,
                home = setup.home.path().display()
            ),
        );
        setup
    }

    fn env(&self) -> HashMap<String, String> {
        let home = self.home.path();
        [
            ("HOME".to_owned(), home.display().to_string()),
            ("XDG_CONFIG_HOME".to_owned(), home.join(".config").display().to_string()),
            ("XDG_DATA_HOME".to_owned(), home.join(".local/share").display().to_string()),
            ("LARIK_MANAGED_ROOT".to_owned(), home.join("etc").display().to_string()),
        ]
        .into()
    }

    fn states(&self) -> Vec<(String, State)> {
        let (installed, problems) = installed(&SettingsFiles::default(), self.project.path(), &self.env());
        assert!(problems.is_empty(), "{problems:?}");
        installed.into_iter().map(|plugin| (plugin.id, plugin.state)).collect()
    }
}

fn state(states: &[(String, State)], id: &str) -> State {
    states.iter().find(|(found, _)| found == id).map(|(_, state)| *state).unwrap()
}

#[test]
fn a_claude_code_registry_reads_with_every_install_scope() {
    let setup = Setup::new();
    let (installed, problems) = installed(&SettingsFiles::default(), setup.project.path(), &setup.env());
    assert!(problems.is_empty(), "{problems:?}");
    let ids: Vec<&str> = installed.iter().map(|plugin| plugin.id.as_str()).collect();
    assert_eq!(
        ids,
        ["formatter@tools-market", "reviewer@tools-market", "teamtool@tools-market"],
        "another project's install is not this one's"
    );
    let cache = setup.home.path().join(".claude/plugins/cache/tools-market");
    assert_eq!(installed[0].root, cache.join("formatter/1.0.0"), "`~/` is the user's home");
    assert_eq!(installed[0].version.as_deref(), Some("1.0.0"));
    assert_eq!(
        installed[2].root,
        setup.home.path().join(".claude/plugins").join("cache/tools-market/teamtool/1.0.0"),
        "this project's install, relative to the registry"
    );
    assert!(installed.iter().all(|plugin| plugin.state == State::Disabled), "installed is not enabled");
}

#[test]
fn the_user_enables_a_repository_only_narrows_or_waits_and_the_policy_decides_first() {
    let setup = Setup::new();
    let home = setup.home.path();
    write(
        &home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"formatter@tools-market": true, "reviewer@tools-market": true}}"#,
    );
    write(
        &setup.project.path().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"reviewer@tools-market": false, "teamtool@tools-market": true}}"#,
    );
    let states = setup.states();
    assert_eq!(state(&states, "formatter@tools-market"), State::Enabled);
    assert_eq!(state(&states, "reviewer@tools-market"), State::Disabled, "a repository may turn one off");
    assert_eq!(state(&states, "teamtool@tools-market"), State::EnabledByProject, "its code waits for approval");

    // Larik's own file (where `larik plugin disable` writes) wins over Claude Code's.
    write(&home.join(".config/larik/settings.json"), r#"{"enabledPlugins": {"formatter@tools-market": false}}"#);
    assert_eq!(state(&setup.states(), "formatter@tools-market"), State::Disabled);
    // The user turning it off is not overridden by the repository turning it on.
    write(
        &setup.project.path().join(".larik/settings.json"),
        r#"{"enabledPlugins": {"formatter@tools-market": true}}"#,
    );
    assert_eq!(state(&setup.states(), "formatter@tools-market"), State::Disabled);

    // The organisation's word is final, both ways.
    write(
        &home.join("etc/claude-code/managed-settings.json"),
        r#"{"enabledPlugins": {"formatter@tools-market": true, "teamtool@tools-market": false}}"#,
    );
    let states = setup.states();
    assert_eq!(state(&states, "formatter@tools-market"), State::Enabled);
    assert_eq!(state(&states, "teamtool@tools-market"), State::Disabled);
}

#[test]
fn an_enabled_plugin_names_its_parts_and_keeps_them_inside_it() {
    let setup = Setup::new();
    let home = setup.home.path();
    let root = home.join(".claude/plugins/cache/tools-market/formatter/1.0.0");
    write(
        &root.join(MANIFEST),
        r#"{"name": "fmt", "commands": ["./extra/run.md", "../../../../../../../etc"], "agents": "./people/",
            "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fix.sh"}]}]},
            "mcpServers": "./servers.json"}"#,
    );
    write(&root.join("commands/check.md"), "Check.");
    write(&root.join("extra/run.md"), "Run.");
    write(&root.join("people/critic.md"), "---\ndescription: x\n---\nx");
    write(&root.join("hooks/hooks.json"), r#"{"description": "formatting", "hooks": {"Stop": []}}"#);
    write(&root.join("servers.json"), r#"{"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db"}}"#);
    write(&home.join(".claude/settings.json"), r#"{"enabledPlugins": {"formatter@tools-market": true}}"#);
    let (plugins, problems) = enabled(&SettingsFiles::default(), setup.project.path(), &setup.env());
    assert!(problems.is_empty(), "{problems:?}");
    let [plugin] = plugins.as_slice() else { panic!("{plugins:?}") };
    assert_eq!(
        (plugin.id.as_str(), plugin.name.as_str(), plugin.from_project),
        ("formatter@tools-market", "fmt", false)
    );
    let real = std::fs::canonicalize(&root).unwrap();
    assert_eq!(
        plugin.command_paths(),
        [root.join("commands"), real.join("extra/run.md")],
        "a path out of the plugin is not followed"
    );
    assert_eq!(plugin.agent_paths(), [real.join("people")]);
    let (hooks, problems) = plugin.hooks();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(hooks.len(), 2);
    assert_eq!(hooks[0].value["hooks"], serde_json::json!({"Stop": []}), "hooks.json's own wrapper");
    assert!(hooks[1].value["hooks"]["PostToolUse"].is_array(), "inline hooks in the manifest");
    let (servers, _) = plugin.mcp_servers();
    assert_eq!(servers[0].value["mcpServers"]["db"]["command"], "${CLAUDE_PLUGIN_ROOT}/db");
    assert_eq!(plugin.dirs.expand("${CLAUDE_PLUGIN_ROOT}/db"), format!("{}/db", root.display()));
    assert_eq!(plugin.dirs.data, home.join(".claude/plugins/data/formatter-tools-market"));
}

#[test]
fn a_broken_registry_or_a_missing_install_is_said_not_fatal() {
    let setup = Setup::new();
    let home = setup.home.path();
    write(
        &home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"reviewer@tools-market": true, "formatter@tools-market": "yes"}}"#,
    );
    std::fs::remove_dir_all(home.join(".claude/plugins/cache/tools-market/reviewer")).unwrap();
    let (plugins, problems) = enabled(&SettingsFiles::default(), setup.project.path(), &setup.env());
    assert!(plugins.is_empty());
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().any(|problem| problem.contains("reviewer@tools-market") && problem.contains("not there")));
    assert!(problems.iter().any(|problem| problem.contains("must be true or false")));
    write(&home.join(".claude/plugins/installed_plugins.json"), "{oops");
    let (installed, problems) = installed(&SettingsFiles::default(), setup.project.path(), &setup.env());
    assert!(installed.is_empty());
    assert!(problems[0].contains("installed_plugins.json"), "{problems:?}");
}
