//! The user's signing key and the SSHSIG signatures a hallmark carries.
//!
//! A hallmark is worth something only if nobody but Hallmark could have made it, and a
//! note or a journal line can be written by anyone with the user's rights. So the
//! process that accepts an approval signs a statement about the commit with a key that
//! lives outside every repository: Hallmark's own ed25519 key in the user config
//! directory (made on first need), or an unencrypted SSH key the user names there.
//!
//! Signatures are SSHSIG, the format `ssh-keygen -Y sign` writes, in Hallmark's own
//! namespace, so `ssh-keygen -Y verify` can check them as well. Everything runs in
//! process through the RustCrypto `ssh-key` crate: the push gate verifies inside a hook
//! whose budget is a few milliseconds (docs/decisions/0005-signed-hallmarks.md).

pub mod allowed;

use std::path::{Path, PathBuf};

use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig, public::KeyData};

/// The SSHSIG namespace of every hallmark signature.
pub const NAMESPACE: &str = "hallmark";

/// Hallmark's own key, in the user config directory (the public half beside it, `.pub`).
pub const KEY_FILE: &str = "signing_ed25519";

/// The user config file whose `[signing]` table names a key or a principal.
pub const USER_CONFIG: &str = "config.toml";

/// Why a key could not be loaded, made or used.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("there is no user config directory to keep the signing key in (set HALL_CONFIG_DIR)")]
    NoConfigDir,
    #[error("the signing key {path} can't be used: {why}")]
    Key { path: PathBuf, why: String },
    #[error("signing failed: {0}")]
    Sign(String),
}

/// The `[signing]` table of `<config dir>/config.toml`. Read leniently: a missing file,
/// a file that isn't TOML or keys of the wrong type count as not set, because the
/// signer must never stall the loop over a typo elsewhere in a user's file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserSigning {
    /// An SSH private key to sign with instead of Hallmark's own (`~` is expanded).
    pub key: Option<PathBuf>,
    /// Who signs: goes into every statement and must match `allowed_signers`.
    pub principal: Option<String>,
}

impl UserSigning {
    pub fn read(config_dir: &Path) -> UserSigning {
        let Ok(text) = std::fs::read_to_string(config_dir.join(USER_CONFIG)) else {
            return UserSigning::default();
        };
        let Ok(table) = text.parse::<toml::Table>() else {
            return UserSigning::default();
        };
        let signing = table.get("signing").and_then(|s| s.as_table());
        let get = |k: &str| {
            signing
                .and_then(|s| s.get(k))
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        UserSigning {
            key: get("key").map(|k| expand(&k, config_dir)),
            principal: get("principal"),
        }
    }
}

/// `~/…` is the home directory; a relative path is relative to the config directory.
fn expand(path: &str, config_dir: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    let p = PathBuf::from(path);
    if p.is_absolute() {
        p
    } else {
        config_dir.join(p)
    }
}

pub fn user_config_path() -> Option<PathBuf> {
    crate::platform::config_dir().map(|d| d.join(USER_CONFIG))
}

fn config_dir() -> Result<PathBuf, SignError> {
    crate::platform::config_dir().ok_or(SignError::NoConfigDir)
}

/// Who signs: `[signing] principal`, else git's `user.email` (as seen from `repo_dir`),
/// else `user@host`.
pub fn principal(config_dir: &Path, repo_dir: Option<&Path>) -> String {
    if let Some(p) = UserSigning::read(config_dir).principal {
        return p;
    }
    let dir = repo_dir.unwrap_or(Path::new("."));
    if let Some(email) = crate::git::config_value(dir, "user.email") {
        return email;
    }
    let user = ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "hall".to_string());
    format!("{user}@{}", hostname())
}

fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|f| std::fs::read_to_string(f).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The private key file signing uses: the configured SSH key, else Hallmark's own.
pub fn key_path(config_dir: &Path) -> (PathBuf, bool) {
    match UserSigning::read(config_dir).key {
        Some(p) => (p, true),
        None => (config_dir.join(KEY_FILE), false),
    }
}

