//! A stand-in for `claude`, for what can't run here (the model).
//!
//! Interactive launches (`hall new --open`) record their arguments and working directory
//! in `$FAKE_CLAUDE_LOG` and exit. Headless runs (`-p`) take the real flags, refuse the
//! combinations the real CLI refuses (`stream-json` without `--verbose`, a `--json-schema`
//! that isn't JSON), append their arguments to `$FAKE_CLAUDE_LOG.jsonl`, and print real
//! stream-json: `system/init`, an assistant line, and the `result` line with
//! `modelUsage`. What each run answers is scripted in `$FAKE_CLAUDE_SCRIPT`:
//!
//! ```json
//! {"review": [{"verdict": {…}}, {"text": "no tool call"}], "fix": [{"sh": "…"}]}
//! ```
//!
//! Steps are taken in order per role (`review` for the reviewer, `fix` for the
//! fixer, `develop` for the Delivery office's dev runs, `intake` for the Front Desk's plan
//! (its `verdict` is the plan), `librarian` for the Library's distillation (its `verdict`
//! is the answer), `resume` for `--resume`); the last one repeats. A step may also carry
//! `"error"` (an `is_error` result), `"sleep"` (seconds before answering), `"usage"`, and
//! `"stream"`: tool calls printed one by one before the answer, `"every"` seconds apart
//! (`[{"tool": "Read", "input": {"file_path": "src/lib.rs"}}, …]`), so a test can follow a
//! run while it goes.
//!
//! A scripted verdict is held to `--json-schema` as the real CLI holds a model's answer.
//! The real CLI asks the model again; a scripted run has one answer, so one the schema
//! refuses ends the run with an error that lists the schema's complaints, and never
//! reaches `hall` as `structured_output`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn model_id(m: &str) -> String {
    match m {
        "opus" => "claude-opus-4-8".into(),
        "sonnet" => "claude-sonnet-4-5".into(),
        "haiku" => "claude-haiku-4-5".into(),
        other => other.to_string(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let log = std::env::var_os("FAKE_CLAUDE_LOG").map(PathBuf::from);
    if !args.iter().any(|a| a == "-p" || a == "--print") {
        let record = json!({ "args": args, "cwd": cwd });
        if let Some(path) = log {
            let _ = std::fs::write(path, record.to_string());
        }
        return ExitCode::SUCCESS;
    }
    if let Some(path) = &log {
        let mut p = path.clone().into_os_string();
        p.push(".jsonl");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
        {
            let env = json!({
                "HALL_ACTOR": std::env::var("HALL_ACTOR").ok(),
                "HALL_ITEM": std::env::var("HALL_ITEM").ok(),
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": std::env::var("CLAUDE_CODE_DISABLE_CLAUDE_MDS").ok(),
                "GH_TOKEN": std::env::var("GH_TOKEN").ok(),
            });
            // One write of the whole line: a reader polling the log never sees half of it.
            let line = format!("{}\n", json!({ "args": args, "cwd": cwd, "env": env }));
            let _ = f.write_all(line.as_bytes());
        }
    }
    if flag(&args, "--output-format") == Some("stream-json")
        && !args.iter().any(|a| a == "--verbose")
    {
        eprintln!("Error: When using --print, --output-format=stream-json requires --verbose");
        return ExitCode::from(1);
    }
    if let Some(schema) = flag(&args, "--json-schema")
        && let Err(e) = serde_json::from_str::<Value>(schema)
    {
        eprintln!("Error: --json-schema is not valid JSON: {e}");
        return ExitCode::from(1);
    }
    let role = if args.iter().any(|a| a == "--resume" || a == "-r") {
        "resume"
    } else {
        match flag(&args, "--agent") {
            Some("hallmark:principal-engineer") => "review",
            Some("hallmark:fixer") => "fix",
            Some("hallmark:developer") => "develop",
            Some("hallmark:intake") => "intake",
            Some("hallmark:librarian") => "librarian",
            Some(other) => {
                eprintln!(
                    "fake claude: unknown agent `{other}` (the plugin's agents are namespaced hallmark:…)"
                );
                return ExitCode::from(1);
            }
            None => "dev",
        }
    };
    let step = next_step(role);
    let model = model_id(flag(&args, "--model").unwrap_or("opus"));
    let session = flag(&args, "--resume")
        .map(str::to_string)
        .unwrap_or_else(|| format!("fake-{role}-{}", std::process::id()));
    let out = std::io::stdout();
    let mut out = out.lock();
    let _ = writeln!(
        out,
        "{}",
        json!({"type":"system","subtype":"init","cwd":cwd,"session_id":session,"model":model,
               "tools":["Read","Grep","Glob","Bash"],"agents":[flag(&args, "--agent")],
               "plugins":[{"name":"hallmark","path":flag(&args, "--plugin-dir"),"source":"hallmark@inline"}]})
    );
    let _ = out.flush();
    if let Some(secs) = step.get("sleep").and_then(Value::as_f64) {
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    }
    let every = step.get("every").and_then(Value::as_f64).unwrap_or(0.0);
    for (n, call) in step
        .get("stream")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if n > 0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(every));
        }
        let _ = writeln!(
            out,
            "{}",
            json!({"type":"assistant","message":{"id":format!("msg_fake_{n}"),"type":"message","role":"assistant","model":model,
                   "content":[{"type":"tool_use","id":format!("toolu_fake_{n}"),"name":call["tool"],"input":call["input"]}],
                   "stop_reason":null,"usage":{"input_tokens":1000,"output_tokens":1}},"parent_tool_use_id":null,"session_id":session})
        );
        let _ = out.flush();
    }
    if step.get("stream").is_some() {
        std::thread::sleep(std::time::Duration::from_secs_f64(every));
    }
    let mut ok = true;
    if let Some(sh) = step.get("sh").and_then(Value::as_str) {
        let status = std::process::Command::new("sh").arg("-c").arg(sh).status();
        ok = status.is_ok_and(|s| s.success());
        if !ok {
            eprintln!("fake claude: the scripted commands failed");
        }
    }
    let text = step
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or("Done.")
        .to_string();
    let _ = writeln!(
        out,
        "{}",
        json!({"type":"assistant","message":{"id":"msg_fake","type":"message","role":"assistant","model":model,
               "content":[{"type":"text","text":text}],"stop_reason":null,
               "usage":{"input_tokens":1000,"output_tokens":1}},"parent_tool_use_id":null,"session_id":session})
    );
    let input = step
        .pointer("/usage/input")
        .and_then(Value::as_u64)
        .unwrap_or(3000);
    let output = step
        .pointer("/usage/output")
        .and_then(Value::as_u64)
        .unwrap_or(400);
    let cost = (input as f64 * 5.0 + output as f64 * 25.0) / 1e6;
    let mut result = json!({
        "type":"result","subtype":"success","is_error":false,"duration_ms":321,"num_turns":2,
        "result":text,"session_id":session,"total_cost_usd":cost,
        "usage":{"input_tokens":0,"output_tokens":0},
        "modelUsage":{ format!("{model}[1m]"): {"inputTokens":input,"outputTokens":output,
            "cacheReadInputTokens":500,"cacheCreationInputTokens":200,"webSearchRequests":0,"costUSD":cost}},
        "permission_denials":[]
    });
    if let Some(v) = step.get("verdict") {
        match flag(&args, "--json-schema").map(|schema| refusals(schema, v)) {
            Some(refused) if !refused.is_empty() => {
                result["subtype"] = Value::String("error_during_execution".into());
                result["is_error"] = Value::Bool(true);
                result["errors"] = json!([format!(
                    "the structured output does not match --json-schema: {}",
                    refused.join("; ")
                )]);
            }
            _ => {
                result["structured_output"] = v.clone();
                result["result"] = Value::String(v.to_string());
            }
        }
    }
    if let Some(e) = step.get("error").and_then(Value::as_str) {
        result["is_error"] = Value::Bool(true);
        result["result"] = Value::String(e.to_string());
        result["api_error_status"] = step.get("api_error_status").cloned().unwrap_or(Value::Null);
        result["modelUsage"] = json!({});
    }
    if !ok {
        result["subtype"] = Value::String("error_during_execution".into());
        result["is_error"] = Value::Bool(true);
        result["errors"] = json!(["the scripted commands failed"]);
    }
    let _ = writeln!(out, "{result}");
    if result["is_error"] == Value::Bool(true) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What `schema` (JSON text, already checked to parse) says is wrong with `answer`.
fn refusals(schema: &str, answer: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(schema).unwrap_or(Value::Null);
    match jsonschema::validator_for(&schema) {
        Ok(validator) => validator
            .iter_errors(answer)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("the schema does not compile: {e}")],
    }
}

/// The next scripted step for `role`, counting calls in a file beside the script.
fn next_step(role: &str) -> Value {
    let Some(script) = std::env::var_os("FAKE_CLAUDE_SCRIPT").map(PathBuf::from) else {
        return json!({});
    };
    let all: Value = std::fs::read_to_string(&script)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let steps = all
        .get(role)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut counter = script.clone().into_os_string();
    counter.push(format!(".{role}.count"));
    let n: usize = std::fs::read_to_string(&counter)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let _ = std::fs::write(&counter, (n + 1).to_string());
    steps
        .get(n)
        .or_else(|| steps.last())
        .cloned()
        .unwrap_or(json!({}))
}
