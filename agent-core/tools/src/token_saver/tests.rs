//! The token saver's filters against real outputs, one table row per format and fixture
//! (`fixtures/`, captured from the tools or written line for line as they print), and the
//! outputs it must leave alone.

use super::filters::FORMATS;
use super::{format, shrink, thousands};

/// A recognised command and its output: what must stay, and what must go.
struct Case {
    command: &'static str,
    output: &'static str,
    kept: &'static [&'static str],
    dropped: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        command: "cargo test",
        output: include_str!("fixtures/cargo_test_passing.txt"),
        kept: &[
            "Finished `test` profile",
            "Running unittests src/lib.rs",
            "test tests::slow_exhaustive_check ... ignored",
            "test result: ok. 9 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "test result: ok. 2 passed;",
            "Doc-tests shapes",
        ],
        dropped: &[
            "Compiling shapes",
            "test tests::area_of_a_square ... ok",
            "test area_from_outside ... ok",
            "test src/lib.rs - double (line 21) ... ok",
        ],
    },
    Case {
        // A failing run is never filtered (it exits 101), but the filter alone keeps what failed.
        command: "cargo test",
        output: include_str!("fixtures/cargo_test_failing.txt"),
        kept: &[
            "test tests::area_overflows_gracefully ... FAILED",
            "---- tests::area_overflows_gracefully stdout ----",
            "panicked at src/lib.rs:16:46:\nassertion `left == right` failed: 3x3\n  left: 9\n right: 10",
            "failures:\n    tests::area_overflows_gracefully\n    tests::perimeter_of_a_rectangle",
            "test result: FAILED. 7 passed; 2 failed; 1 ignored",
            "error: test failed, to rerun pass `--lib`",
        ],
        dropped: &["test tests::area_is_commutative ... ok", "Compiling shapes"],
    },
    Case {
        command: "cargo build --release",
        output: include_str!("fixtures/cargo_build.txt"),
        kept: &[
            "warning: unused variable: `x`",
            "  --> src/lib.rs:25:33",
            "help: if this is intentional",
            "generated 1 warning",
            "Finished `dev` profile",
        ],
        dropped: &[
            "Compiling serde v1.0.215",
            "Downloaded syn v2.0.90",
            "Updating registry index",
            "Locking 14 packages",
        ],
    },
    Case {
        command: "python -m pytest",
        output: include_str!("fixtures/pytest_passing.txt"),
        kept: &[
            "test session starts",
            "collected 48 items",
            "warnings summary",
            "DeprecationWarning: datetime.datetime.utcnow()",
            "47 passed, 1 skipped, 1 warning in 0.84s",
        ],
        dropped: &[
            "platform linux",
            "rootdir:",
            "plugins:",
            "tests/test_models.py ....",
            "tests/test_pricing.py ..........s.",
        ],
    },
    Case {
        command: "pytest -v tests/test_pricing.py",
        output: include_str!("fixtures/pytest_verbose_failing.txt"),
        kept: &[
            "tests/test_pricing.py::test_discount_never_negative FAILED",
            "tests/test_pricing.py::test_free_items SKIPPED (needs the catalog)",
            ">       assert order.discount(percent=150) >= 0",
            "E       AssertionError: assert Decimal('-0.50') >= 0",
            "FAILED tests/test_pricing.py::test_discount_never_negative - AssertionError",
            "1 failed, 6 passed, 1 skipped in 0.21s",
        ],
        dropped: &["test_unit_price PASSED", "test_price_history PASSED", "cachedir:"],
    },
    Case {
        command: "npm ci",
        output: include_str!("fixtures/npm_install.txt"),
        kept: &[
            "npm warn deprecated inflight@1.0.6",
            "npm warn deprecated glob@7.2.3",
            "added 412 packages, and audited 413 packages in 12s",
            "found 0 vulnerabilities",
        ],
        dropped: &["looking for funding", "npm fund", "New major version of npm"],
    },
    Case {
        command: "npm test",
        output: include_str!("fixtures/npm_test.txt"),
        kept: &[
            "> inventory-ui@2.3.0 test",
            "PASS src/lib/pricing.test.ts",
            "○ skipped shows a banner",
            "Tests:       1 skipped, 13 passed, 14 total",
            "Ran all test suites.",
        ],
        dropped: &["✓ adds tax to the unit price", "✓ removes an item"],
    },
    Case {
        command: "go test -v ./...",
        output: include_str!("fixtures/go_test_verbose.txt"),
        kept: &[
            "schedule_test.go:41: next run at",
            "--- SKIP: TestScheduleSkipsHolidays (0.00s)",
            "schedule_test.go:77: no holiday calendar on this machine",
            "ok  \texample.com/cron/schedule\t0.014s",
            "ok  \texample.com/cron/store\t0.031s",
        ],
        dropped: &[
            "=== RUN",
            "=== PAUSE",
            "--- PASS: TestParseDuration (0.00s)",
            "--- PASS: TestParseDuration/seconds",
            "[no test files]",
            "\nPASS\n",
        ],
    },
    Case {
        command: "go test -v ./...",
        output: include_str!("fixtures/go_test_failing.txt"),
        kept: &[
            "schedule_test.go:44: got 2026-12-02 07:00:00",
            "--- FAIL: TestScheduleNext (0.00s)",
            "FAIL\texample.com/cron/schedule\t0.012s",
            "ok  \texample.com/cron/store",
        ],
        dropped: &["--- PASS: TestStoreRoundTrip", "=== RUN"],
    },
    Case {
        command: "git status",
        output: include_str!("fixtures/git_status.txt"),
        kept: &[
            "On branch main",
            "Your branch is ahead of 'origin/main' by 2 commits.",
            "Changes to be committed:\n\tnew file:   src/printer.rs",
            "Changes not staged for commit:\n\tmodified:   docs/config.md\n\tmodified:   src/parser.rs",
            "Untracked files:\n\tnotes.txt",
        ],
        dropped: &["(use \"git push\"", "(use \"git restore", "(use \"git add"],
    },
    Case {
        command: "git --no-pager log",
        output: include_str!("fixtures/git_log.txt"),
        kept: &[
            "c12fd592ceaf Errors: one enum for the reader, variants named for what the caller does\nf301cfc6826a Reject duplicate keys instead of keeping the last\n",
            "8a868364bfea Parse nested tables in the config reader\n[token saver:",
        ],
        dropped: &["Author:", "Date:", "Fixes #412.", "c12fd592ceaf6314"],
    },
];

