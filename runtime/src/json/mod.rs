//! JSON below every format: what the transcript codec, the message types, the
//! session reader and the importers all read JSON with. It depends on no other
//! module of the crate.
//!
//! - `deep`: a reader for JSON nested past serde_json's 128 levels, up to
//!   [`MAX_JSON_DEPTH`](crate::transcript::MAX_JSON_DEPTH);
//! - `raw_json`: [`RawJson`](crate::message::RawJson), a value kept as its text;
//! - `key`: an object key as the parser gives it, borrowed when it can be;
//! - `surrogates`: lone UTF-16 surrogate escapes, which JavaScript writes and
//!   serde_json rejects;
//! - `scan`: finds a top-level key's value in an object's text without parsing it.

pub(crate) mod deep;
pub(crate) mod key;
pub(crate) mod raw_json;
pub(crate) mod scan;
pub(crate) mod surrogates;
