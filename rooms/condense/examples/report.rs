//! Measures the condensers over the real captured corpus in
//! `tests/fixtures/output/`: bytes in and out, the share saved, and how many
//! of each fixture's required failure signals survived.
//!
//! `cargo run --example report` prints the table; `cargo run --example report
//! -- <family>/<name>` prints one fixture's condensed text instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hall_condense::{Family, condense, strip_ansi};

struct Fixture {
    id: String,
    command: String,
    exit_code: i32,
    signals: Vec<String>,
    output: String,
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/output")
}

fn load() -> Result<Vec<Fixture>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(corpus())?.collect::<Result<_, _>>()?;
    dirs.sort_by_key(|d| d.path());
    for d in dirs {
        if !d.path().is_dir() {
            continue;
        }
        let mut files: Vec<_> = std::fs::read_dir(d.path())?.collect::<Result<_, _>>()?;
        files.sort_by_key(|f| f.path());
        for f in files {
            let p = f.path();
            if p.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p)?)?;
            let output =
                String::from_utf8_lossy(&std::fs::read(p.with_extension("txt"))?).into_owned();
            let fam = d.file_name().to_string_lossy().into_owned();
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(Fixture {
                id: format!("{fam}/{name}"),
                command: meta["command"].as_str().unwrap_or("").to_string(),
                exit_code: meta["exit_code"].as_i64().unwrap_or(0) as i32,
                signals: meta["signals"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                output,
            });
        }
    }
    Ok(out)
}

#[derive(Default)]
struct Tally {
    n: usize,
    bytes_in: usize,
    bytes_out: usize,
    signals: usize,
    kept: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixtures = load()?;
    if let Some(id) = std::env::args().nth(1) {
        let f = fixtures
            .iter()
            .find(|f| f.id == id)
            .ok_or("no such fixture")?;
        let c = condense(&f.command, f.exit_code, &f.output, &format!("{}.log", f.id));
        print!("{}", c.text);
        let plain = strip_ansi(&c.text);
        for s in &f.signals {
            if !plain.contains(s.as_str()) {
                eprintln!("MISSING SIGNAL: {s}");
            }
        }
        return Ok(());
    }
    let mut by_family: BTreeMap<Family, Tally> = BTreeMap::new();
    let mut failing: BTreeMap<Family, Tally> = BTreeMap::new();
    let mut big_fail = Tally::default();
    println!(
        "{:<44} {:>4} {:>8} {:>7} {:>6} {:>8}",
        "fixture", "exit", "in", "out", "saved", "signals"
    );
    for f in &fixtures {
        let c = condense(&f.command, f.exit_code, &f.output, &format!("{}.log", f.id));
        let plain = strip_ansi(&c.text);
        let kept = f
            .signals
            .iter()
            .filter(|s| plain.contains(s.as_str()))
            .count();
        let saved = 100.0 * (c.bytes_in as f64 - c.bytes_out as f64) / (c.bytes_in.max(1) as f64);
        println!(
            "{:<44} {:>4} {:>8} {:>7} {:>5.1}% {:>4}/{:<3}{}",
            f.id,
            f.exit_code,
            c.bytes_in,
            c.bytes_out,
            saved,
            kept,
            f.signals.len(),
            if c.fell_back { " (fell back)" } else { "" }
        );
        let t = by_family.entry(c.family).or_default();
        t.n += 1;
        t.bytes_in += c.bytes_in;
        t.bytes_out += c.bytes_out;
        t.signals += f.signals.len();
        t.kept += kept;
        if f.exit_code != 0 {
            let t = failing.entry(c.family).or_default();
            t.n += 1;
            t.bytes_in += c.bytes_in;
            t.bytes_out += c.bytes_out;
            t.signals += f.signals.len();
            t.kept += kept;
        }
        if f.exit_code != 0 && c.bytes_in >= 10 * 1024 && c.family != Family::Passthrough {
            big_fail.n += 1;
            big_fail.bytes_in += c.bytes_in;
            big_fail.bytes_out += c.bytes_out;
            big_fail.signals += f.signals.len();
            big_fail.kept += kept;
        }
    }
    println!();
    println!(
        "{:<14} {:>3} {:>9} {:>8} {:>7} {:>9}",
        "family", "n", "bytes in", "out", "saved", "signals"
    );
    let row = |name: &str, t: &Tally| {
        let saved = 100.0 * (t.bytes_in as f64 - t.bytes_out as f64) / (t.bytes_in.max(1) as f64);
        println!(
            "{:<14} {:>3} {:>9} {:>8} {:>6.1}% {:>5}/{:<4}",
            name, t.n, t.bytes_in, t.bytes_out, saved, t.kept, t.signals
        );
    };
    println!("all runs:");
    for (fam, t) in &by_family {
        row(fam.name(), t);
    }
    println!("failing runs only:");
    for (fam, t) in &failing {
        row(fam.name(), t);
    }
    println!();
    row("failing >=10KB", &big_fail);
    println!(
        "(evidence is never condensed; outputs of at most 2 KB and 60 lines are shown whole plus one exit line)"
    );
    Ok(())
}
