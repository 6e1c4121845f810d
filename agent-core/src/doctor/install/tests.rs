#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use super::*;

fn executable(path: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::canonicalize(path).unwrap()
}

#[test]
fn an_npm_install_is_told_and_its_launcher_on_path_is_not_another_larik() {
    let prefix = tempfile::tempdir().unwrap();
    let modules = prefix.path().join("lib/node_modules");
    let binary = executable(&modules.join("larik/node_modules/larik-linux-x64/bin/larik"));
    std::fs::write(modules.join("larik/node_modules/larik-linux-x64/package.json"), r#"{"version":"0.1.0"}"#).unwrap();
    let launcher = executable(&modules.join("larik/bin/larik.js"));
    std::fs::create_dir_all(prefix.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(&launcher, prefix.path().join("bin/larik")).unwrap();
    let check = check(&binary, Some(&prefix.path().join("bin").display().to_string()));
    assert_eq!(check.status, Status::Ok, "{}", check.detail);
    assert!(check.detail.contains("from the npm package larik-linux-x64 0.1.0"), "{}", check.detail);
    assert!(check.detail.contains("is its npm launcher"), "{}", check.detail);
}

#[test]
fn a_wheel_in_a_venv_is_told_and_another_larik_first_on_path_is_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    let binary = executable(&venv.join("bin/larik"));
    std::fs::create_dir_all(venv.join("lib/python3.11/site-packages/larik-0.1.0.dist-info")).unwrap();
    let cargo_bin = home.path().join(".cargo/bin");
    executable(&cargo_bin.join("larik"));
    std::fs::write(home.path().join(".cargo/.crates.toml"), "").unwrap();

    let alone = check(&binary, Some(&venv.join("bin").display().to_string()));
    assert_eq!(alone.status, Status::Ok, "{}", alone.detail);
    assert!(alone.detail.contains("from the Python package larik 0.1.0 in"), "{}", alone.detail);
    assert!(alone.detail.contains("it is the `larik` on PATH"), "{}", alone.detail);

    let path = std::env::join_paths([cargo_bin.clone(), venv.join("bin")]).unwrap();
    let shadowed = check(&binary, Some(path.to_str().unwrap()));
    assert_eq!(shadowed.status, Status::Warning, "{}", shadowed.detail);
    assert!(shadowed.detail.contains("another one"), "{}", shadowed.detail);
    assert!(shadowed.detail.contains("(from cargo install (or cargo binstall))"), "{}", shadowed.detail);

    let nowhere = check(&binary, Some("/nonexistent"));
    assert!(nowhere.detail.contains("no `larik` on PATH"), "{}", nowhere.detail);
}

#[test]
fn builds_from_source_and_copies_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(origin(&executable(&dir.path().join("target/debug/larik"))), Origin::TargetDirectory);
    assert_eq!(origin(&executable(&dir.path().join("cache/target/release/larik"))), Origin::TargetDirectory);
    assert_eq!(origin(&executable(&dir.path().join("opt/larik-0.1.0/larik"))), Origin::Other);
    assert_eq!(origin(&executable(&dir.path().join("usr/local/bin/larik"))), Origin::Other);
}
