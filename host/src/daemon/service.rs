//! Starting the daemon apart from the command that asks: detached in the background, or
//! as a user service that starts at login (service-manager).

use crate::error::{HallError, IoContext, Result};

/// Starts `hall daemon run` in the background, detached, logging to `daemon.log`, for
/// the person `_you`, with the `PATH` the daemon will keep (see `environment.rs`; the
/// daemon resolves it again, to the same).
pub fn spawn_background(_you: &crate::hall::person::Person) -> Result<u32> {
    let env = super::environment::for_repos(None)?;
    let exe = std::env::current_exe()
        .map_err(|e| HallError::internal(format!("this hall's path can't be read: {e}")))?;
    let d = super::dir()?;
    std::fs::create_dir_all(&d).at(&d)?;
    let log_path = d.join("daemon.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .at(&log_path)?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(["daemon", "run"])
        .env("PATH", &env.path)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().at(&log_path)?)
        .stderr(log);
    crate::platform::detach(&mut cmd);
    let child = cmd.spawn().at(&exe)?;
    Ok(child.id())
}

/// Starts `hall args…` in `dir`, detached from this process, its output dropped: for a
/// short job a hook must not wait for (telling of a stopped daemon).
pub fn spawn_detached(args: &[&str], dir: &std::path::Path) -> Result<u32> {
    let exe = std::env::current_exe()
        .map_err(|e| HallError::internal(format!("this hall's path can't be read: {e}")))?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    crate::platform::detach(&mut cmd);
    let child = cmd.spawn().at(&exe)?;
    Ok(child.id())
}

/// Installs `hall daemon run` as a user service that starts at login (a systemd user
/// unit, a launchd agent, …), through service-manager, and asks it to start now, for the
/// person `_you`. The service file records the environment resolved now: the `PATH`
/// the daemon keeps (not the service manager's own) and the data, config and cache
/// directories. Returns the service's label, and why starting it now failed (a machine
/// without a user session bus, say), in which case the caller starts the daemon itself.
pub fn install_at_login(_you: &crate::hall::person::Person) -> Result<(String, Option<String>)> {
    use service_manager::{
        RestartPolicy, ServiceInstallCtx, ServiceLabel, ServiceLevel, ServiceManager,
        ServiceStartCtx,
    };
    let failed = |what: &str, e: std::io::Error| {
        HallError::new(crate::error::Code::CommandFailed, format!("{what}: {e}"))
            .hint("hall daemon start")
    };
    let label: ServiceLabel = "dev.hallmark.daemon"
        .parse()
        .map_err(|e| HallError::internal(format!("{e}")))?;
    let mut manager = <dyn ServiceManager>::native()
        .map_err(|e| failed("no service manager on this machine", e))?;
    manager
        .set_level(ServiceLevel::User)
        .map_err(|e| failed("user-level services are not available", e))?;
    // The daemon must see the same data, config and cache directories as this process,
    // and the PATH it resolved its programs on.
    let resolved = super::environment::for_repos(None)?;
    let mut environment: Vec<(String, String)> =
        ["HALL_DATA_DIR", "HALL_CONFIG_DIR", "HALL_CACHE_DIR"]
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
    environment.push(("PATH".into(), resolved.path));
    let program = std::env::current_exe()
        .map_err(|e| HallError::internal(format!("this hall's path can't be read: {e}")))?;
    manager
        .install(ServiceInstallCtx {
            label: label.clone(),
            program,
            args: vec!["daemon".into(), "run".into()],
            contents: None,
            username: None,
            working_directory: None,
            environment: Some(environment),
            autostart: true,
            restart_policy: RestartPolicy::OnFailure {
                delay_secs: Some(10),
                max_retries: None,
                reset_after_secs: None,
            },
        })
        .map_err(|e| failed("installing the login service failed", e))?;
    let started = manager
        .start(ServiceStartCtx {
            label: label.clone(),
        })
        .err()
        .map(|e| e.to_string().trim().to_string());
    Ok((label.to_string(), started))
}
