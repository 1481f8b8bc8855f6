//! agentmsg: typed, persisted, provider-neutral transcripts for LLM agents.

pub use agentmsg_macros::AgentMessage;
pub use agentmsg_runtime::*;

/// Not public API. Used by generated code.
#[doc(hidden)]
pub mod __private {
    /// Not public API. Used by generated code.
    pub use agentmsg_runtime::__private::*;
}
