//! Where this `larik` came from (an npm package, a Python wheel, cargo, a build from source, or
//! an archive or copy) and whether the `larik` an editor finds on PATH is this one: an older
//! install left earlier on PATH is the usual reason an editor runs another version than the
//! terminal shows.

use std::path::{Path, PathBuf};

use super::{Check, Status};

/// How a binary was installed, told from where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// `npm i -g larik` / `npx larik`: the platform package that carries the binary.
    Npm { package: String, version: Option<String>, node_modules: PathBuf },
    /// `pip install larik`, `pipx install larik`, `uvx larik`: the wheel's environment.
    Wheel { environment: PathBuf, version: Option<String> },
    /// `cargo install` or `cargo binstall`.
    Cargo,
    /// A cargo target directory: built from source.
    TargetDirectory,
    /// Anything else: an unpacked release archive or a copy.
    Other,
}

impl Origin {
    fn describe(&self) -> String {
        match self {
            Origin::Npm { package, version, .. } => {
                format!("the npm package {package}{}", version.as_deref().map(|v| format!(" {v}")).unwrap_or_default())
            }
            Origin::Wheel { environment, version } => format!(
                "the Python package larik{} in {}",
                version.as_deref().map(|v| format!(" {v}")).unwrap_or_default(),
                environment.display()
            ),
            Origin::Cargo => "cargo install (or cargo binstall)".into(),
            Origin::TargetDirectory => "a build from source".into(),
            Origin::Other => "a release archive or a copy".into(),
        }
    }
}

/// How `binary` (its real path) was installed.
pub(super) fn origin(binary: &Path) -> Origin {
    let Some(bin) = binary.parent() else { return Origin::Other };
    if let Some(package_dir) = bin.parent().filter(|_| bin.file_name().is_some_and(|name| name == "bin"))
        && let Some(node_modules) =
            package_dir.parent().filter(|dir| dir.file_name().is_some_and(|n| n == "node_modules"))
        && let Some(package) =
            package_dir.file_name().and_then(|name| name.to_str()).filter(|n| n.starts_with("larik-"))
    {
        let manifest = std::fs::read_to_string(package_dir.join("package.json")).unwrap_or_default();
        let version = serde_json::from_str::<serde_json::Value>(&manifest)
            .ok()
            .and_then(|manifest| manifest["version"].as_str().map(str::to_owned));
        return Origin::Npm { package: package.to_owned(), version, node_modules: node_modules.to_path_buf() };
    }
    if let Some(environment) = bin.parent()
        && let Some(version) = wheel_version(environment)
    {
        return Origin::Wheel { environment: environment.to_path_buf(), version };
    }
    if bin.join(".crates.toml").exists() || bin.parent().is_some_and(|home| home.join(".crates.toml").exists()) {
        return Origin::Cargo;
    }
    let names: Vec<_> = binary.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    if names.windows(2).any(|pair| pair[0] == "target" && (pair[1] == "debug" || pair[1] == "release")) {
        return Origin::TargetDirectory;
    }
    Origin::Other
}

/// The larik wheel's version when `environment` (a venv, or `~/.local`) holds it:
/// `lib/python3.X/site-packages/larik-VERSION.dist-info`.
fn wheel_version(environment: &Path) -> Option<Option<String>> {
    let lib = std::fs::read_dir(environment.join("lib")).ok()?;
    for python in lib.flatten().filter(|entry| entry.file_name().to_string_lossy().starts_with("python")) {
        let Ok(packages) = std::fs::read_dir(python.path().join("site-packages")) else { continue };
        for entry in packages.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(version) = name.strip_prefix("larik-").and_then(|rest| rest.strip_suffix(".dist-info")) {
                return Some(Some(version.to_owned()));
            }
        }
    }
    None
}

/// Whether `found` (a real path) is the npm launcher of the install `origin` belongs to.
fn is_own_launcher(found: &Path, origin: &Origin) -> bool {
    let Origin::Npm { node_modules, .. } = origin else { return false };
    let Some(launcher_package) = found.parent().and_then(Path::parent) else { return false };
    let Some(launcher_modules) = launcher_package.parent() else { return false };
    launcher_package.file_name().is_some_and(|name| name == "larik")
        && (node_modules == launcher_modules || *node_modules == launcher_package.join("node_modules"))
}

/// The check: how this binary was installed, and what `larik` on PATH is.
pub(super) fn check(binary: &Path, path: Option<&str>) -> Check {
    let binary = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    let origin = origin(&binary);
    let mut detail = format!("{} (from {})", binary.display(), origin.describe());
    let on_path = path.and_then(|path| crate::child_process::on_path("larik", path));
    let status = match on_path {
        None => {
            detail.push_str("; no `larik` on PATH: an editor that starts `larik` by name will not find it (name this path in its settings)");
            Status::Ok
        }
        Some(found) => {
            let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
            if real == binary {
                detail.push_str("; it is the `larik` on PATH");
                Status::Ok
            } else if is_own_launcher(&real, &origin) {
                detail.push_str(&format!("; `larik` on PATH is its npm launcher ({})", found.display()));
                Status::Ok
            } else {
                detail.push_str(&format!(
                    "; but `larik` on PATH is another one, {} (from {}): editors that start `larik` by name run that one; remove it or put this one first",
                    found.display(),
                    self::origin(&real).describe()
                ));
                Status::Warning
            }
        }
    };
    Check::new("install", "Installed", status, detail)
}

#[cfg(test)]
mod tests;
