//! hall's own cache of compiled components.
//!
//! Compiling a room with Cranelift takes tens of milliseconds; loading a
//! precompiled artifact takes well under one. So each component is compiled
//! once and its artifact kept under a name made of the component's sha256 and
//! the engine's compatibility hash, which changes whenever the wasmtime version
//! or its settings do.
//!
//! Loading an artifact is `unsafe`: wasmtime trusts it as machine code. So an
//! artifact is only ever read from this directory, written by this code, and
//! never taken from a repository or a user: from outside, hall accepts `.wasm`
//! bytes only and compiles them itself.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled artifacts live; `None` compiles in memory every time.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl Cache {
    pub(crate) fn new(dir: Option<PathBuf>, engine: &Engine) -> Self {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The artifact path for a component with this sha256.
    pub(crate) fn artifact_path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.engine_key)))
    }

    /// The component for `bytes`, from the cache or freshly compiled (then
    /// stored). Returns whether it was compiled.
    pub(crate) fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<(Component, bool)> {
        let path = self.artifact_path(sha256);
        if let Some(path) = &path
            && path.is_file()
        {
            // Mapped from the file where the system allows it; else read whole (Wine
            // can't map code from a file).
            match load_own_artifact(engine, path).or_else(|_| load_own_artifact_read(engine, path))
            {
                Ok(component) => return Ok((component, false)),
                // A stale or damaged artifact: drop it and compile again.
                Err(_) => {
                    let _ = fs::remove_file(path);
                }
            }
        }
        let component = Component::new(engine, bytes)?;
        if let Some(path) = &path {
            // The cache is an optimisation: failing to write it is not an error.
            if let Ok(artifact) = component.serialize() {
                let _ = write_atomically(path, &artifact);
            }
        }
        Ok((component, true))
    }
}

/// Loads an artifact this module wrote into hall's cache directory.
#[allow(unsafe_code)]
fn load_own_artifact(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: `Component::deserialize_file` trusts the file as compiled code.
    // `path` is always `Cache::artifact_path`: a file inside hall's own cache
    // directory (created 0700 on Unix) that only `write_atomically` below
    // writes, from `Component::serialize` of a component hall compiled itself
    // from `.wasm` bytes. Nothing from a repository or a user is ever passed
    // here. It is replaced by rename, never modified in place, so the mapping
    // wasmtime makes cannot change under it; wasmtime also checks the header
    // and refuses artifacts from another version or configuration.
    unsafe { Component::deserialize_file(engine, path) }
}

/// [`load_own_artifact`], reading the file into memory instead of mapping it.
#[allow(unsafe_code)]
fn load_own_artifact_read(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    let bytes = fs::read(path)?;
    // SAFETY: the same file as in `load_own_artifact`, with the same guarantees; read
    // once into memory that nothing else can change.
    unsafe { Component::deserialize(engine, &bytes) }
}

/// Writes `bytes` to `path` through a temporary file and a rename, in a private
/// directory: a reader sees the old file or the new one, never part of one.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("artifact path has no parent"))?;
    create_private_dir(dir)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| std::io::Error::other("artifact path has no file name"))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    hallmark_core::platform::create_private_dir(dir)
}
