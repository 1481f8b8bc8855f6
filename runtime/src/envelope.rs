//! The `AgentMessage` envelope.
