//! `hall schema`: JSON Schema for every reply, the error shape, the event line and the
//! config, generated from the Rust types with schemars.

use schemars::{JsonSchema, schema_for};

use super::Reply;
use crate::cli::SchemaArgs;
use crate::error::{Code, ErrorReply, HallError, Result};

fn of<T: JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schema_for!(T)).unwrap_or_default()
}

/// The schema for `name`, if it names something.
pub fn schema(name: &str) -> Option<serde_json::Value> {
    use super::*;
    Some(match name {
        "error" => {
            let mut s = of::<ErrorReply>();
            let codes: serde_json::Map<String, serde_json::Value> = Code::ALL
                .iter()
                .map(|c| {
                    (
                        c.as_str(),
                        serde_json::json!({ "exit": c.exit(), "meaning": c.meaning() }),
                    )
                })
                .collect();
            s["x-codes"] = serde_json::Value::Object(codes);
            s
        }
        "event" => of::<crate::item::Event>(),
        "config" => of::<crate::config::Config>(),
        "init" => of::<init::InitReply>(),
        "doctor" => of::<doctor::DoctorReply>(),
        "new" => of::<new::NewReply>(),
        "claude" => of::<claude::ClaudeReply>(),
        "adopt" => of::<adopt::AdoptReply>(),
        "status" => {
            serde_json::json!({ "oneOf": [of::<status::StatusReply>(), of::<status::ItemStatusReply>()] })
        }
        "log" => serde_json::json!({ "oneOf": [of::<log::LogReply>(), of::<log::RepoLogReply>()] }),
        "inbox" => {
            serde_json::json!({ "oneOf": [of::<inbox::InboxReply>(), of::<inbox::NoticesReply>()] })
        }
        "queue" => of::<queue::QueueReply>(),
        "ready" | "pull-back" | "retry" | "propose-ready" | "fixed" | "reply" | "verdict" => {
            of::<ItemReply>()
        }
        "daemon" => of::<daemon::DaemonReply>(),
        "next" => of::<next::NextReply>(),
        "findings" => of::<findings::FindingsReply>(),
        "budget" => of::<budget::BudgetReply>(),
        "trace" => of::<trace::TraceReply>(),
        "attach" => of::<attach::AttachReply>(),
        "gazette" => of::<gazette::GazetteReply>(),
        "watch" => of::<watch::WatchReply>(),
        "statusline" => of::<crate::hall::statusline::Line>(),
        "statusline-board" => of::<crate::hall::statusline::Board>(),
        "gazette-words" => crate::gazette::words::schema(),
        "distillation" => {
            serde_json::from_str(crate::office::librarian::SCHEMA_FILE).unwrap_or_default()
        }
        "verdict-file" => crate::office::verdict::schema(),
        "verify" => of::<verify::VerifyReply>(),
        "drop" => of::<drop::DropReply>(),
        "merge" => of::<merge::MergeReply>(),
        "plan-file" => crate::office::intake::schema(crate::config::Intake::default().max_parts),
        "run" => of::<run::RunReply>(),
        "setup" => of::<setup::SetupReply>(),
        "ask" => of::<ask::AskReply>(),
        "answer" => of::<answer::AnswerReply>(),
        "usage" => of::<usage::UsageReply>(),
        "history" => of::<history::HistoryReply>(),
        "export" => of::<export::ExportReply>(),
        "reindex" => of::<reindex::ReindexReply>(),
        "rooms" => {
            serde_json::json!({ "oneOf": [of::<rooms::ListReply>(), of::<crate::rooms::CheckReport>(), of::<rooms::RunReply>()] })
        }
        "library" => serde_json::json!({ "oneOf": [
            of::<library::SearchReply>(),
            of::<library::ReviewReply>(),
            of::<library::LearningReply>(),
            of::<library::ExportReply>(),
            of::<library::ImportReply>(),
            of::<library::DistillReply>(),
        ] }),
        "policy" => of::<policy::PolicyReport>(),
        "notify" => of::<notify::NotifyReply>(),
        "frame" => of::<super::FrameReply>(),
        "web" => of::<super::web::WebTokenReply>(),
        "config-reply" => of::<super::config::ConfigReply>(),
        "version" => of::<crate::version::VersionInfo>(),
        "help" => of::<help::HelpReply>(),
        "hook" => serde_json::json!({
            "type": "object",
            "description": "Claude Code's hook output: {\"hookSpecificOutput\": {\"hookEventName\", \"additionalContext\" | \"permissionDecision\", \"permissionDecisionReason\"}}, or nothing."
        }),
        "schema" => {
            serde_json::json!({ "type": "object", "description": "A JSON Schema document." })
        }
        _ => return None,
    })
}

pub fn run(args: &SchemaArgs) -> Result<Reply> {
    match schema(&args.name) {
        Some(s) => {
            let text = serde_json::to_string_pretty(&s).unwrap_or_default();
            Ok(Reply::new(&s, text))
        }
        None => {
            let mut names: Vec<String> = super::help::commands()
                .into_iter()
                .map(|c| c.name)
                .collect();
            names.extend(
                [
                    "error",
                    "event",
                    "config",
                    "verdict-file",
                    "plan-file",
                    "gazette-words",
                    "distillation",
                    "statusline-board",
                    "version",
                    "config-reply",
                ]
                .map(String::from),
            );
            Err(HallError::usage(format!(
                "no schema named `{}`; try one of: {}",
                args.name,
                names.join(", ")
            )))
        }
    }
}
