//! Hallmark's built-in merger room: the SDK's standard rules, exported.

use hall_room_sdk::merger::{Failure, MergerInput, MergerPlan, MergerRoom, standard_judge};

#[cfg(target_arch = "wasm32")]
mod bump;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: bump::Bump = bump::Bump::new();

struct Builtin;

impl MergerRoom for Builtin {
    fn judge(input: MergerInput) -> Result<MergerPlan, Failure> {
        standard_judge(&input)
    }
}

hall_room_sdk::export_merger!(Builtin);