/// What [`ensure_key`] found or made.
#[derive(Clone, Debug)]
pub struct KeyStatus {
    pub path: PathBuf,
    /// True when this call generated Hallmark's own key.
    pub created: bool,
    /// `SHA256:…`
    pub fingerprint: String,
}

/// Makes sure there is a key to sign with, generating Hallmark's own when none is
/// configured and none exists yet.
pub fn ensure_key() -> Result<KeyStatus, SignError> {
    ensure_key_in(&config_dir()?)
}

pub fn ensure_key_in(config_dir: &Path) -> Result<KeyStatus, SignError> {
    let (path, configured) = key_path(config_dir);
    let existed = path.exists();
    let key = if configured {
        read_ssh_key(&path)?
    } else {
        own_key(&path)?
    };
    Ok(KeyStatus {
        created: !existed && !configured,
        fingerprint: fingerprint(key.public_key().key_data()),
        path,
    })
}

/// A configured SSH key: it must be an unencrypted ed25519 key.
fn read_ssh_key(path: &Path) -> Result<PrivateKey, SignError> {
    let bad = |why: String| SignError::Key {
        path: path.to_path_buf(),
        why,
    };
    let key = PrivateKey::read_openssh_file(path).map_err(|e| bad(e.to_string()))?;
    if key.is_encrypted() {
        return Err(bad(
            "it is encrypted, and Hallmark signs without asking for a passphrase".into(),
        ));
    }
    if key.algorithm() != Algorithm::Ed25519 {
        return Err(bad(format!(
            "it is {}, and Hallmark signs with ed25519 keys only",
            key.algorithm()
        )));
    }
    Ok(key)
}

/// Hallmark's own key: read it, or make it. A new key is written to a private temporary
/// file and linked into place, so a racing process either wins or reads the winner's
/// key, and nobody ever reads half a key.
fn own_key(path: &Path) -> Result<PrivateKey, SignError> {
    let bad = |why: String| SignError::Key {
        path: path.to_path_buf(),
        why,
    };
    if path.exists() {
        let key = read_ssh_key(path)?;
        ensure_public(path, &key);
        return Ok(key);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| bad(e.to_string()))?;
    let mut key = PrivateKey::random(&mut ssh_key::rand_core::OsRng, Algorithm::Ed25519)
        .map_err(|e| bad(format!("could not generate a key: {e}")))?;
    key.set_comment("hallmark");
    let pem = key
        .to_openssh(LineEnding::LF)
        .map_err(|e| bad(e.to_string()))?;
    // Unique per process and per call: racing threads must not share a temporary file.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{KEY_FILE}.{}.{n}.tmp", std::process::id()));
    write_private(&tmp, pem.as_bytes()).map_err(|e| bad(e.to_string()))?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    let key = match linked {
        Ok(()) => key,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_ssh_key(path)?,
        Err(e) => return Err(bad(e.to_string())),
    };
    ensure_public(path, &key);
    Ok(key)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = crate::platform::create_private_file(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Writes `<key>.pub` when it is missing or names another key (best effort: the public
/// half can always be derived again from the private one).
fn ensure_public(path: &Path, key: &PrivateKey) {
    let pub_path = public_path(path);
    let Ok(line) = key.public_key().to_openssh() else {
        return;
    };
    let current = std::fs::read_to_string(&pub_path).unwrap_or_default();
    if current.trim() != line {
        let _ = crate::journal::file::write_atomic(&pub_path, format!("{line}\n").as_bytes());
    }
}

fn public_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".pub");
    path.with_file_name(name)
}

/// The user's public key, without touching the private one when its `.pub` is there;
/// `None` when there is no key yet.
pub fn user_public_key() -> Option<PublicKey> {
    user_public_key_in(&crate::platform::config_dir()?)
}

pub fn user_public_key_in(config_dir: &Path) -> Option<PublicKey> {
    let (path, _) = key_path(config_dir);
    if let Ok(text) = std::fs::read_to_string(public_path(&path))
        && let Ok(key) = PublicKey::from_openssh(text.trim())
    {
        return Some(key);
    }
    PrivateKey::read_openssh_file(&path)
        .ok()
        .map(|k| k.public_key().clone())
}

/// `SHA256:…`, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &KeyData) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// The key that signs hallmarks, with the principal it signs as.
pub struct Signer {
    key: PrivateKey,
    principal: String,
    path: PathBuf,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("principal", &self.principal)
            .field("path", &self.path)
            .field("key", &self.fingerprint())
            .finish()
    }
}

