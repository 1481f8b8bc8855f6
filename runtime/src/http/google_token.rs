//! Google OAuth access tokens from a service-account key (feature `vertex`):
//! a JWT signed with the key (`jsonwebtoken`, RS256) exchanged at the key's
//! `token_uri`, cached and fetched again before it expires.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use super::{ApiKey, ClientError};

/// The scope Vertex AI needs.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long before its expiry a token is fetched again.
const REFRESH_BEFORE: Duration = Duration::from_secs(300);

/// The longest a token is kept, whatever `expires_in` says (Google's live an
/// hour): a larger one would overflow the clock.
const LONGEST_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// A service account's key file (`GOOGLE_APPLICATION_CREDENTIALS`): its
/// email, private key and token endpoint. The private key is never shown.
#[derive(Clone, Deserialize)]
pub struct ServiceAccountKey {
    client_email: String,
    private_key: String,
    #[serde(default = "default_token_uri")]
    token_uri: String,
    #[serde(default)]
    project_id: Option<String>,
}

fn default_token_uri() -> String {
    "https://oauth2.googleapis.com/token".to_owned()
}

impl fmt::Debug for ServiceAccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccountKey")
            .field("client_email", &self.client_email)
            .field("private_key", &"(hidden)")
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountKey {
    /// A key from the JSON of a key file.
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] when it is not a service-account key (the
    /// error names the missing field, never a value).
    pub fn from_json(json: &str) -> Result<Self, ClientError> {
        #[derive(Deserialize)]
        struct Kind {
            #[serde(rename = "type")]
            kind: Option<String>,
        }
        let kind = serde_json::from_str::<Kind>(json).map_err(|e| {
            ClientError::Endpoint(format!("the key file is not JSON: line {}", e.line()))
        })?;
        if kind.kind.as_deref() != Some("service_account") {
            return Err(ClientError::Endpoint(
                "the key file is not a service-account key (`type` is not `service_account`)"
                    .to_owned(),
            ));
        }
        serde_json::from_str(json).map_err(|e| {
            // serde names the field; the message never holds a value of it.
            let what = e.to_string();
            let what = what.split(" at line").next().unwrap_or("a field");
            ClientError::Endpoint(format!("the service-account key lacks {what}"))
        })
    }

    /// The key in the file at `path`.
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] naming the file when it cannot be read or is
    /// no service-account key.
    pub fn from_file(path: &Path) -> Result<Self, ClientError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ClientError::Endpoint(format!("{}: {e}", path.display())))?;
        Self::from_json(&text).map_err(|e| match e {
            ClientError::Endpoint(message) => {
                ClientError::Endpoint(format!("{}: {message}", path.display()))
            }
            other => other,
        })
    }

    /// The key of the file `GOOGLE_APPLICATION_CREDENTIALS` names, if it
    /// names one.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    pub fn from_env() -> Result<Option<Self>, ClientError> {
        match std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(path) if !path.is_empty() => Self::from_file(Path::new(&path)).map(Some),
            _ => Ok(None),
        }
    }

    /// The service account's email.
    pub fn client_email(&self) -> &str {
        &self.client_email
    }

    /// The project the key belongs to, when the file names it.
    pub fn project_id(&self) -> Option<&str> {
        self.project_id.as_deref()
    }

    /// The same key exchanged at another token endpoint (a loopback server in
    /// tests).
    #[must_use]
    pub fn with_token_uri(mut self, uri: impl Into<String>) -> Self {
        self.token_uri = uri.into();
        self
    }
}

#[derive(serde::Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
}

#[derive(Deserialize)]
struct TokenReply {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// Access tokens for a service account: each fetched with a signed JWT
/// (the `urn:ietf:params:oauth:grant-type:jwt-bearer` grant), kept until five
/// minutes before it expires.
pub struct TokenSource {
    key: ServiceAccountKey,
    scope: String,
    http: reqwest::Client,
    cached: tokio::sync::Mutex<Option<(ApiKey, Instant)>>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("key", &self.key)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    /// Tokens for `key` with the cloud-platform scope.
    pub fn new(key: ServiceAccountKey) -> Self {
        Self {
            key,
            scope: CLOUD_PLATFORM_SCOPE.to_owned(),
            http: reqwest::Client::new(),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// A token: the cached one while it has more than five minutes left, else
    /// a new one.
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] for a key that cannot sign, a token endpoint
    /// that cannot be reached or that refuses (its status and error, never
    /// the key or the assertion).
    pub async fn token(&self) -> Result<ApiKey, ClientError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, expires)) = cached.as_ref() {
            if Instant::now() + REFRESH_BEFORE < *expires {
                return Ok(token.clone());
            }
        }
        let (token, lifetime) = self.fetch().await?;
        *cached = Some((token.clone(), Instant::now() + lifetime));
        Ok(token)
    }

    async fn fetch(&self) -> Result<(ApiKey, Duration), ClientError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let claims = Claims {
            iss: &self.key.client_email,
            scope: &self.scope,
            aud: &self.key.token_uri,
            iat: now,
            exp: now + 3600,
        };
        let signing = jsonwebtoken::EncodingKey::from_rsa_pem(self.key.private_key.as_bytes())
            .map_err(|_| {
                ClientError::Endpoint(format!(
                    "the private key of {} is not an RSA key in PEM",
                    self.key.client_email
                ))
            })?;
        let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        let assertion = jsonwebtoken::encode(&header, &claims, &signing)
            .map_err(|e| ClientError::Endpoint(format!("cannot sign the token request: {e}")))?;
        let body = format!(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}"
        );
        let response = self
            .http
            .post(&self.key.token_uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                ClientError::Endpoint(format!(
                    "the token endpoint {} cannot be reached: {}",
                    self.key.token_uri,
                    e.without_url()
                ))
            })?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            let reason = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
                .unwrap_or_else(|| "no error given".to_owned());
            return Err(ClientError::Endpoint(format!(
                "the token endpoint {} refused the service account {}: {status} {reason}",
                self.key.token_uri, self.key.client_email
            )));
        }
        let reply: TokenReply = serde_json::from_str(&text).map_err(|_| {
            ClientError::Endpoint(format!(
                "the token endpoint {} answered without an access token",
                self.key.token_uri
            ))
        })?;
        let lifetime = Duration::from_secs(reply.expires_in.unwrap_or(3600)).min(LONGEST_LIFETIME);
        Ok((ApiKey::new(reply.access_token), lifetime))
    }
}
