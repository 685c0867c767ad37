//! Loads the real captured outputs in `tests/fixtures/output/`.

use std::path::{Path, PathBuf};

pub struct Fixture {
    pub id: String,
    pub command: String,
    pub exit_code: i32,
    pub signals: Vec<String>,
    pub output: String,
}

pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/output")
}

pub fn load_all() -> Vec<Fixture> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("fixture corpus exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .expect("family dir is readable")
            .map(|e| e.expect("readable dir entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for p in files {
            out.push(load(&p));
        }
    }
    assert!(out.len() >= 40, "the corpus should not shrink unnoticed");
    out
}

pub fn load_one(id: &str) -> Fixture {
    load(&corpus().join(format!("{id}.json")))
}

fn load(p: &Path) -> Fixture {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).expect("json readable"))
            .expect("valid json");
    let raw = std::fs::read(p.with_extension("txt")).expect("txt beside json");
    let family = p.parent().and_then(|d| d.file_name()).expect("family dir");
    let name = p.file_stem().expect("file stem");
    Fixture {
        id: format!("{}/{}", family.to_string_lossy(), name.to_string_lossy()),
        command: meta["command"].as_str().expect("command").to_string(),
        exit_code: meta["exit_code"].as_i64().expect("exit_code") as i32,
        signals: meta["signals"]
            .as_array()
            .expect("signals")
            .iter()
            .map(|s| s.as_str().expect("signal is a string").to_string())
            .collect(),
        output: String::from_utf8_lossy(&raw).into_owned(),
    }
}
