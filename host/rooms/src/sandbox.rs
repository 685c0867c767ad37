//! The sandbox every room call runs in.
//!
//! A room is code from a repository or an extension, possibly written by the
//! agent whose work it judges, so it is treated as hostile:
//!
//! - each call gets a fresh `Store` (a trapped instance is never reused), a
//!   memory cap enforced by our own limiter (so the error says "memory cap",
//!   not a bare trap), and an epoch deadline driven by one ticker thread per
//!   engine;
//! - the linker offers only the WASI interfaces a Rust `wasm32-wasip2` room
//!   imports (stdio, exit, environment, clocks, randomness, streams and poll):
//!   no filesystem and no sockets, so a room importing either is refused when
//!   it is loaded;
//! - the WASI context grants nothing: no directories, environment or
//!   arguments, stdin empty, and stdout and stderr captured up to a cap;
//! - time and chance are constants. The wall clock is fixed, randomness comes
//!   from a fixed byte pattern, and the monotonic clock is hall's own: it starts
//!   at zero and moves only when the room sleeps, by exactly the time asked
//!   for, and every sleep is over at once. No host call can block, so the epoch
//!   deadline, which only interrupts WebAssembly code, bounds the whole call.
//!
//! stdout and stderr go to small in-memory buffers, which is how a room's
//! panic message reaches the person running `hall`.

use std::fmt;
use std::time::Duration;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksCtxView};
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::random::{WasiRandom, WasiRandomCtx};
use wasmtime_wasi::{
    Deterministic, HostMonotonicClock, HostWallClock, I32Exit, WasiCtx, WasiCtxView, WasiView,
};

use super::error::{FailureKind, RoomError};

/// How often the epoch advances; deadlines are whole ticks.
pub(crate) const TICK: Duration = Duration::from_millis(25);

/// What a room's wall clock always reads: 2000-01-01T00:00:00Z.
pub const WALL_CLOCK_SECONDS: u64 = 946_684_800;

/// The bytes a room's randomness repeats, both the "secure" and the
/// "insecure" kind. Chosen once; any fixed pattern would do.
const RANDOM_PATTERN: [u8; 16] = [
    0x68, 0x61, 0x6c, 0x6c, 0x2d, 0x72, 0x6f, 0x6f, 0x6d, 0x73, 0x2d, 0x73, 0x65, 0x65, 0x64, 0x21,
];

/// What `wasi:random/insecure-seed` always returns.
const INSECURE_SEED: u128 = u128::from_le_bytes(RANDOM_PATTERN);

/// The most random bytes a room may ask for in one call: enough for any key,
/// and small enough that the host's copy of them costs nothing.
pub const RANDOM_BYTES: u64 = 1 << 20;

/// The bounds of one room call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may take before it is stopped.
    pub timeout: Duration,
    /// The most linear memory a room may have, in bytes.
    pub memory_bytes: usize,
    /// The most bytes a room may write to each of stdout and stderr; writing
    /// more fails the call.
    pub output_bytes: usize,
    /// The largest answer a room may return, measured as the JSON of what the
    /// host converts it into; a larger one fails the call.
    pub answer_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            memory_bytes: 64 << 20,
            output_bytes: 64 << 10,
            answer_bytes: 4 << 20,
        }
    }
}

/// The store's data: WASI state, our limiter and the room's clock.
pub(crate) struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
    cap: MemoryCap,
    /// The room's monotonic clock, in nanoseconds: it moves only when the room
    /// sleeps.
    clock_ns: u64,
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
    // No `.eh_frame` for the system's unwinder where it can be left out: registering it
    // is much of what loading a cached room costs, and a hook loads one on every tool
    // call. Wasmtime's own trap backtraces don't need it; Windows' ABI does.
    config.native_unwind_info(hallmark_core::platform::UNWIND_INFO_REQUIRED);
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

