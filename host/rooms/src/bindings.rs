//! The generated wasmtime bindings, one module per line of the WIT package, and the
//! conversions between their types and the plain types in `types.rs`.
//!
//! Kept private so that nothing outside this crate depends on generated code. The
//! modules are the lines `foreach_line!` lists, each in `bindings/<module>.rs`: a line's
//! file binds its frozen WIT with `bind_worlds!` and converts its types (a line whose
//! shape another line shares can stamp those conversions out with a macro of its own).
//! Until the first release there is one line, `v0_8`, bound from `wit/` (decision
//! 0029); at a release, its WIT is frozen and a new line starts beside it.

/// Binds every world of the WIT package in `$wit` (a path from this crate's
/// directory), one module per world with its exported interface as `api`, and the
/// line's `Exports`: a room's export indices, one variant per world.
macro_rules! bind_worlds {
    ($wit:literal) => {
        bind_worlds!(@ $wit
            (checks, Checks, ChecksRoomIndices, "checks-room"),
            (verdict, Verdict, VerdictRoomIndices, "verdict-room"),
            (merger, Merger, MergerRoomIndices, "merger-room"),
            (condense, Condense, CondenseRoomIndices, "condense-room"),
            (plan, Plan, PlanRoomIndices, "plan-room"),
            (tool_policy, ToolPolicy, ToolPolicyRoomIndices, "tool-policy-room"),
        );
    };
    (@ $wit:literal $(($world:ident, $variant:ident, $indices:ident, $wit_world:literal),)*) => {
        $(
            pub(crate) mod $world {
                wasmtime::component::bindgen!({ path: $wit, world: $wit_world });
                pub(crate) use exports::hall::rooms::$world as api;
            }
        )*

        /// A room's export indices in this line, one variant per world.
        pub(crate) enum Exports {
            $($variant($world::$indices),)*
        }

        impl Exports {
            /// Finds the exports of `world` by name; their types are checked when the
            /// room is instantiated.
            pub(crate) fn new(
                world: $crate::World,
                pre: &wasmtime::component::InstancePre<$crate::sandbox::Ctx>,
            ) -> wasmtime::Result<Self> {
                Ok(match world {
                    $($crate::World::$variant => Self::$variant($world::$indices::new(pre)?),)*
                })
            }

            /// Looks up every export in `instance` with its Rust type.
            pub(crate) fn type_check(
                &self,
                store: &mut wasmtime::Store<$crate::sandbox::Ctx>,
                instance: &wasmtime::component::Instance,
            ) -> wasmtime::Result<()> {
                match self {
                    $(Self::$variant(e) => e.load(store, instance).map(drop),)*
                }
            }

            $(
                /// This world's exports, if the room serves it.
                pub(crate) fn $world(&self) -> Option<&$world::$indices> {
                    match self {
                        Self::$variant(e) => Some(e),
                        _ => None,
                    }
                }
            )*
        }

        $(
            impl From<$world::api::Failure> for $crate::types::Failure {
                fn from(f: $world::api::Failure) -> Self {
                    Self { message: f.message, problems: f.problems }
                }
            }
        )*
    };
}

macro_rules! line_modules {
    ([] $(($module:ident, $line:ident, $major:literal, $minor:literal))*) => {
        $(
            #[doc = concat!("`hall:rooms@", $major, ".", $minor, "`.")]
            pub(crate) mod $module;
        )*
    };
}
foreach_line!(line_modules);
