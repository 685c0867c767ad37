//! The registry of repositories the user ran `hall init` in: `repos.json` in the user
//! data directory, outside every repository. The daemon runs the loop for each of
//! them, and the hooks keep gating a registered repository whose journal directory
//! went missing.

use std::path::{Path, PathBuf};

use crate::error::{HallError, IoContext, Result};

fn dir() -> Result<PathBuf> {
    crate::platform::data_dir().ok_or_else(|| HallError::internal("no user data directory"))
}

/// The registered repositories (their main checkouts).
pub fn registered() -> Vec<PathBuf> {
    crate::platform::data_dir()
        .and_then(|d| std::fs::read(d.join("repos.json")).ok())
        .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

/// Whether the repository whose main checkout is `main_root` is registered.
pub fn contains(main_root: &Path) -> bool {
    let main = crate::git::normalize(main_root);
    registered()
        .iter()
        .any(|r| crate::git::normalize(r) == main)
}

/// Adds the repository whose main checkout is `root` (idempotent; concurrent `hall
/// init`s in other repositories each keep their entry).
pub fn register(root: &Path) -> Result<()> {
    let dir = dir()?;
    let _lock = super::lock::wait(&dir.join("repos.lock"))?;
    let path = dir.join("repos.json");
    let mut repos: Vec<String> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let me = root.display().to_string();
    if !repos.contains(&me) {
        repos.push(me);
        repos.sort();
        let bytes = serde_json::to_vec_pretty(&repos).map_err(HallError::internal)?;
        crate::journal::file::write_atomic(&path, &bytes).at(&path)?;
    }
    Ok(())
}
