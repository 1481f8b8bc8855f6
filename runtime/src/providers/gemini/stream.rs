//! The stream decoder.

use super::response::{call_id, metadata_blocks, stop_reason, OpenText, WireUsage};
use super::response::{Folder, WireResponse};
use super::{API, PROVIDER};
use crate::providers::catalog::priced;
use crate::providers::events::{BlockView, Differ, Kind, Snapshot, StreamEvent};
use crate::providers::shared::latch::Latch;
use crate::providers::{ResponseError, StreamDecode};
use crate::AssistantMessage;
use crate::{AssistantContent, StopReason};
use std::borrow::Cow;

/// Folds Gemini `streamGenerateContent` chunks (each one a JSON
/// `GenerateContentResponse`) into an [`AssistantMessage`]. Text and thoughts
/// that arrive in pieces are joined; Vertex AI's streamed function-call
/// arguments (`partialArgs` with a `jsonPath`) are assembled.
///
/// ```json
/// {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"r1"}
/// ```
///
/// A chunk that is not JSON, a malformed part, or chunks of two responses mixed
/// together is an error naming the chunk index; an error chunk ends the
/// message with stopReason `error`. A stream whose chunks carried a candidate
/// but no `finishReason` ends cleanly (as the Firebase SDK takes it) with
/// stopReason `stop`, or `toolUse` when it has function calls, and a warning
/// from [`finish_with_warnings`](Self::finish_with_warnings); one with no
/// candidate at all, or cut while a function call's arguments were still
/// streaming, fails in [`finish`](StreamDecode::finish) as
/// [`ResponseError::Truncated`].
#[derive(Debug, Default)]
pub struct StreamDecoder {
    latch: Latch,
    folder: Folder,
    differ: Differ,
}

impl StreamDecoder {
    /// A decoder waiting for the first chunk.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecoder {
    /// The blocks so far: the last one is open while its text or its streamed
    /// arguments may go on.
    fn snapshot(&self) -> Snapshot<'_> {
        let folder = &self.folder;
        let mut blocks = Vec::new();
        if let Some(builder) = &folder.builder {
            let last = builder.content.len().saturating_sub(1);
            let streaming = builder.streaming.as_ref().map(|(i, _)| *i);
            let mut calls = 0;
            for (i, block) in builder.content.iter().enumerate() {
                let open = (i == last && builder.open != OpenText::None) || streaming == Some(i);
                let mut view = BlockView::of(block, !open);
                if let AssistantContent::ToolCall(call) = block {
                    if call.id.is_empty() && !open {
                        view.id = call_id(folder.response_id.as_deref(), calls, call).into();
                    }
                    calls += 1;
                }
                blocks.push(view);
            }
        }
        let has_calls = blocks.iter().any(|b| b.kind == Kind::ToolCall);
        let stop = match (&folder.block_reason, &folder.finish_reason) {
            (Some(_), _) => Some(StopReason::GuardRail),
            (None, Some(reason)) => Some(match stop_reason(reason) {
                StopReason::Stop if has_calls => StopReason::ToolUse,
                other => other,
            }),
            (None, None) => None,
        };
        // The candidate's metadata closes the message, as in the body.
        if stop.is_some() || folder.error.is_some() {
            blocks
                .extend(metadata_blocks(&folder.metadata).map(|b| BlockView::whole(Cow::Owned(b))));
        }
        Snapshot {
            started: folder.builder.is_some(),
            blocks,
            usage: folder.usage.map(WireUsage::to_usage),
            stop,
            error: folder.error.as_deref(),
        }
    }
}

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let (index, wire) = self.latch.next::<WireResponse>(event)?;
        if self.folder.error.is_some() {
            return Ok(Vec::new());
        }
        self.folder
            .chunk(wire, Some(index))
            .inspect_err(|e| self.latch.fail(index, e.to_string()))?;
        let mut differ = std::mem::take(&mut self.differ);
        let events = differ.events(&self.snapshot());
        self.differ = differ;
        Ok(events)
    }

    fn provider_error(&self) -> Option<&crate::providers::ProviderError> {
        self.folder.failure.as_ref()
    }

    fn unfinished(&self) -> Option<ResponseError> {
        if let Err(bad) = self.latch.check() {
            return Some(bad);
        }
        let folder = &self.folder;
        if folder.error.is_some() || folder.finish_reason.is_some() || folder.block_reason.is_some()
        {
            return None;
        }
        let arguments_open = folder
            .builder
            .as_ref()
            .is_some_and(|b| b.streaming.is_some());
        // Without a finishReason, a stream that ended after a whole chunk is
        // taken as a clean stop (said as a warning by `finish`).
        (!folder.saw_candidate || arguments_open).then(|| ResponseError::Truncated {
            events: self.latch.events(),
            message: if arguments_open {
                "no chunk carried a finishReason, and a function call's arguments were still streaming".to_owned()
            } else {
                "no chunk carried a candidate".to_owned()
            },
        })
    }

    fn partial(&self) -> AssistantMessage {
        let base = AssistantMessage {
            api: API.to_owned(),
            provider: PROVIDER.to_owned(),
            response_id: self.folder.response_id.clone(),
            model: self.folder.model.clone().unwrap_or_default(),
            ..AssistantMessage::default()
        };
        self.snapshot().partial(base)
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped
    /// (parts of a kind agentmsg does not model) as [`ResponseError::Invalid`]
    /// values naming their chunk.
    ///
    /// # Errors
    /// As [`finish`](StreamDecode::finish).
    fn finish_with_warnings(self) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some(unfinished) = self.unfinished() {
            return Err(unfinished);
        }
        let mut folder = self.folder;
        let mut clean_end = None;
        if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none()
        {
            // The stream ended cleanly after its last chunk, as the Firebase
            // SDK takes it: a stop (toolUse with calls), said as a warning.
            folder.finish_reason = Some("STOP".to_owned());
            clean_end = Some(ResponseError::Invalid {
                event: self.latch.events().checked_sub(1),
                path: "candidates[0].finishReason".to_owned(),
                message: "the stream ended without a finishReason: taken as a clean stop"
                    .to_owned(),
            });
        }
        let mut warnings = folder.take_warnings();
        warnings.extend(clean_end);
        Ok((priced(folder.into_message()), warnings))
    }
}