#[test]
fn every_filter_compiles() {
    assert_eq!(format::compiled_count(), FORMATS.len());
}

#[test]
fn each_format_drops_the_noise_and_keeps_what_matters() {
    for case in CASES {
        let shown = shrink(case.command, case.output, "toolu_1")
            .unwrap_or_else(|| panic!("`{}` was not filtered:\n{}", case.command, case.output));
        for kept in case.kept {
            assert!(shown.contains(kept), "`{}` lost {kept:?}:\n{shown}", case.command);
        }
        for dropped in case.dropped {
            assert!(!shown.contains(dropped), "`{}` kept {dropped:?}:\n{shown}", case.command);
        }
        let note = format!("[token saver: {} → ", thousands(case.output.len()));
        assert!(
            shown.contains(&note)
                && shown.trim_end().ends_with(r#"the exact output: raw_output {"tool_call_id": "toolu_1"}]"#),
            "{shown}"
        );
        assert!(!shown.contains("\n\n\n"), "blank lines left behind are merged:\n{shown}");
    }
}

#[test]
fn the_command_is_recognised_through_cd_wrappers_paths_and_options() {
    let passing = include_str!("fixtures/cargo_test_passing.txt");
    for command in [
        "cd crates/shapes && cargo test",
        "RUST_BACKTRACE=1 cargo test -p shapes",
        "timeout 600 cargo test --workspace",
        "(cd shapes; cargo test)",
        "bash -c 'cargo test'",
        "cargo test 2>&1",
    ] {
        assert!(shrink(command, passing, "t").is_some(), "{command}");
    }
    let log = include_str!("fixtures/git_log.txt");
    for command in ["/usr/bin/git log", "git --no-pager log -n 5", "git log main"] {
        assert!(shrink(command, log, "t").is_some(), "{command}");
    }
    let pytest = include_str!("fixtures/pytest_passing.txt");
    for command in ["pytest", "python3 -m pytest -q tests", "python -u -m pytest", "uv run pytest"] {
        assert!(shrink(command, pytest, "t").is_some(), "{command}");
    }
}

#[test]
fn pipelines_compounds_and_unknown_commands_keep_their_output() {
    let passing = include_str!("fixtures/cargo_test_passing.txt");
    for command in [
        "cargo test | tail -20",
        "cargo build && cargo test",
        "cargo test; echo done",
        "cargo test > out.txt",
        "cargo test $(cat args)",
        "make test",
        "cargo testx",
        "cargo run -- test",
        "echo cargo test",
        "python -m pip install pytest",
    ] {
        assert_eq!(shrink(command, passing, "t"), None, "{command}");
    }
}

#[test]
fn output_not_in_the_format_is_kept() {
    // A patch, a stat and a custom format: the records hold lines the filter cannot account for.
    let patch = "commit 8a868364bfead774eea6d2d06de952d5ce673a8c\nAuthor: Ana Lima <ana@example.com>\nDate:   Fri Nov 20 10:12:00 2026 +0000\n\n    Parse nested tables\n\ndiff --git a/src/parser.rs b/src/parser.rs\nindex 1..2 100644\n--- a/src/parser.rs\n+++ b/src/parser.rs\n@@ -1 +1,2 @@\n+fn nested() {}\n";
    assert_eq!(shrink("git log -p", &patch.repeat(20), "t"), None);
    let stat = "commit 8a868364bfead774eea6d2d06de952d5ce673a8c\nAuthor: Ana Lima <ana@example.com>\nDate:   Fri Nov 20 10:12:00 2026 +0000\n\n    Parse nested tables\n\n src/parser.rs | 12 ++++++++----\n 1 file changed, 8 insertions(+), 4 deletions(-)\n\n";
    assert_eq!(shrink("git log --stat", &stat.repeat(20), "t"), None);
    let oneline = "c12fd59 Errors: one enum\nf301cfc Reject duplicate keys\n".repeat(50);
    assert_eq!(shrink("git log --oneline", &oneline, "t"), None);
    assert_eq!(shrink("git status -s", &" M src/parser.rs\n?? notes.txt\n".repeat(30), "t"), None);
    // Something else entirely printed by a recognised command.
    assert_eq!(
        shrink("cargo test", &"Compiling everything\n".repeat(100), "t"),
        None,
        "no summary line: not cargo's test output"
    );
}

#[test]
fn a_filter_that_saves_too_little_keeps_the_output() {
    // One passing test among long failure output: dropping it saves less than its note costs.
    let output = format!(
        "running 2 tests\ntest a ... ok\ntest b ... FAILED\n{}\ntest result: FAILED. 1 passed; 1 failed\n",
        "    at some/frame.rs:1\n".repeat(40)
    );
    assert_eq!(shrink("cargo test", &output, "t"), None);
}

#[test]
fn counts_are_grouped_by_thousands() {
    assert_eq!(
        (thousands(0), thousands(999), thousands(1_000), thousands(12_345), thousands(1_234_567)),
        ("0".into(), "999".into(), "1,000".into(), "12,345".into(), "1,234,567".into())
    );
}

#[test]
fn only_the_users_own_settings_turn_it_on() {
    use super::TokenSaver;
    use crate::config::{SettingsSource, load_settings};
    let (home, project, data) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let env: std::collections::HashMap<String, String> =
        [("XDG_CONFIG_HOME".to_owned(), home.path().display().to_string())].into();
    let source = SettingsSource::new(project.path().to_path_buf(), env.clone());
    let on = || TokenSaver::for_session(Some(&source), Some(data.path()), "session-1").is_some();
    assert!(!on(), "off by default");
    std::fs::create_dir_all(project.path().join(".larik")).unwrap();
    std::fs::write(project.path().join(".larik/settings.json"), r#"{"tokenSaver": true}"#).unwrap();
    assert!(!on(), "a project cannot turn it on");
    let problems = load_settings(project.path(), &env).unwrap().problems;
    assert!(problems.iter().any(|problem| problem.contains("`tokenSaver` is ignored")), "{problems:?}");
    std::fs::create_dir_all(home.path().join("larik")).unwrap();
    std::fs::write(home.path().join("larik/settings.json"), r#"{"tokenSaver": true}"#).unwrap();
    assert!(on(), "the user's settings turn it on");
    assert!(TokenSaver::for_session(Some(&source), None, "session-1").is_none(), "nowhere private to keep output: off");
    assert!(
        TokenSaver::for_session(None, Some(data.path()), "session-1").is_none(),
        "a session without settings files: off"
    );
}
