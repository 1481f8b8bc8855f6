//! The response decoder.

use super::request::{reasoning_replay, text_signature};
use super::{API, PROVIDER};
use crate::message::RawJson;
use crate::providers::catalog::priced;
use crate::providers::shared::arguments::arguments_value;
pub(super) use crate::providers::shared::openai_error::WireError;
use crate::providers::ResponseError;
use crate::ProviderBlock;
use crate::ToolArguments;
use crate::Usage;
use crate::{AssistantContent, RedactedThinkingContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize, Default, Clone)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) output_tokens: Option<u64>,
    #[serde(default)]
    pub(super) total_tokens: Option<u64>,
    #[serde(default)]
    pub(super) input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    pub(super) output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Default, Clone)]
pub(super) struct InputDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_write_tokens: Option<u64>,
}

#[derive(Deserialize, Default, Clone)]
pub(super) struct OutputDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn to_usage(&self) -> Usage {
        let input = self.input_tokens.unwrap_or(0);
        let details = self.input_tokens_details.clone().unwrap_or_default();
        let cached = details.cached_tokens.unwrap_or(0);
        let written = details.cache_write_tokens.unwrap_or(0);
        Usage {
            input: input.saturating_sub(cached).saturating_sub(written),
            output: self.output_tokens.unwrap_or(0),
            reasoning: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_read: cached,
            cache_write: written,
            cache_write_1h: 0,
            total_tokens: self.total_tokens,
            cost: None,
        }
    }
}

#[derive(Deserialize, Default)]
pub(super) struct IncompleteDetails {
    #[serde(default)]
    pub(super) reason: Option<String>,
}

/// The parts of a response object that the decoder reads.
#[derive(Deserialize, Default)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) created_at: Option<u64>,
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) output: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    /// `response` in a Responses body; other APIs' bodies are told apart by
    /// these fields too.
    #[serde(default)]
    pub(super) object: Option<String>,
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) choices: Option<IgnoredAny>,
    #[serde(default)]
    pub(super) candidates: Option<IgnoredAny>,
    #[serde(default)]
    pub(super) error: Option<WireError>,
    #[serde(default)]
    pub(super) incomplete_details: Option<IncompleteDetails>,
    /// The tools of the request, as the response echoes them: they tell the
    /// client's custom tools from the server's own (see [`server_call`]).
    #[serde(default)]
    pub(super) tools: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
pub(super) struct WirePart {
    #[serde(default, rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
    #[serde(default)]
    pub(super) annotations: Option<Value>,
}

#[derive(Deserialize, Default)]
pub(super) struct WireItem {
    #[serde(default, rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) call_id: Option<String>,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<crate::message::RawJson>,
    #[serde(default)]
    pub(super) input: Option<String>,
    #[serde(default)]
    pub(super) content: Option<Vec<WirePart>>,
    /// Read as any value, so that an odd one does not cost the item its text.
    #[serde(default)]
    pub(super) phase: Option<Value>,
}

/// The output item types agentmsg reads into its own blocks; every other
/// item is kept whole as a [`ProviderBlock`].
const MODELLED: [&str; 4] = ["message", "reasoning", "function_call", "custom_tool_call"];

/// Whether an output item is kept as a provider block (a server-side tool
/// call such as `web_search_call`, `mcp_call`, `image_generation_call`, a
/// `compaction`…).
pub(super) fn is_provider_item(item: &Value) -> bool {
    item.is_object()
        && !item
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| MODELLED.contains(&kind))
}

/// An output item kept as it is.
pub(super) fn provider_item(item: &Value) -> AssistantContent {
    AssistantContent::ProviderBlock(ProviderBlock::new(API, RawJson::from_value(item)))
}

/// The `annotations` of an `output_text`, kept when there are any.
pub(super) fn annotations(annotations: Option<&Value>) -> Option<RawJson> {
    annotations
        .filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
        .map(RawJson::from_value)
}

/// Whether an output item becomes a block that is replayed as the same item
/// (so a reasoning item before it can be replayed too).
pub(super) fn is_replayed_item(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("message") => true,
        Some("function_call") => !item
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(is_parallel_wrapper),
        _ => is_provider_item(item),
    }
}

pub(super) fn is_parallel_wrapper(name: &str) -> bool {
    matches!(name, "parallel" | "multi_tool_use.parallel")
}

