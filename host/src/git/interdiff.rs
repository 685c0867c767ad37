//! Two versions of one change, compared: the diff as shipped against the diff after a
//! rebase, each normalised so that where a hunk lands does not count. The Delivery
//! office carries an approval across a rebase on it, so it reads git's objects only,
//! with no diff driver or text conversion the repository's attributes could name.

use std::path::Path;

use super::{Invocation, Result, run};

/// `git diff` of `what` with `context` lines around each change, as this module reads
/// diffs: no colour, and no diff driver or text conversion that the repository's
/// attributes could name.
fn raw_diff(dir: &Path, context: u32, what: &[&str]) -> Result<String> {
    let context = format!("-U{context}");
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        &context,
    ];
    args.extend_from_slice(what);
    run(dir, &args)
}

/// A diff normalised for comparing two versions of one change: no blob ids, and hunk
/// headers without their line numbers (where a hunk lands moves with its base).
fn normalised_diff(dir: &Path, from: &str, to: &str) -> Result<String> {
    let text = raw_diff(dir, 3, &[&format!("{from}..{to}")])?;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with("index ") {
            continue;
        }
        if line.starts_with("@@ ") {
            let rest = line.splitn(4, ' ').nth(3).unwrap_or("");
            let context = rest.strip_prefix("@@").unwrap_or(rest).trim_start();
            out.push_str("@@ ");
            out.push_str(context);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(out)
}

/// How many lines differ between the change `old.0..old.1` and the change
/// `new.0..new.1`, compared file by file with their context: zero when a rebase left
/// the change as it was.
pub fn interdiff_lines(dir: &Path, old: (&str, &str), new: (&str, &str)) -> Result<usize> {
    Ok(interdiff(dir, old, new)?.map_or(0, |(_, n)| n))
}

/// The difference between two versions of one change, as a diff of their diffs (each
/// normalised: no blob ids, no line numbers in hunk headers), with the number of lines
/// it adds and removes. `None` when the two are the same.
pub fn interdiff(
    dir: &Path,
    old: (&str, &str),
    new: (&str, &str),
) -> Result<Option<(String, usize)>> {
    let before = normalised_diff(dir, old.0, old.1)?;
    let after = normalised_diff(dir, new.0, new.1)?;
    if before == after {
        return Ok(None);
    }
    // Two blobs in the object store let git compare the texts with no files around.
    let blob = |text: String| -> Result<String> {
        let id =
            Invocation::at(dir)
                .input(text.as_bytes())
                .run(&["hash-object", "-w", "--stdin"])?;
        Ok(id.trim().to_string())
    };
    let (a, b) = (blob(before)?, blob(after)?);
    let text = raw_diff(dir, 2, &[&a, &b])?;
    let lines = text
        .lines()
        .filter(|l| {
            (l.starts_with('+') && !l.starts_with("+++"))
                || (l.starts_with('-') && !l.starts_with("---"))
        })
        .count();
    // Keep only the hunks: the blob names in the header mean nothing to a reader.
    let body = text
        .find("\n@@")
        .map_or(text.as_str(), |at| &text[at + 1..])
        .to_string();
    Ok(Some((body, lines.max(1))))
}

#[cfg(test)]
mod tests {
    use super::interdiff_lines;
    use crate::git::tests::git;

    #[test]
    fn the_interdiff_is_zero_across_a_rebase_that_keeps_the_change_and_counts_what_moved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        let lines: Vec<String> = (1..=40).map(|n| format!("line {n}")).collect();
        let write = |name: &str, text: &str| std::fs::write(root.join(name), text).expect("write");
        write("a.txt", &(lines.join("\n") + "\n"));
        write("b.txt", "b\n");
        git(root, &["add", "."]);
        git(root, &["commit", "-qm", "base"]);
        let base = git(root, &["rev-parse", "HEAD"]);
        // The change: line 30 of a.txt.
        git(root, &["checkout", "-qb", "item"]);
        let mut changed = lines.clone();
        changed[29] = "line thirty".into();
        write("a.txt", &(changed.join("\n") + "\n"));
        git(root, &["commit", "-qam", "change"]);
        let shipped = git(root, &["rev-parse", "HEAD"]);
        // The base moves far away (other lines, another file): the hunk moves with it.
        git(root, &["checkout", "-q", "main"]);
        let mut moved = lines.clone();
        moved[2] = "line three, edited on main".into();
        write("a.txt", &(moved.join("\n") + "\n"));
        write("b.txt", "b, edited\n");
        git(root, &["commit", "-qam", "main moves"]);
        let new_base = git(root, &["rev-parse", "HEAD"]);
        git(root, &["checkout", "-q", "item"]);
        git(root, &["rebase", "-q", "main"]);
        let rebased = git(root, &["rev-parse", "HEAD"]);
        assert_eq!(
            interdiff_lines(root, (&base, &shipped), (&new_base, &rebased)).expect("interdiff"),
            0
        );
        // A rebase whose result differs: one more changed line in the same file.
        let mut more = moved.clone();
        more[29] = "line thirty".into();
        more[35] = "line thirty-six, new".into();
        write("a.txt", &(more.join("\n") + "\n"));
        git(root, &["commit", "-qam", "more"]);
        let grown = git(root, &["rev-parse", "HEAD"]);
        let n = interdiff_lines(root, (&base, &shipped), (&new_base, &grown)).expect("interdiff");
        assert!((1..=10).contains(&n), "{n} lines differ");
    }
}
