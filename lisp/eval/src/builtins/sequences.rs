//! Builtins: sequences. (Being written; see ARCHITECTURE.md for the module map.)

use super::BuiltinDef;

pub const BUILTINS: &[BuiltinDef] = &[];