/// The calls inside a `multi_tool_use.parallel` wrapper that some models emit
/// (`{"tool_uses":[{"recipient_name":"functions.x","parameters":{…}}…]}`),
/// each call's parameters in the order written.
pub(super) fn unwrap_parallel(
    name: &str,
    arguments: &ToolArguments,
) -> Option<Vec<(String, ToolArguments)>> {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        tool_uses: Vec<Use>,
    }
    #[derive(serde::Deserialize)]
    struct Use {
        recipient_name: String,
        #[serde(default)]
        parameters: Option<ToolArguments>,
    }
    if !is_parallel_wrapper(name) {
        return None;
    }
    let wrapper: Wrapper = arguments.parse().ok()?;
    if wrapper.tool_uses.is_empty() {
        return None;
    }
    wrapper
        .tool_uses
        .into_iter()
        .map(|entry| {
            let name = entry.recipient_name.strip_prefix("functions.")?;
            Some((name.to_owned(), entry.parameters.unwrap_or_default()))
        })
        .collect()
}

/// Whether the `custom_tool_call` at `output[i]` is a call the server made
/// to a tool of its own and ran itself (xAI's X search comes as
/// `custom_tool_call` items named `x_keyword_search`, `view_x_video`…), so
/// it is kept whole as a [`ProviderBlock`], never handed to the client as a
/// tool call to run. `later` are the items after it; `None` while a stream
/// cannot tell yet.
///
/// The rule: the client declares a custom tool in its request as
/// `{"type":"custom","name":…}`, and a response echoes the request's `tools`.
/// When it does, a call is the client's exactly when a `custom` tool of its
/// name is among them. When the response echoes no tools, a call is the
/// server's when an assistant `message` follows it in the same output: a
/// client call ends the response (xAI documents that it "pauses and yields
/// control back" for the client's tools), so only a call the server ran can be
/// followed by the answer. `ended` says the output is whole (a body, or a
/// stream after its terminal event).
pub(super) fn server_call<'a>(
    tools: Option<&[Value]>,
    item: &Value,
    mut later: impl Iterator<Item = &'a Value>,
    ended: bool,
) -> Option<bool> {
    if item.get("type").and_then(Value::as_str) != Some("custom_tool_call") {
        return Some(false);
    }
    if let Some(tools) = tools {
        let name = item.get("name").and_then(Value::as_str);
        let declared = tools.iter().any(|tool| {
            tool.get("type").and_then(Value::as_str) == Some("custom")
                && tool.get("name").and_then(Value::as_str) == name
        });
        return Some(!declared);
    }
    let answered = later.any(|later| later.get("type").and_then(Value::as_str) == Some("message"));
    if answered {
        Some(true)
    } else if ended {
        Some(false)
    } else {
        None
    }
}

/// Turns output items into content blocks, in order. `tools` are the tools
/// the response echoes (see [`server_call`]); `event` names the stream event
/// for warnings.
pub(super) fn output_content(
    tools: Option<&[Value]>,
    output: &[Value],
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> (Vec<AssistantContent>, bool) {
    let mut out = Output {
        content: Vec::new(),
        refused: false,
        event,
        warnings,
    };
    let server = |i: usize| {
        output.get(i).is_some_and(|item| {
            server_call(tools, item, output.iter().skip(i + 1), true) == Some(true)
        })
    };
    for (i, raw) in output.iter().enumerate() {
        if is_provider_item(raw) || server(i) {
            out.content.push(provider_item(raw));
            continue;
        }
        let item = match WireItem::deserialize(raw) {
            Ok(item) => item,
            Err(e) => {
                out.warn(format!("output[{i}]"), format!("output item skipped: {e}"));
                continue;
            }
        };
        match item.kind.as_str() {
            "message" => out.message(i, item),
            "reasoning" => {
                let replayable = item.id.as_deref().is_some_and(|id| !id.is_empty())
                    && output
                        .get(i + 1)
                        .is_some_and(|next| is_replayed_item(next) || server(i + 1));
                out.reasoning(i, raw, replayable);
            }
            "function_call" => out.function_call(i, item),
            "custom_tool_call" => out.custom_tool_call(i, item),
            other => out.warn(
                format!("output[{i}]"),
                format!("output item of type `{other}` skipped: agentmsg does not model it"),
            ),
        }
    }
    (out.content, out.refused)
}

/// The content blocks made from output items so far.
struct Output<'w> {
    content: Vec<AssistantContent>,
    /// Whether a refusal was among them.
    refused: bool,
    /// The stream event, for warnings.
    event: Option<usize>,
    warnings: &'w mut Vec<ResponseError>,
}

