//! The verdict-validation world: check a reviewer's verdict and decide approval.

wit_bindgen::generate!({
    path: "../../wit",
    world: "verdict-room",
    pub_export_macro: true,
    export_macro_name: "__export_verdict_room",
    default_bindings_module: "hall_room_sdk::verdict",
});

pub use self::exports::hall::rooms::verdict::{
    CheckedVerdict, Failure, Finding, Guest as VerdictRoom, Lens, Severity,
};

/// The names the built-in rules read; see `gates::model`.
mod model {
    pub use super::exports::hall::rooms::verdict::{
        CheckedVerdict, Failure, Finding, Lens, Severity,
    };

    /// The one crossing between the host's lens (`hallmark_core`, where the lenses,
    /// their ids and the words a reviewer may write for them are defined once) and the
    /// WIT's: every other use of a lens in the rooms goes through these two.
    pub fn from_core(lens: hallmark_core::item::finding::Lens) -> Lens {
        use hallmark_core::item::finding::Lens as Core;
        match lens {
            Core::FirstPrinciples => Lens::FirstPrinciples,
            Core::Correctness => Lens::Correctness,
            Core::Security => Lens::Security,
            Core::Data => Lens::Data,
            Core::Evidence => Lens::Evidence,
            Core::Operability => Lens::Operability,
            Core::RepoRules => Lens::RepoRules,
        }
    }

    /// The same crossing for a severity, so which severities block approval is
    /// `hallmark_core`'s `Severity::blocks_approval`, as in the schema the reviewer gets.
    pub fn severity_from_core(severity: hallmark_core::item::finding::Severity) -> Severity {
        use hallmark_core::item::finding::Severity as Core;
        match severity {
            Core::Blocker => Severity::Blocker,
            Core::Major => Severity::Major,
            Core::Minor => Severity::Minor,
            Core::Nit => Severity::Nit,
        }
    }

    pub fn severity_to_core(severity: Severity) -> hallmark_core::item::finding::Severity {
        use hallmark_core::item::finding::Severity as Core;
        match severity {
            Severity::Blocker => Core::Blocker,
            Severity::Major => Core::Major,
            Severity::Minor => Core::Minor,
            Severity::Nit => Core::Nit,
        }
    }

    pub fn to_core(lens: Lens) -> hallmark_core::item::finding::Lens {
        use hallmark_core::item::finding::Lens as Core;
        match lens {
            Lens::FirstPrinciples => Core::FirstPrinciples,
            Lens::Correctness => Core::Correctness,
            Lens::Security => Core::Security,
            Lens::Data => Core::Data,
            Lens::Evidence => Core::Evidence,
            Lens::Operability => Core::Operability,
            Lens::RepoRules => Core::RepoRules,
        }
    }
}

#[path = "rules/verdict.rs"]
mod rules;

pub use rules::validate as standard_validate;