impl Signer {
    /// The user's signer (the key is made when it is missing); `repo_dir` is where git's
    /// `user.email` is read.
    pub fn load(repo_dir: Option<&Path>) -> Result<Signer, SignError> {
        Signer::load_in(&config_dir()?, repo_dir)
    }

    /// The signer whose config directory is `config_dir` (tests point it at a sandbox).
    pub fn load_in(config_dir: &Path, repo_dir: Option<&Path>) -> Result<Signer, SignError> {
        let (path, configured) = key_path(config_dir);
        let key = if configured {
            read_ssh_key(&path)?
        } else {
            own_key(&path)?
        };
        Ok(Signer {
            key,
            principal: principal(config_dir, repo_dir),
            path,
        })
    }

    pub fn principal(&self) -> &str {
        &self.principal
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn public_key(&self) -> &PublicKey {
        self.key.public_key()
    }

    pub fn fingerprint(&self) -> String {
        fingerprint(self.key.public_key().key_data())
    }

    /// The armored SSHSIG signature of `message` in Hallmark's namespace.
    pub fn sign(&self, message: &[u8]) -> Result<String, SignError> {
        let sig = self
            .key
            .sign(NAMESPACE, HashAlg::Sha512, message)
            .map_err(|e| SignError::Sign(e.to_string()))?;
        sig.to_pem(LineEnding::LF)
            .map_err(|e| SignError::Sign(e.to_string()))
    }
}

/// Why a signature does not check out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigFailure {
    /// Not an armored SSHSIG signature at all.
    Malformed(String),
    /// Made for another namespace (a git commit signature, a file signature…).
    Namespace(String),
    /// The signature does not match the message under the key it names.
    Invalid(String),
}

