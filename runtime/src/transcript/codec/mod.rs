//! How a transcript line becomes a value and back. Crate-private: all the speed
//! work of the transcript lives here, behind the public types.
//!
//! - `envelope`: the one reader and writer of the envelope keys (`role`, `id`,
//!   `turnId`, `v`), the LLM roles' line forms among them;
//! - `block`: a content block's reader, straight into its type when `"type"`
//!   comes first;
//! - `body`: a custom body as its type's `Deserialize` reads it, from a line
//!   or from held data;
//! - `flat_serializer`: writes a type's fields into a map the envelope opened;
//! - `held`: a value held back until a late role is known;
//! - `value`: one value of a custom body, handed to its type through
//!   object-safe calls.
//!
//! The codec knows no custom kind: the registry (`transcript::custom`) reads
//! a custom line's envelope and body through it, and what dispatches a line
//! by its kind sits above both: `transcript::decode`
//! ([`decode_line`](crate::transcript::decode_line)) and `transcript::generic`
//! (the serde impls for apps that embed messages in their own data).
//!
//! The JSON they read with (keys, [`RawJson`](crate::message::RawJson), the
//! scanner, lone surrogates) is the crate's `json` module's.

mod block;
pub(crate) mod body;
pub(crate) mod envelope;
pub(crate) mod flat_serializer;
pub(crate) mod held;
pub(crate) mod value;
