use std::path::{Path, PathBuf};

use super::*;

fn plan_in(root: &Path) -> Plan {
    Plan {
        writable: vec![root.to_path_buf()],
        pinned: vec![root.to_path_buf(), root.join(".git")],
        read_only: vec![root.join(".git/hooks"), root.join(".mcp.json")],
        command: vec!["bash".into(), "-c".into(), "make test".into()],
        ..Plan::default()
    }
}

/// The value of parameter `name`.
fn parameter<'a>(profile: &'a Profile, name: &str) -> &'a Path {
    profile.parameters.iter().find(|(candidate, _)| candidate == name).map(|(_, path)| path.as_path()).unwrap()
}

/// Parentheses balance outside strings, and every parameter the text names is defined and
/// every defined one is named.
fn assert_well_formed(profile: &Profile) {
    let (mut depth, mut in_string) = (0i32, false);
    for character in profile.text.chars() {
        match character {
            '"' => in_string = !in_string,
            '(' if !in_string => depth += 1,
            ')' if !in_string => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0, "a closing parenthesis too many in\n{}", profile.text);
    }
    assert_eq!((depth, in_string), (0, false), "unbalanced profile\n{}", profile.text);
    for (name, _) in &profile.parameters {
        assert!(profile.text.contains(&format!("(param \"{name}\")")), "{name} is never used");
    }
    let named = profile.text.matches("(param \"").count();
    assert_eq!(named, profile.parameters.len(), "a parameter named twice or never defined");
}

#[test]
fn writes_are_allowed_only_in_the_roots_and_never_on_protected_or_pinned_paths() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    let profile = profile(&plan_in(&root));
    assert_well_formed(&profile);
    assert!(profile.text.starts_with("(version 1)\n(deny default)\n"), "{}", profile.text);
    assert_eq!(parameter(&profile, "WRITABLE_0"), root);
    assert_eq!(parameter(&profile, "PROTECTED_0"), root.join(".git/hooks"));
    // Absent, yet covered by name: no stand-in is needed.
    assert_eq!(parameter(&profile, "PROTECTED_1"), root.join(".mcp.json"));
    assert_eq!(parameter(&profile, "PINNED_0"), root);
    let write = profile.text.lines().find(|line| line.starts_with("(allow file-write*")).unwrap();
    assert!(
        write.starts_with("(allow file-write* (require-all (require-any (subpath (param \"WRITABLE_0\"))"),
        "{write}"
    );
    assert!(write.contains("(require-not (require-any (subpath (param \"PROTECTED_0\")) (subpath (param \"PROTECTED_1\")) (literal (param \"PINNED_0\")) (literal (param \"PINNED_1\"))"), "{write}");
    assert_eq!(profile.text.matches("file-write").count(), 1, "one rule decides every write:\n{}", profile.text);
    assert!(profile.text.contains("(allow file-read*)\n"));
}

#[test]
fn a_path_can_never_change_the_profile() {
    let hostile = PathBuf::from("/tmp/x\") (allow default) (allow network*) (\"");
    let plan = Plan {
        writable: vec![hostile.clone()],
        read_only: vec![hostile.join("\n(allow file-write*)")],
        hidden: vec![PathBuf::from("/home/u/\"quoted\"")],
        command: vec!["true".into()],
        ..Plan::default()
    };
    let profile = profile(&plan);
    assert_well_formed(&profile);
    assert!(!profile.text.contains("(allow default)"), "{}", profile.text);
    assert!(!profile.text.contains("network"), "{}", profile.text);
    assert!(!profile.text.contains("/tmp/x"), "{}", profile.text);
    assert!(profile.parameters.iter().any(|(_, path)| path.ends_with("x\") (allow default) (allow network*) (\"")));
}

#[test]
fn paths_are_resolved_as_seatbelt_sees_them_even_before_they_exist() {
    let dir = tempfile::tempdir().unwrap();
    let real_dir = std::fs::canonicalize(dir.path()).unwrap().join("real");
    std::fs::create_dir(&real_dir).unwrap();
    std::os::unix::fs::symlink(&real_dir, dir.path().join("link")).unwrap();
    assert_eq!(real(&dir.path().join("link/absent/deeper")), real_dir.join("absent/deeper"));
    assert_eq!(real(&dir.path().join("link")), real_dir);
}

