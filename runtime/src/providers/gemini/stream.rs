//! The stream decoder.

use super::response::{Folder, WireResponse};
use crate::providers::shared::latch::Latch;
use crate::providers::{ResponseError, StreamDecode};
use crate::AssistantMessage;

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
/// together is an error naming the chunk index; a stream that ends without a
/// `finishReason` fails in [`finish`](StreamDecode::finish) as
/// [`ResponseError::Truncated`]; an error chunk ends the message with stopReason
/// `error`.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    latch: Latch,
    folder: Folder,
}

impl StreamDecoder {
    /// A decoder waiting for the first chunk.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped
    /// (parts of a kind agentmsg does not model) as [`ResponseError::Invalid`]
    /// values naming their chunk.
    ///
    /// # Errors
    /// As [`finish`](StreamDecode::finish).
    pub fn finish_with_warnings(
        self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        self.latch.check()?;
        let mut folder = self.folder;
        if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none()
        {
            return Err(ResponseError::Truncated {
                events: self.latch.events(),
                message: "no chunk carried a finishReason".to_owned(),
            });
        }
        let warnings = folder.take_warnings();
        Ok((folder.into_message(), warnings))
    }
}

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<(), ResponseError> {
        let (index, wire) = self.latch.next::<WireResponse>(event)?;
        if self.folder.error.is_some() {
            return Ok(());
        }
        self.folder
            .chunk(wire, Some(index))
            .inspect_err(|e| self.latch.fail(index, e.to_string()))
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        self.finish_with_warnings().map(|(message, _)| message)
    }
}
