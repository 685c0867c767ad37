//! The pure core: ids, events, states, the fold and the transition check.
//!
//! No file, process or clock is touched below this module, so every rule of the item
//! state machine can be tested (and property-tested) in memory.

mod codec;
pub mod decide;
pub mod event;
pub mod finding;
pub mod id;
pub mod learning;
pub mod outcome;
pub mod sha;
pub mod state;

#[cfg(test)]
mod tests;

pub use decide::{Action, Refusal, decide};
pub use event::{Event, EventKind, FollowKind, HoldKind, Source};
pub use finding::{Dispute, Finding, Lens, Severity};
pub use id::{ItemId, LearningId, QuestionId};
pub use learning::{LearningKind, LearningStatus};
pub use sha::Sha;
pub use state::{Follow, Item, Part, Reply, State, fold};
