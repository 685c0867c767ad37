//! The sandbox every room call runs in.
//!
//! A room is code from a repository or an extension, so each call gets a fresh
//! `Store` (a trapped instance is never reused), a memory cap enforced by our own
//! limiter (so the error says "memory cap", not a bare trap), an epoch deadline
//! driven by one ticker thread per engine, and a WASI context that grants
//! nothing: no preopened directories, no environment, no arguments, no network,
//! stdin closed. stdout and stderr go to small in-memory buffers, which is how a
//! room's panic message reaches the person running `hall`.

use std::fmt;
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime::{Config, Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::error::{FailureKind, RoomError};

/// How often the epoch advances; deadlines are whole ticks.
pub(crate) const TICK: Duration = Duration::from_millis(25);

/// The bounds of one room call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may take before it is stopped.
    pub timeout: Duration,
    /// The most linear memory a room may have, in bytes.
    pub memory_bytes: usize,
    /// The most bytes kept from each of stdout and stderr; writing more fails
    /// the call.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            memory_bytes: 64 << 20,
            output_bytes: 64 << 10,
        }
    }
}

/// The store's data: WASI state plus our limiter.
pub(crate) struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
    cap: MemoryCap,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Refuses memory growth past the cap with an error we can recognise.
struct MemoryCap {
    bytes: usize,
    hit: Option<MemoryCapExceeded>,
}

/// The error a room's `memory.grow` traps with when it passes the cap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemoryCapExceeded {
    cap: usize,
    desired: usize,
}

impl fmt::Display for MemoryCapExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "asked for {} MiB of memory; the cap is {} MiB",
            self.desired.div_ceil(1 << 20),
            self.cap >> 20
        )
    }
}

impl std::error::Error for MemoryCapExceeded {}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.bytes {
            let exceeded = MemoryCapExceeded {
                cap: self.bytes,
                desired,
            };
            self.hit = Some(exceeded);
            return Err(wasmtime::Error::new(exceeded));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Tables hold function references; a policy room needs few.
        Ok(desired <= 1 << 16)
    }
}

/// Builds the engine every room runs on and starts its epoch ticker.
pub(crate) fn engine() -> Result<Engine, RoomError> {
    let mut config = Config::new();
    // Part of the compatibility hash, so cached artifacts follow it.
    config.epoch_interruption(true);
    let engine = Engine::new(&config).map_err(|e| RoomError::Runtime(e.to_string()))?;
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("hall-rooms-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .map_err(|e| RoomError::Runtime(format!("cannot start the epoch ticker: {e}")))?;
    Ok(engine)
}

/// Epoch ticks for a timeout: at least the timeout, at most one tick more.
fn deadline_ticks(timeout: Duration) -> u64 {
    let ticks = timeout.as_nanos().div_ceil(TICK.as_nanos());
    u64::try_from(ticks)
        .unwrap_or(u64::MAX / 2)
        .saturating_add(1)
}

/// One call's store plus the buffers to read when it fails.
pub(crate) struct Call {
    pub(crate) store: Store<Ctx>,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
    limits: Limits,
    room: String,
}

impl Call {
    /// A fresh store with nothing granted, bounded by `limits`.
    pub(crate) fn new(engine: &Engine, limits: Limits, room: &str) -> Self {
        let stdout = MemoryOutputPipe::new(limits.output_bytes);
        let stderr = MemoryOutputPipe::new(limits.output_bytes);
        // The builder's defaults already deny files, network, env and args;
        // only the two output streams are replaced.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .build();
        let ctx = Ctx {
            wasi,
            table: ResourceTable::new(),
            cap: MemoryCap {
                bytes: limits.memory_bytes,
                hit: None,
            },
        };
        let mut store = Store::new(engine, ctx);
        store.limiter(|c| &mut c.cap);
        store.set_epoch_deadline(deadline_ticks(limits.timeout));
        Self {
            store,
            stdout,
            stderr,
            limits,
            room: room.to_string(),
        }
    }

    /// Turns a wasmtime error from this call into a named room failure.
    pub(crate) fn failure(&self, error: &wasmtime::Error, instantiating: bool) -> RoomError {
        let stderr = String::from_utf8_lossy(&self.stderr.contents()).into_owned();
        let stdout = String::from_utf8_lossy(&self.stdout.contents()).into_owned();
        let detail = error.to_string();
        let trap = error.downcast_ref::<Trap>().copied();
        let kind = if self.store.data().cap.hit.is_some()
            || error.downcast_ref::<MemoryCapExceeded>().is_some()
        {
            FailureKind::Memory
        } else if trap == Some(Trap::Interrupt) {
            FailureKind::Timeout
        } else if stderr.contains("panicked at") {
            FailureKind::Panic
        } else if format!("{error:?}").contains("beyond capacity") {
            FailureKind::Output
        } else if instantiating {
            FailureKind::Instantiate
        } else {
            FailureKind::Trap
        };
        let detail = match (kind, self.store.data().cap.hit) {
            (FailureKind::Memory, Some(hit)) => hit.to_string(),
            _ => detail.lines().next().unwrap_or_default().to_string(),
        };
        RoomError::Failed {
            room: self.room.clone(),
            kind,
            detail,
            stderr,
            stdout,
            limit: (kind == FailureKind::Timeout).then_some(self.limits.timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_covers_the_whole_timeout() {
        assert_eq!(deadline_ticks(Duration::from_secs(1)), 41);
        assert_eq!(deadline_ticks(Duration::from_millis(10)), 2);
        assert!(deadline_ticks(Duration::MAX) > 1);
    }
}
