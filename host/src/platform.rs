//! Everything that differs between macOS, Linux and Windows lives here, behind `cfg`.

use std::path::PathBuf;
use std::process::Command;

/// A command that runs `script` through the platform shell (`sh -c`, or `cmd /C`).
pub fn shell(script: &str) -> Command {
    #[cfg(windows)]
    {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(script);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }
}

/// Quotes one value for the platform shell, so a title with spaces or quotes stays one
/// argument when substituted into a template.
pub fn shell_quote(value: &str) -> String {
    #[cfg(windows)]
    {
        format!("\"{}\"", value.replace('"', "\"\""))
    }
    #[cfg(not(windows))]
    {
        if !value.is_empty()
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@+,".contains(&b))
        {
            value.to_string()
        } else {
            format!("'{}'", value.replace('\'', "'\\''"))
        }
    }
}

/// Where `hall` keeps per-user data (the repo registry). `HALL_DATA_DIR` overrides it,
/// which the tests use to seal their environment.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_DATA_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::data_dir().map(|d| d.join("hallmark"))
}

/// Where `hall` keeps per-user configuration (user-level rooms, notify settings).
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_CONFIG_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::config_dir().map(|d| d.join("hallmark"))
}

/// Where `hall` keeps caches it can rebuild (precompiled rooms).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::cache_dir().map(|d| d.join("hallmark"))
}

/// Whether process `pid` on this machine is known to have exited. Only Linux can say
/// without a system call (`/proc`); elsewhere the answer is "not known", and a lease
/// waits out its expiry instead.
pub fn process_gone(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // A zombie (state `Z`) has exited; it only waits for its parent to reap it.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(_) => true,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

/// The most bytes one command-line argument may safely carry: Linux refuses a single
/// argument over 128 KiB, and Windows a whole command line over 32,767 characters.
pub fn max_arg_bytes() -> usize {
    #[cfg(windows)]
    {
        24 * 1024
    }
    #[cfg(not(windows))]
    {
        100 * 1024
    }
}

/// Starts `cmd` detached from this process's session and terminal, so it outlives the
/// shell that ran `hall daemon start`.
pub fn detach(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(windows))]
    #[test]
    fn quoting_survives_the_shell() {
        for v in ["plain", "two words", "it's", "$(rm -rf /)", "a\"b", ""] {
            let out = shell(&format!("printf %s {}", shell_quote(v)))
                .output()
                .expect("sh runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout), v);
        }
    }
}
