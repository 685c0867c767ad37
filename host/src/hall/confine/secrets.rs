//! What no run of an item's code may see: the credential stores under the home
//! directory, the sockets through which it could act as the user, and the environment
//! variables that hold secrets.

/// Files and directories under the home directory that hold credentials or talk to
/// something that does: no run of an item's code may see them.
pub(super) const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".claude",
    ".claude.json",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/chromium",
    ".config/google-chrome",
    ".mozilla",
    ".local/share/keyrings",
    ".password-store",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".docker/config.json",
    ".aws",
    ".azure",
    ".kube",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
];

/// Sockets and runtime directories outside the home through which a run could act as
/// the user elsewhere (agents, buses, a container engine).
pub(super) const SYSTEM_SECRETS: &[&str] = &[
    "/run/user",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
];

/// Environment variables no run of an item's code gets, besides any whose name says it
/// holds a secret ([`secret_name`]).
pub(super) const SECRET_ENV: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "HALL_CONFIG_DIR",
    "HALL_DATA_DIR",
    "HALL_CACHE_DIR",
];

/// Whether an environment variable's name says it holds a secret.
pub(super) fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ]
    .iter()
    .any(|s| n.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_known_by_its_name() {
        for n in [
            "GH_TOKEN",
            "npm_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "OPENAI_API_KEY",
        ] {
            assert!(secret_name(n), "{n}");
        }
        for n in ["PATH", "HOME", "CARGO_HOME", "LANG", "CI"] {
            assert!(!secret_name(n), "{n}");
        }
    }
}
