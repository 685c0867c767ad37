//! `hall web token …`: API tokens for scripts that call the web app. `hall web` itself
//! (the server) is run by `main`, since the web app sits a layer above the commands.

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::{WebCmd, WebTokenCmd};
use crate::error::{HallError, Result};
use crate::hall::web_tokens::{self, TokenRecord};

#[derive(Serialize, schemars::JsonSchema)]
pub struct WebTokenReply {
    /// The new token, shown this once (`create` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The tokens after the command, without their hashes.
    pub tokens: Vec<TokenRecord>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, cmd: &WebCmd) -> Result<Reply> {
    // A token lets a script act as you through the web app: a person's to make, to
    // revoke and to list.
    let you = ctx.person("web token", "manages credentials that act as you")?;
    let dir = crate::platform::config_dir().ok_or_else(|| {
        HallError::internal("there is no user config directory to keep web tokens in")
            .hint("HALL_CONFIG_DIR=<dir> hall web token list")
    })?;
    let WebCmd::Token(cmd) = cmd;
    let (token, text) = match cmd {
        WebTokenCmd::Create { name } => {
            let token = web_tokens::create(you, &dir, name, &ctx.stamp)?;
            let text = format!(
                "{token}\nshown once: send it as `Authorization: Bearer <token>`; `hall web token revoke {name}` ends it"
            );
            (Some(token), text)
        }
        WebTokenCmd::Revoke { name } => {
            web_tokens::revoke(you, &dir, name)?;
            (None, format!("revoked `{name}`"))
        }
        WebTokenCmd::List => (None, String::new()),
    };
    let tokens = web_tokens::list(&dir)?;
    let text = if text.is_empty() {
        if tokens.is_empty() {
            "no web tokens".to_string()
        } else {
            tokens
                .iter()
                .map(|t| format!("{}  made {}", t.name, t.created))
                .collect::<Vec<_>>()
                .join("\n")
        }
    } else {
        text
    };
    let reply = WebTokenReply {
        token,
        tokens,
        next: vec!["hall web token list".into(), "hall web --no-open".into()],
    };
    Ok(Reply::new(&reply, text))
}
