//! The token saver's filters, as data: one [`Format`] per kind of output, each saying which
//! commands print it, how the output shows it really is that format, and which lines go. Adding
//! a format is adding an entry here and a fixture with a test beside the others; the code that
//! applies them (`format.rs`) knows no format by name.
//!
//! Patterns are regexes over single lines. A format's drop patterns never remove a line that
//! speaks of an error, a warning or a failure ([`ALWAYS_KEEP`]): what a filter may lose is the
//! noise of success only.

/// Lines no format drops, whatever its own patterns say.
pub(super) const ALWAYS_KEEP: &str = r"(?i)\b(errors?|warn|warnings?|fail|failed|failures?|failing|panic|panicked)\b";

/// One kind of command output and how to shorten it.
pub(super) struct Format {
    /// For tests and logs.
    pub name: &'static str,
    /// The commands that print it: the program (matched by file name) and the words that must
    /// follow. Options before a word (`git --no-pager log`) are passed over.
    pub commands: &'static [&'static [&'static str]],
    /// Some line must match this for the output to count as the format; otherwise it is kept.
    pub signature: &'static str,
    pub shape: Shape,
}

/// How the lines of a recognised output are shortened.
pub(super) enum Shape {
    /// Line by line: lines matching any `drop` pattern go, the rest stay, and runs of blank
    /// lines left behind become one.
    Lines { drop: &'static [&'static str] },
    /// Records, each opened by a line matching `start` (its first group names the record, an
    /// optional second one is kept after it), become one line each: the name, shortened to
    /// `name_chars`, and the record's first line matching `title` (its first group). Every
    /// other line of a record must match one of `known`, or the output is kept whole: a line
    /// of unknown shape (a patch, a stat) may matter.
    Records { start: &'static str, name_chars: usize, title: &'static str, known: &'static [&'static str] },
}

/// What cargo prints while it fetches and builds dependencies.
const CARGO_PROGRESS: &str =
    r"^\s*(Compiling|Checking|Downloading|Downloaded|Updating|Locking|Adding|Fresh|Blocking|Unpacking|Documenting) \S";

pub(super) const FORMATS: &[Format] = &[
    Format {
        name: "cargo test",
        commands: &[&["cargo", "test"], &["cargo", "t"], &["cargo", "nextest", "run"]],
        signature: r"^test result: |^\s+Summary \[",
        shape: Shape::Lines {
            drop: &[
                CARGO_PROGRESS,
                // A passing test, unit or doc-test; failed and ignored ones stay.
                r"^test .+ \.\.\. ok$",
                // nextest's passing tests.
                r"^\s+PASS \[\s*[\d.]+s\] ",
            ],
        },
    },
    Format {
        name: "cargo build",
        commands: &[&["cargo", "build"], &["cargo", "b"], &["cargo", "check"], &["cargo", "c"], &["cargo", "clippy"]],
        signature: r"^\s*Finished ",
        shape: Shape::Lines { drop: &[CARGO_PROGRESS] },
    },
    Format {
        name: "pytest",
        commands: &[
            &["pytest"],
            &["py.test"],
            &["python", "-m", "pytest"],
            &["python3", "-m", "pytest"],
            &["uv", "run", "pytest"],
            &["poetry", "run", "pytest"],
        ],
        signature: r"^=+ .*\b(passed|failed|skipped|deselected|xfailed|xpassed|errors?|no tests ran)\b.* in [\d.]+s.* =+$",
        shape: Shape::Lines {
            drop: &[
                // The session header, but not the line saying how many tests were collected.
                r"^(platform \S+ -- Python |cachedir: |rootdir: |configfile: |testpaths: |plugins: )",
                // `-v`: a passing test.
                r"^\S+ PASSED\s*(\[\s*\d+%\])?$",
                // A file's progress with nothing but passes and skips (`F` or `E` keep it).
                r"^\S+ [.sx]+\s*(\[\s*\d+%\])?$",
            ],
        },
    },
    Format {
        name: "npm install",
        commands: &[&["npm", "install"], &["npm", "i"], &["npm", "ci"], &["npm", "add"], &["npm", "update"]],
        signature: r"^(added|removed|changed|audited|up to date) ",
        shape: Shape::Lines {
            drop: &[
                // Log levels below `warn`, shown with `--loglevel`.
                r"^npm (http|verb|sill|timing|info) ",
                r"^\d+ packages? (is|are) looking for funding$",
                r"^  run `npm fund` for details$",
                // The notice that a newer npm exists.
                r"^npm notice\b",
            ],
        },
    },
    Format {
        name: "npm test",
        commands: &[&["npm", "test"], &["npm", "t"], &["npm", "run", "test"]],
        // npm names the script it runs: `> package@1.0.0 test`.
        signature: r"^> \S+ test$",
        shape: Shape::Lines {
            drop: &[
                // A passing test in jest, vitest, mocha or node's spec reporter.
                r"^\s+[✓√✔] ",
                // node's TAP reporter.
                r"^\s*ok \d+ - ",
            ],
        },
    },
    Format {
        name: "go test",
        commands: &[&["go", "test"]],
        signature: r"^(ok|FAIL)\s+\S+\s|^PASS$|^\?\s+\S+\s+\[no test files\]$",
        shape: Shape::Lines {
            drop: &[
                r"^=== (RUN|PAUSE|CONT|NAME)\s",
                // A passing test or subtest; `--- FAIL` and `--- SKIP` stay.
                r"^\s*--- PASS: ",
                r"^PASS$",
                r"^\?\s+\S+\s+\[no test files\]$",
            ],
        },
    },
    Format {
        name: "git status",
        commands: &[&["git", "status"]],
        signature: r"^(On branch |HEAD detached |Not currently on any branch|nothing to commit|Changes (to be committed|not staged for commit):|Untracked files:|Unmerged paths:)",
        shape: Shape::Lines {
            // The hints, indented and in parentheses: `  (use "git add <file>..." to ...)`.
            drop: &[r#"^\s+\((use "git |commit or discard |fix conflicts |all conflicts fixed).*\)$"#],
        },
    },
    Format {
        name: "git log",
        commands: &[&["git", "log"]],
        signature: r"^commit [0-9a-f]{7,64}\b",
        shape: Shape::Records {
            start: r"^commit ([0-9a-f]{7,64})( \(.*\))?$",
            name_chars: 12,
            title: r"^    (\S.*)$",
            known: &[r"^(Author|AuthorDate|Commit|CommitDate|Date|Merge):", r"^    ", r"^$"],
        },
    },
];
