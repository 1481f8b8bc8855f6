//! The registry of custom kinds.