impl Output<'_> {
    fn warn(&mut self, path: String, message: String) {
        self.warnings.push(ResponseError::Invalid {
            event: self.event,
            path,
            message,
        });
    }

    /// A `message` item: its text and refusals. The item's first text block
    /// keeps its id and phase.
    fn message(&mut self, i: usize, item: WireItem) {
        let mut signature = item
            .id
            .as_deref()
            .filter(|id| !id.is_empty())
            .map(|id| text_signature(id, item.phase.as_ref().and_then(Value::as_str)));
        let mut text = |text: String, citations: Option<RawJson>| {
            let block = TextContent {
                citations,
                ..TextContent::new(text)
            };
            AssistantContent::Text(match signature.take() {
                Some(signature) => block.with_signature(signature),
                None => block,
            })
        };
        for (j, part) in item.content.unwrap_or_default().into_iter().enumerate() {
            let citations = annotations(part.annotations.as_ref());
            match (part.kind.as_str(), part.text, part.refusal) {
                ("output_text", Some(part_text), _) => {
                    self.content.push(text(part_text, citations));
                }
                ("refusal", _, Some(refusal)) => {
                    self.refused = true;
                    self.content.push(text(refusal, None));
                }
                (kind, _, _) => self.warn(
                    format!("output[{i}].content[{j}]"),
                    format!("content part of type `{kind}` skipped"),
                ),
            }
        }
    }

    /// A `reasoning` item: thinking whose signature replays the item (`raw`),
    /// when the item after it is one agentmsg replays.
    fn reasoning(&mut self, i: usize, raw: &Value, replayable: bool) {
        if !replayable {
            let text = reasoning_text(raw);
            self.warn(
                format!("output[{i}]"),
                "reasoning item not kept for replay: the item after it is not one agentmsg replays"
                    .into(),
            );
            if !text.is_empty() {
                self.content
                    .push(AssistantContent::Thinking(ThinkingContent::new(text)));
            }
            return;
        }
        self.content.push(reasoning_block(raw));
    }

    /// A `function_call` item; a parallel-call wrapper is split into its calls.
    fn function_call(&mut self, i: usize, item: WireItem) {
        let arguments = arguments_value(
            item.arguments,
            format!("output[{i}].arguments"),
            self.event,
            self.warnings,
        );
        let call_id = item.call_id.or(item.id.clone()).unwrap_or_default();
        let name = item.name.unwrap_or_default();
        if let Some(calls) = unwrap_parallel(&name, &arguments) {
            self.warn(
                format!("output[{i}]"),
                format!(
                    "`{name}` wrapper split into {} calls with ids {call_id}_0…",
                    calls.len()
                ),
            );
            for (k, (name, arguments)) in calls.into_iter().enumerate() {
                self.content.push(AssistantContent::ToolCall(ToolCall {
                    id: format!("{call_id}_{k}"),
                    name,
                    arguments,
                    signature: None,
                }));
            }
            return;
        }
        self.content.push(AssistantContent::ToolCall(ToolCall {
            id: call_id,
            name,
            arguments,
            signature: item.id.filter(|id| !id.is_empty()),
        }));
    }

    /// A `custom_tool_call` item, kept as a tool call with arguments
    /// `{"input": …}` (reported).
    fn custom_tool_call(&mut self, i: usize, item: WireItem) {
        self.warn(
            format!("output[{i}]"),
            "custom tool call kept as a tool call with arguments {\"input\": …}".into(),
        );
        let mut input = Map::new();
        input.insert(
            "input".into(),
            Value::String(item.input.unwrap_or_default()),
        );
        let arguments = ToolArguments::from(input);
        self.content.push(AssistantContent::ToolCall(ToolCall {
            id: item.call_id.or(item.id).unwrap_or_default(),
            name: item.name.unwrap_or_default(),
            arguments,
            signature: None,
        }));
    }
}

