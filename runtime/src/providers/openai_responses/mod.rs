//! OpenAI Responses (`POST /v1/responses`, api id `openai-responses`): request
//! encoder, response decoder and stream decoder.
//!
//! Encoding (after [`prepare`] for
//! `Target::new("openai", "openai-responses", model)`):
//!
//! | agentmsg | Responses |
//! |---|---|
//! | `Request::system` | `instructions` |
//! | system messages in the transcript | `{"role":"system","content":…}` input items |
//! | user text / image / document | `input_text`, `input_image` (with `detail: "auto"`), `input_file` (`file_data` data URL + `filename`, `file_url` or `file_id`) |
//! | user audio | not taken by the API: a text note, reported |
//! | assistant text | an output `message` item whose `output_text` parts carry `annotations: []` and `logprobs: []` |
//! | tool call | a `function_call` item (`call_id`, `arguments` as a JSON string, the item `id` when known) |
//! | tool result | a `function_call_output` item (`output` is a string, or a list when it holds images, which prepare's default target moves into a user message) |
//! | thinking / redacted thinking from this API | the `reasoning` item it came from |
//! | `max_tokens` | `max_output_tokens` |
//!
//! ## Reasoning items
//!
//! A `reasoning` output item is decoded into one block that keeps the item for
//! replay: the item's `type`, `id`, `summary`, `content` (when present) and
//! `encrypted_content` (byte for byte) are written as compact JSON into
//! - [`ThinkingContent::signature`], with the summary texts (joined by a blank
//!   line) as the thinking text, when the item has a summary or reasoning text;
//! - [`RedactedThinkingContent::data`] when it has neither.
//!
//! The encoder turns such a block back into that same item. The API requires a
//! reasoning item to be followed by the item that followed it in the response
//! ("Item 'rs_…' of type 'reasoning' was provided without its required following
//! item"), so: the decoder keeps the replay JSON only when the next output item
//! is one agentmsg replays as it was (a message or a function call), and the
//! encoder sends a reasoning item only when the next item it sends for that
//! assistant message is not reasoning; anything else is dropped and reported.
//! The API also refuses an item id twice: a reasoning item already sent is not
//! sent again, and a repeated `function_call` id is left out.
//!
//! A reasoning item with no `id` (Codex CLI writes its items so, and sends
//! them back so) is replayed without one when it has `encrypted_content`,
//! which is what the model reads back; without either there is nothing to
//! replay, and it is dropped and reported. This is the one place a body leaves
//! the published schema, which lists a reasoning item's `id` as required: the
//! API takes such an item, and OpenAI's own Codex client depends on it. The `id` of a
//! `function_call` item is kept in [`ToolCall::signature`] (the call id is
//! [`ToolCall::id`]), so the following item is replayed with its own id.
//!
//! ## Message ids and phases
//!
//! The first text block of a `message` output item keeps the item's `id` and
//! `phase` (`commentary` or `final_answer`) as its [`TextContent::signature`], in
//! pi's form: `{"v":1,"id":"msg_…","phase":"commentary"}` (pi's older form, the
//! bare id, is read too). The encoder starts a new message item at each signed
//! text block, with that id and phase (the API asks for the phase to be sent back
//! with every assistant message of the models that have one), and adds the
//! unsigned text blocks after it to the same item. A message item with no stored
//! id, or whose id is longer than 64 characters or already sent, gets a
//! deterministic one (`msg_` + a hash of its position and text). Like every
//! signature, the stored id and phase go back only to the model that wrote them.
//!
//! Decoding: usage `input` excludes the cached tokens (`cacheRead`) and the
//! tokens written to the cache (`cache_write_tokens`, `cacheWrite`); reasoning
//! tokens are `usage.reasoning`. `status` maps to the stop reason (`completed`
//! → `stop`, or `toolUse` when there is a call; `incomplete` → `length`, or
//! `guardRail` for `content_filter`; `failed` → `error`; `cancelled` →
//! `aborted`). Output items agentmsg does not model (`web_search_call`,
//! `file_search_call`, `code_interpreter_call`, `image_generation_call` with its
//! image, `mcp_call`, `mcp_list_tools`, shell, apply-patch, tool search,
//! `compaction`…) are kept whole, in their place, as [`ProviderBlock`]s: never
//! client tool calls, so they never make the stop reason `toolUse`. The encoder
//! puts each back into the input as it came (a reasoning item before one is
//! replayed with it); an item the client runs (`apply_patch_call`,
//! `local_shell_call`, `shell_call`, `computer_call`, `tool_search_call`) goes
//! back only with the item that answers it (`<type>_output`;
//! `tool_search_output` for a `tool_search_call`), which the API requires, and is
//! otherwise left out, reported. An `output_text`'s `annotations` (URL and file
//! citations) are kept as the text's [`citations`](crate::TextContent::citations)
//! and go back on it. A `custom_tool_call` becomes
//! a tool call with arguments `{"input": …}`; a `multi_tool_use.parallel`
//! wrapper call is split into the calls it carries (ids `<call_id>_<n>`).
//!
//! [`prepare`]: crate::prepare
//! [`Report`]: crate::project::Report
//! [`ProviderBlock`]: crate::ProviderBlock
//! [`ThinkingContent::signature`]: crate::ThinkingContent::signature
//! [`RedactedThinkingContent::data`]: crate::RedactedThinkingContent::data
//! [`ToolCall::signature`]: crate::ToolCall::signature
//! [`ToolCall::id`]: crate::ToolCall::id
//! [`TextContent::signature`]: crate::TextContent::signature

mod options;
mod request;
mod response;
mod stream;

pub use request::encode_request;
pub use response::{decode_response, decode_response_with_warnings, reasoning_block, stop_reason};
pub use stream::StreamDecoder;

/// The OpenAI Responses API as a [`Codec`](super::Codec): this module's functions, for code
/// generic over the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OpenaiResponses;
super::codec::impl_codec!(OpenaiResponses);

/// The api id of the Responses API.
pub const API: &str = super::Api::OpenaiResponses.id();
/// The provider id written into decoded messages.
pub const PROVIDER: &str = "openai";
/// The smallest `max_output_tokens` the API takes.
pub(crate) const MIN_OUTPUT_TOKENS: u32 = 16;
