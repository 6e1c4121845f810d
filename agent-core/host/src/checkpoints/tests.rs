use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path)).ok()
}

/// A git project with tracked, untracked and ignored files, and a large ignored build output.
fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = project.path();
    Repository::init(root).unwrap();
    write(root, ".gitignore", "target/\nnotes/\n");
    write(root, "a.txt", "one\n");
    write(root, "b.txt", "two\n");
    write(root, "notes/todo.md", "small and ignored\n");
    for n in 0..2_100 {
        write(root, &format!("target/debug/{n}.o"), "x");
    }
    (project, data)
}

#[tokio::test]
async fn a_turn_is_undone_with_what_bash_did_and_a_hand_edit_is_kept() {
    let (project, data) = project();
    let root = project.path();
    let checkpoints = Checkpoints::new(root, data.path(), "sess_t");
    checkpoints.begin_turn("tidy up", 3);
    let before = checkpoints.before_command().await.expect("a checkpoint");
    // As a command would: change, delete, create, in a new directory too.
    write(root, "a.txt", "one, changed\n");
    std::fs::remove_file(root.join("b.txt")).unwrap();
    write(root, "c.txt", "new\n");
    write(root, "gen/d.rs", "fn d() {}\n");
    write(root, "notes/todo.md", "edited\n");
    let changes = checkpoints.changed_since(before).await;
    let summary: Vec<(String, ChangeKind)> = changes
        .iter()
        .map(|change| (change.path.strip_prefix(root).unwrap().display().to_string(), change.kind))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt".to_owned(), ChangeKind::Modified),
            ("b.txt".to_owned(), ChangeKind::Deleted),
            ("c.txt".to_owned(), ChangeKind::Added),
            ("gen/d.rs".to_owned(), ChangeKind::Added),
            ("notes/todo.md".to_owned(), ChangeKind::Modified),
        ]
    );
    assert_eq!(
        (changes[0].old_text.as_deref(), changes[0].new_text.as_deref()),
        (Some("one\n"), Some("one, changed\n"))
    );
    assert_eq!(changes[1].new_text, None);
    checkpoints.end_turn().await;

    let list = checkpoints.list();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].id.as_str(), list[0].prompt.as_str(), list[0].history_len), ("cp-1", "tidy up", 3));
    assert_eq!(list[0].skipped, ["target/"], "the large ignored tree is named, the small one kept");
    assert_eq!(list[0].files.len(), 5);

    // The user edits c.txt by hand after the turn: undo leaves it and says so.
    write(root, "c.txt", "mine now\n");
    let undone = checkpoints.undo(None).await.unwrap();
    assert_eq!(undone.checkpoint.history_len, 3);
    assert_eq!(read(root, "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(root, "b.txt").as_deref(), Some("two\n"), "a file bash deleted comes back");
    assert_eq!(read(root, "notes/todo.md").as_deref(), Some("small and ignored\n"));
    assert!(!root.join("gen").exists(), "a file bash created goes, and its new directory with it");
    assert_eq!(read(root, "c.txt").as_deref(), Some("mine now\n"), "a hand edit is not overwritten");
    assert_eq!(undone.files.kept, [PathBuf::from("c.txt")]);
    assert_eq!(std::fs::read_dir(root.join("target/debug")).unwrap().count(), 2_100, "the skipped tree is left alone");
    assert!(checkpoints.list().is_empty());
    assert!(matches!(checkpoints.undo(None).await.unwrap_err(), UndoError::NothingToUndo));
    // The user's repository was never written.
    let repo = Repository::open(root).unwrap();
    assert!(
        repo.head().is_err() && repo.index().unwrap().is_empty(),
        "no commit, nothing staged in the user's repository"
    );
}

#[tokio::test]
async fn a_turn_that_changed_nothing_leaves_no_checkpoint_and_the_list_outlives_the_process() {
    let (project, data) = project();
    let root = project.path();
    let checkpoints = Checkpoints::new(root, data.path(), "sess_p");
    checkpoints.begin_turn("look only", 0);
    checkpoints.before_command().await;
    checkpoints.end_turn().await;
    assert!(checkpoints.list().is_empty());
    checkpoints.begin_turn("write", 2);
    checkpoints.before_command().await;
    write(root, "a.txt", "rewritten\n");
    checkpoints.end_turn().await;
    let again = Checkpoints::new(root, data.path(), "sess_p");
    assert_eq!(again.list().len(), 1);
    again.undo(Some("cp-1".into())).await.unwrap();
    assert_eq!(read(root, "a.txt").as_deref(), Some("one\n"));
    assert!(again.undo(Some("cp-9".into())).await.unwrap_err().to_string().contains("no checkpoint `cp-9`"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(data.path().join("checkpoints/sess_p.json")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn undo_never_writes_through_a_link_out_of_the_project() {
    let (project, data) = project();
    let root = project.path();
    let outside = tempfile::tempdir().unwrap();
    write(root, "sub/f.txt", "inside\n");
    let checkpoints = Checkpoints::new(root, data.path(), "sess_l");
    checkpoints.begin_turn("swap", 0);
    checkpoints.before_command().await;
    // The directory is replaced by a link to a directory outside the project.
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
    checkpoints.end_turn().await;
    let undone = checkpoints.undo(None).await.unwrap();
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none(), "nothing was written outside: {undone:?}");
    assert!(!root.join("sub").symlink_metadata().unwrap().file_type().is_symlink(), "the link is gone");
    assert_eq!(read(root, "sub/f.txt").as_deref(), Some("inside\n"));

    // A link the user put there after the turn is theirs: undo keeps it and writes nothing
    // through it.
    checkpoints.begin_turn("again", 0);
    checkpoints.before_command().await;
    write(root, "sub/f.txt", "changed by the turn\n");
    checkpoints.end_turn().await;
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
    let undone = checkpoints.undo(None).await.unwrap();
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none(), "{undone:?}");
    assert!(undone.files.kept.contains(&PathBuf::from("sub")), "{undone:?}");
}