/// Builds the message from a response object and its output items.
pub(super) fn build_message(
    response: &WireResponse,
    output: &[Value],
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> AssistantMessage {
    let (content, refused) = output_content(response.tools.as_deref(), output, event, warnings);
    let mut message = AssistantMessage {
        content,
        api: API.into(),
        provider: PROVIDER.into(),
        model: response.model.clone().unwrap_or_default(),
        response_id: response.id.clone().filter(|s| !s.is_empty()),
        timestamp: response.created_at.map_or(0, |c| c.saturating_mul(1000)),
        ..AssistantMessage::default()
    };
    if let Some(usage) = &response.usage {
        message.usage = usage.to_usage();
    }
    let has_calls = message.tool_calls().next().is_some();
    let reason = response
        .incomplete_details
        .as_ref()
        .and_then(|d| d.reason.as_deref());
    let status = response.status.as_deref().unwrap_or("completed");
    message.stop_reason = match stop_reason(status) {
        StopReason::Stop if has_calls => StopReason::ToolUse,
        StopReason::Length if reason == Some("content_filter") => StopReason::GuardRail,
        StopReason::Error if status != "failed" => {
            message.error_message =
                Some(format!("the response did not finish (status `{status}`)"));
            StopReason::Error
        }
        other => other,
    };
    if refused && message.stop_reason == StopReason::Stop {
        message.stop_reason = StopReason::GuardRail;
    }
    if let Some(error) = &response.error {
        message.stop_reason = StopReason::Error;
        message.error_message = Some(error.describe());
    } else if message.stop_reason == StopReason::Error && message.error_message.is_none() {
        message.error_message = Some("the response failed".into());
    }
    message
}

/// Maps a response `status` to a [`StopReason`]: `completed` stops (a message
/// with function calls is `toolUse`), `incomplete` is `length` (`guardRail` when
/// `incomplete_details.reason` is `content_filter`), `cancelled` is `aborted`,
/// `failed` and any other status (`in_progress`, `queued`) are `error`.
pub fn stop_reason(status: &str) -> StopReason {
    match status {
        "completed" => StopReason::Stop,
        "incomplete" => StopReason::Length,
        "cancelled" => StopReason::Aborted,
        _ => StopReason::Error,
    }
}

/// Decodes a non-streaming Responses body (or an error body `{"error":{…}}`,
/// which becomes a message with stopReason `error`).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::providers::openai_responses;
/// let body = r#"{"id":"resp_1","model":"gpt-5","created_at":1,"status":"completed",
///   "output":[{"type":"message","id":"msg_1","role":"assistant","content":[
///     {"type":"output_text","text":"Hi","annotations":[]}]}],
///   "usage":{"input_tokens":9,"output_tokens":1,"total_tokens":10}}"#;
/// let message = openai_responses::decode_response(body).unwrap();
/// assert_eq!(message.text_content(), "Hi");
/// assert_eq!(message.response_id.as_deref(), Some("resp_1"));
/// ```
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    <super::OpenaiResponses as crate::providers::Codec>::decode_response(body)
}

/// [`decode_response`], also returning what was skipped or kept in a changed
/// form (content parts agentmsg does not model, reasoning that cannot be
/// replayed, tool-call arguments that are not a JSON object), as
/// [`ResponseError::Invalid`] values. Output items agentmsg does not model
/// (server-side tool calls…) are kept whole as [`ProviderBlock`]s, and so is a
/// `custom_tool_call` the server made to a tool of its own (xAI's X search):
/// one whose name is no `custom` tool among the `tools` the response echoes,
/// or, when it echoes none, one followed by an assistant `message`.
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let response: WireResponse = ResponseError::parse(body, None)?;
    if response.output.is_none() && response.error.is_none() {
        return Err(ResponseError::Invalid {
            event: None,
            path: "output".into(),
            message: not_a_response(&response),
        });
    }
    let mut warnings = Vec::new();
    let output = response.output.as_deref().unwrap_or_default();
    let message = build_message(&response, output, None, &mut warnings);
    Ok((priced(message), warnings))
}

/// Why a body with neither `output` nor `error` is not a Responses body: what
/// it looks like instead.
fn not_a_response(response: &WireResponse) -> String {
    let looks_like = if response.choices.is_some() {
        "a Chat Completions body (it has `choices`): decode it with openai_chat"
    } else if response.candidates.is_some() {
        "a Gemini body (it has `candidates`): decode it with gemini"
    } else if response.kind.as_deref() == Some("message") {
        "an Anthropic Messages body (`type: message`): decode it with anthropic"
    } else if response.object.as_deref().is_some_and(|o| o != "response") {
        "an object that is not a response"
    } else {
        "an empty or unknown object"
    };
    format!("not a Responses body: neither `output` nor `error`; this looks like {looks_like}")
}

/// The block a Responses `reasoning` output item becomes, as the decoders
/// make it: its summary's text (else its content's) as thinking whose
/// signature is the item to send back (`type`, `id`, `summary`, `content`,
/// `encrypted_content` byte for byte), or redacted thinking holding the item
/// when it has no text. The encoder sends the item back to the same model.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::providers::openai_responses;
/// # use agentmsg::AssistantContent;
/// let item = serde_json::json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAA"});
/// let AssistantContent::Thinking(thinking) = openai_responses::reasoning_block(&item) else { panic!() };
/// assert_eq!(thinking.thinking, "Plan.");
/// assert!(thinking.signature.unwrap().contains(r#""encrypted_content":"gAAA""#));
/// ```
pub fn reasoning_block(item: &Value) -> AssistantContent {
    let text = reasoning_text(item);
    let stored = reasoning_replay(item).to_string();
    if text.is_empty() {
        AssistantContent::RedactedThinking(RedactedThinkingContent::new(stored))
    } else {
        AssistantContent::Thinking(ThinkingContent::new(text).with_signature(stored))
    }
}

/// The text of a reasoning item: its summary parts, else its content parts,
/// joined by blank lines.
fn reasoning_text(item: &Value) -> String {
    let parts = |key: &str| -> String {
        item.get(key)
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default()
    };
    let summary = parts("summary");
    if summary.is_empty() {
        parts("content")
    } else {
        summary
    }
}
