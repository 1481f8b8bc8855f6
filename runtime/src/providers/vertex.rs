//! Google Vertex AI (feature `vertex`): where Gemini and Claude are served
//! from a Google Cloud project, and what changes in their bodies.
//!
//! - Gemini on Vertex (`google-vertex` in pi-ai's names) takes the Gemini
//!   body as [`gemini::encode_request`](super::gemini::encode_request)
//!   writes it, at
//!   `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`
//!   (`:streamGenerateContent?alt=sse` for a stream), or
//!   `https://aiplatform.googleapis.com/v1/…/locations/global/…` for the
//!   `global` location.
//! - Claude on Vertex speaks `anthropic-messages`: the Anthropic body
//!   without `model` (it is in the URL) and with `anthropic_version:
//!   "vertex-2023-10-16"` ([`anthropic_body`]), at
//!   `…/publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict`
//!   for a stream).
//!
//! Replies are the Gemini API's and Anthropic's: a Gemini reply names its
//! provider `google`, a Claude reply `anthropic`, and their thinking moves
//! by those providers' rules. Claude's thinking, signed by Anthropic, goes
//! back to the same Claude model on Vertex, on Anthropic's API and on
//! Bedrock (Anthropic documents its signatures as valid on all three; the
//! table is in `providers::bedrock`'s docs, feature `bedrock`); any
//! other model's, Gemini's included, is dropped and reported.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::providers::vertex::{model_url, Publisher};
//! assert_eq!(
//!     model_url("my-project", "us-east5", Publisher::Anthropic, "claude-sonnet-4-5@20250929", true),
//!     "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
//! );
//! assert_eq!(
//!     model_url("my-project", "global", Publisher::Google, "gemini-2.5-pro", false),
//!     "https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-pro:generateContent",
//! );
//! ```

use serde_json::Value;

use super::Body;

/// The provider name of Gemini on Vertex (pi-ai's).
pub const GOOGLE_VERTEX: &str = "google-vertex";
/// The provider name of Claude on Vertex.
pub const ANTHROPIC_VERTEX: &str = "anthropic-vertex";
/// The `anthropic_version` Claude on Vertex takes in the body.
pub const ANTHROPIC_VERTEX_VERSION: &str = "vertex-2023-10-16";

/// Whose models a Vertex URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Publisher {
    /// Google's (Gemini): the Gemini body and methods.
    Google,
    /// Anthropic's (Claude): the Anthropic body, `rawPredict`.
    Anthropic,
}

impl Publisher {
    /// Its name in the URL.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Google => "google",
            Self::Anthropic => "anthropic",
        }
    }
}

/// The host of `location`: `{location}-aiplatform.googleapis.com`, or
/// `aiplatform.googleapis.com` for `global`.
pub fn host(location: &str) -> String {
    if location == "global" {
        "aiplatform.googleapis.com".to_owned()
    } else {
        format!("{location}-aiplatform.googleapis.com")
    }
}

/// The URL of a publisher's models in `project` and `location`:
/// `https://{host}/v1/projects/{project}/locations/{location}/publishers/{publisher}`.
pub fn publisher_url(project: &str, location: &str, publisher: Publisher) -> String {
    format!(
        "https://{}/v1/projects/{project}/locations/{location}/publishers/{}",
        host(location),
        publisher.as_str()
    )
}

/// The URL `model` is called at, streamed or not, under `base` (a
/// [`publisher_url`], or a loopback server standing for one).
pub fn method_url(base: &str, publisher: Publisher, model: &str, stream: bool) -> String {
    let base = base.trim_end_matches('/');
    let method = match (publisher, stream) {
        (Publisher::Google, false) => "generateContent",
        (Publisher::Google, true) => "streamGenerateContent?alt=sse",
        (Publisher::Anthropic, false) => "rawPredict",
        (Publisher::Anthropic, true) => "streamRawPredict",
    };
    format!("{base}/models/{model}:{method}")
}

/// The URL of `model` of `publisher` in `project` and `location`.
pub fn model_url(
    project: &str,
    location: &str,
    publisher: Publisher,
    model: &str,
    stream: bool,
) -> String {
    method_url(
        &publisher_url(project, location, publisher),
        publisher,
        model,
        stream,
    )
}

/// An Anthropic Messages body made for Vertex: `model` taken out (the URL
/// names it) and `anthropic_version` set to [`ANTHROPIC_VERTEX_VERSION`].
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # #[cfg(feature = "anthropic")] {
/// use agentmsg::providers::{anthropic, vertex, Request};
/// use agentmsg::Message;
/// let mut encoded = anthropic::encode_request(&Request::new("claude-sonnet-4-5@20250929", vec![Message::user("Hi")]))?;
/// vertex::anthropic_body(&mut encoded.body);
/// assert!(encoded.body.get("model").is_none());
/// assert_eq!(encoded.body["anthropic_version"], "vertex-2023-10-16");
/// # }
/// # Ok::<(), agentmsg::providers::EncodeError>(())
/// ```
pub fn anthropic_body(body: &mut Body) {
    if let Value::Object(map) = &mut **body {
        map.remove("model");
        map.insert("anthropic_version".into(), ANTHROPIC_VERTEX_VERSION.into());
    }
}
