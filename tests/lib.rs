//! The package of the workspace-wide tests. It has no code of its own: its tests are
//! the `[[test]]` files declared in tests/Cargo.toml (see there which package declares
//! each of the other test files in this folder).
