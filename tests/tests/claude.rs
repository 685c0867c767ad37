//! The real Claude Code CLI (pinned in tests/claude, installed by `npm ci --prefix
//! tests/claude`) against a scripted Messages API stub on 127.0.0.1, with the plugin
//! installed by `hall setup claude`: the hooks fire, context reaches the model, and the
//! gates deny in the real client.

use std::path::{Path, PathBuf};

use hallmark_tests::claude_stub::{ClaudeCommand, ClaudeRun, StubServer, Turn, claude_binary};
use hallmark_tests::sandbox::{Sandbox, lenses};
use serde_json::Value;

fn require_claude() -> PathBuf {
    let bin = claude_binary();
    assert!(
        bin.is_file(),
        "the pinned Claude Code CLI is not installed at {}: run `npm ci --prefix tests/claude`",
        bin.display()
    );
    bin
}

/// A sandbox with hall initialized and the plugin installed for a throwaway HOME.
fn world() -> (Sandbox, PathBuf) {
    let claude = require_claude();
    let sb = Sandbox::initialized();
    // Main trusts the sandbox's signing key, so the hooks (whose environment the CLI
    // clears) verify hallmarks without the sandbox's user config.
    sb.hall(&sb.repo, &["init", "--signers"]).ok();
    sb.git(&sb.repo, &["add", ".hallmark/allowed_signers"]);
    sb.git(
        &sb.repo,
        &["commit", "-q", "-m", "Trust Ada's hallmark key"],
    );
    let home = sb.root.join("claude-home");
    std::fs::create_dir_all(&home).expect("mkdir");
    setup(&sb, &home, &[]);
    let claude_dir = claude.parent().expect("bin dir").display().to_string();
    let path = format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let home_s = home.display().to_string();
    let vars = [
        ("HOME", home_s.as_str()),
        ("PATH", path.as_str()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ];
    let doctor = sb.hall_env(&sb.repo, &["doctor"], &vars).ok();
    let plugin = doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "plugin")
        .cloned()
        .expect("plugin");
    assert_eq!(plugin["ok"], true, "{plugin}");
    (sb, home)
}

