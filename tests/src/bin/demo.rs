//! The README's main job: the whole Hallmark loop, as far as it is built, on a throwaway
//! repository with the embedded defaults. Every step runs the real `hall` binary and
//! prints what it answered.
//!
//! `cargo run -p hallmark-tests --bin demo [-- --keep]`

use std::path::Path;

use hallmark_tests::sandbox::{Run, Sandbox};

fn show(sb: &Sandbox, dir: &Path, args: &[&str]) -> serde_json::Value {
    let where_ = sb.redact(&dir.display().to_string());
    println!(
        "\n$ cd {where_} && hall {}",
        args.iter()
            .map(|a| if a.contains(' ') {
                format!("\"{a}\"")
            } else {
                a.to_string()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let run: Run = sb.hall(dir, args);
    let body = serde_json::from_str::<serde_json::Value>(run.stdout.trim())
        .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
        .unwrap_or_else(|_| run.stdout.clone());
    for line in sb.redact(&body).lines() {
        println!("  {line}");
    }
    if run.code != 0 {
        println!("  (exit {})", run.code);
    }
    run.json()
}

fn main() {
    let keep = std::env::args().any(|a| a == "--keep");
    let sb = Sandbox::new();
    println!(
        "Hallmark demo on a throwaway repository ([ROOT] = {}).",
        sb.root.display()
    );
    println!("It has one commit on main and a bare `origin`; hall runs with a fixed clock.");

    show(&sb, &sb.repo, &["init"]);
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "Set up Hallmark"]);
    println!("\n(committed the setup on main)");

    let v = show(
        &sb,
        &sb.repo,
        &[
            "new",
            "--title",
            "Add a greeting",
            "Print a friendly greeting on start.",
        ],
    );
    let id = v["item"].as_str().unwrap_or("H-0001").to_string();
    let wt = sb.worktree(&id);

    std::fs::write(wt.join("greeting.txt"), "hello\n").unwrap_or_else(|e| panic!("write: {e}"));
    show(&sb, &wt, &["ready"]);
    println!("\n(refused: the work isn't committed yet; nothing was lost)");
    sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    println!("\n$ git commit -m \"Add a greeting\"   (in the worktree)");

    show(&sb, &wt, &["ready", "--note", "first version"]);
    show(&sb, &sb.repo, &["status"]);
    show(&sb, &wt, &["log"]);
    println!(
        "\nThe item is frozen at its commit and queued for the Assay Office (checks, then the \
         independent review), which arrives with the review loop."
    );
    if keep {
        let path = sb.root.clone();
        std::mem::forget(sb);
        println!("Kept the sandbox at {}", path.display());
    }
}
