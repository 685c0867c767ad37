//! The architecture, checked: which top-level module may use which, and where a
//! subprocess may be started. Read from the source files, so a change that breaks a
//! rule fails `cargo test` with the file and the line.
//!
//! `cargo test -p hallmark-host layers -- --nocapture` prints the module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module with its layer: a module may use modules of its own layer or
/// below, never above, and the graph has no circle.
const LAYERS: &[(&str, u8)] = &[
    // The pure core and other leaves.
    ("item", 0),
    ("gate", 0),
    ("clock", 0),
    ("cli", 0),
    ("platform", 0),
    ("pricing", 0),
    // `.hallmark.toml`.
    ("config", 1),
    // Adapters: files, databases and subprocesses.
    ("journal", 2),
    ("index", 2),
    ("library", 2),
    ("git", 2),
    ("gh", 2),
    ("claude", 2),
    // The rooms runtime is its own crate (hallmark-rooms), which uses nothing of this
    // library; it sits with the adapters it is one of.
    ("rooms", 2),
    ("sign", 2),
    ("template", 2),
    ("gazette", 2),
    ("record", 2),
    ("channels", 2),
    ("sandbox", 2),
    // The build itself: version, commit, the embedded rooms' hashes.
    ("version", 2),
    // The service layer.
    ("error", 3),
    ("hall", 3),
    // The loop's workers, the scheduler, the verbs, the hooks.
    ("office", 4),
    ("daemon", 5),
    ("commands", 6),
    ("hooks", 7),
    ("app", 7),
    ("web", 7),
];

/// Where each program may be started: the adapter that owns it.
const PROGRAMS: &[(&str, &str)] = &[
    ("\"git\"", "git"),
    ("\"gh\"", "gh"),
    ("\"claude\"", "claude"),
    ("\"sh\"", "platform"),
    ("\"cmd\"", "platform"),
    ("\"kill\"", "platform"),
    ("\"taskkill\"", "platform"),
];

/// Modules that start a program named at run time: the run adapter (the model run or
/// fix engine a repository configures), the loop's sandbox (bubblewrap or sandbox-exec,
/// where this machine has it), `hall run` (the agent's own command), the
/// daemon's service (this `hall`, again), the web app's restart into the newer `hall`
/// on disk, and the platform's file opener (`open`, `xdg-open`, or `HALL_OPENER`).
const DYNAMIC: &[&str] = &[
    "claude",
    "sandbox",
    "commands/run.rs",
    "daemon/service.rs",
    "web/server.rs",
    "platform",
];

