//! The Google Vertex AI endpoints (feature `vertex`): Gemini and Claude from
//! a Google Cloud project, with an OAuth access token as the bearer key.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

use super::endpoint::{Auth, Endpoint};
use super::google_token::TokenSource;
use super::ClientError;
use crate::providers::vertex::{publisher_url, Publisher};
use crate::providers::Api;

impl Endpoint {
    /// Gemini on Vertex AI in `project` and `location` (`global` included):
    /// the Gemini body at
    /// `…/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`
    /// (`:streamGenerateContent?alt=sse` for a stream). Give the OAuth access
    /// token with [`with_key`](Self::with_key) (such as the output of
    /// `gcloud auth print-access-token`); it is sent as
    /// `Authorization: Bearer`.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::http::Endpoint;
    /// let vertex = Endpoint::vertex_gemini("my-project", "global");
    /// assert_eq!(
    ///     vertex.url("gemini-2.5-pro", true),
    ///     "https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    /// );
    /// ```
    #[cfg(feature = "gemini")]
    pub fn vertex_gemini(project: &str, location: &str) -> Self {
        Self::new(
            Api::Gemini,
            &publisher_url(project, location, Publisher::Google),
            Auth::Bearer,
            &[],
        )
    }

    /// Claude on Vertex AI in `project` and `location`: the Anthropic body
    /// without `model` and with `anthropic_version: "vertex-2023-10-16"`
    /// ([`anthropic_body`](crate::providers::vertex::anthropic_body)), sent to
    /// `…/publishers/anthropic/models/{model}:rawPredict`
    /// (`:streamRawPredict` for a stream), with the OAuth access token given
    /// by [`with_key`](Self::with_key) as `Authorization: Bearer`.
    #[cfg(feature = "anthropic")]
    pub fn vertex_anthropic(project: &str, location: &str) -> Self {
        let mut endpoint = Self::new(
            Api::Anthropic,
            &publisher_url(project, location, Publisher::Anthropic),
            Auth::Bearer,
            &[],
        );
        endpoint.vertex_claude = true;
        endpoint
    }
}

impl Endpoint {
    /// The same endpoint, authorized with an access token from `tokens` on
    /// every request (fetched when none is cached or it is about to expire)
    /// instead of a fixed key.
    #[must_use]
    pub fn with_token_source(mut self, tokens: Arc<TokenSource>) -> Self {
        self = self.without_key();
        self.tokens = Some(tokens);
        self
    }
}

/// `headers` with `Authorization: Bearer` from the endpoint's token source,
/// when it has one.
pub(super) async fn authorized(
    endpoint: &Endpoint,
    mut headers: HeaderMap,
) -> Result<HeaderMap, ClientError> {
    let Some(tokens) = &endpoint.tokens else {
        return Ok(headers);
    };
    let token = tokens.token().await?;
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
        ClientError::Endpoint("the access token is not a valid header value".to_owned())
    })?;
    value.set_sensitive(true);
    headers.insert(AUTHORIZATION, value);
    Ok(headers)
}

/// The URL and body of a request to `endpoint`: for Claude on Vertex, the
/// `rawPredict` URL and the body made for Vertex; otherwise as they are.
#[cfg(feature = "anthropic")]
pub(super) fn claude(
    endpoint: &Endpoint,
    url: String,
    mut body: crate::providers::Body,
    model: &str,
    stream: bool,
) -> (String, crate::providers::Body) {
    if !endpoint.vertex_claude {
        return (url, body);
    }
    crate::providers::vertex::anthropic_body(&mut body);
    let url = crate::providers::vertex::method_url(
        endpoint.base_url(),
        Publisher::Anthropic,
        model,
        stream,
    );
    (url, body)
}
