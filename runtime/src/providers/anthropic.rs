//! anthropic codec.
