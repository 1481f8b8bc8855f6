//! [`Api`]: one name for each wire format, and the run-time
//! dispatch of encoding and decoding to its module.

use std::fmt;
use std::str::FromStr;

use super::{Codec, EncodeError, Encoded, Request, ResponseError, StreamDecode, StreamEvent};
use crate::AssistantMessage;

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

/// A provider API, for code that holds the API as a value (from a
/// configuration file, a command line, an assistant message's `api`).
///
/// It parses from the API ids (`anthropic-messages`, `openai-completions`,
/// `openai-responses`, `google-generative-ai`) and from the module names
/// (`anthropic`, `openai_chat`, `openai_responses`, `gemini`), and displays as
/// the id.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::{Api, Request};
/// use agentmsg::Message;
/// let api: Api = "anthropic-messages".parse()?;
/// let encoded = api.encode(&Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]))?;
/// assert_eq!(encoded.body["model"], "claude-sonnet-4-5");
/// assert_eq!(api.to_string(), "anthropic-messages");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Api {
    /// OpenAI Chat Completions (`openai-completions`), and the servers that copy it.
    #[cfg(feature = "openai-chat")]
    OpenaiChat,
    /// OpenAI Responses (`openai-responses`).
    #[cfg(feature = "openai-responses")]
    OpenaiResponses,
    /// Anthropic Messages (`anthropic-messages`).
    #[cfg(feature = "anthropic")]
    Anthropic,
    /// Google Gemini `generateContent` (`google-generative-ai`).
    #[cfg(feature = "gemini")]
    Gemini,
    /// Amazon Bedrock Converse and ConverseStream (`bedrock-converse-stream`).
    #[cfg(feature = "bedrock")]
    Bedrock,
}

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
    /// Every API built in.
    pub const ALL: &'static [Api] = &[
        #[cfg(feature = "openai-chat")]
        Api::OpenaiChat,
        #[cfg(feature = "openai-responses")]
        Api::OpenaiResponses,
        #[cfg(feature = "anthropic")]
        Api::Anthropic,
        #[cfg(feature = "gemini")]
        Api::Gemini,
        #[cfg(feature = "bedrock")]
        Api::Bedrock,
    ];

    /// The API id, as an assistant message's `api` names it.
    pub const fn id(self) -> &'static str {
        match self {
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => openai_chat::API,
            #[cfg(feature = "openai-responses")]
            Api::OpenaiResponses => openai_responses::API,
            #[cfg(feature = "anthropic")]
            Api::Anthropic => anthropic::API,
            #[cfg(feature = "gemini")]
            Api::Gemini => gemini::API,
            #[cfg(feature = "bedrock")]
            Api::Bedrock => bedrock::API,
        }
    }

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

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A name that is no [`Api`] built in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown api `{name}`; known: {}", known())]
pub struct UnknownApi {
    /// The name given.
    pub name: String,
}

fn known() -> String {
    Api::ALL
        .iter()
        .map(|api| api.id())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Api {
    type Err = UnknownApi;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let found = match name {
            #[cfg(feature = "openai-chat")]
            "openai-completions" | "openai_chat" | "openai-chat" => Some(Api::OpenaiChat),
            #[cfg(feature = "openai-responses")]
            "openai-responses" | "openai_responses" => Some(Api::OpenaiResponses),
            #[cfg(feature = "anthropic")]
            "anthropic-messages" | "anthropic" => Some(Api::Anthropic),
            #[cfg(feature = "gemini")]
            "google-generative-ai" | "gemini" => Some(Api::Gemini),
            #[cfg(feature = "bedrock")]
            "bedrock-converse-stream" | "bedrock" => Some(Api::Bedrock),
            _ => None,
        };
        found.ok_or_else(|| UnknownApi {
            name: name.to_owned(),
        })
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
