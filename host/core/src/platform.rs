//! The platform differences that code below the host needs (the rooms runtime's
//! cache and engine), behind `cfg` like the rest. `hallmark::platform` re-exports
//! them beside its own, so the host still reads every platform difference from one
//! module, and its test of that rule reads this file too.

use std::path::Path;

/// Makes `dir` (and its parents), open to this user only where the system has
/// permissions.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Whether wasmtime must register unwind information for the code it compiles: Windows'
/// ABI needs it (wasmtime refuses to run without it there); elsewhere the rooms leave
/// it out, which makes loading a room cheaper.
pub const UNWIND_INFO_REQUIRED: bool = cfg!(windows);
