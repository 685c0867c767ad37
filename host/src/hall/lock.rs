//! Lock files: an exclusive lock on a file, held while the returned handle lives. The
//! system drops it when the process ends, however it ends, so nothing is left to expire.
//! Two handles conflict even within one process, so a lock serves threads too.

use std::fs::File;
use std::path::Path;

use crate::error::{IoContext, Result};

/// Waits for the lock on `path` (made, with its directory, if missing).
pub fn wait(path: &Path) -> Result<File> {
    let file = open(path)?;
    fs4::FileExt::lock(&file).at(path)?;
    Ok(file)
}

/// The lock on `path` if nobody holds it, else `None`.
pub fn try_now(path: &Path) -> Result<Option<File>> {
    let file = open(path)?;
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => Ok(Some(file)),
        Err(fs4::TryLockError::WouldBlock) => Ok(None),
        Err(fs4::TryLockError::Error(e)) => Err(e).at(path),
    }
}

fn open(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).at(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .at(path)
}
