//! The tool-call policy's settings, from the two places trusted to give them.
//!
//! The detectors' modes and counts come from the base branch's `.hallmark.toml` and
//! from the user's own `config.toml`, never from a branch or a working tree. The two
//! pull in opposite directions on purpose: the repository may only relax the defaults
//! (a lower mode, higher counts, a smaller window), so a hostile or careless repository
//! can't make an agent's first call fail; the user may only tighten what the repository
//! left (a higher mode, lower counts, a larger window), so a person can enforce on their
//! own machine what a team only observes. An agent that writes the user's file can
//! therefore make the policy stricter, never looser.

use std::path::Path;

use crate::config::{POLICY_DETECTORS, POLICY_WINDOW_MAX, Policy, PolicyMode};
use crate::rooms::types::{self, DetectorSetting};

/// The mode of every detector a file doesn't set.
pub const DEFAULT_MODE: PolicyMode = PolicyMode::Observe;

/// How many past calls the detectors see by default.
pub const DEFAULT_WINDOW: u32 = 30;

/// The lowest count a detector may act at: 1 would act on every call.
const FLOOR: u32 = 2;

/// Tools that only read: repetition and oscillation leave them alone (re-reading a
/// file is normal), while an error streak still counts them.
pub const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "TodoRead",
    "BashOutput",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
];

/// The settings in force for one repository and user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Every detector, in the built-in order, then any a repository's room adds.
    pub detectors: Vec<DetectorSetting>,
    /// The mode of a detector that isn't listed (one a repository's room invents).
    pub default_mode: PolicyMode,
    /// How many past calls a session keeps and the room sees.
    pub window: usize,
    /// Tools that only read: the built-in list and the ones the files add.
    pub read_only_tools: Vec<String>,
}

impl Settings {
    /// The settings from the base branch's `[policy]` and the user's.
    pub fn resolve(repo: &Policy, user: Option<&Policy>) -> Settings {
        let empty = Policy::default();
        let user = user.unwrap_or(&empty);
        let repo_mode = repo.mode.map_or(DEFAULT_MODE, |m| m.min(DEFAULT_MODE));
        let default_mode = user.mode.map_or(repo_mode, |m| m.max(repo_mode));
        let mut detectors = Vec::new();
        let extra = repo
            .detectors
            .keys()
            .chain(user.detectors.keys())
            .filter(|n| !POLICY_DETECTORS.iter().any(|(d, _, _)| d == n))
            .map(|n| (n.as_str(), 0, 0));
        let mut seen = std::collections::BTreeSet::new();
        for (name, nudge, block) in POLICY_DETECTORS.iter().copied().chain(extra) {
            if !seen.insert(name) {
                continue;
            }
            let r = repo.detectors.get(name).cloned().unwrap_or_default();
            let u = user.detectors.get(name).cloned().unwrap_or_default();
            // The repository relaxes: its mode only lowers, its counts only rise.
            let mode = r.mode.map_or(repo_mode, |m| m.min(DEFAULT_MODE));
            let mut nudge_at = r.nudge_at.map_or(nudge, |n| n.max(nudge));
            let mut block_at = r.block_at.map_or(block, |b| b.max(block));
            // The user tightens: its mode only rises, its counts only fall.
            let mode = u.mode.or(user.mode).map_or(mode, |m| m.max(mode));
            nudge_at = u.nudge_at.map_or(nudge_at, |n| n.min(nudge_at));
            block_at = u.block_at.map_or(block_at, |b| b.min(block_at));
            nudge_at = nudge_at.max(FLOOR);
            block_at = block_at.max(nudge_at);
            detectors.push(DetectorSetting {
                name: name.to_string(),
                mode: to_room(mode),
                nudge_at,
                block_at,
            });
        }
        let window = repo
            .window
            .map_or(DEFAULT_WINDOW, |w| w.min(DEFAULT_WINDOW));
        let window = user.window.map_or(window, |w| w.max(window));
        let mut read_only_tools: Vec<String> =
            READ_ONLY_TOOLS.iter().map(|t| t.to_string()).collect();
        for t in repo.read_only_tools.iter().chain(&user.read_only_tools) {
            if !read_only_tools.contains(t) {
                read_only_tools.push(t.clone());
            }
        }
        Settings {
            detectors,
            default_mode,
            window: window.clamp(1, POLICY_WINDOW_MAX) as usize,
            read_only_tools,
        }
    }

