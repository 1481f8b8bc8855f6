//! Custom message kinds, where the transcript reads them: the
//! [`CustomMessage`] trait and [`AppMessage`] (`app_message`), the
//! [`Registry`] of kinds (`registry`), a custom message written as a line
//! (`write`, which refuses a kind the registry could not read back), and the
//! kinds agentmsg defines itself (`builtin`) and reads from pi's files
//! (`pi_kinds`). They are the transcript's because its codec reads and writes
//! their lines (the envelope, the body) and its lines hold them; the line
//! decoder above both hands a custom line to the registry. Applications name
//! them through [`crate::custom`], which re-exports them.

pub(crate) mod app_message;
pub(crate) mod builtin;
pub(crate) mod pi_kinds;
pub(crate) mod registry;
mod write;

pub use app_message::{AppMessage, CustomMessage, DynCustomMessage, MigrateError};
pub use builtin::{
    BranchSummary, CompactionSummary, ExtensionMessage, BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use pi_kinds::{BashExecution, InjectedContent, InjectedMessage};
pub use registry::{DuplicateKind, Registration, Registry, RegistryError};
