//! The response decoder.

use crate::ToolArguments;
use std::collections::BTreeMap;

use super::json_path::{parse_json_path, slot_at};
use super::{API, PROVIDER};
use crate::message::now_ms;
use crate::message::{MediaSource, RawJson};
use crate::providers::catalog::priced;
use crate::providers::ResponseError;
use crate::Usage;
use crate::{AssistantContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use crate::{ImageContent, ProviderBlock};
use hmac_sha256::Hash as Sha256;
use serde::Deserialize;
use serde_json::{Map, Value};

/// A `generateContent` response, or one stream chunk.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) candidates: Option<Vec<WireCandidate>>,
    #[serde(default)]
    pub(super) usage_metadata: Option<WireUsage>,
    #[serde(default)]
    pub(super) model_version: Option<String>,
    #[serde(default)]
    pub(super) response_id: Option<String>,
    #[serde(default)]
    pub(super) prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    pub(super) error: Option<WireError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireCandidate {
    #[serde(default)]
    pub(super) content: Option<WireContent>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
    #[serde(default)]
    pub(super) finish_message: Option<String>,
    #[serde(default)]
    pub(super) grounding_metadata: Option<Value>,
    #[serde(default)]
    pub(super) citation_metadata: Option<Value>,
    #[serde(default)]
    pub(super) url_context_metadata: Option<Value>,
}

/// The metadata of a candidate that is kept as a provider block of its own,
/// `{"<key>": …}`, after the parts: what grounded or cited the answer. It is
/// no part, so the encoder does not send it back.
pub(crate) const CANDIDATE_METADATA: [&str; 3] = [
    "groundingMetadata",
    "citationMetadata",
    "urlContextMetadata",
];

#[derive(Deserialize)]
pub(super) struct WireContent {
    #[serde(default)]
    pub(super) parts: Vec<RawJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WirePart {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) thought: Option<bool>,
    #[serde(default)]
    pub(super) thought_signature: Option<String>,
    #[serde(default)]
    pub(super) function_call: Option<WireFunctionCall>,
    #[serde(default)]
    pub(super) inline_data: Option<WireBlob>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireBlob {
    #[serde(default)]
    pub(super) mime_type: Option<String>,
    #[serde(default)]
    pub(super) data: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireFunctionCall {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) args: Option<RawJson>,
    #[serde(default)]
    pub(super) partial_args: Vec<PartialArg>,
    #[serde(default)]
    pub(super) will_continue: Option<bool>,
}

/// One piece of streamed function-call arguments (Vertex AI).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PartialArg {
    pub(super) json_path: String,
    #[serde(default)]
    pub(super) string_value: Option<String>,
    #[serde(default)]
    pub(super) number_value: Option<serde_json::Number>,
    #[serde(default)]
    pub(super) bool_value: Option<bool>,
    #[serde(default)]
    pub(super) will_continue: Option<bool>,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_token_count: Option<u64>,
    #[serde(default)]
    pub(super) candidates_token_count: Option<u64>,
    #[serde(default)]
    pub(super) cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub(super) thoughts_token_count: Option<u64>,
    #[serde(default)]
    pub(super) tool_use_prompt_token_count: Option<u64>,
    #[serde(default)]
    pub(super) total_token_count: Option<u64>,
}

impl WireUsage {
    pub(super) fn has_counts(&self) -> bool {
        self.prompt_token_count.is_some()
            || self.candidates_token_count.is_some()
            || self.total_token_count.is_some()
    }

    /// Gemini's `promptTokenCount` includes the cached tokens, so `input` is
    /// what remains after taking them out; `output` includes the thoughts.
    pub(super) fn to_usage(self) -> Usage {
        let cached = self.cached_content_token_count.unwrap_or(0);
        let prompt = self.prompt_token_count.unwrap_or(0);
        let thoughts = self.thoughts_token_count.unwrap_or(0);
        let input = prompt
            .saturating_sub(cached)
            .saturating_add(self.tool_use_prompt_token_count.unwrap_or(0));
        let output = self
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(thoughts);
        Usage {
            input,
            output,
            reasoning: thoughts,
            cache_read: cached,
            cache_write: 0,
            cache_write_1h: 0,
            total_tokens: Some(
                self.total_token_count
                    .unwrap_or_else(|| input.saturating_add(output).saturating_add(cached)),
            ),
            cost: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptFeedback {
    #[serde(default)]
    pub(super) block_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireError {
    #[serde(default)]
    pub(super) code: Option<i64>,
    #[serde(default)]
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) status: Option<String>,
}

impl WireError {
    pub(super) fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(status) = &self.status {
            out.push_str(status);
        }
        if let Some(code) = self.code {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&format!("({code})"));
        }
        if let Some(message) = &self.message {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(message);
        }
        if out.is_empty() {
            out.push_str("unknown error");
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OpenText {
    None,
    Text,
    Thought,
}

/// Folds parts, in order, into assistant content. Shared by the body and the
/// stream decoder so both give the same blocks.
#[derive(Debug)]
pub(super) struct Builder {
    pub(super) content: Vec<AssistantContent>,
    pub(super) open: OpenText,
    /// The content index of a function call whose arguments are still streaming,
    /// and the JSON path of a string that continues in the next piece.
    pub(super) streaming: Option<(usize, Option<String>)>,
    /// Parts of a kind agentmsg does not model, reported as warnings.
    pub(super) skipped: Vec<ResponseError>,
}

impl Builder {
    pub(super) fn new() -> Self {
        Self {
            content: Vec::new(),
            open: OpenText::None,
            streaming: None,
            skipped: Vec::new(),
        }
    }

    pub(super) fn part(
        &mut self,
        raw: RawJson,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        let part =
            serde_json::from_str::<WirePart>(raw.get()).map_err(|e| ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: e.to_string(),
            })?;
        let signature = part.thought_signature.filter(|s| !s.is_empty());
        if let Some(call) = part.function_call {
            self.open = OpenText::None;
            return self.function_call(call, signature, event, &format!("{path}.functionCall"));
        }
        match part.text {
            Some(text) if part.thought == Some(true) => {
                let signed = signature.is_some();
                match (self.open, self.content.last_mut()) {
                    (OpenText::Thought, Some(AssistantContent::Thinking(t))) => {
                        t.thinking.push_str(&text);
                        if signature.is_some() {
                            t.signature = signature;
                        }
                    }
                    _ => self
                        .content
                        .push(AssistantContent::Thinking(ThinkingContent {
                            thinking: text,
                            signature,
                        })),
                }
                self.open = if signed {
                    OpenText::None
                } else {
                    OpenText::Thought
                };
            }
            Some(text) => {
                let open = match (self.open, self.content.last_mut()) {
                    (OpenText::Text, Some(AssistantContent::Text(t))) => {
                        t.text.push_str(&text);
                        Some(t)
                    }
                    _ if !text.is_empty() || signature.is_some() => {
                        self.content
                            .push(AssistantContent::Text(TextContent::new(text)));
                        match self.content.last_mut() {
                            Some(AssistantContent::Text(t)) => Some(t),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                self.open = match (open, signature) {
                    // A signed part ends its block: the signature stays with its text.
                    (Some(t), Some(signature)) => {
                        t.signature = Some(signature);
                        OpenText::None
                    }
                    (Some(_), None) => OpenText::Text,
                    (None, _) => self.open,
                };
            }
            None => {
                self.open = OpenText::None;
                match part.inline_data {
                    // An image the model made; its signature, if any, is kept
                    // on an empty text block after it.
                    // (A thought image, a draft the model made while it
                    // reasoned, is kept whole below, `thought` and all.)
                    Some(WireBlob {
                        mime_type: Some(mime_type),
                        data: Some(data),
                    }) if mime_type.starts_with("image/") && part.thought != Some(true) => {
                        self.content.push(AssistantContent::Image(ImageContent {
                            source: MediaSource::Base64 { data, mime_type },
                        }));
                        if let Some(signature) = signature {
                            self.content.push(AssistantContent::Text(
                                TextContent::new("").with_signature(signature),
                            ));
                        }
                    }
                    // executableCode, codeExecutionResult, other media… are
                    // kept whole, with their signature, as provider blocks.
                    _ if raw.is_object() => self.content.push(gemini_block(&raw)),
                    _ => {
                        return Err(ResponseError::Invalid {
                            event,
                            path: path.to_owned(),
                            message: format!("a part must be a JSON object, found {raw}"),
                        })
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn function_call(
        &mut self,
        call: WireFunctionCall,
        signature: Option<String>,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        if let Some(name) = call.name.filter(|n| !n.is_empty()) {
            self.streaming = None;
            let args = match call.args {
                None => ToolArguments::new(),
                Some(args) if args.get() == "null" => ToolArguments::new(),
                Some(args) => {
                    ToolArguments::from_raw(args).map_err(|e| ResponseError::Invalid {
                        event,
                        path: format!("{path}.args"),
                        message: format!("arguments must be a JSON object: {e}"),
                    })?
                }
            };
            let mut tool = ToolCall::new(call.id.unwrap_or_default(), name, args);
            tool.signature = signature;
            self.content.push(AssistantContent::ToolCall(tool));
            if call.will_continue == Some(true) {
                self.streaming = Some((self.content.len() - 1, None));
                self.apply_partial(call.partial_args, event, path)?;
            }
            return Ok(());
        }
        if self.streaming.is_none() {
            if call.partial_args.is_empty() {
                return Ok(());
            }
            return Err(ResponseError::Invalid {
                event,
                path: format!("{path}.partialArgs"),
                message: "argument pieces without a function call in progress".to_owned(),
            });
        }
        self.apply_partial(call.partial_args, event, path)?;
        if call.will_continue != Some(true) {
            self.streaming = None;
        }
        Ok(())
    }

    pub(super) fn apply_partial(
        &mut self,
        pieces: Vec<PartialArg>,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        let Some((index, continuing)) = self.streaming.as_mut() else {
            return Ok(());
        };
        let Some(AssistantContent::ToolCall(call)) = self.content.get_mut(*index) else {
            return Ok(());
        };
        // Pieces land by JSON path in a map, written back once per chunk.
        let mut arguments = call.arguments.to_map();
        let apply = || -> Result<(), ResponseError> {
            for (j, piece) in pieces.into_iter().enumerate() {
                let at = format!("{path}.partialArgs[{j}].jsonPath");
                let segments =
                    parse_json_path(&piece.json_path).ok_or_else(|| ResponseError::Invalid {
                        event,
                        path: at.clone(),
                        message: format!("cannot read JSON path `{}`", piece.json_path),
                    })?;
                let slot =
                    slot_at(&mut arguments, &segments).ok_or_else(|| ResponseError::Invalid {
                        event,
                        path: at.clone(),
                        message: format!(
                            "JSON path `{}` conflicts with earlier arguments",
                            piece.json_path
                        ),
                    })?;
                let appending = continuing.as_deref() == Some(piece.json_path.as_str());
                match (piece.string_value, slot) {
                    (Some(s), Value::String(existing)) if appending => existing.push_str(&s),
                    (Some(s), slot) => *slot = Value::String(s),
                    (None, slot) => {
                        *slot = if let Some(n) = piece.number_value {
                            Value::Number(n)
                        } else if let Some(b) = piece.bool_value {
                            Value::Bool(b)
                        } else {
                            // `nullValue`, or a piece without a value.
                            Value::Null
                        };
                    }
                }
                *continuing = if piece.will_continue == Some(true) {
                    Some(piece.json_path)
                } else {
                    None
                };
            }
            Ok(())
        };
        let applied = apply();
        call.arguments = arguments.into();
        applied
    }

    /// The content, with a deterministic id on every call that came without one.
    pub(super) fn finish(mut self, response_id: Option<&str>) -> Vec<AssistantContent> {
        let mut n = 0usize;
        for block in &mut self.content {
            if let AssistantContent::ToolCall(call) = block {
                if call.id.is_empty() {
                    call.id = call_id(response_id, n, call);
                }
                n += 1;
            }
        }
        self.content
    }
}

/// A part or a candidate's metadata kept as it is.
pub(super) fn gemini_block(raw: &RawJson) -> AssistantContent {
    AssistantContent::ProviderBlock(ProviderBlock::new(API, raw.clone()))
}

/// Decodes a non-streaming `generateContent` response body. An error body
/// (`{"error":{…}}`) becomes a message with stopReason `error` and its
/// `errorMessage`; a prompt blocked by safety filters stopReason `guardRail`.
///
/// # Errors
/// [`ResponseError::Json`] when the body is not JSON of the right shape,
/// [`ResponseError::Invalid`] when a part is malformed.
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    <super::Gemini as crate::providers::Codec>::decode_response(body)
}

/// [`decode_response`], also returning what was skipped or kept in a changed
/// form, as [`ResponseError::Invalid`] values. An image part (`inlineData`)
/// becomes an image block; other parts agentmsg does not model
/// (`executableCode`, `codeExecutionResult`…) and the candidate's
/// `groundingMetadata`, `citationMetadata` and `urlContextMetadata` are kept
/// as [`ProviderBlock`]s.
///
/// # Errors
/// As [`decode_response`].
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let wire: WireResponse = ResponseError::parse(body, None)?;
    let mut folder = Folder::default();
    folder.chunk(wire, None)?;
    if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none() {
        if folder.saw_candidate {
            folder.finish_reason = Some("STOP".to_owned());
        } else {
            folder.error = Some("the response has no candidates".to_owned());
        }
    }
    let warnings = folder.take_warnings();
    Ok((priced(folder.into_message()), warnings))
}

/// Maps a `finishReason` to a [`StopReason`]: `STOP` (and none) stop (a
/// message with function calls is `toolUse`), `MAX_TOKENS` is `length`, the
/// safety reasons (`SAFETY`, `RECITATION`, `BLOCKLIST`, …) are `guardRail`, any
/// other is `error`.
pub fn stop_reason(finish_reason: &str) -> StopReason {
    match finish_reason {
        "STOP" | "FINISH_REASON_UNSPECIFIED" | "" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => StopReason::GuardRail,
        _ => StopReason::Error,
    }
}

/// The id given to the `n`th function call of a response when Gemini sent
/// none: a hash of the response id, `n`, the name and the arguments, so a
/// stream and the body of one response give the same id.
pub(super) fn call_id(response_id: Option<&str>, n: usize, call: &ToolCall) -> String {
    let mut hasher = Sha256::new();
    hasher.update(response_id.unwrap_or_default().as_bytes());
    hasher.update([0]);
    hasher.update(n.to_string().as_bytes());
    hasher.update([0]);
    hasher.update(call.name.as_bytes());
    hasher.update([0]);
    // serde_json's (sorted) text, as before the arguments kept their order,
    // so an id once given stays the same.
    hasher.update(call.arguments.to_value().to_string().as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("call_{hex}")
}

/// The candidate's metadata as provider blocks, in [`CANDIDATE_METADATA`] order.
pub(super) fn metadata_blocks<'a>(
    metadata: &'a BTreeMap<&'static str, Value>,
) -> impl Iterator<Item = AssistantContent> + 'a {
    CANDIDATE_METADATA.into_iter().filter_map(|key| {
        let value = metadata.get(key)?;
        let mut block = Map::new();
        block.insert(key.to_owned(), value.clone());
        Some(gemini_block(&RawJson::from_value(&Value::Object(block))))
    })
}

#[derive(Debug, Default)]
pub(super) struct Folder {
    pub(super) builder: Option<Builder>,
    pub(super) response_id: Option<String>,
    pub(super) model: Option<String>,
    pub(super) usage: Option<WireUsage>,
    pub(super) finish_reason: Option<String>,
    pub(super) finish_message: Option<String>,
    pub(super) block_reason: Option<String>,
    pub(super) error: Option<String>,
    /// The error chunk's error, as the stream's [`ProviderError`](crate::providers::ProviderError).
    pub(super) failure: Option<crate::providers::ProviderError>,
    pub(super) saw_candidate: bool,
    /// The candidate's latest metadata, by its key in [`CANDIDATE_METADATA`].
    pub(super) metadata: BTreeMap<&'static str, Value>,
}

impl Folder {
    pub(super) fn chunk(
        &mut self,
        wire: WireResponse,
        event: Option<usize>,
    ) -> Result<(), ResponseError> {
        if let Some(error) = wire.error {
            self.error = Some(error.describe());
            self.failure = Some(crate::providers::ProviderError {
                error_type: error.status.clone(),
                code: error.code.map(|c| c.to_string()),
                message: error.message.clone().unwrap_or_else(|| error.describe()),
                request_id: None,
            });
            return Ok(());
        }
        if let Some(id) = wire.response_id {
            match &self.response_id {
                Some(previous) if *previous != id => {
                    return Err(ResponseError::Invalid {
                        event,
                        path: "responseId".to_owned(),
                        message: format!(
                            "`{id}` after `{previous}`: chunks of two responses are mixed"
                        ),
                    })
                }
                _ => self.response_id = Some(id),
            }
        }
        if self.model.is_none() {
            self.model = wire.model_version;
        }
        if let Some(usage) = wire.usage_metadata.filter(WireUsage::has_counts) {
            self.usage = Some(usage);
        }
        if let Some(reason) = wire.prompt_feedback.and_then(|f| f.block_reason) {
            self.block_reason = Some(reason);
        }
        let builder = self.builder.get_or_insert_with(Builder::new);
        if let Some(candidate) = wire.candidates.and_then(|c| c.into_iter().next()) {
            self.saw_candidate = true;
            if let Some(content) = candidate.content {
                for (i, part) in content.parts.into_iter().enumerate() {
                    builder.part(part, event, &format!("candidates[0].content.parts[{i}]"))?;
                }
            }
            if let Some(reason) = candidate.finish_reason {
                self.finish_reason = Some(reason);
            }
            let metadata = [
                candidate.grounding_metadata,
                candidate.citation_metadata,
                candidate.url_context_metadata,
            ];
            for (key, value) in CANDIDATE_METADATA.into_iter().zip(metadata) {
                if let Some(value) = value.filter(|v| !v.is_null()) {
                    self.metadata.insert(key, value);
                }
            }
            if candidate.finish_message.is_some() {
                self.finish_message = candidate.finish_message;
            }
        }
        Ok(())
    }

    /// The warnings of the parts folded so far, taken out.
    pub(super) fn take_warnings(&mut self) -> Vec<ResponseError> {
        self.builder
            .as_mut()
            .map(|b| std::mem::take(&mut b.skipped))
            .unwrap_or_default()
    }

    pub(super) fn into_message(self) -> AssistantMessage {
        let mut message = AssistantMessage {
            api: API.to_owned(),
            provider: PROVIDER.to_owned(),
            timestamp: now_ms(),
            ..AssistantMessage::default()
        };
        message.content = self
            .builder
            .map(|b| b.finish(self.response_id.as_deref()))
            .unwrap_or_default();
        message.content.extend(metadata_blocks(&self.metadata));
        message.response_id = self.response_id;
        message.model = self.model.unwrap_or_default();
        if let Some(usage) = self.usage {
            message.usage = usage.to_usage();
        }
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return message;
        }
        if let Some(reason) = self.block_reason {
            message.stop_reason = StopReason::GuardRail;
            message.error_message = Some(format!("prompt blocked: {reason}"));
            return message;
        }
        let has_calls = message.tool_calls().next().is_some();
        let reason = self.finish_reason.unwrap_or_default();
        message.stop_reason = match stop_reason(&reason) {
            StopReason::Stop if has_calls => StopReason::ToolUse,
            other => other,
        };
        if matches!(
            message.stop_reason,
            StopReason::GuardRail | StopReason::Error
        ) {
            message.error_message = Some(match self.finish_message {
                Some(detail) => format!("{reason}: {detail}"),
                None => format!("finishReason {reason}"),
            });
        }
        message
    }
}
