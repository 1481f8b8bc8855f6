//! Not public API. Used by generated code.

/// Not public API. Used by generated code.
pub use inventory;
/// Not public API. Used by generated code.
pub use serde_json::Value;
/// Not public API. Used by generated code.
pub use std::{format, vec, vec::Vec};

/// Not public API. Used by generated code.
pub use crate::custom::{CustomMessage, MigrateError};
/// Not public API. Used by generated code.
pub use crate::message::Message;
/// Not public API. Used by generated code.
pub use crate::registry::Registration;
