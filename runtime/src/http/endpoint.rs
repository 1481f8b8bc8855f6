//! [`Endpoint`]: where a request goes and which headers it carries.

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use super::key::ApiKey;
use super::ClientError;
use crate::providers::Api;

/// The version of the Anthropic API the encoder writes
/// (the `anthropic-version` header).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How the key is sent. (Each provider's feature makes its own; the
/// sending side matches them all.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Auth {
    /// `Authorization: Bearer KEY` (OpenAI and compatible servers).
    #[cfg_attr(
        not(any(feature = "openai-chat", feature = "openai-responses")),
        allow(dead_code)
    )]
    Bearer,
    /// `x-api-key: KEY` (Anthropic).
    #[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
    XApiKey,
    /// `x-goog-api-key: KEY` (Gemini).
    #[cfg_attr(not(feature = "gemini"), allow(dead_code))]
    GoogApiKey,
    /// `api-key: KEY` (Azure OpenAI).
    #[cfg_attr(
        not(any(feature = "openai-chat", feature = "openai-responses")),
        allow(dead_code)
    )]
    AzureApiKey,
}

/// Where a request for one [`Api`] is sent, and how it is authenticated: the
/// base URL, the key and its header, the version and beta headers.
///
/// The constructors take the key from the API's conventional environment
/// variables when one is set; [`with_key`](Self::with_key) gives one
/// explicitly. The key is never shown (see [`ApiKey`]).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::http::Endpoint;
/// use agentmsg::providers::Api;
/// let local = Endpoint::openai_compatible("http://localhost:11434/v1");
/// assert_eq!(local.api(), Api::OpenaiChat);
/// assert_eq!(local.url("llama3.2", true), "http://localhost:11434/v1/chat/completions");
/// let gemini = Endpoint::gemini();
/// assert_eq!(
///     gemini.url("gemini-2.5-flash", true),
///     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
/// );
/// ```
#[derive(Clone)]
pub struct Endpoint {
    api: Api,
    base_url: String,
    auth: Auth,
    key: Option<ApiKey>,
    /// The variables the key was looked for in, for the error without one.
    key_vars: &'static [&'static str],
    /// Whether a request without a key is sent anyway (local servers).
    key_optional: bool,
    /// An Azure deployment (the model id is then not in the URL).
    azure_deployment: Option<String>,
    /// The `api-version` query parameter (Azure).
    api_version: Option<String>,
    betas: Vec<String>,
    headers: Vec<(String, String)>,
    /// SigV4 signing (Bedrock with AWS credentials instead of a key).
    #[cfg(feature = "bedrock")]
    pub(super) aws: Option<AwsSigning>,
    /// Claude on Vertex AI: `rawPredict` URLs and a body without `model`.
    #[cfg(feature = "vertex")]
    #[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
    pub(super) vertex_claude: bool,
    /// Access tokens fetched for every request (Vertex AI).
    #[cfg(feature = "vertex")]
    pub(super) tokens: Option<std::sync::Arc<super::google_token::TokenSource>>,
    /// The provider behind an OpenAI-compatible endpoint (`deepseek`,
    /// `mistral`…), which requests are prepared for and replies are
    /// stamped with.
    provider: Option<String>,
}

/// Shows no secret: the key is `ApiKey(<redacted>)`, a password or token in
/// the base URL is `***`, and the caller's headers are listed by name only
/// (their values are often credentials: a gateway's key, a bearer token).
impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(name, _)| format!("{name}: <redacted>"))
            .collect();
        let mut debug = f.debug_struct("Endpoint");
        debug
            .field("api", &self.api)
            .field("base_url", &super::redact::url(&self.base_url))
            .field("auth", &self.auth)
            .field("key", &self.key)
            .field("key_vars", &self.key_vars)
            .field("key_optional", &self.key_optional)
            .field("azure_deployment", &self.azure_deployment)
            .field("api_version", &self.api_version)
            .field("betas", &self.betas)
            .field("headers", &headers)
            .field("provider", &self.provider);
        #[cfg(feature = "bedrock")]
        debug.field("aws", &self.aws);
        #[cfg(feature = "vertex")]
        debug.field("vertex_claude", &self.vertex_claude);
        #[cfg(feature = "vertex")]
        debug.field("tokens", &self.tokens);
        debug.finish()
    }
}