/// The workspace's crates, each with its layer and the top-level modules of this library
/// it is re-exported as: a crate may depend on crates of a lower layer only.
const CRATES: &[(&str, u8, &[&str])] = &[
    ("hallmark-core", 0, &["item", "journal"]),
    ("hallmark-gate", 0, &["gate"]),
    // The wasmtime host for room components, over the core's vocabulary.
    ("hallmark-rooms", 1, &["rooms"]),
    ("hallmark-host", 2, &[]),
    // The `hall` binary, and the end-to-end tests, which drive that binary and link the
    // core only.
    ("hallmark", 3, &[]),
    ("hallmark-tests", 3, &[]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file of `module` (a file or a directory), test files left out.
fn files(module: &str) -> Vec<PathBuf> {
    let file = src().join(format!("{module}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut out = Vec::new();
    let mut stack = vec![src().join(module)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The production part of a source file: everything before its test module (a `mod`
/// under `#[cfg(test)]`, or under a `cfg(all(test, …))`).
fn production(path: &Path) -> String {
    cut_tests(&std::fs::read_to_string(path).unwrap_or_default()).to_string()
}

fn cut_tests(text: &str) -> &str {
    let at = ["#[cfg(test)]\nmod ", "#[cfg(all(test, "]
        .iter()
        .filter_map(|marker| text.find(marker))
        .filter(|&at| {
            // Only an attribute on a module written here: `cfg(all(test, unix))` may guard a
            // function too, and `mod tests;` near the top names a file (left out by
            // `files`) while the code after it is the module's own.
            let after = &text[at..];
            after
                .lines()
                .nth(1)
                .is_some_and(|l| l.trim_start().starts_with("mod ") && l.trim_end().ends_with('{'))
        })
        .min();
    match at {
        Some(at) => &text[..at],
        None => text,
    }
}

/// The top-level modules a text refers to with `crate::name`, with a line of each.
fn uses(text: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for part in inner.split(',') {
                    let name = part.trim().split("::").next().unwrap_or("").trim();
                    if !name.is_empty() {
                        found.entry(name.to_string()).or_insert(n + 1);
                    }
                }
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.entry(name).or_insert(n + 1);
            }
        }
    }
    found
}

/// The module graph: for each module, the modules it uses, with where.
fn graph() -> BTreeMap<&'static str, BTreeMap<String, String>> {
    let known: BTreeSet<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    let mut g = BTreeMap::new();
    for (module, _) in LAYERS {
        let mut edges = BTreeMap::new();
        for file in files(module) {
            for (used, line) in uses(&production(&file)) {
                if used != *module && known.contains(used.as_str()) {
                    let shown = file.strip_prefix(src()).unwrap_or(&file).display();
                    edges.entry(used).or_insert(format!("{shown}:{line}"));
                }
            }
        }
        g.insert(*module, edges);
    }
    g
}

#[test]
fn every_top_level_module_has_a_layer() {
    let mut listed: Vec<String> = std::fs::read_dir(src())
        .expect("src")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let module = name.strip_suffix(".rs").unwrap_or(&name).to_string();
            (!matches!(module.as_str(), "lib" | "main" | "layers")).then_some(module)
        })
        .collect();
    listed.sort();
    // `item` and `journal` come from hallmark-core, `gate` from hallmark-gate, `rooms`
    // from hallmark-rooms; all four are re-exported.
    let mut expected: Vec<String> = LAYERS
        .iter()
        .map(|(m, _)| m.to_string())
        .filter(|m| {
            !CRATES
                .iter()
                .any(|(_, _, modules)| modules.contains(&m.as_str()))
        })
        .collect();
    expected.sort();
    assert_eq!(
        listed, expected,
        "a module with no layer, or a layer with no module"
    );
}

#[test]
fn no_module_uses_a_layer_above_it() {
    let rank: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    let g = graph();
    for (module, edges) in &g {
        for (used, at) in edges {
            if rank[used.as_str()] > rank[module] {
                wrong.push(format!(
                    "{module} (layer {}) uses {used} (layer {}) at {at}",
                    rank[module],
                    rank[used.as_str()]
                ));
            }
        }
    }
    if std::env::var_os("HALL_PRINT_LAYERS").is_some() || wrong.is_empty() {
        for (module, edges) in &g {
            let used: Vec<&str> = edges.keys().map(String::as_str).collect();
            println!(
                "{module:>9} (layer {}) -> {}",
                rank[module],
                used.join(", ")
            );
        }
    }
    assert!(wrong.is_empty(), "layers broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_module_graph_has_no_circle() {
    let g = graph();
    // Depth-first search for a back edge.
    fn visit<'a>(
        m: &'a str,
        g: &'a BTreeMap<&'static str, BTreeMap<String, String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut circle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m);
        for used in g.get(m).map(|e| e.keys()).into_iter().flatten() {
            if let Some(c) = visit(used, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m);
        None
    }
    let mut done = BTreeSet::new();
    for m in g.keys() {
        if let Some(circle) = visit(m, &g, &mut Vec::new(), &mut done) {
            panic!("an import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn every_subprocess_starts_in_its_adapter() {
    let mut wrong = Vec::new();
    for (module, _) in LAYERS {
        for file in files(module) {
            let rel = file
                .strip_prefix(src())
                .unwrap_or(&file)
                .display()
                .to_string();
            for (n, line) in production(&file).lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                // A program is started by `Command::new`, or by the platform's `program`,
                // which gives the daemon's pinned path (the same program by name).
                let Some((at, start)) = ["Command::new(", "platform::program("]
                    .iter()
                    .find_map(|s| code.find(s).map(|at| (at, s.len())))
                else {
                    continue;
                };
                let arg = code[at + start..].trim_start();
                match PROGRAMS.iter().find(|(lit, _)| arg.starts_with(lit)) {
                    Some((lit, owner)) if module != owner => wrong.push(format!(
                        "{rel}:{}: {lit} is started outside {owner}/",
                        n + 1
                    )),
                    Some(_) => {}
                    None if DYNAMIC.iter().any(|d| *d == *module || rel == *d) => {}
                    None => wrong.push(format!(
                        "{rel}:{}: a program started outside its adapter: {}",
                        n + 1,
                        code.trim()
                    )),
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "subprocesses outside their adapters:\n{}",
        wrong.join("\n")
    );
}

/// Each workspace member's directory, from the workspace's manifest.
fn members() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ is inside the workspace")
        .to_path_buf();
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .expect("the workspace's Cargo.toml")
        .parse()
        .expect("the workspace's Cargo.toml parses");
    manifest["workspace"]["members"]
        .as_array()
        .expect("workspace.members")
        .iter()
        .filter_map(|m| m.as_str())
        .map(|m| root.join(m))
        .collect()
}

#[test]
fn each_crate_depends_only_on_crates_below_it() {
    let rank: BTreeMap<&str, u8> = CRATES.iter().map(|(c, l, _)| (*c, *l)).collect();
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for dir in members() {
        let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
            .expect("a member's Cargo.toml")
            .parse()
            .expect("a member's Cargo.toml parses");
        let name = manifest["package"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let Some(&layer) = rank.get(name.as_str()) else {
            wrong.push(format!("{name} ({}) has no layer in CRATES", dir.display()));
            continue;
        };
        seen.insert(name.clone());
        // Build scripts and benches may use anything; the library and tests may not.
        for table in ["dependencies", "dev-dependencies"] {
            let deps = manifest.get(table).and_then(|t| t.as_table());
            for dep in deps.into_iter().flat_map(|t| t.keys()) {
                if let Some(&used) = rank.get(dep.as_str())
                    && used >= layer
                {
                    wrong.push(format!(
                        "{name} (layer {layer}) depends on {dep} (layer {used}) in [{table}]"
                    ));
                }
            }
        }
    }
    let listed: BTreeSet<String> = CRATES.iter().map(|(c, _, _)| c.to_string()).collect();
    assert_eq!(
        seen, listed,
        "a crate in CRATES that the workspace doesn't have"
    );
    assert!(
        wrong.is_empty(),
        "crates out of order:\n{}",
        wrong.join("\n")
    );
}

/// The rooms runtime is below the host: its manifest names no workspace crate but the
/// core, in any table (a build script or a test reaching up would tie the two back
/// together), and no source file of it includes one of the host's by `#[path]`.
#[test]
fn the_rooms_crate_depends_on_no_host_crate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rooms");
    let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
        .expect("host/rooms/Cargo.toml")
        .parse()
        .expect("host/rooms/Cargo.toml parses");
    assert_eq!(manifest["package"]["name"].as_str(), Some("hallmark-rooms"));
    let mut tables: Vec<(String, &toml::Table)> = Vec::new();
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = manifest.get(table).and_then(|t| t.as_table()) {
            tables.push((table.to_string(), t));
        }
    }
    for (cfg, target) in manifest
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flatten()
    {
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(t) = target.get(table).and_then(|t| t.as_table()) {
                tables.push((format!("target.{cfg}.{table}"), t));
            }
        }
    }
    let mut wrong = Vec::new();
    let mut uses_core = false;
    for (table, deps) in &tables {
        for dep in deps.keys() {
            if dep == "hallmark-core" {
                uses_core = true;
            } else if dep.starts_with("hallmark") || CRATES.iter().any(|(c, _, _)| c == dep) {
                wrong.push(format!("[{table}] {dep}"));
            }
        }
    }
    assert!(
        uses_core,
        "the rooms take their vocabulary from hallmark-core"
    );
    let mut stack = vec![dir.join("src")];
    let mut read = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("rooms/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            read += 1;
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("#[path") && !line.contains("rooms/sdk/") {
                    wrong.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(read > 10, "rooms/src holds the runtime ({read} files read)");
    assert!(
        wrong.is_empty(),
        "the rooms crate reaches into the host:\n{}",
        wrong.join("\n")
    );
}

/// The gate analysis is pure: the hook runs it before every tool call, and whatever it
/// needs from the outside world comes in through `GateContext`. Nothing in its crate may
/// start a process, touch the file system or read the environment.
#[test]
fn the_gate_crate_touches_nothing() {
    let gate = Path::new(env!("CARGO_MANIFEST_DIR")).join("gate/src");
    let mut stack = vec![gate.clone()];
    let mut wrong = Vec::new();
    let mut read = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("gate/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            read += 1;
            for (n, line) in production(&path).lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for banned in ["std::fs", "std::process", "std::env", "std::net", "File::"] {
                    if code.contains(banned) {
                        wrong.push(format!("{}:{}: {banned}", path.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(read > 10, "gate/src holds the analysis ({read} files read)");
    assert!(
        wrong.is_empty(),
        "the gate crate reaches outside:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_rules_catch_what_they_are_for() {
    // The scanner itself: a grouped import, a path in an expression, a comment.
    let text = "use crate::{hall::Ctx, git};\nlet x = crate::office::step(); // crate::daemon\n";
    let found: Vec<String> = uses(text).into_keys().collect();
    assert_eq!(found, ["git", "hall", "office"]);
    let file = "use crate::git;\n#[cfg(test)]\nmod tests {\n    use crate::hooks;\n}\n";
    let found: Vec<String> = uses(cut_tests(file)).into_keys().collect();
    assert_eq!(found, ["git"], "a test module's uses don't count");
    let file = "#[cfg(test)]\nmod tests;\nuse crate::git;\nuse crate::hooks;\n";
    let found: Vec<String> = uses(cut_tests(file)).into_keys().collect();
    assert_eq!(
        found,
        ["git", "hooks"],
        "a test module in its own file leaves the rest of the file checked"
    );
    let file = "use crate::git;\n#[cfg(all(test, unix))]\nmod tests {\n    use crate::hooks;\n}\n";
    let found: Vec<String> = uses(cut_tests(file)).into_keys().collect();
    assert_eq!(
        found,
        ["git"],
        "nor those of a test module for one platform"
    );
}
