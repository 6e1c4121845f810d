//! Caps tool output sent to the model. Errors usually sit at the end, so the head and the tail are
//! kept and the cut is stated.

/// About 30 KB: enough for real output, small enough not to flood the context.
pub const MAX_OUTPUT_BYTES: usize = 30 * 1024;

pub fn truncate_middle(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let keep = max_bytes / 2;
    let head_end = floor_char_boundary(text, keep);
    let tail_start = ceil_char_boundary(text, text.len() - keep);
    let cut = tail_start - head_end;
    format!(
        "{}\n\n[... {cut} bytes cut from the middle of {} ...]\n\n{}",
        &text[..head_end],
        text.len(),
        &text[tail_start..]
    )
}

/// The nearest char boundary at or before `index`.
pub fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_says_how_much_was_cut() {
        let text = format!("HEAD{}TAIL", "é".repeat(1000));
        let cut = truncate_middle(&text, 100);
        assert!(cut.starts_with("HEAD"));
        assert!(cut.ends_with("TAIL"));
        assert!(cut.contains("bytes cut from the middle of 2008"));
        assert_eq!(truncate_middle("short", 100), "short");
    }
}