    /// The mode `hall` applies to what `detector` decided.
    pub fn mode_of(&self, detector: &str) -> PolicyMode {
        self.detectors
            .iter()
            .find(|d| d.name == detector)
            .map_or(self.default_mode, |d| from_room(d.mode))
    }

    /// Whether no detector runs: then the hooks skip the policy altogether.
    pub fn all_off(&self) -> bool {
        self.default_mode == PolicyMode::Off
            && self
                .detectors
                .iter()
                .all(|d| d.mode == types::PolicyMode::Off)
    }

    /// Whether `tool` only reads.
    pub fn read_only(&self, tool: &str) -> bool {
        self.read_only_tools.iter().any(|t| t == tool)
    }
}

/// The `[policy]` table of the user's `config.toml` in `config_dir`: `None` when the
/// file or the table is absent; an error when the table can't be read, so the caller
/// can say so (and gate with the repository's settings).
pub fn user_policy(config_dir: &Path) -> Result<Option<Policy>, String> {
    let path = config_dir.join(crate::sign::USER_CONFIG);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    // Only the `[policy]` table is read here; the rest of the file is other tables'.
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{}: {}", path.display(), e.message()))?;
    let Some(policy) = table.get("policy") else {
        return Ok(None);
    };
    let policy: Policy = policy
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| format!("{}: [policy]: {}", path.display(), e.message()))?;
    policy
        .validate(true)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(policy))
}

/// The config's mode as the room's.
pub fn to_room(mode: PolicyMode) -> types::PolicyMode {
    match mode {
        PolicyMode::Off => types::PolicyMode::Off,
        PolicyMode::Observe => types::PolicyMode::Observe,
        PolicyMode::Enforce => types::PolicyMode::Enforce,
    }
}

