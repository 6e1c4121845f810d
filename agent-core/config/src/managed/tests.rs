use std::collections::HashMap;
use std::path::Path;

use super::{ManagedPolicy, ServerRule};

use crate::test_files::write;

fn load(etc: &Path) -> ManagedPolicy {
    ManagedPolicy::load(
        &crate::SettingsFiles::default(),
        &HashMap::from([("LARIK_MANAGED_ROOT".to_owned(), etc.display().to_string())]),
    )
    .unwrap()
}

#[test]
fn drop_ins_apply_in_name_order_after_the_main_file_and_larik_s_own_last() {
    let etc = tempfile::tempdir().unwrap();
    let claude = etc.path().join("claude-code");
    write(&claude.join("managed-settings.json"), r#"{"permissions": {"deny": ["WebFetch"], "defaultMode": "plan"}}"#);
    write(
        &claude.join("managed-settings.d/20-b.json"),
        r#"{"permissions": {"defaultMode": "default", "deny": ["B"]}}"#,
    );
    write(&claude.join("managed-settings.d/10-a.json"), r#"{"permissions": {"deny": ["A"]}}"#);
    write(&claude.join("managed-settings.d/notes.txt"), "not settings");
    write(&etc.path().join("larik/managed-settings.json"), r#"{"sandbox": {"autoAllowBashIfSandboxed": false}}"#);
    let policy = load(etc.path());
    assert_eq!(policy.deny, ["WebFetch", "A", "B"]);
    assert_eq!(policy.default_mode.as_deref(), Some("default"));
    assert_eq!(policy.sandbox.auto_allow_bash_if_sandboxed, Some(false));
    assert_eq!(policy.files.len(), 4);
    assert!(policy.fails_closed().is_none());
}

#[test]
fn no_managed_files_is_no_policy() {
    let etc = tempfile::tempdir().unwrap();
    let policy = load(etc.path());
    assert!(!policy.is_present() && policy.fails_closed().is_none() && policy.mcp.allowed.is_none());
}

#[test]
fn servers_are_named_by_name_command_or_url() {
    let rule = |text: &str| serde_json::from_str::<ServerRule>(text).unwrap();
    let command = ["npx".to_owned(), "-y".to_owned(), "server-github".to_owned()];
    assert!(rule(r#"{"serverName": "github"}"#).matches("github", None, None));
    assert!(rule(r#"{"serverCommand": ["npx", "-y", "server-github"]}"#).matches("gh", Some(&command), None));
    assert!(!rule(r#"{"serverCommand": ["npx", "-y"]}"#).matches("gh", Some(&command), None));
    let url = rule(r#"{"serverUrl": "https://*.example.com/*"}"#);
    assert!(url.matches("x", None, Some("https://mcp.example.com/sse")));
    assert!(!url.matches("x", None, Some("https://mcp.example.com.attacker.localhost")));
    assert!(!url.matches("x", None, Some("http://mcp.example.com/sse")));
    let policy = super::McpPolicy {
        allowed: Some(vec![rule(r#"{"serverName": "github"}"#)]),
        denied: Vec::new(),
        exclusive: false,
    };
    assert!(policy.refuses("github", None, None).is_none());
    assert!(policy.refuses("other", None, None).is_some());
}

#[test]
fn a_restriction_larik_cannot_enforce_is_named_and_fails_closed() {
    let etc = tempfile::tempdir().unwrap();
    write(
        &etc.path().join("claude-code/managed-settings.json"),
        r#"{"sandbox": {"network": {"allowedDomains": ["example.com"], "httpProxyPort": 8080}}, "statusLine": {"type": "command"}, "cleanupPeriodDays": 7}"#,
    );
    let policy = load(etc.path());
    assert_eq!(policy.unenforced, ["sandbox.network.httpProxyPort"]);
    assert!(policy.fails_closed().unwrap().contains("`sandbox.network.httpProxyPort`"));
}