/// The environment variables of OpenAI's key.
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
const OPENAI_VARS: &[&str] = &["OPENAI_API_KEY"];
/// The environment variables of Anthropic's key.
#[cfg(feature = "anthropic")]
const ANTHROPIC_VARS: &[&str] = &["ANTHROPIC_API_KEY"];
/// The environment variables of Gemini's key, in the order Google's SDKs read
/// them.
#[cfg(feature = "gemini")]
const GEMINI_VARS: &[&str] = &["GEMINI_API_KEY", "GOOGLE_API_KEY"];
/// The environment variables of an Azure OpenAI key.
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
const AZURE_VARS: &[&str] = &["AZURE_OPENAI_API_KEY"];

/// The OpenAI-compatible servers [`Endpoint::compatible`] knows: name, base
/// URL, the environment variable of the key (none for local servers).
#[cfg(feature = "openai-chat")]
const COMPATIBLE: &[(&str, &str, &[&str])] = &[
    ("ollama", "http://localhost:11434/v1", &[]),
    ("vllm", "http://localhost:8000/v1", &[]),
    ("lmstudio", "http://localhost:1234/v1", &[]),
    (
        "openrouter",
        "https://openrouter.ai/api/v1",
        &["OPENROUTER_API_KEY"],
    ),
    ("groq", "https://api.groq.com/openai/v1", &["GROQ_API_KEY"]),
    (
        "deepseek",
        "https://api.deepseek.com/v1",
        &["DEEPSEEK_API_KEY"],
    ),
    ("xai", "https://api.x.ai/v1", &["XAI_API_KEY"]),
    ("mistral", "https://api.mistral.ai/v1", &["MISTRAL_API_KEY"]),
];