/// The linker every room is instantiated with: the WASI interfaces a Rust
/// room imports, and nothing else.
///
/// wasmtime-wasi's own implementations serve all of them except
/// `wasi:clocks/monotonic-clock`, whose sleeps would wait in real time (and
/// forever, for a long enough sleep) where the deadline cannot reach them;
/// [`RoomTime`] serves that one.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<Ctx>> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView};
    use wasmtime_wasi::clocks::WasiClocksView;
    use wasmtime_wasi::p2::bindings::sync::io;
    use wasmtime_wasi::p2::bindings::{cli, clocks, random};

    let mut linker = Linker::new(engine);
    let l = &mut linker;
    io::error::add_to_linker::<Ctx, Table>(l, table)?;
    io::poll::add_to_linker::<Ctx, Table>(l, table)?;
    io::streams::add_to_linker::<Ctx, Table>(l, table)?;
    cli::environment::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::exit::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::stdin::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::stdout::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::stderr::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::terminal_input::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::terminal_output::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::terminal_stdin::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::terminal_stdout::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    cli::terminal_stderr::add_to_linker::<Ctx, WasiCli>(l, Ctx::cli)?;
    clocks::wall_clock::add_to_linker::<Ctx, WasiClocks>(l, Ctx::clocks)?;
    clocks::monotonic_clock::add_to_linker::<Ctx, RoomTime>(l, room_time)?;
    random::random::add_to_linker::<Ctx, WasiRandom>(l, randomness)?;
    random::insecure::add_to_linker::<Ctx, WasiRandom>(l, randomness)?;
    random::insecure_seed::add_to_linker::<Ctx, WasiRandom>(l, randomness)?;
    Ok(linker)
}

/// `wasi:io` works on the resource table alone.
struct Table;

impl HasData for Table {
    type Data<'a> = &'a mut ResourceTable;
}

fn table(ctx: &mut Ctx) -> &mut ResourceTable {
    &mut ctx.table
}

fn randomness(ctx: &mut Ctx) -> &mut WasiRandomCtx {
    ctx.wasi.random()
}

fn room_time(ctx: &mut Ctx) -> RoomTimeView<'_> {
    RoomTimeView {
        now: &mut ctx.clock_ns,
        clocks: WasiClocksCtxView {
            ctx: ctx.wasi.clocks(),
            table: &mut ctx.table,
        },
    }
}

/// hall's `wasi:clocks/monotonic-clock`: a clock that starts at zero and
/// moves only when the room sleeps.
struct RoomTime;

impl HasData for RoomTime {
    type Data<'a> = RoomTimeView<'a>;
}

/// One call's view of its room's clock.
struct RoomTimeView<'a> {
    now: &'a mut u64,
    clocks: WasiClocksCtxView<'a>,
}

impl RoomTimeView<'_> {
    /// A pollable that is ready at once: the time asked for has already
    /// passed on the room's clock.
    fn ready_now(&mut self) -> wasmtime::Result<Resource<DynPollable>> {
        // wasmtime-wasi's own zero-length sleep is ready at once (it yields to
        // its runtime a single time, and never waits on a timer).
        monotonic_clock::Host::subscribe_duration(&mut self.clocks, 0)
    }
}

impl monotonic_clock::Host for RoomTimeView<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        Ok(*self.now)
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        Ok(1)
    }

    fn subscribe_instant(
        &mut self,
        when: monotonic_clock::Instant,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        *self.now = (*self.now).max(when);
        self.ready_now()
    }

    fn subscribe_duration(
        &mut self,
        duration: monotonic_clock::Duration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        *self.now = self.now.saturating_add(duration);
        self.ready_now()
    }
}

/// The wall clock every room reads: always [`WALL_CLOCK_SECONDS`].
struct FixedWallClock;

impl HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::from_secs(WALL_CLOCK_SECONDS)
    }
}

/// The monotonic clock in the WASI context. hall serves the interface itself
/// (see [`RoomTime`]), so this only keeps the host's real clock out of the
/// context altogether.
struct StoppedClock;

