use super::*;

use crate::test_files::write;

fn env(home: &Path) -> HashMap<String, String> {
    [
        ("HOME".to_owned(), home.display().to_string()),
        ("XDG_CONFIG_HOME".to_owned(), home.join(".config").display().to_string()),
        ("XDG_DATA_HOME".to_owned(), home.join(".local/share").display().to_string()),
    ]
    .into()
}

/// A marketplace laid out as Claude Code's official one is: plugins in `plugins/<name>`.
fn marketplace(dir: &Path) {
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        r#"{"name": "team-market", "owner": {"name": "Team"}, "plugins": [
            {"name": "guard", "source": "./plugins/guard", "description": "Stops risky commands"},
            {"name": "notes", "source": "./plugins/notes", "version": "0.3.0"},
            {"name": "escape", "source": "../outside"},
            {"name": "hosted", "source": {"source": "github", "repo": "someone/hosted"}}
        ]}"#,
    );
    write(&dir.join("plugins/guard/.claude-plugin/plugin.json"), r#"{"name": "guard", "version": "2.0.0"}"#);
    write(
        &dir.join("plugins/guard/hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch ${CLAUDE_PLUGIN_ROOT}/ran"}]}]}}"#,
    );
    write(&dir.join("plugins/notes/commands/note.md"), "Write a note.");
    write(&dir.parent().unwrap().join("outside/commands/x.md"), "outside");
}

#[test]
fn a_marketplaces_plugin_installs_disabled_and_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let source = tempfile::tempdir().unwrap();
    let market = source.path().join("market");
    marketplace(&market);
    std::os::unix::fs::symlink("/etc/passwd", market.join("plugins/guard/passwd")).unwrap();
    let env = env(home.path());
    let project = home.path();
    let market_text = market.display().to_string();

    let error = install(&market_text, None, project, &env).unwrap_err();
    assert!(error.to_string().contains("several plugins (guard, notes, escape, hosted)"), "{error}");
    let installed = install(&market_text, Some("guard"), project, &env).unwrap();
    assert_eq!(installed.id, "guard@team-market");
    assert_eq!(installed.version.as_deref(), Some("2.0.0"), "the manifest's version");
    assert_eq!(installed.state, registry::State::Disabled, "installing does not enable");
    let root = home.path().join(".local/share/larik/plugins/cache/team-market/guard/2.0.0");
    assert_eq!(installed.root, root);
    assert!(root.join("hooks/hooks.json").is_file());
    assert!(!root.join("ran").exists() && !market.join("plugins/guard/ran").exists(), "nothing ran");
    assert!(!root.join("passwd").exists(), "a link out of the plugin is not followed");

    // Added once, the marketplace is known by name.
    let notes = install("notes@team-market", None, project, &env).unwrap();
    assert_eq!((notes.id.as_str(), notes.version.as_deref()), ("notes@team-market", Some("0.3.0")));

    let escape = install(&market_text, Some("escape"), project, &env).unwrap_err();
    assert!(matches!(escape, PluginError::NotAPlugin(_)), "{escape}");
    let hosted = install(&market_text, Some("hosted"), project, &env).unwrap_err();
    assert!(hosted.to_string().contains("`github` source"), "{hosted}");
    let missing = install(&market_text, Some("nope"), project, &env).unwrap_err();
    assert!(missing.to_string().contains("has no plugin `nope`"), "{missing}");

    // Enabling writes the user's settings; the registry then says it is on.
    assert!(matches!(set_enabled("other@x", true, project, &env), Err(PluginError::NotInstalled(_))));
    set_enabled("guard@team-market", true, project, &env).unwrap();
    let (plugins, _) = registry::installed(&crate::config::SettingsFiles::default(), project, &env);
    let guard = plugins.iter().find(|plugin| plugin.id == "guard@team-market").unwrap();
    assert_eq!(guard.state, registry::State::Enabled);
    set_enabled("guard@team-market", false, project, &env).unwrap();
    let settings = std::fs::read_to_string(home.path().join(".config/larik/settings.json")).unwrap();
    assert!(settings.contains(r#""guard@team-market": false"#), "{settings}");
}

#[test]
fn a_git_marketplace_clones_and_a_plain_plugin_directory_installs() {
    let home = tempfile::tempdir().unwrap();
    let source = tempfile::tempdir().unwrap();
    let market = source.path().join("market");
    marketplace(&market);
    let repository = git2::Repository::init(&market).unwrap();
    let mut index = repository.index().unwrap();
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).unwrap();
    let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("Test", "test@example.localhost").unwrap();
    repository.commit(Some("HEAD"), &signature, &signature, "market", &tree, &[]).unwrap();
    let env = env(home.path());
    let url = format!("file://{}", market.display());
    let installed = install(&url, Some("notes"), home.path(), &env).unwrap();
    assert_eq!(installed.id, "notes@team-market");
    assert!(installed.root.join("commands/note.md").is_file());
    assert!(
        home.path().join(".local/share/larik/plugins/marketplaces/market/.claude-plugin/marketplace.json").is_file()
    );

    let plain = source.path().join("my-tool");
    write(&plain.join("commands/go.md"), "Go.");
    let installed = install(&plain.display().to_string(), None, home.path(), &env).unwrap();
    assert_eq!((installed.id.as_str(), installed.version.as_deref()), ("my-tool@local", Some("unknown")));
    let nothing = install(&source.path().display().to_string(), None, home.path(), &env).unwrap_err();
    assert!(matches!(nothing, PluginError::NotAPlugin(_)), "{nothing}");
}
