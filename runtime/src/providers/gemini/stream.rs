//! The stream decoder.

use super::response::{Folder, WireResponse};
use crate::message::AssistantMessage;
use crate::providers::{ResponseError, StreamDecode};

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
    events: usize,
    folder: Folder,
    failed: Option<(usize, String)>,
}

impl StreamDecoder {
    /// A decoder waiting for the first chunk.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<(), ResponseError> {
        let index = self.events;
        self.events += 1;
        if let Some((at, why)) = &self.failed {
            return Err(ResponseError::Invalid {
                event: Some(index),
                path: "stream".to_owned(),
                message: format!("the stream already failed at event {at}: {why}"),
            });
        }
        let wire: WireResponse = match serde_json::from_str(event) {
            Ok(wire) => wire,
            Err(source) => {
                self.failed = Some((index, format!("invalid JSON: {source}")));
                return Err(ResponseError::Json {
                    event: Some(index),
                    source,
                });
            }
        };
        if self.folder.error.is_some() {
            return Ok(());
        }
        self.folder.chunk(wire, Some(index)).inspect_err(|e| {
            self.failed = Some((index, e.to_string()));
        })
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        if let Some((event, why)) = self.failed {
            return Err(ResponseError::Invalid {
                event: Some(event),
                path: "stream".to_owned(),
                message: why,
            });
        }
        let folder = self.folder;
        if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none()
        {
            return Err(ResponseError::Truncated {
                events: self.events,
                message: "no chunk carried a finishReason".to_owned(),
            });
        }
        Ok(folder.into_message())
    }
}
