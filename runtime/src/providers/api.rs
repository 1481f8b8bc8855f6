//! [`Api`]: one name for each wire format, its id and the names it parses
//! from. The run-time dispatch to an API's module is `dispatch`'s; the id of
//! each module's `API` is read from here.

use std::fmt;
use std::str::FromStr;

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
            Api::OpenaiChat => "openai-completions",
            #[cfg(feature = "openai-responses")]
            Api::OpenaiResponses => "openai-responses",
            #[cfg(feature = "anthropic")]
            Api::Anthropic => "anthropic-messages",
            #[cfg(feature = "gemini")]
            Api::Gemini => "google-generative-ai",
            #[cfg(feature = "bedrock")]
            Api::Bedrock => "bedrock-converse-stream",
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
