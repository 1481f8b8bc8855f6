//! The Amazon Bedrock endpoint (feature `bedrock`): Converse at
//! `https://bedrock-runtime.{region}.amazonaws.com`, with a Bedrock API key.

use super::endpoint::{Auth, Endpoint};
use crate::providers::Api;

/// The environment variable of a Bedrock API key.
const BEDROCK_KEY_VARS: &[&str] = &["AWS_BEARER_TOKEN_BEDROCK"];

/// The region when neither `AWS_REGION` nor `AWS_DEFAULT_REGION` is set (the
/// AWS SDKs have none; Bedrock's models are all in this one).
pub const DEFAULT_BEDROCK_REGION: &str = "us-east-1";

/// The region from `AWS_REGION`, then `AWS_DEFAULT_REGION`, as the AWS SDKs
/// read it, else [`DEFAULT_BEDROCK_REGION`].
pub fn region_from_env() -> String {
    ["AWS_REGION", "AWS_DEFAULT_REGION"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| DEFAULT_BEDROCK_REGION.to_owned())
}

impl Endpoint {
    /// Bedrock Converse in the region of `AWS_REGION` (see
    /// [`region_from_env`]), with a Bedrock API key from
    /// `AWS_BEARER_TOKEN_BEDROCK` sent as `Authorization: Bearer`. The model
    /// id goes in the URL path, percent-encoded
    /// ([`model_path`](crate::providers::bedrock::model_path)).
    ///
    /// [`Client::complete`](super::Client::complete) works against it;
    /// [`Client::stream`](super::Client::stream) does not yet, as the client
    /// frames replies as server-sent events and ConverseStream sends AWS's
    /// event stream ([`EventStreamParser`](crate::providers::bedrock::EventStreamParser)
    /// reads it). SigV4 signing is not built: only Bedrock API keys.
    ///
    /// ```
    /// use agentmsg_runtime::http::Endpoint;
    /// let bedrock = Endpoint::bedrock_in("eu-west-1");
    /// assert_eq!(
    ///     bedrock.url("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", false),
    ///     "https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    /// );
    /// ```
    pub fn bedrock() -> Self {
        Self::bedrock_in(&region_from_env())
    }

    /// Bedrock Converse in `region`, keyed from `AWS_BEARER_TOKEN_BEDROCK`.
    pub fn bedrock_in(region: &str) -> Self {
        Self::new(
            Api::Bedrock,
            &format!("https://bedrock-runtime.{region}.amazonaws.com"),
            Auth::Bearer,
            BEDROCK_KEY_VARS,
        )
    }
}
