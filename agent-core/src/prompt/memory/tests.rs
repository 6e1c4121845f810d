use super::{imports, project_files, user_files};

use crate::test_files::write;

#[test]
fn imports_are_words_outside_code() {
    let text = "See @docs/style.md and @README.md.\nMail me at me@example.com.\n`@not/this.md`\n```\n@nor/this.md\n```\n@~/notes/mine.md @/abs/path.md";
    assert_eq!(imports(text), ["docs/style.md", "README.md", "~/notes/mine.md", "/abs/path.md"]);
}

#[test]
fn the_projects_files_and_their_imports_in_order() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    write(&root.join("CLAUDE.md"), "Main.\n@docs/style.md\n@docs/missing.md");
    write(&root.join("docs/style.md"), "Tabs.\n@../.claude/more.md");
    write(&root.join(".claude/more.md"), "More.");
    write(&root.join(".claude/CLAUDE.md"), "Dot claude.");
    write(&root.join("CLAUDE.local.md"), "Mine only.");
    write(&root.join(".claude/rules/testing.md"), "Run the tests.");
    write(&root.join(".claude/rules/api.md"), "---\npaths: src/api/**/*.ts\n---\nAPI rules.");
    let files = project_files(root, &super::Excluded::default());
    let labels: Vec<(&str, Option<&str>)> =
        files.iter().map(|file| (file.label.as_str(), file.imported_by.as_deref())).collect();
    assert_eq!(
        labels,
        [
            ("CLAUDE.md", None),
            ("docs/style.md", Some("CLAUDE.md")),
            (".claude/more.md", Some("docs/style.md")),
            (".claude/CLAUDE.md", None),
            ("CLAUDE.local.md", None),
            (".claude/rules/testing.md", None),
        ]
    );
    assert!(files[0].text.contains("@docs/missing.md was not found"), "{}", files[0].text);
}

#[test]
fn a_repository_cannot_import_or_link_what_lies_outside_it() {
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("id_rsa"), "PRIVATE KEY");
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let secret = outside.path().join("id_rsa");
    let sibling = outside.path().file_name().unwrap().to_string_lossy().to_string();
    write(&root.join("CLAUDE.md"), &format!("@{}\n@../{sibling}/id_rsa\n@~/.ssh/id_rsa\n@linked.md", secret.display()));
    std::os::unix::fs::symlink(&secret, root.join("linked.md")).unwrap();
    std::os::unix::fs::symlink(&secret, root.join("AGENTS.md")).unwrap();
    let files = project_files(root, &super::Excluded::default());
    let all: String = files.iter().map(|file| file.text.clone()).collect();
    assert!(!all.contains("PRIVATE KEY"), "{all}");
    assert_eq!(files.len(), 1, "the linked AGENTS.md is not read: {files:?}");
    assert_eq!(all.matches("outside the project").count(), 4, "{all}");
}

#[test]
fn the_users_files_import_from_home_and_anywhere_up_to_five_levels() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    write(&home.join(".claude/CLAUDE.md"), "Mine.\n@~/notes/a.md");
    for (name, next) in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "g")] {
        write(&home.join(format!("notes/{name}.md")), &format!("{name}\n@{next}.md"));
    }
    write(&home.join(".claude/rules/style.md"), "Short sentences.");
    let files = user_files(&[home.join(".claude/CLAUDE.md")], Some(home), &super::Excluded::default());
    let texts: Vec<&str> = files.iter().map(|file| file.text.lines().next().unwrap()).collect();
    assert_eq!(texts, ["Mine.", "a", "b", "c", "d", "e", "Short sentences."]);
    assert!(files[5].text.contains("at most 5 levels"), "{}", files[5].text);
}
