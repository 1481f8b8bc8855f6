//! AWS Signature Version 4 for Bedrock requests, with `aws-sigv4`.

use std::fmt;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;

/// The service name Bedrock's runtime signs with.
pub const SIGNING_NAME: &str = "bedrock";

/// AWS credentials: an access key id, its secret and, for temporary
/// credentials, a session token. The secret and the token are never shown:
/// `Debug` prints the key id only.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::bedrock::AwsCredentials;
/// let credentials = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None);
/// let shown = format!("{credentials:?}");
/// assert!(shown.contains("AKIDEXAMPLE") && !shown.contains("wJalr"));
/// ```
#[derive(Clone)]
pub struct AwsCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl AwsCredentials {
    /// Credentials given.
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token: session_token.filter(|t| !t.is_empty()),
        }
    }

    /// Credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
    /// `AWS_SESSION_TOKEN` (optional), as the AWS SDKs read them; `None` when
    /// the key id or the secret is not set.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Some(Self::new(
            var("AWS_ACCESS_KEY_ID")?,
            var("AWS_SECRET_ACCESS_KEY")?,
            var("AWS_SESSION_TOKEN"),
        ))
    }

    /// The access key id (not a secret: it names the key).
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"(hidden)")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "(hidden)"),
            )
            .finish()
    }
}

/// A request that could not be signed (a URL or header that does not parse).
/// It never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot sign the request: {0}")]
pub struct SigningError(String);

/// Signs a request to `service` in `region` at `time`: the headers to add
/// (`authorization`, `x-amz-date`, and `x-amz-security-token` with a session
/// token). `url` is the URL as sent (its path already percent-encoded, as
/// [`model_path`](super::model_path) writes it); `headers` are the ones sent
/// that are to be signed (`content-type`, `accept`…; `host` is taken from the
/// URL).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::bedrock::{sign_request, AwsCredentials};
/// use std::time::{Duration, UNIX_EPOCH};
/// let credentials = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None);
/// let signed = sign_request(
///     &credentials, "us-east-1", "bedrock", "POST",
///     "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse",
///     &[("content-type", "application/json")], b"{}",
///     UNIX_EPOCH + Duration::from_secs(1_700_000_000),
/// )?;
/// let authorization = &signed.iter().find(|(name, _)| name == "authorization").unwrap().1;
/// assert!(authorization.starts_with(
///     "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature="
/// ));
/// # Ok::<(), agentmsg::providers::bedrock::SigningError>(())
/// ```
///
/// # Errors
/// [`SigningError`] when the URL or a header cannot be signed.
#[allow(clippy::too_many_arguments)]
pub fn sign_request(
    credentials: &AwsCredentials,
    region: &str,
    service: &str,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(String, String)>, SigningError> {
    let identity = Credentials::new(
        credentials.access_key_id.clone(),
        credentials.secret_access_key.clone(),
        credentials.session_token.clone(),
        None,
        "agentmsg",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| SigningError(e.to_string()))?
        .into();
    let request = SignableRequest::new(
        method,
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| SigningError(e.to_string()))?;
    let (instructions, _) = sign(request, &params)
        .map_err(|e| SigningError(e.to_string()))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}