/// The room's mode as the config's.
pub fn from_room(mode: types::PolicyMode) -> PolicyMode {
    match mode {
        types::PolicyMode::Off => PolicyMode::Off,
        types::PolicyMode::Observe => PolicyMode::Observe,
        types::PolicyMode::Enforce => PolicyMode::Enforce,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DetectorConfig;

    fn policy(text: &str) -> Policy {
        toml::from_str(text).expect("a [policy] table")
    }

    fn setting<'s>(s: &'s Settings, name: &str) -> &'s DetectorSetting {
        s.detectors.iter().find(|d| d.name == name).expect("listed")
    }

    #[test]
    fn no_file_means_the_defaults_in_observe_mode() {
        let s = Settings::resolve(&Policy::default(), None);
        assert_eq!(s.window, 30);
        assert_eq!(s.default_mode, PolicyMode::Observe);
        let got: Vec<(String, u32, u32)> = s
            .detectors
            .iter()
            .map(|d| (d.name.clone(), d.nudge_at, d.block_at))
            .collect();
        let want: Vec<(String, u32, u32)> = POLICY_DETECTORS
            .iter()
            .map(|(n, a, b)| (n.to_string(), *a, *b))
            .collect();
        assert_eq!(got, want);
        assert!(
            s.detectors
                .iter()
                .all(|d| d.mode == types::PolicyMode::Observe)
        );
        assert!(!s.all_off());
    }

    #[test]
    fn the_repository_may_only_relax() {
        let repo = policy(
            "mode = \"enforce\"\nwindow = 100\n[detectors.repetition]\nnudge_at = 2\nblock_at = 9\n[detectors.oscillation]\nmode = \"off\"\n",
        );
        let s = Settings::resolve(&repo, None);
        // Enforce, a lower count and a larger window would tighten: ignored.
        assert_eq!(s.mode_of("repetition"), PolicyMode::Observe);
        assert_eq!(setting(&s, "repetition").nudge_at, 3);
        assert_eq!(s.window, 30);
        // A higher count and `off` relax: taken.
        assert_eq!(setting(&s, "repetition").block_at, 9);
        assert_eq!(s.mode_of("oscillation"), PolicyMode::Off);
        let off = Settings::resolve(&policy("mode = \"off\"\nwindow = 5"), None);
        assert!(off.all_off());
        assert_eq!(off.window, 5);
    }

    #[test]
    fn the_user_may_only_tighten() {
        let repo = policy("mode = \"off\"\n[detectors.error-streak]\nblock_at = 10\n");
        let user = policy(
            "window = 10\n[detectors.repetition]\nmode = \"enforce\"\nnudge_at = 2\nblock_at = 3\n[detectors.error-streak]\nblock_at = 20\nmode = \"observe\"\n",
        );
        let s = Settings::resolve(&repo, Some(&user));
        assert_eq!(s.mode_of("repetition"), PolicyMode::Enforce);
        assert_eq!(
            (
                setting(&s, "repetition").nudge_at,
                setting(&s, "repetition").block_at
            ),
            (2, 3)
        );
        // A higher count than the repository's would relax: the repository's stands.
        assert_eq!(setting(&s, "error-streak").block_at, 10);
        assert_eq!(s.mode_of("error-streak"), PolicyMode::Observe);
        // The repository turned the rest off and the user said nothing of them.
        assert_eq!(s.mode_of("oscillation"), PolicyMode::Off);
        // A smaller window would see less: the repository's (the default) stands.
        assert_eq!(s.window, 30);
        let user_all = policy("mode = \"enforce\"\nwindow = 60");
        let s = Settings::resolve(&Policy::default(), Some(&user_all));
        assert!(
            s.detectors
                .iter()
                .all(|d| d.mode == types::PolicyMode::Enforce)
        );
        assert_eq!(s.window, 60);
    }

    #[test]
    fn counts_keep_their_floors_and_order() {
        let user = Policy {
            detectors: [(
                "oscillation".to_string(),
                DetectorConfig {
                    mode: None,
                    nudge_at: Some(0),
                    block_at: Some(1),
                },
            )]
            .into(),
            ..Policy::default()
        };
        let s = Settings::resolve(&Policy::default(), Some(&user));
        let o = setting(&s, "oscillation");
        assert_eq!((o.nudge_at, o.block_at), (2, 2));
    }

    #[test]
    fn a_custom_rooms_detector_is_listed_with_the_files_mode() {
        let repo = policy("[detectors.churn]\nmode = \"observe\"\nblock_at = 4\nnudge_at = 3\n");
        let s = Settings::resolve(&repo, None);
        let c = setting(&s, "churn");
        assert_eq!((c.nudge_at, c.block_at), (3, 4));
        assert_eq!(s.mode_of("never-listed"), PolicyMode::Observe);
    }

    #[test]
    fn the_user_file_is_read_strictly_and_only_its_policy_table() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(user_policy(dir.path()), Ok(None));
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[signing]\nprincipal = \"me\"\n").expect("write");
        assert_eq!(user_policy(dir.path()), Ok(None));
        std::fs::write(&file, "[policy]\nmode = \"enforce\"\n").expect("write");
        let p = user_policy(dir.path()).expect("reads").expect("a table");
        assert_eq!(p.mode, Some(PolicyMode::Enforce));
        std::fs::write(&file, "[policy]\nmood = \"enforce\"\n").expect("write");
        let err = user_policy(dir.path()).unwrap_err();
        assert!(err.contains("mood") && err.contains("config.toml"), "{err}");
    }
}
