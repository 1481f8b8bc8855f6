//! The run-time dispatch of encoding and decoding to an [`Api`]'s module:
//! [`Api::encode`], [`Api::decode_response`], [`Api::stream_decoder`] and the
//! [`AnyStreamDecoder`] it returns.

use super::{Api, Codec, EncodeError, Encoded, Request, ResponseError, StreamDecode, StreamEvent};
use crate::AssistantMessage;
use std::fmt;

#[cfg(feature = "anthropic")]
use super::anthropic;
#[cfg(feature = "bedrock")]
use super::bedrock;
#[cfg(feature = "gemini")]
use super::gemini;
#[cfg(feature = "openai-chat")]
use super::openai_chat;
#[cfg(feature = "openai-responses")]
use super::openai_responses;

/// Calls `$body` with `$c` bound to the [`Codec`] of `$api`.
macro_rules! each_api {
    ($api:expr, $c:ident => $body:expr) => {
        match $api {
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => {
                type $c = openai_chat::OpenaiChat;
                $body
            }
            #[cfg(feature = "openai-responses")]
            Api::OpenaiResponses => {
                type $c = openai_responses::OpenaiResponses;
                $body
            }
            #[cfg(feature = "anthropic")]
            Api::Anthropic => {
                type $c = anthropic::Anthropic;
                $body
            }
            #[cfg(feature = "gemini")]
            Api::Gemini => {
                type $c = gemini::Gemini;
                $body
            }
            #[cfg(feature = "bedrock")]
            Api::Bedrock => {
                type $c = bedrock::Bedrock;
                $body
            }
        }
    };
}

impl Api {
    /// The API's own provider (`openai`, `anthropic`, `google`).
    pub const fn provider(self) -> &'static str {
        each_api!(self, C => <C as Codec>::PROVIDER)
    }

    /// Encodes `request` for this API.
    ///
    /// # Errors
    /// As the API's `encode_request`.
    pub fn encode(self, request: &Request) -> Result<Encoded, EncodeError> {
        let mut encoded = each_api!(self, C => C::encode_request(request))?;
        merge(&mut encoded.body, &request.extra_body);
        Ok(encoded)
    }

    /// Decodes a response body of this API, with what was skipped or changed.
    ///
    /// # Errors
    /// As the API's `decode_response_with_warnings`.
    pub fn decode_response(
        self,
        body: &str,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        each_api!(self, C => C::decode_response_with_warnings(body))
    }

    /// A stream decoder for this API.
    pub fn stream_decoder(self) -> AnyStreamDecoder {
        match self {
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => AnyStreamDecoder::OpenaiChat(openai_chat::StreamDecoder::default()),
            #[cfg(feature = "openai-responses")]
            Api::OpenaiResponses => {
                AnyStreamDecoder::OpenaiResponses(openai_responses::StreamDecoder::default())
            }
            #[cfg(feature = "anthropic")]
            Api::Anthropic => AnyStreamDecoder::Anthropic(anthropic::StreamDecoder::default()),
            #[cfg(feature = "gemini")]
            Api::Gemini => AnyStreamDecoder::Gemini(gemini::StreamDecoder::default()),
            #[cfg(feature = "bedrock")]
            Api::Bedrock => AnyStreamDecoder::Bedrock(bedrock::StreamDecoder::default()),
        }
    }
}

/// The stream decoder of any [`Api`], chosen at run time
/// ([`Api::stream_decoder`]).
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum AnyStreamDecoder {
    /// OpenAI Chat Completions.
    #[cfg(feature = "openai-chat")]
    OpenaiChat(openai_chat::StreamDecoder),
    /// OpenAI Responses.
    #[cfg(feature = "openai-responses")]
    OpenaiResponses(openai_responses::StreamDecoder),
    /// Anthropic Messages.
    #[cfg(feature = "anthropic")]
    Anthropic(anthropic::StreamDecoder),
    /// Google Gemini.
    #[cfg(feature = "gemini")]
    Gemini(gemini::StreamDecoder),
    /// Amazon Bedrock ConverseStream.
    #[cfg(feature = "bedrock")]
    Bedrock(bedrock::StreamDecoder),
}

macro_rules! each_decoder {
    ($decoder:expr, $d:ident => $body:expr) => {
        match $decoder {
            #[cfg(feature = "openai-chat")]
            AnyStreamDecoder::OpenaiChat($d) => $body,
            #[cfg(feature = "openai-responses")]
            AnyStreamDecoder::OpenaiResponses($d) => $body,
            #[cfg(feature = "anthropic")]
            AnyStreamDecoder::Anthropic($d) => $body,
            #[cfg(feature = "gemini")]
            AnyStreamDecoder::Gemini($d) => $body,
            #[cfg(feature = "bedrock")]
            AnyStreamDecoder::Bedrock($d) => $body,
        }
    };
}

impl AnyStreamDecoder {
    /// The API it decodes.
    pub fn api(&self) -> Api {
        match self {
            #[cfg(feature = "openai-chat")]
            AnyStreamDecoder::OpenaiChat(_) => Api::OpenaiChat,
            #[cfg(feature = "openai-responses")]
            AnyStreamDecoder::OpenaiResponses(_) => Api::OpenaiResponses,
            #[cfg(feature = "anthropic")]
            AnyStreamDecoder::Anthropic(_) => Api::Anthropic,
            #[cfg(feature = "gemini")]
            AnyStreamDecoder::Gemini(_) => Api::Gemini,
            #[cfg(feature = "bedrock")]
            AnyStreamDecoder::Bedrock(_) => Api::Bedrock,
        }
    }
}

impl fmt::Debug for AnyStreamDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyStreamDecoder")
            .field("api", &self.api())
            .finish_non_exhaustive()
    }
}

impl StreamDecode for AnyStreamDecoder {
    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        each_decoder!(self, d => d.push(event))
    }

    fn partial(&self) -> AssistantMessage {
        each_decoder!(self, d => d.partial())
    }

    fn finish_with_warnings(self) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        each_decoder!(self, d => d.finish_with_warnings())
    }

    fn provider_error(&self) -> Option<&super::ProviderError> {
        each_decoder!(self, d => d.provider_error())
    }

    fn unfinished(&self) -> Option<ResponseError> {
        each_decoder!(self, d => d.unfinished())
    }
}

/// Sets `extra` in `body`: an object merged into an object, `null` removing
/// the field, any other value replacing it.
fn merge(body: &mut serde_json::Value, extra: &serde_json::Map<String, serde_json::Value>) {
    let serde_json::Value::Object(body) = body else {
        return;
    };
    for (field, value) in extra {
        match (body.get_mut(field), value) {
            (_, serde_json::Value::Null) => {
                body.remove(field);
            }
            (Some(existing @ serde_json::Value::Object(_)), serde_json::Value::Object(inner)) => {
                merge(existing, inner);
            }
            _ => {
                body.insert(field.clone(), value.clone());
            }
        }
    }
}
