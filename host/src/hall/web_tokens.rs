//! API tokens for `hall web`: what a script sends as `Authorization: Bearer <token>`.
//!
//! A token is shown once, when it is made, and only its SHA-256 is kept, in
//! `web-tokens.json` in the user's config directory (one of Hallmark's protected
//! places, so a session's Bash can't add one). The web app reads the file on every
//! request that carries a token, so a revoked token stops working at once.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Code, HallError, IoContext, Result};

/// Every token starts with this, so a leaked one is easy to recognise in a log.
pub const PREFIX: &str = "hallweb_";

/// One token as stored: never the token itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenRecord {
    pub name: String,
    /// SHA-256 of the token, hex.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub hash: String,
    pub created: String,
}

#[derive(Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    tokens: Vec<TokenRecord>,
}

fn path(dir: &Path) -> PathBuf {
    dir.join("web-tokens.json")
}

fn read(dir: &Path) -> Result<File> {
    let path = path(dir);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            HallError::new(
                Code::InvalidConfig,
                format!("{} is not a token list: {e}", path.display()),
            )
            .hint(format!(
                "remove {} and make the tokens again",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(e).at(&path),
    }
}

fn write(dir: &Path, file: &File) -> Result<()> {
    let path = path(dir);
    let bytes = serde_json::to_vec_pretty(file)
        .map_err(|e| HallError::internal(format!("token list: {e}")))?;
    hallmark_core::journal::file::write_atomic(&path, &bytes).at(&path)?;
    Ok(())
}

/// The SHA-256 of a token, hex.
pub fn hash(token: &str) -> String {
    crate::rooms::sha256_hex(token.as_bytes())
}

/// 32 random bytes as hex: a launch token, a session, a CSRF token or an API token.
pub fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| HallError::internal(format!("randomness: {e}")))?;
    Ok(bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    }))
}

/// Makes a token named `name` and returns it; the name must be new. Only a person makes
/// one (`_you`).
pub fn create(_you: &super::person::Person, dir: &Path, name: &str, stamp: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(HallError::usage(
            "a token's name is 1 to 64 characters with no control characters",
        )
        .hint("hall web token create deploy-script"));
    }
    let _lock = super::lock::wait(&dir.join("web-tokens.lock"))?;
    let mut file = read(dir)?;
    if file.tokens.iter().any(|t| t.name == name) {
        return Err(
            HallError::usage(format!("a web token named `{name}` exists"))
                .hint(format!("hall web token revoke {name}"))
                .hint("hall web token list"),
        );
    }
    let token = format!("{PREFIX}{}", random_hex()?);
    file.tokens.push(TokenRecord {
        name: name.to_string(),
        hash: hash(&token),
        created: stamp.to_string(),
    });
    write(dir, &file)?;
    Ok(token)
}

/// The tokens, without their hashes.
pub fn list(dir: &Path) -> Result<Vec<TokenRecord>> {
    Ok(read(dir)?
        .tokens
        .into_iter()
        .map(|t| TokenRecord {
            hash: String::new(),
            ..t
        })
        .collect())
}

/// Revokes the token named `name`; an unknown name is an error that lists the names.
pub fn revoke(_you: &super::person::Person, dir: &Path, name: &str) -> Result<()> {
    let _lock = super::lock::wait(&dir.join("web-tokens.lock"))?;
    let mut file = read(dir)?;
    let before = file.tokens.len();
    file.tokens.retain(|t| t.name != name);
    if file.tokens.len() == before {
        return Err(
            HallError::usage(format!("no web token is named `{name}`")).hint("hall web token list")
        );
    }
    write(dir, &file)
}

/// The name of the token `token` is, if it is one; a file that can't be read knows no
/// token (the request is refused).
pub fn check(dir: &Path, token: &str) -> Option<String> {
    if !token.starts_with(PREFIX) {
        return None;
    }
    let want = hash(token);
    read(dir)
        .ok()?
        .tokens
        .into_iter()
        .find(|t| same(&t.hash, &want))
        .map(|t| t.name)
}

/// Compares two strings in time that depends only on their lengths.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hall::person::Person;

    #[test]
    fn a_token_works_until_it_is_revoked_and_only_its_hash_is_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let token = create(
            &Person::for_tests(),
            dir.path(),
            "ci",
            "2026-12-05T00:00:00Z",
        )
        .expect("create");
        assert!(token.starts_with(PREFIX));
        assert_eq!(check(dir.path(), &token).as_deref(), Some("ci"));
        assert_eq!(check(dir.path(), &format!("{token}0")), None);
        let stored = std::fs::read_to_string(path(dir.path())).expect("file");
        assert!(!stored.contains(&token), "{stored}");
        assert!(stored.contains(&hash(&token)));
        let again =
            create(&Person::for_tests(), dir.path(), "ci", "t").expect_err("a name is used once");
        assert_eq!(again.code, Code::Usage);
        assert_eq!(list(dir.path()).expect("list")[0].hash, "");
        revoke(&Person::for_tests(), dir.path(), "ci").expect("revoke");
        assert_eq!(check(dir.path(), &token), None);
        assert_eq!(
            revoke(&Person::for_tests(), dir.path(), "ci")
                .expect_err("gone")
                .code,
            Code::Usage
        );
    }

    #[test]
    fn an_unreadable_token_file_knows_no_token() {
        let dir = tempfile::tempdir().expect("dir");
        let token = create(&Person::for_tests(), dir.path(), "a", "t").expect("create");
        std::fs::write(path(dir.path()), "{not json").expect("write");
        assert_eq!(check(dir.path(), &token), None);
        assert_eq!(
            create(&Person::for_tests(), dir.path(), "b", "t")
                .expect_err("broken")
                .code,
            Code::InvalidConfig
        );
    }
}