/// `hall setup claude <extra>` for the throwaway HOME, with the real CLI on PATH.
fn setup(sb: &Sandbox, home: &Path, extra: &[&str]) {
    let path = client_path();
    let home_s = home.display().to_string();
    let vars = [
        ("HOME", home_s.as_str()),
        ("PATH", path.as_str()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ];
    let mut args = vec!["setup", "claude"];
    args.extend_from_slice(extra);
    let setup = sb.hall_env(&sb.repo, &args, &vars);
    assert_eq!(setup.code, 0, "hall setup claude: {setup:?}");
}

fn run(stub: &StubServer, home: &Path, cwd: &Path, prompt: &str) -> ClaudeRun {
    let run = ClaudeCommand::new(stub, home, cwd, prompt)
        .run()
        .expect("claude runs");
    assert!(run.succeeded(), "{}", run.describe());
    run
}

/// Runs the loop (`hall daemon run --until-idle`) with the real client as the model
/// runner, against `stub`, and the GitHub simulator (driven by the real gh) for shipping.
/// [`world`] with `config` committed on main and a new item, "Greeting": the sandbox,
/// the client's HOME, the item and its worktree.
fn greeting_item(config: &str, message: &str) -> (Sandbox, PathBuf, String, PathBuf) {
    let (sb, home) = world();
    std::fs::write(sb.repo.join(".hallmark.toml"), config).expect("config");
    sb.git(&sb.repo, &["commit", "-qam", message]);
    let v = sb.hall(&sb.repo, &["new", "--title", "Greeting"]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    let wt = sb.worktree(&id);
    (sb, home, id, wt)
}

/// PATH with the real client's directory first.
fn client_path() -> String {
    let claude_dir = require_claude()
        .parent()
        .expect("bin dir")
        .display()
        .to_string();
    format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default())
}

fn run_loop_with_real_client(
    sb: &Sandbox,
    home: &Path,
    stub: &StubServer,
) -> hallmark_tests::sandbox::Run {
    sb.github();
    let claude_dir = require_claude()
        .parent()
        .expect("bin dir")
        .display()
        .to_string();
    let path = format!(
        "{}:{claude_dir}:{}",
        sb.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut vars = client_vars(home, stub, &path);
    vars.push(("HALL_RUN_TIMEOUT".into(), "120s".into()));
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    sb.hall_env(
        &sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &vars,
    )
}

/// The environment a headless run of the real client gets here: the throwaway HOME,
/// `path`, the stub as the Messages API, and nothing that leaves the machine.
fn client_vars(home: &Path, stub: &StubServer, path: &str) -> Vec<(String, String)> {
    [
        ("HOME", home.display().to_string()),
        ("PATH", path.to_string()),
        ("ANTHROPIC_BASE_URL", stub.base_url()),
        ("ANTHROPIC_API_KEY", "dummy".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("CLAUDE_CODE_MAX_RETRIES", "1".into()),
        // HTTPS goes nowhere; plain HTTP goes to the GitHub simulator (the sandbox sets
        // HTTP_PROXY), so nothing the client tries leaves the machine. `localhost` is not
        // exempted: gh's `api.github.localhost` would match it and skip the proxy.
        ("HTTPS_PROXY", "http://127.0.0.1:9".into()),
        ("NO_PROXY", "127.0.0.1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The tool_result the model got back for the `n`th scripted turn's tool call.
fn tool_result(stub: &StubServer, turn: usize) -> Value {
    let requests = stub.turn_requests();
    let id = format!("toolu_stub_{:04}_0", turn);
    requests
        .iter()
        .find_map(|r| r.tool_result_for(&id).cloned())
        .unwrap_or_else(|| panic!("no tool_result for {id}"))
}

#[test]
fn the_plugin_validates_offline() {
    let claude = require_claude();
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin");
    let out = std::process::Command::new(claude)
        .args(["plugin", "validate", plugin.to_str().expect("utf8")])
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .expect("claude runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn in_the_real_client_context_arrives_and_edits_and_note_writes_are_denied() {
    let (sb, home) = world();
    let target = sb.repo.join("src/app.rs");
    let stub = StubServer::start([
        Turn::write(&target, "fn main() {}\n"),
        Turn::bash("git notes --ref=hallmark add -m '{\"v\":1}' HEAD"),
        Turn::text("Both were refused."),
    ])
    .expect("stub");
    run(&stub, &home, &sb.repo, "Add an app entry point");
    let first = &stub.turn_requests()[0];
    assert!(
        first.mentions("SessionStart hook additional context"),
        "SessionStart context reached the model"
    );
    assert!(
        first.mentions("hall new --title"),
        "with how to start an item"
    );
    let denied = tool_result(&stub, 1);
    assert_eq!(denied["is_error"], true, "{denied}");
    let text = denied.to_string();
    assert!(
        text.contains("GATE_DENIED") && text.contains("hall new --title"),
        "{text}"
    );
    assert!(!target.exists(), "the edit did not happen");
    let notes = tool_result(&stub, 2);
    assert_eq!(notes["is_error"], true, "{notes}");
    assert!(
        notes
            .to_string()
            .contains("Only Hallmark strikes hallmarks"),
        "{notes}"
    );
    let listed = sb.git(&sb.repo, &["notes", "--ref=hallmark", "list"]);
    assert_eq!(listed, "", "no note was written");
    // The prompt was recorded, and so was every denial.
    let log = sb.hall(&sb.repo, &["log", "--kind", "gate_denied"]).ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(2));
}

#[test]
fn in_the_real_client_a_push_waits_for_the_hallmark_then_goes_through() {
    let (sb, home) = world();
    // The push gate alone: with sessions confined (the default) a session can't write a
    // local origin at all, hallmark or not (tests/tests/confined.rs); unconfined, the
    // hook is what stands between the push and origin.
    setup(&sb, &home, &["--no-confine"]);
    let v = sb.hall(&sb.repo, &["new", "--title", "Greeting"]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    let wt = sb.worktree(&id);
    let sha = sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    let push = "git push origin HEAD:refs/heads/greeting";
    let stub =
        StubServer::start([Turn::bash(push), Turn::text("The push was refused.")]).expect("stub");
    run(&stub, &home, &wt, "Ship it");
    let denied = tool_result(&stub, 1);
    assert_eq!(denied["is_error"], true);
    assert!(denied.to_string().contains("has no hallmark"), "{denied}");
    assert!(
        !sb.git(&sb.origin, &["branch", "--list", "greeting"])
            .contains("greeting"),
        "nothing reached origin"
    );

    // The Assay Office: the item goes through the loop, the reviewer (the
    // real client again) approves, and the assayer strikes the hallmark.
    sb.hall(&wt, &["ready"]).ok();
    let verdict = serde_json::json!({"verdict": "approve", "summary": "A greeting file; nothing can break.",
        "lenses": lenses(), "findings": []});
    let review = StubServer::start([Turn::tool_use("StructuredOutput", verdict)]).expect("stub");
    let looped = run_loop_with_real_client(&sb, &home, &review);
    let status = sb.hall(&sb.repo, &["status", &id]).ok();
    assert_eq!(status["item"]["hallmark"], sha.as_str(), "{looped:?}");

    let stub = StubServer::start([Turn::bash(push), Turn::text("Pushed.")]).expect("stub");
    run(&stub, &home, &wt, "Ship it now");
    let ok = tool_result(&stub, 1);
    assert_ne!(ok["is_error"], true, "the hallmarked push ran: {ok}");
    assert_eq!(
        sb.git(&sb.origin, &["rev-parse", "refs/heads/greeting"]),
        sha,
        "origin has the hallmarked commit"
    );

    // Usage from the transcripts, once per response: the first session's (2 responses of
    // 100 input tokens) and the review's in the item's journal; the second session ran
    // after the item closed, so its usage is the repository's.
    let item_usage = sb
        .hall(&sb.repo, &["usage", "--item", &id, "--by", "role"])
        .ok();
    let rows = item_usage["rows"].as_array().expect("rows");
    let role = |r: &str| {
        rows.iter()
            .find(|x| x["key"] == r)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(role("dev")["input"], 200, "{item_usage}");
    assert!(
        role("review")["cost_usd"].as_f64().expect("cost") > 0.0,
        "{item_usage}"
    );
    let all = sb.hall(&sb.repo, &["usage", "--by", "role"]).ok();
    let rows = all["rows"].as_array().expect("rows");
    let dev = rows
        .iter()
        .find(|x| x["key"] == "dev")
        .cloned()
        .unwrap_or_default();
    assert_eq!(dev["input"], 400, "4 responses of 100 input tokens: {all}");
    let turns = sb.hall(&sb.repo, &["log", &id, "--kind", "turn"]).ok();
    assert_eq!(
        turns["events"].as_array().map(Vec::len),
        Some(1),
        "a turn summary for the run in the item: {turns}"
    );
    let prompts = sb.hall(&sb.repo, &["log", &id, "--kind", "prompt"]).ok();
    assert_eq!(prompts["events"][0]["text"], "Ship it");
}

/// The reviewer's command line exactly as `hall` builds it, run by the real client: the
/// plugin's namespaced agent loads, `--json-schema` offers the StructuredOutput tool, and
/// `hall` accepts the `structured_output` it returns, hallmarks and ships.
#[test]
fn the_real_client_runs_the_reviewer_command_line_and_hall_accepts_its_verdict() {
    let (sb, home, id, wt) = greeting_item(
        "base = \"main\"\n[budget]\nreview_model = \"claude-sonnet-5-5\"\n",
        "Review with the stub's model",
    );
    let sha = sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    sb.hall(&wt, &["ready"]).ok();

    let verdict = serde_json::json!({"verdict": "approve", "summary": "A one-line greeting; nothing can break.",
        "lenses": lenses(), "findings": [], "learnings_used": []});
    let stub = StubServer::start([Turn::tool_use("StructuredOutput", verdict)]).expect("stub");
    let run = run_loop_with_real_client(&sb, &home, &stub);
    let status = sb.hall(&sb.repo, &["status", &id]).ok();
    let trace = sb.hall(&sb.repo, &["trace", &id]);
    assert_eq!(
        status["item"]["state"],
        "closed",
        "daemon: {run:?}\ntrace: {}\nstub errors: {:?}\ntool results: {:?}",
        trace.stdout,
        stub.errors(),
        stub.requests()
            .iter()
            .map(|r| r.tool_results().into_iter().cloned().collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    assert_eq!(status["item"]["hallmark"], sha.as_str());
    let pr = sb
        .github()
        .pr(1)
        .expect("the shipper opened the PR through gh");
    assert_eq!(pr.head_oid, sha);
    // The request the real client made: the agent's prompt as the system prompt, the
    // schema as the StructuredOutput tool, and hall's review prompt as the message.
    let requests = stub.turn_requests();
    let first = requests.first().expect("the reviewer called the model");
    assert!(
        first.tool_names().contains(&"StructuredOutput"),
        "{:?}",
        first.tool_names()
    );
    assert!(
        !first.tool_names().contains(&"Write"),
        "the reviewer is read-only: {:?}",
        first.tool_names()
    );
    assert!(
        first.mentions("# Principal engineer"),
        "the plugin's agent is the system prompt"
    );
    assert!(first.mentions(&format!("Review {id} round 1")));
    // The verdict was recorded from structured_output, with its model and usage.
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "verdict"]).ok();
    let verdict = &log["events"][0];
    assert_eq!(verdict["approved"], true, "{log}");
    assert_eq!(
        verdict["summary"],
        "A one-line greeting; nothing can break."
    );
    let usage = sb
        .hall(&sb.repo, &["usage", "--item", &id, "--by", "role"])
        .ok();
    assert!(usage.to_string().contains("\"review\""), "{usage}");
}

/// The librarian's command line, run by the real client once the loop closed the item:
/// the schema made for the item (its finding ids as enums, `anyOf`, `not`) is one the
/// client's own validator takes, the answer comes back as `structured_output`, and hall
/// proposes the learning and writes the Gazette's words from it.
#[test]
fn the_real_client_runs_the_librarian_and_hall_proposes_what_it_distilled() {
    let (sb, home, id, wt) = greeting_item(
        "base = \"main\"\n[budget]\nreview_model = \"claude-sonnet-5-5\"\nlibrarian_model = \"claude-haiku-5-5\"\n",
        "Review and distil with the stub's models",
    );
    sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    sb.hall(&wt, &["ready"]).ok();
    let verdict = serde_json::json!({"verdict": "approve", "summary": "A greeting.",
        "lenses": lenses(), "findings": [{"lens": "evidence", "severity": "nit", "file": "greeting.txt",
        "line": 1, "scenario": "A greeting this short needs no test, but say so in the request."}],
        "learnings_used": []});
    let distillation = serde_json::json!({
        "learnings": [{"kind": "false-positive", "title": "One-line text files need no tests",
            "body": "Static text has no behaviour to test; do not ask for one.",
            "paths": ["*.txt"], "round": 1, "finding": "F1"}],
        "contradicted": [],
        "gazette": {"headline": "The repository says hello", "story": "A greeting was added.",
            "findings": {"F1": "The reviewer noted the greeting has no test, which is fine."}}
    });
    let stub = StubServer::start([
        Turn::tool_use("StructuredOutput", verdict),
        Turn::tool_use("StructuredOutput", distillation),
    ])
    .expect("stub");
    let run = run_loop_with_real_client(&sb, &home, &stub);
    let distilled = sb.hall(&sb.repo, &["log", &id, "--kind", "distilled"]).ok();
    let line = &distilled["events"][0];
    assert_eq!(
        line["proposed"],
        serde_json::json!(["L-0001"]),
        "daemon: {run:?}\nlog: {distilled}\nstub errors: {:?}",
        stub.errors()
    );
    assert_eq!(line["words"], true, "{distilled}");
    let learning = sb.hall(&sb.repo, &["library", "show", "L-0001"]).ok();
    assert_eq!(learning["learning"]["status"], "proposed");
    assert_eq!(learning["learning"]["source"]["finding"], "F1");
    assert_eq!(learning["learning"]["source"]["item"], id.as_str());
    let requests = stub.turn_requests();
    let librarian = requests
        .iter()
        .find(|r| r.mentions("# Librarian"))
        .expect("the librarian called the model with the plugin's agent");
    assert!(librarian.tool_names().contains(&"StructuredOutput"));
    assert!(
        !librarian.tool_names().contains(&"Write") && !librarian.tool_names().contains(&"Bash"),
        "the librarian is read-only: {:?}",
        librarian.tool_names()
    );
    assert!(
        librarian.mentions("A greeting this short needs no test"),
        "the record is in the prompt"
    );
    let usage = sb
        .hall(&sb.repo, &["usage", "--item", &id, "--by", "role"])
        .ok();
    assert!(usage.to_string().contains("\"librarian\""), "{usage}");
}

/// The real client holds the reviewer to the verdict schema with its own validator (a
/// JavaScript one, whose `\s` is not Rust's): the answer that was held after two paid
/// runs (`lenses: []`) and a summary the room would trim to nothing (U+0085 alone, which
/// an ECMA `\S` lets through) are sent back to the model, and hall records the third
/// answer, the one the room accepts.
#[test]
fn the_real_client_sends_back_a_verdict_the_schema_refuses() {
    let (sb, home, id, wt) = greeting_item(
        "base = \"main\"\n[budget]\nreview_model = \"claude-sonnet-5-5\"\n",
        "Review with the stub's model",
    );
    sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    sb.hall(&wt, &["ready"]).ok();

    let held = serde_json::json!({"verdict": "approve", "summary": "Looks right.",
        "lenses": [], "findings": []});
    let blank = serde_json::json!({"verdict": "approve", "summary": "\u{85}",
        "lenses": lenses(), "findings": []});
    let good = serde_json::json!({"verdict": "approve", "summary": "A one-line greeting; nothing can break.",
        "lenses": lenses(), "findings": []});
    let stub = StubServer::start([
        Turn::tool_use("StructuredOutput", held),
        Turn::tool_use("StructuredOutput", blank),
        Turn::tool_use("StructuredOutput", good),
    ])
    .expect("stub");
    let run = run_loop_with_real_client(&sb, &home, &stub);
    for (turn, path) in [(1, "/lenses"), (2, "/summary")] {
        let sent_back = tool_result(&stub, turn);
        assert_eq!(
            sent_back["is_error"], true,
            "turn {turn}: {sent_back}\ndaemon: {run:?}"
        );
        let said = sent_back["content"].to_string();
        assert!(
            said.contains("schema") && said.contains(path),
            "turn {turn}: {sent_back}"
        );
    }
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "verdict"]).ok();
    let verdicts = log["events"].as_array().expect("events");
    assert_eq!(verdicts.len(), 1, "{log}");
    assert_eq!(verdicts[0]["approved"], true, "{log}");
    assert_eq!(
        verdicts[0]["summary"],
        "A one-line greeting; nothing can break."
    );
    let failed = sb
        .hall(&sb.repo, &["log", &id, "--kind", "run_failed"])
        .ok();
    assert_eq!(
        failed["events"].as_array().map(Vec::len),
        Some(0),
        "{failed}"
    );
}

/// The intake's command line as `hall new` builds it, run by the real client against
/// the stub: the plan comes back as `structured_output`, the plan room accepts it, and
/// the request becomes a parent with its parts.
#[test]
fn the_real_client_runs_the_intake_command_line_and_hall_splits_on_its_plan() {
    let (sb, home) = world();
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        "base = \"main\"\n[budget]\nintake_model = \"claude-haiku-5-5\"\n[intake]\ntimeout = 120\n",
    )
    .expect("config");
    sb.git(&sb.repo, &["commit", "-qam", "Plan with the stub's model"]);
    let plan = serde_json::json!({"split": true, "reason": "The page and the endpoint touch separate trees.",
    "parts": [
        {"title": "Signup page", "paths": ["web/**"], "acceptance": "The page renders the form."},
        {"title": "Signup endpoint", "paths": ["api/**"], "acceptance": "POST /signup answers 201."}
    ]});
    let stub = StubServer::start([Turn::tool_use("StructuredOutput", plan)]).expect("stub");
    let path = client_path();
    let vars = client_vars(&home, &stub, &path);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = sb.hall_env(&sb.repo, &["new", "A signup page and its endpoint"], &vars);
    let v = run.ok();
    assert_eq!(
        v["intake"]["split"],
        true,
        "{v}\nstub errors: {:?}",
        stub.errors()
    );
    assert_eq!(v["parts"].as_array().map(Vec::len), Some(2), "{v}");
    let requests = stub.turn_requests();
    let first = requests.first().expect("the intake called the model");
    assert!(first.tool_names().contains(&"StructuredOutput"));
    assert!(
        !first.tool_names().contains(&"Write") && !first.tool_names().contains(&"Bash"),
        "the intake is read-only: {:?}",
        first.tool_names()
    );
    assert!(
        first.mentions("# Intake"),
        "the plugin's agent is the system prompt"
    );
    assert!(first.mentions("A signup page and its endpoint"));
    let id = v["item"].as_str().expect("id");
    let usage = sb
        .hall(&sb.repo, &["usage", "--item", id, "--by", "role"])
        .ok();
    assert!(usage.to_string().contains("\"intake\""), "{usage}");
}

/// The tool-call policy in the real client: a scripted model runs the same failing
/// command five times. Observed (the default), the fifth call runs with a nudge that
/// says it would have been blocked; enforced (in the user's own config, which the
/// hooks read from the client's HOME), it is denied with the policy's reason. Either
/// way a success afterwards leaves the next failure unremarked.
#[test]
fn in_the_real_client_a_repeated_failure_is_nudged_when_observed_and_denied_when_enforced() {
    for mode in ["observe", "enforce"] {
        let (sb, home) = world();
        if mode == "enforce" {
            let dir = home.join(".config/hallmark");
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join("config.toml"), "[policy]\nmode = \"enforce\"\n")
                .expect("user config");
        }
        let v = sb.hall(&sb.repo, &["new", "--title", "Integration"]).ok();
        let wt = sb.worktree(v["item"].as_str().expect("id"));
        let failing = "./run-integration.sh --fast";
        let mut turns: Vec<Turn> = (0..5).map(|_| Turn::bash(failing)).collect();
        turns.push(Turn::bash("echo recovered"));
        turns.push(Turn::bash("./another-step.sh"));
        turns.push(Turn::text("Stopped."));
        let stub = StubServer::start(turns).expect("stub");
        run(&stub, &home, &wt, "Run the integration tests");
        let policy = "Hallmark's tool policy";
        for turn in 1..=4 {
            let r = tool_result(&stub, turn);
            assert_eq!(
                r["is_error"], true,
                "{mode}: the command failed by itself: {r}"
            );
            assert!(!r.to_string().contains(policy), "{mode}: not denied: {r}");
        }
        let fifth = tool_result(&stub, 5);
        let requests = stub.turn_requests();
        if mode == "enforce" {
            assert!(
                fifth.to_string().contains("tool policy (repetition)"),
                "{mode}: denied by the repetition detector: {fifth}"
            );
        } else {
            assert!(
                !fifth.to_string().contains("GATE_DENIED"),
                "{mode}: it ran: {fifth}"
            );
            assert!(
                requests[5].mentions("would have been blocked"),
                "{mode}: the model was told it would have been blocked"
            );
        }
        // Nudged from the third identical failure on, before anything was blocked.
        assert!(
            requests[3].mentions("Hallmark's tool policy (repetition)"),
            "{mode}"
        );
        assert_ne!(
            tool_result(&stub, 6)["is_error"],
            true,
            "{mode}: the success ran"
        );
        let seventh = tool_result(&stub, 7);
        assert_eq!(seventh["is_error"], true, "{mode}: {seventh}");
        // Only the newest message: the conversation before it may carry older nudges.
        let newest = requests[7].body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(Value::to_string)
            .unwrap_or_default();
        assert!(newest.contains("another-step"), "{mode}: {newest}");
        assert!(
            !newest.contains("tool policy"),
            "{mode}: the success cleared the streak: {newest}"
        );
        let report = sb.hall(&sb.repo, &["policy", "report"]).ok();
        let row = report["detectors"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["detector"] == "repetition")
            .cloned()
            .expect("repetition");
        let blocked = if mode == "enforce" {
            &row["blocks"]
        } else {
            &row["would_block"]
        };
        assert_eq!(blocked, 1, "{mode}: one block or would-block: {report}");
        assert_eq!(
            row["nudges"], 2,
            "{mode}: the third and fourth calls: {report}"
        );
        // The pinned client reports a failed Bash command through PostToolUseFailure: the
        // session's window holds the failures as errors, the success as a success.
        let sessions = sb.journal().root().join("sessions");
        let window: Vec<Value> = std::fs::read_dir(&sessions)
            .expect("sessions")
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| serde_json::from_slice::<Value>(&std::fs::read(e.path()).ok()?).ok())
            .flat_map(|s| s["calls"].as_array().cloned().unwrap_or_default())
            .collect();
        let outcomes: Vec<&str> = window
            .iter()
            .map(|c| c["outcome"].as_str().unwrap_or(""))
            .collect();
        let want: &[&str] = if mode == "enforce" {
            &[
                "error", "error", "error", "error", "blocked", "success", "error",
            ]
        } else {
            &[
                "error", "error", "error", "error", "error", "success", "error",
            ]
        };
        assert_eq!(outcomes, want, "{mode}");
    }
}

/// The fixer's command line, run by the real client: the checkout's own Claude Code
/// settings are never read (`--setting-sources user`), so a hook a branch planted in
/// `.claude/settings.json` does not run, while the plugin's hooks (given with
/// `--plugin-dir`) still gate the fixer: its push is refused.
#[test]
fn the_real_client_runs_the_fixer_with_the_plugin_s_hooks_and_none_of_the_checkout_s() {
    let (sb, home, _id, wt) = greeting_item(
        "base = \"main\"\n[budget]\nreview_model = \"claude-sonnet-5-5\"\nfix_model = \"claude-sonnet-5-5\"\n",
        "Review and fix with the stub's model",
    );
    // The branch brings a project hook that would run outside any sandbox.
    let marker = sb.root.join("planted-hook-ran");
    let planted = serde_json::json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": format!("touch {}", marker.display())}]}],
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("touch {}", marker.display())}]}],
    }});
    std::fs::create_dir_all(wt.join(".claude")).expect("mkdir");
    std::fs::write(wt.join(".claude/settings.json"), planted.to_string()).expect("plant");
    // (Forced: Hallmark lists the sandbox's placeholder names in `info/exclude`.)
    sb.git(&wt, &["add", "-f", ".claude/settings.json"]);
    sb.commit(&wt, "greeting.txt", "helo\n", "Add a greeting");
    sb.hall(&wt, &["ready"]).ok();

    let reject = serde_json::json!({"verdict": "reject", "summary": "A typo.",
        "lenses": lenses(), "learnings_used": [], "findings": [{"lens": "correctness",
        "severity": "major", "file": "greeting.txt", "line": 1,
        "scenario": "The greeting reads `helo`; a reader sees a typo."}]});
    let stub = StubServer::start([
        Turn::tool_use("StructuredOutput", reject),
        // The fixer, steered by the code it reads: the user's credentials through a
        // command and through the file tool, a push, then the fix with the file tool.
        Turn::bash("cat ~/.aws/credentials; cat ~/.ssh/id_ed25519"),
        Turn::tool_use(
            "Read",
            serde_json::json!({"file_path": home.join(".aws/credentials")}),
        ),
        Turn::bash("git push origin HEAD:refs/heads/rt-fixer"),
        Turn::write(wt.join("greeting.txt"), "hello\n"),
        Turn::bash("git commit -qam 'Fix the typo' && git log -1 --format=%s"),
        Turn::text("Fixed the typo."),
    ])
    .expect("stub");
    for (file, text) in [
        (".aws/credentials", "aws_secret_access_key = AWS-SECRET-1\n"),
        (".ssh/id_ed25519", "SSH-SECRET-2\n"),
    ] {
        std::fs::create_dir_all(home.join(file).parent().expect("dir")).expect("mkdir");
        std::fs::write(home.join(file), text).expect("secret");
    }
    let run = run_loop_with_real_client(&sb, &home, &stub);
    for turn in [2, 3] {
        let got = tool_result(&stub, turn).to_string();
        assert!(
            !got.contains("AWS-SECRET-1") && !got.contains("SSH-SECRET-2"),
            "the fixer read the user's credentials (turn {turn}): {got}\ndaemon: {run:?}"
        );
    }
    let pushed = tool_result(&stub, 4).to_string();
    assert!(
        pushed.contains("GATE_DENIED") && pushed.contains("push"),
        "the plugin's hook refused the fixer's push: {pushed}\ndaemon: {run:?}"
    );
    assert!(
        !sb.git(&sb.origin, &["branch", "--list", "rt-fixer"])
            .contains("rt-fixer")
    );
    let fixed = tool_result(&stub, 5);
    assert_ne!(
        fixed["is_error"], true,
        "the fixer edited its worktree: {fixed}"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("greeting.txt")).expect("file"),
        "hello\n"
    );
    // Its commands run in the sandbox without anyone to approve them, so it commits
    // its fix (what a commit writes is writable; the base branch and the notes are not).
    let committed = tool_result(&stub, 6);
    assert!(
        committed.to_string().contains("Fix the typo") && committed["is_error"] != true,
        "the fixer committed its fix: {committed}"
    );
    assert_eq!(sb.git(&wt, &["log", "-1", "--format=%s"]), "Fix the typo");
    assert!(
        !marker.exists(),
        "the checkout's own hook never ran in the loop's runs"
    );

    // The planted hook is a real one: a session that reads the checkout's settings runs it.
    let control = StubServer::start([Turn::text("Hello.")]).expect("stub");
    let _ = ClaudeCommand::new(&control, &home, &wt, "hi")
        .run()
        .expect("claude runs");
    assert!(
        marker.exists(),
        "a plain session in the checkout ran the planted hook"
    );
}