/// Checks an armored signature over `message`, returning the key that made it. Whether
/// that key may sign is the caller's question ([`allowed::AllowedSigners`]).
pub fn check(message: &[u8], armored: &str) -> Result<KeyData, SigFailure> {
    let sig = SshSig::from_pem(armored.trim()).map_err(|e| SigFailure::Malformed(e.to_string()))?;
    if sig.namespace() != NAMESPACE {
        return Err(SigFailure::Namespace(sig.namespace().to_string()));
    }
    let key = PublicKey::from(sig.public_key().clone());
    key.verify(NAMESPACE, message, &sig)
        .map_err(|e| SigFailure::Invalid(e.to_string()))?;
    Ok(sig.public_key().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure_key_in(dir.path()).unwrap();
        assert!(first.created);
        assert!(first.fingerprint.starts_with("SHA256:"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&first.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        let again = ensure_key_in(dir.path()).unwrap();
        assert!(!again.created);
        assert_eq!(again.fingerprint, first.fingerprint);
        let public = user_public_key_in(dir.path()).unwrap();
        assert_eq!(fingerprint(public.key_data()), first.fingerprint);
    }

    #[test]
    fn racing_signers_end_up_with_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let prints: Vec<String> = (0..4)
            .map(|_| {
                let p = path.clone();
                std::thread::spawn(move || Signer::load_in(&p, None).unwrap().fingerprint())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        assert!(prints.windows(2).all(|w| w[0] == w[1]), "{prints:?}");
    }

    #[test]
    fn a_signature_checks_and_a_changed_message_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer::load_in(dir.path(), None).unwrap();
        let sig = signer.sign(b"hallmark v2\n").unwrap();
        assert!(sig.starts_with("-----BEGIN SSH SIGNATURE-----"));
        let key = check(b"hallmark v2\n", &sig).unwrap();
        assert_eq!(fingerprint(&key), signer.fingerprint());
        assert!(matches!(
            check(b"hallmark v3\n", &sig),
            Err(SigFailure::Invalid(_))
        ));
        assert!(matches!(
            check(b"x", "not a signature"),
            Err(SigFailure::Malformed(_))
        ));
    }

    #[test]
    fn ssh_keygen_accepts_our_signatures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(USER_CONFIG),
            "[signing]\nprincipal = \"ada@example.com\"\n",
        )
        .unwrap();
        let signer = Signer::load_in(dir.path(), None).unwrap();
        let message = b"hallmark v2\nitem H-0001\n";
        std::fs::write(dir.path().join("message"), message).unwrap();
        std::fs::write(
            dir.path().join("message.sig"),
            signer.sign(message).unwrap(),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("allowed_signers"),
            allowed::line(signer.principal(), signer.public_key()) + "\n",
        )
        .unwrap();
        let verify = |namespace: &str| {
            let message = std::fs::File::open(dir.path().join("message")).unwrap();
            std::process::Command::new("ssh-keygen")
                .args(["-Y", "verify", "-f", "allowed_signers", "-I"])
                .args(["ada@example.com", "-n", namespace, "-s", "message.sig"])
                .current_dir(dir.path())
                .stdin(message)
                .output()
                .expect("ssh-keygen (openssh-client) is installed")
        };
        let out = verify(NAMESPACE);
        assert!(out.status.success(), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Good \"hallmark\" signature"),
            "{out:?}"
        );
        assert!(!verify("git").status.success(), "another namespace fails");
    }

    #[test]
    fn another_namespace_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer::load_in(dir.path(), None).unwrap();
        let sig = signer
            .key
            .sign("git", HashAlg::Sha512, b"m")
            .unwrap()
            .to_pem(LineEnding::LF)
            .unwrap();
        assert_eq!(check(b"m", &sig), Err(SigFailure::Namespace("git".into())));
    }

    #[test]
    fn the_principal_comes_from_the_config_then_git_then_user_at_host() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("r");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .unwrap()
                .success();
            assert!(ok, "{args:?}");
        };
        git(&["init", "-q"]);
        git(&["config", "user.email", "grace@example.com"]);
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        assert_eq!(principal(&config, Some(&repo)), "grace@example.com");
        std::fs::write(
            config.join(USER_CONFIG),
            "[signing]\nprincipal = \"ada@example.com\"\n",
        )
        .unwrap();
        assert_eq!(principal(&config, Some(&repo)), "ada@example.com");
        // A user file that isn't TOML counts as not set.
        std::fs::write(config.join(USER_CONFIG), "[signing\nprincipal = 3").unwrap();
        assert_eq!(principal(&config, Some(&repo)), "grace@example.com");
    }

    #[test]
    fn a_configured_ssh_key_is_used_and_an_encrypted_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        // An ordinary unencrypted ed25519 key, as ssh-keygen would leave it.
        let mut key =
            PrivateKey::random(&mut ssh_key::rand_core::OsRng, Algorithm::Ed25519).unwrap();
        key.set_comment("me");
        let ssh = dir.path().join("id_ed25519");
        key.write_openssh_file(&ssh, LineEnding::LF).unwrap();
        std::fs::write(
            config.join(USER_CONFIG),
            format!(
                "[signing]\nkey = \"{}\"\nprincipal = \"me@example.com\"\n",
                ssh.display()
            ),
        )
        .unwrap();
        let signer = Signer::load_in(&config, None).unwrap();
        assert_eq!(signer.path(), ssh);
        assert_eq!(
            signer.fingerprint(),
            fingerprint(key.public_key().key_data())
        );
        assert!(!config.join(KEY_FILE).exists(), "no key of our own is made");
        std::fs::write(&ssh, "-----BEGIN OPENSSH PRIVATE KEY-----\ngarbage\n").unwrap();
        let err = Signer::load_in(&config, None).unwrap_err();
        assert!(matches!(err, SignError::Key { .. }), "{err}");
        // A passphrase-protected key, made by ssh-keygen itself.
        std::fs::remove_file(&ssh).unwrap();
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "secret", "-C", "me", "-f"])
            .arg(&ssh)
            .status();
        if made.is_ok_and(|s| s.success()) {
            let err = Signer::load_in(&config, None).unwrap_err();
            assert!(err.to_string().contains("encrypted"), "{err}");
        }
    }
}
