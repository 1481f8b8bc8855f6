//! Custom message kinds: an application's own messages in a transcript.
//!
//! `#[derive(AgentMessage)]` implements [`CustomMessage`] for a struct and
//! registers its decoder in the [`Registry`] at link time; in a transcript
//! the message stands as an [`AppMessage`], with its `id`, `turnId` and
//! `timestamp`. agentmsg's own kinds are defined with the same derive: the
//! summaries a session writes ([`CompactionSummary`], [`BranchSummary`]), a
//! UI-only [`ExtensionMessage`], and pi's kinds ([`BashExecution`], and
//! [`InjectedMessage`], a message a pi extension injected).

pub use crate::transcript::custom::{
    AppMessage, BashExecution, BranchSummary, CompactionSummary, CustomMessage, DuplicateKind,
    DynCustomMessage, ExtensionMessage, InjectedContent, InjectedMessage, MigrateError,
    Registration, Registry, RegistryError, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