#[test]
fn hidden_paths_cannot_be_read_or_written_but_for_the_readable_ones_inside() {
    let plan = Plan {
        writable: vec![PathBuf::from("/nonexistent-root")],
        hidden: vec![PathBuf::from("/nonexistent-home/.aws")],
        readable: vec![PathBuf::from("/nonexistent-home/.aws/config")],
        command: vec!["true".into()],
        ..Plan::default()
    };
    let profile = profile(&plan);
    assert_well_formed(&profile);
    assert!(profile.text.contains("(allow file-read* (require-not (require-any (subpath (param \"HIDDEN_0\")))))"));
    assert!(profile.text.contains("(allow file-read* (subpath (param \"READABLE_0\")))"), "{}", profile.text);
    assert!(!profile.text.contains("(allow file-read*)\n"), "reads are not open everywhere");
    let write = profile.text.lines().find(|line| line.starts_with("(allow file-write*")).unwrap();
    assert!(write.contains("(subpath (param \"HIDDEN_WRITE_"), "{write}");
}

#[test]
fn the_network_is_all_the_proxy_or_nothing() {
    let base =
        Plan { writable: vec![PathBuf::from("/nonexistent-root")], command: vec!["true".into()], ..Plan::default() };
    let closed = profile(&base);
    assert!(!closed.text.contains("network"), "{}", closed.text);
    assert!(!closed.text.contains("DNSConfiguration"), "no resolver without the network");

    let proxied = profile(&Plan { proxy_port: Some(4242), ..base.clone() });
    assert_well_formed(&proxied);
    let network: Vec<&str> = proxied.text.lines().filter(|line| line.contains("network")).collect();
    assert_eq!(network, ["(allow network-outbound (remote ip \"localhost:4242\"))"]);
    assert!(!proxied.text.contains("DNSConfiguration"), "the proxy resolves names, the command does not");

    let open = profile(&Plan { network: true, proxy_port: Some(4242), ..base.clone() });
    assert!(open.text.contains("(allow network*)") && open.text.contains("DNSConfiguration"));
    assert!(!open.text.contains("4242"));

    let local = profile(&Plan { proxy_port: Some(4242), local_binding: true, unix_sockets: true, ..base });
    assert_well_formed(&local);
    assert!(local.text.contains("(allow network-bind (local ip \"localhost:*\"))"));
    assert!(local.text.contains(
        "(allow network-outbound (require-all (remote unix-socket) (require-not (require-any (literal (param \"SERVICE_"
    ));
    let docker = local.parameters.iter().find(|(name, _)| name.starts_with("SERVICE_")).unwrap();
    assert!(SERVICE_SOCKETS.iter().any(|socket| real(Path::new(socket)) == docker.1));
}

#[test]
fn sandbox_exec_gets_the_profile_its_parameters_and_the_proxy_environment() {
    let root = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let plan = Plan { proxy_port: Some(4242), ..plan_in(&root) };
    let (program, args) = Seatbelt.command(Path::new("/ignored/larik"), &plan).unwrap();
    assert_eq!(program, PathBuf::from("/usr/bin/sandbox-exec"));
    assert_eq!(args[0], "-p");
    assert_eq!(args[1], profile(&plan).text);
    assert_eq!(args[2..4], ["-D".to_owned(), format!("WRITABLE_0={}", root.display())]);
    let env = args.iter().position(|arg| arg == "/usr/bin/env").unwrap();
    assert!(args[..env].chunks(2).skip(1).all(|pair| pair[0] == "-D"), "{args:?}");
    assert!(args.contains(&"HTTPS_PROXY=http://127.0.0.1:4242".to_owned()));
    assert!(args.contains(&"ALL_PROXY=socks5h://127.0.0.1:4242".to_owned()));
    assert_eq!(args[args.len() - 3..], ["bash".to_owned(), "-c".to_owned(), "make test".to_owned()]);

    let open = Plan { network: true, ..plan };
    let (_, args) = Seatbelt.command(Path::new("/ignored/larik"), &open).unwrap();
    assert!(!args.contains(&"/usr/bin/env".to_owned()), "no proxy with the network open");
    assert!(!Seatbelt.needs_stand_ins() && Seatbelt.proxy_over_tcp());
}