impl Endpoint {
    pub(super) fn new(
        api: Api,
        base_url: &str,
        auth: Auth,
        key_vars: &'static [&'static str],
    ) -> Self {
        Self {
            api,
            base_url: base_url.trim_end_matches('/').to_owned(),
            auth,
            key: ApiKey::from_env(key_vars),
            key_vars,
            key_optional: false,
            azure_deployment: None,
            api_version: None,
            betas: Vec::new(),
            headers: Vec::new(),
            #[cfg(feature = "bedrock")]
            aws: None,
            #[cfg(feature = "vertex")]
            vertex_claude: false,
            #[cfg(feature = "vertex")]
            tokens: None,
            provider: None,
        }
    }

    /// The default endpoint of `api`, keyed from its environment variables.
    pub fn for_api(api: Api) -> Self {
        match api {
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => Self::openai_chat(),
            #[cfg(feature = "openai-responses")]
            Api::OpenaiResponses => Self::openai_responses(),
            #[cfg(feature = "anthropic")]
            Api::Anthropic => Self::anthropic(),
            #[cfg(feature = "gemini")]
            Api::Gemini => Self::gemini(),
            #[cfg(feature = "bedrock")]
            Api::Bedrock => Self::bedrock(),
        }
    }

    /// OpenAI Chat Completions at `https://api.openai.com/v1`, with
    /// `Authorization: Bearer $OPENAI_API_KEY`.
    #[cfg(feature = "openai-chat")]
    pub fn openai_chat() -> Self {
        Self::new(
            Api::OpenaiChat,
            "https://api.openai.com/v1",
            Auth::Bearer,
            OPENAI_VARS,
        )
    }

    /// OpenAI Responses at `https://api.openai.com/v1`, with
    /// `Authorization: Bearer $OPENAI_API_KEY`.
    #[cfg(feature = "openai-responses")]
    pub fn openai_responses() -> Self {
        Self::new(
            Api::OpenaiResponses,
            "https://api.openai.com/v1",
            Auth::Bearer,
            OPENAI_VARS,
        )
    }

    /// Anthropic Messages at `https://api.anthropic.com/v1`, with
    /// `x-api-key: $ANTHROPIC_API_KEY` and `anthropic-version`
    /// ([`ANTHROPIC_VERSION`]).
    #[cfg(feature = "anthropic")]
    pub fn anthropic() -> Self {
        Self::new(
            Api::Anthropic,
            "https://api.anthropic.com/v1",
            Auth::XApiKey,
            ANTHROPIC_VARS,
        )
    }

    /// Gemini at `https://generativelanguage.googleapis.com/v1beta`, with
    /// `x-goog-api-key: $GEMINI_API_KEY` (or `$GOOGLE_API_KEY`).
    #[cfg(feature = "gemini")]
    pub fn gemini() -> Self {
        Self::new(
            Api::Gemini,
            "https://generativelanguage.googleapis.com/v1beta",
            Auth::GoogApiKey,
            GEMINI_VARS,
        )
    }

    /// An OpenAI-compatible server speaking Chat Completions at `base_url`
    /// (the URL that `/chat/completions` follows, such as
    /// `http://localhost:8000/v1`), with `Authorization: Bearer` when a key is
    /// given; none is read from the environment.
    #[cfg(feature = "openai-chat")]
    pub fn openai_compatible(base_url: &str) -> Self {
        Self {
            key: None,
            key_optional: true,
            ..Self::new(Api::OpenaiChat, base_url, Auth::Bearer, &[])
        }
    }

    /// A known OpenAI-compatible server by name: `ollama`, `vllm`, `lmstudio`
    /// (on their default local ports, no key), `openrouter`, `groq`,
    /// `deepseek`, `xai`, `mistral` (keyed from `OPENROUTER_API_KEY`,
    /// `GROQ_API_KEY`…). `None` for another name: use
    /// [`openai_compatible`](Self::openai_compatible) with its URL.
    ///
    /// The endpoint names its provider ([`with_provider`](Self::with_provider)),
    /// so requests follow that server's own rules where they differ from
    /// OpenAI's:
    ///
    /// | server | rule | what agentmsg does |
    /// |---|---|---|
    /// | `deepseek` | a turn that called a tool must carry its `reasoning_content` back (a 400 otherwise) | decoded into a thinking block that remembers its field; sent back to the same provider and model |
    /// | `mistral` | tool-call ids are `[a-zA-Z0-9]{9}` | other ids mapped ([`IdRule::Mistral`](crate::project::IdRule::Mistral)), each result with its call |
    /// | `deepseek`, `xai` | no `developer` role, no `store` (pi-ai's compat table) | the system prompt goes as `system`; `store` is never sent |
    /// | `openrouter`, `vllm`, `ollama`, `lmstudio` | reasoning as `reasoning` (`reasoning_content` on some) | decoded and sent back in the field it came in |
    /// | `groq`, `xai`, `openrouter`, `ollama`, `vllm`, `lmstudio` | Chat Completions ids (at most 40 characters) | [`IdRule::OpenAiChat`](crate::project::IdRule::OpenAiChat) |
    #[cfg(feature = "openai-chat")]
    pub fn compatible(name: &str) -> Option<Self> {
        let (known, url, vars) = COMPATIBLE
            .iter()
            .find(|(known, _, _)| known.eq_ignore_ascii_case(name))?;
        Some(Self {
            key_optional: vars.is_empty(),
            provider: Some((*known).to_owned()),
            ..Self::new(Api::OpenaiChat, url, Auth::Bearer, vars)
        })
    }

    /// Azure OpenAI: `resource_url` (`https://NAME.openai.azure.com`), a
    /// deployment and an `api-version`, with `api-key:
    /// $AZURE_OPENAI_API_KEY`. Chat goes to
    /// `/openai/deployments/DEPLOYMENT/chat/completions?api-version=V`;
    /// Responses to `/openai/responses?api-version=V`, with the deployment as
    /// the model.
    #[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
    pub fn azure_openai(api: Api, resource_url: &str, deployment: &str, api_version: &str) -> Self {
        Self {
            azure_deployment: Some(deployment.to_owned()),
            api_version: Some(api_version.to_owned()),
            ..Self::new(api, resource_url, Auth::AzureApiKey, AZURE_VARS)
        }
    }

    /// The same endpoint at another base URL (a proxy, a gateway, a loopback
    /// server in tests).
    #[must_use]
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        self.base_url = base_url.trim_end_matches('/').to_owned();
        self
    }

    /// The same endpoint with this key.
    #[must_use]
    pub fn with_key(mut self, key: ApiKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The same endpoint without a key (a local server that takes none).
    #[must_use]
    pub fn without_key(mut self) -> Self {
        self.key = None;
        self.key_optional = true;
        self
    }

    /// The same endpoint with one more beta (Anthropic's `anthropic-beta`
    /// header, the betas joined with commas).
    #[must_use]
    pub fn with_beta(mut self, beta: impl Into<String>) -> Self {
        self.betas.push(beta.into());
        self
    }

    /// The same endpoint with one more header on every request (an
    /// organization, a project, a gateway's own header).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The API it speaks.
    pub fn api(&self) -> Api {
        self.api
    }

    /// The same endpoint serving `provider`'s models: requests are prepared
    /// for it when they name no provider ([`Request::provider`]), so its
    /// own rules hold (Mistral's tool-call ids) and reasoning it wrote goes
    /// back to it, and replies name it as their provider.
    /// [`compatible`](Self::compatible) sets it to the server's name.
    ///
    /// [`Request::provider`]: crate::providers::Request::provider
    #[must_use]
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// The provider behind the endpoint, when it is not the API's own.
    pub fn provider(&self) -> Option<&str> {
        self.provider.as_deref()
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether it has a key.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The betas sent.
    pub fn betas(&self) -> &[String] {
        &self.betas
    }

    /// The URL a request for `model` goes to, streamed or not.
    pub fn url(&self, model: &str, stream: bool) -> String {
        let base = &self.base_url;
        let mut url = match (self.api, &self.azure_deployment) {
            #[cfg(feature = "openai-chat")]
            (Api::OpenaiChat, Some(deployment)) => {
                format!("{base}/openai/deployments/{deployment}/chat/completions")
            }
            #[cfg(feature = "openai-chat")]
            (Api::OpenaiChat, None) => format!("{base}/chat/completions"),
            #[cfg(feature = "openai-responses")]
            (Api::OpenaiResponses, Some(_)) => format!("{base}/openai/responses"),
            #[cfg(feature = "openai-responses")]
            (Api::OpenaiResponses, None) => format!("{base}/responses"),
            #[cfg(feature = "anthropic")]
            (Api::Anthropic, _) => format!("{base}/messages"),
            #[cfg(feature = "gemini")]
            (Api::Gemini, _) if stream => {
                format!("{base}/models/{model}:streamGenerateContent?alt=sse")
            }
            #[cfg(feature = "gemini")]
            (Api::Gemini, _) => format!("{base}/models/{model}:generateContent"),
            #[cfg(feature = "bedrock")]
            (Api::Bedrock, _) => format!(
                "{base}{}",
                crate::providers::bedrock::model_path(model, stream)
            ),
        };
        let _ = (model, stream);
        if let Some(version) = &self.api_version {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str("api-version=");
            url.push_str(version);
        }
        url
    }

    /// The model id to encode: an Azure deployment names the model for
    /// Responses, otherwise the request's.
    pub(crate) fn model<'a>(&'a self, model: &'a str) -> &'a str {
        match (self.api, &self.azure_deployment) {
            #[cfg(feature = "openai-responses")]
            (Api::OpenaiResponses, Some(deployment)) => deployment,
            _ => model,
        }
    }

    /// The headers of a request: content type, accept, the key (marked
    /// sensitive), version and betas, the extra ones.
    pub(crate) fn headers(&self, stream: bool) -> Result<HeaderMap, ClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(if stream {
                "text/event-stream"
            } else {
                "application/json"
            }),
        );
        match (&self.key, self.key_optional) {
            (Some(key), _) => {
                let (name, value) = match self.auth {
                    Auth::Bearer => (AUTHORIZATION, format!("Bearer {}", key.expose())),
                    Auth::XApiKey => (
                        HeaderName::from_static("x-api-key"),
                        key.expose().to_owned(),
                    ),
                    Auth::GoogApiKey => (
                        HeaderName::from_static("x-goog-api-key"),
                        key.expose().to_owned(),
                    ),
                    Auth::AzureApiKey => {
                        (HeaderName::from_static("api-key"), key.expose().to_owned())
                    }
                };
                // Never echo the value: it is the secret.
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    ClientError::Endpoint("the API key is not a valid header value".to_owned())
                })?;
                value.set_sensitive(true);
                headers.insert(name, value);
            }
            (None, true) => {}
            (None, false) => {
                return Err(ClientError::MissingKey {
                    api: self.api,
                    vars: self.key_vars.join(" or "),
                })
            }
        }
        #[cfg(feature = "anthropic")]
        if self.api == Api::Anthropic {
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
        if !self.betas.is_empty() {
            let betas = self.betas.join(",");
            let value = HeaderValue::from_str(&betas)
                .map_err(|_| ClientError::Endpoint(format!("invalid beta `{betas}`")))?;
            headers.insert(HeaderName::from_static("anthropic-beta"), value);
        }
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| ClientError::Endpoint(format!("invalid header name `{name}`")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| ClientError::Endpoint(format!("invalid value of header `{name}`")))?;
            headers.append(name, value);
        }
        Ok(headers)
    }
}

/// How an endpoint signs its requests with SigV4 (Bedrock with AWS
/// credentials): the credentials (never shown) and the region. Set by
/// `bedrock.rs`'s constructors, read when a request is signed.
#[cfg(feature = "bedrock")]
#[derive(Debug, Clone)]
pub(super) struct AwsSigning {
    pub(super) credentials: crate::providers::bedrock::AwsCredentials,
    pub(super) region: String,
}
