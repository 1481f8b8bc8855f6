//! The `CustomMessage` trait.
