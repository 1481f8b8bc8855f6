//! The Amazon Bedrock endpoint (feature `bedrock`): Converse and
//! ConverseStream at `https://bedrock-runtime.{region}.amazonaws.com`, with a
//! Bedrock API key or SigV4-signed with AWS credentials.

use std::time::SystemTime;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT};

use super::endpoint::{Auth, AwsSigning, Endpoint};
use super::ClientError;
use crate::providers::bedrock::{sign_request, AwsCredentials, SIGNING_NAME};
use crate::providers::Api;

/// The environment variable of a Bedrock API key.
const BEDROCK_KEY_VARS: &[&str] = &["AWS_BEARER_TOKEN_BEDROCK"];

/// The region when neither `AWS_REGION` nor `AWS_DEFAULT_REGION` is set.
pub const DEFAULT_BEDROCK_REGION: &str = "us-east-1";

/// The content type of ConverseStream's replies.
const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";

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
    /// [`region_from_env`]): with a Bedrock API key from
    /// `AWS_BEARER_TOKEN_BEDROCK` (sent as `Authorization: Bearer`) when it is
    /// set, else SigV4-signed with the credentials of `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` when they are set. The
    /// model id (a foundation model, an inference profile, an ARN) goes in
    /// the URL path, percent-encoded
    /// ([`model_path`](crate::providers::bedrock::model_path)); a stream is
    /// read as AWS's event stream.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::http::Endpoint;
    /// let bedrock = Endpoint::bedrock_in("eu-west-1");
    /// assert_eq!(
    ///     bedrock.url("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", false),
    ///     "https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    /// );
    /// ```
    pub fn bedrock() -> Self {
        Self::bedrock_in(&region_from_env())
    }

    /// [`bedrock`](Self::bedrock) in `region`.
    pub fn bedrock_in(region: &str) -> Self {
        let endpoint = Self::new(
            Api::Bedrock,
            &format!("https://bedrock-runtime.{region}.amazonaws.com"),
            Auth::Bearer,
            BEDROCK_KEY_VARS,
        );
        if endpoint.has_key() {
            return endpoint;
        }
        match AwsCredentials::from_env() {
            Some(credentials) => endpoint.with_aws_credentials(region, credentials),
            None => endpoint,
        }
    }

    /// The same endpoint, SigV4-signing every request with `credentials` for
    /// `region` instead of sending a key.
    #[must_use]
    pub fn with_aws_credentials(mut self, region: &str, credentials: AwsCredentials) -> Self {
        self = self.without_key();
        self.aws = Some(AwsSigning {
            credentials,
            region: region.to_owned(),
        });
        self
    }
}

/// `headers` for a request to `endpoint`: for Bedrock, a stream accepts
/// AWS's event stream, and a request is signed when the endpoint holds AWS
/// credentials (at the time it is sent; a retry is signed again).
pub(super) fn signed(
    endpoint: &Endpoint,
    mut headers: HeaderMap,
    url: &str,
    body: &[u8],
    stream: bool,
) -> Result<HeaderMap, ClientError> {
    if endpoint.api() != Api::Bedrock {
        return Ok(headers);
    }
    if stream {
        headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
    }
    let Some(aws) = &endpoint.aws else {
        return Ok(headers);
    };
    let signed_headers: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    let added = sign_request(
        &aws.credentials,
        &aws.region,
        SIGNING_NAME,
        "POST",
        url,
        &signed_headers,
        body,
        SystemTime::now(),
    )
    .map_err(|e| ClientError::Endpoint(e.to_string()))?;
    for (name, value) in added {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ClientError::Endpoint(format!("the signer made a bad header `{name}`")))?;
        // The signature and the session token are secrets: never echoed.
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            ClientError::Endpoint(format!("the signed `{name}` is no header value"))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}