impl HostMonotonicClock for StoppedClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        0
    }
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
        // One byte more than the cap: a pipe refuses writes once full, so a
        // room that fills it has written past the cap exactly when it holds
        // more than the cap. The room sees a closed stream from then on, and
        // the call fails whatever the room does about that.
        let kept = limits.output_bytes.saturating_add(1);
        let stdout = MemoryOutputPipe::new(kept);
        let stderr = MemoryOutputPipe::new(kept);
        // The builder's defaults already deny files, network, env and args
        // and leave stdin empty; the streams, clocks and randomness are
        // replaced.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .wall_clock(FixedWallClock)
            .monotonic_clock(StoppedClock)
            .secure_random(Deterministic::new(RANDOM_PATTERN.to_vec()))
            .insecure_random(Deterministic::new(RANDOM_PATTERN.to_vec()))
            .insecure_random_seed(INSECURE_SEED)
            .max_random_size(RANDOM_BYTES)
            .build();
        let ctx = Ctx {
            wasi,
            table: ResourceTable::new(),
            cap: MemoryCap {
                bytes: limits.memory_bytes,
                hit: None,
            },
            clock_ns: 0,
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

    /// The failure of a call that wrote past the output cap, if it did; checked
    /// whether or not the room went on to answer.
    pub(crate) fn overflow(&self) -> Option<RoomError> {
        let stream = [("stdout", &self.stdout), ("stderr", &self.stderr)]
            .into_iter()
            .find(|(_, pipe)| pipe.contents().len() > self.limits.output_bytes)
            .map(|(name, _)| name)?;
        Some(self.failed(
            FailureKind::Output,
            format!(
                "more than {} to {stream}",
                size_text(self.limits.output_bytes)
            ),
        ))
    }

    /// The failure of a call whose answer, `bytes` long as JSON, is past the
    /// answer cap.
    pub(crate) fn oversized(&self, bytes: usize) -> RoomError {
        self.failed(
            FailureKind::Answer,
            format!(
                "an answer of {} as JSON; the most hall accepts is {}",
                size_text(bytes),
                size_text(self.limits.answer_bytes)
            ),
        )
    }

    /// Turns a wasmtime error from this call into a room failure that names
    /// its cause.
    pub(crate) fn failure(&self, error: &wasmtime::Error, instantiating: bool) -> RoomError {
        if let Some(overflow) = self.overflow() {
            return overflow;
        }
        let (kind, detail) = self.cause(error, instantiating);
        self.failed(kind, detail)
    }

    /// What stopped the call, most specific first.
    fn cause(&self, error: &wasmtime::Error, instantiating: bool) -> (FailureKind, String) {
        if let Some(hit) = self.store.data().cap.hit {
            return (FailureKind::Memory, hit.to_string());
        }
        if let Some(hit) = error.downcast_ref::<MemoryCapExceeded>() {
            return (FailureKind::Memory, hit.to_string());
        }
        if let Some(I32Exit(status)) = error.downcast_ref::<I32Exit>() {
            // WASI 0.2's `exit` carries only success or failure, so a Rust
            // room's `exit(3)` arrives as 1.
            return (FailureKind::Exit, format!("exited with status {status}"));
        }
        let panicked = self.stderr_text().contains("panicked at");
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt | Trap::OutOfFuel) => (FailureKind::Timeout, String::new()),
            Some(Trap::StackOverflow) => {
                (FailureKind::StackOverflow, "call stack exhausted".into())
            }
            _ if panicked => (FailureKind::Panic, String::new()),
            Some(Trap::UnreachableCodeReached) => (FailureKind::Abort, String::new()),
            Some(trap) => (FailureKind::Trap, trap_cause(*trap)),
            None if instantiating => (FailureKind::Instantiate, first_line(error)),
            None => (FailureKind::Trap, first_line(error)),
        }
    }

    fn failed(&self, kind: FailureKind, detail: String) -> RoomError {
        RoomError::Failed {
            room: self.room.clone(),
            kind,
            detail,
            stderr: self.stderr_text(),
            stdout: String::from_utf8_lossy(&self.stdout.contents()).into_owned(),
            limit: (kind == FailureKind::Timeout).then_some(self.limits.timeout),
        }
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).into_owned()
    }
}

/// A trap's cause in words a room author can act on.
fn trap_cause(trap: Trap) -> String {
    match trap {
        Trap::MemoryOutOfBounds => "out-of-bounds memory access (a read or write outside its \
             memory; a Rust room whose stack outgrows its memory ends this way too)"
            .into(),
        Trap::IntegerDivisionByZero => "integer divide by zero".into(),
        Trap::IntegerOverflow => "integer overflow".into(),
        Trap::BadConversionToInteger => "invalid conversion to integer".into(),
        Trap::TableOutOfBounds | Trap::IndirectCallToNull | Trap::BadSignature => {
            format!("bad indirect call ({trap})")
        }
        other => other.to_string(),
    }
}

/// `bytes` as a person reads a size: `64 KiB`, `4 MiB`, `8.0 MiB`, `512 bytes`.
pub(crate) fn size_text(bytes: usize) -> String {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn first_line(error: &wasmtime::Error) -> String {
    error
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
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

    #[test]
    fn sizes_read_as_a_person_writes_them() {
        assert_eq!(size_text(64 << 10), "64 KiB");
        assert_eq!(size_text(4 << 20), "4 MiB");
        assert_eq!(size_text((8 << 20) + (100 << 10)), "8.1 MiB");
        assert_eq!(size_text(512), "512 bytes");
    }
}
