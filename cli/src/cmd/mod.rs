//! The commands, one room each. A command reads its input through
//! [`crate::input`], says what it found through [`crate::diag`] and writes
//! through [`crate::output`]; no command imports another.

pub(crate) mod check;
pub(crate) mod compact;
pub(crate) mod context;
pub(crate) mod decode;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod project;
pub(crate) mod repair;
pub(crate) mod sessions;
pub(crate) mod stats;
pub(crate) mod tree;
pub(crate) mod usage;
