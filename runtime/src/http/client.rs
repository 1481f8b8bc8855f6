//! [`Client`]: sends a [`Request`] to an [`Endpoint`], with retries, and
//! decodes the reply.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::HeaderMap;

use super::endpoint::Endpoint;
use super::error::{api_error, describe, request_id, ApiError, ClientError, MAX_ERROR_BODY};
use super::reply::{head, is_json, replies_name_no_model, stamped, Reply, Sent};
use super::stream::ReplyStream;
use super::trace::Trace;
use crate::providers::{Api, Encoded, Request, StreamError, DEFAULT_MAX_EVENT};

/// The `User-Agent` of every request (some gateways refuse a request
/// without one); a caller's own header given with
/// [`Endpoint::with_header`] replaces it.
pub const USER_AGENT: &str = concat!("agentmsg/", env!("CARGO_PKG_VERSION"));

/// When a request is tried again: how many times, and how long to wait.
///
/// A request is retried on a connection error or timeout, and on the
/// statuses 408, 409, 429, 500 to 504 and 529, never on another (400, 401,
/// 403, 404…), unless the provider says otherwise with `x-should-retry:
/// true` or `false`, which is obeyed either way (as the official SDKs do).
/// Retries happen before any byte of the reply reaches the caller, never
/// after. The wait is what the provider asked for (`retry-after-ms`,
/// `retry-after` in seconds or as an HTTP date, Gemini's `RetryInfo`) when
/// it is more than zero, or else an exponential backoff with jitter: retry
/// `n` (from 0) waits between ¾ and all of `initial × 2ⁿ`, at most
/// `max_delay`. With the defaults that is the official Python SDKs' policy
/// (`tests/http/sdk_faults.rs` measures both against one server); the
/// differences are in the [module's fault table](super#faults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retry {
    /// How many times a request may be retried (0: never).
    pub max_retries: u32,
    /// The first backoff.
    pub initial: Duration,
    /// The longest backoff.
    pub max_delay: Duration,
    /// The longest wait a provider may ask for; a longer one is not waited
    /// for, and its error is returned.
    pub max_wait: Duration,
}

impl Default for Retry {
    /// Two retries, from 0.5 s up to 8 s; a provider's ask honoured up to 60 s.
    fn default() -> Self {
        Self {
            max_retries: 2,
            initial: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_wait: Duration::from_secs(60),
        }
    }
}

impl Retry {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The default policy with this budget.
    pub fn with_max_retries(max_retries: u32) -> Self {
        Self {
            max_retries,
            ..Self::default()
        }
    }

    /// The same policy with this first and longest backoff.
    #[must_use]
    pub fn with_backoff(mut self, initial: Duration, max_delay: Duration) -> Self {
        self.initial = initial;
        self.max_delay = max_delay;
        self
    }

    /// The same policy, waiting at most `max_wait` when a provider asks.
    #[must_use]
    pub fn with_max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// The wait before retry `attempt` (0-based), or `None` when the
    /// provider asked for more than [`max_wait`](Self::max_wait). An ask of
    /// zero (a `retry-after` date already past, `retry-after: 0`) is no ask,
    /// as for the SDKs: a clock ahead of the server's must not turn the
    /// backoff off.
    fn delay(&self, attempt: u32, asked: Option<Duration>) -> Option<Duration> {
        if let Some(asked) = asked.filter(|asked| !asked.is_zero()) {
            return (asked <= self.max_wait).then_some(asked);
        }
        let full = self
            .initial
            .saturating_mul(1u32.checked_shl(attempt.min(30)).unwrap_or(u32::MAX))
            .min(self.max_delay);
        // Up to a quarter less, at random (the SDKs' jitter).
        let quarter = u64::try_from((full / 4).as_nanos()).unwrap_or(u64::MAX);
        Some(full - Duration::from_nanos(fastrand::u64(0..=quarter)))
    }
}

/// Sends requests for one [`Endpoint`]: [`complete`](Self::complete) for a
/// whole reply, [`stream`](Self::stream) for its events as they come.
///
/// Cloning is cheap: clones share the connection pool.
///
/// ```no_run
/// # extern crate agentmsg_runtime as agentmsg;
/// # async fn run() -> Result<(), agentmsg::http::ClientError> {
/// use agentmsg::http::Client;
/// use agentmsg::providers::Request;
/// use agentmsg::Message;
/// let client = Client::anthropic()?; // ANTHROPIC_API_KEY
/// let reply = client
///     .complete(&Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]))
///     .await?;
/// println!("{}", reply.message.text_content());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
    retry: Retry,
    idle_timeout: Option<Duration>,
    max_event: usize,
    on_payload: Option<PayloadHook>,
    record_content: bool,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_event", &self.max_event)
            .finish_non_exhaustive()
    }
}

/// A function that edits each encoded request body before it is sent.
#[derive(Clone)]
struct PayloadHook(std::sync::Arc<dyn Fn(&mut serde_json::Value) + Send + Sync>);

impl fmt::Debug for PayloadHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PayloadHook")
    }
}

/// Builds a [`Client`] with other timeouts, retries or size limit.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    endpoint: Endpoint,
    retry: Retry,
    connect_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    pool_idle_timeout: Option<Duration>,
    max_event: usize,
    on_payload: Option<PayloadHook>,
    record_content: bool,
}

impl ClientBuilder {
    /// Whether the request's span (feature `tracing`) records the messages
    /// sent and received (`gen_ai.input.messages`,
    /// `gen_ai.output.messages`). Off by default: prompts and answers often
    /// hold what must not reach a log.
    #[must_use]
    pub fn record_content(mut self, record: bool) -> Self {
        self.record_content = record;
        self
    }

    /// A function that edits every request body once it is encoded, before
    /// it is sent (pi's `onPayload`): any field a provider takes can be set,
    /// changed or removed without waiting for agentmsg to model it. For a
    /// field of one request, [`Request::extra_body`] does the same.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::http::{Client, Endpoint};
    /// let client = Client::builder(Endpoint::openai_compatible("http://localhost:8000/v1"))
    ///     .on_payload(|body| {
    ///         body["chat_template_kwargs"] = serde_json::json!({"enable_thinking": false});
    ///     })
    ///     .build()?;
    /// # Ok::<(), agentmsg::http::ClientError>(())
    /// ```
    #[must_use]
    pub fn on_payload(
        mut self,
        hook: impl Fn(&mut serde_json::Value) + Send + Sync + 'static,
    ) -> Self {
        self.on_payload = Some(PayloadHook(std::sync::Arc::new(hook)));
        self
    }

    /// How long an unused connection is kept for the next request (default
    /// 90 s; `None`: kept until the server closes it).
    #[must_use]
    pub fn pool_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.pool_idle_timeout = timeout;
        self
    }

    /// The retry policy (default: [`Retry::default`]).
    #[must_use]
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// How long connecting may take (default 10 s; `None`: no limit).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a reply may send nothing: before its headers, and between
    /// two chunks of its body (default 120 s; `None`: no limit).
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The size limit of one stream event, and of a whole reply body
    /// (default [`DEFAULT_MAX_EVENT`]).
    #[must_use]
    pub fn max_event(mut self, max: usize) -> Self {
        self.max_event = max;
        self
    }

    /// The client.
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] when the HTTP client cannot be built (no TLS
    /// backend).
    pub fn build(self) -> Result<Client, ClientError> {
        let mut http = reqwest::Client::builder()
            .pool_idle_timeout(self.pool_idle_timeout)
            .redirect(super::redirect::policy())
            .user_agent(USER_AGENT);
        if let Some(timeout) = self.connect_timeout {
            http = http.connect_timeout(timeout);
        }
        let http = http
            .build()
            .map_err(|e| ClientError::Endpoint(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            http,
            endpoint: self.endpoint,
            retry: self.retry,
            idle_timeout: self.idle_timeout,
            max_event: self.max_event,
            on_payload: self.on_payload,
            record_content: self.record_content,
        })
    }
}

impl Client {
    /// A builder for a client of `endpoint`.
    pub fn builder(endpoint: Endpoint) -> ClientBuilder {
        ClientBuilder {
            endpoint,
            retry: Retry::default(),
            connect_timeout: Some(Duration::from_secs(10)),
            idle_timeout: Some(Duration::from_secs(120)),
            pool_idle_timeout: Some(Duration::from_secs(90)),
            max_event: DEFAULT_MAX_EVENT,
            on_payload: None,
            record_content: false,
        }
    }

    /// A client of `endpoint` with the default settings.
    ///
    /// # Errors
    /// As [`ClientBuilder::build`].
    pub fn new(endpoint: Endpoint) -> Result<Self, ClientError> {
        Self::builder(endpoint).build()
    }

    /// A client of `endpoint`, failing early when it has no key and needs one.
    fn keyed(endpoint: Endpoint) -> Result<Self, ClientError> {
        endpoint.headers(false)?;
        Self::new(endpoint)
    }

    /// OpenAI Chat Completions, keyed from `OPENAI_API_KEY`.
    ///
    /// # Errors
    /// [`ClientError::MissingKey`] when the variable is not set.
    #[cfg(feature = "openai-chat")]
    pub fn openai_chat() -> Result<Self, ClientError> {
        Self::keyed(Endpoint::openai_chat())
    }

    /// OpenAI Responses, keyed from `OPENAI_API_KEY`.
    ///
    /// # Errors
    /// [`ClientError::MissingKey`] when the variable is not set.
    #[cfg(feature = "openai-responses")]
    pub fn openai_responses() -> Result<Self, ClientError> {
        Self::keyed(Endpoint::openai_responses())
    }

    /// Anthropic Messages, keyed from `ANTHROPIC_API_KEY`.
    ///
    /// # Errors
    /// [`ClientError::MissingKey`] when the variable is not set.
    #[cfg(feature = "anthropic")]
    pub fn anthropic() -> Result<Self, ClientError> {
        Self::keyed(Endpoint::anthropic())
    }

    /// Gemini, keyed from `GEMINI_API_KEY` or `GOOGLE_API_KEY`.
    ///
    /// # Errors
    /// [`ClientError::MissingKey`] when neither is set.
    #[cfg(feature = "gemini")]
    pub fn gemini() -> Result<Self, ClientError> {
        Self::keyed(Endpoint::gemini())
    }

    /// Amazon Bedrock Converse in the region of `AWS_REGION`, with the
    /// Bedrock API key of `AWS_BEARER_TOKEN_BEDROCK` or SigV4-signed with the
    /// credentials of `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`
    /// ([`Endpoint::bedrock`]).
    ///
    /// # Errors
    /// [`ClientError::MissingKey`] when neither is set.
    #[cfg(feature = "bedrock")]
    pub fn bedrock() -> Result<Self, ClientError> {
        Self::keyed(Endpoint::bedrock())
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The API it speaks.
    pub fn api(&self) -> Api {
        self.endpoint.api()
    }

    /// Sends `request` and decodes the whole reply.
    ///
    /// # Errors
    /// [`ClientError`]: the request cannot be encoded, the provider answered
    /// with an error (after the retries), the connection failed, the body is
    /// not the API's.
    pub async fn complete(&self, request: &Request<'_>) -> Result<Reply, ClientError> {
        let sent = self.send(request, false).await?;
        self.whole(sent).await
    }

    /// Reads a whole reply body (at most the size limit) and decodes it.
    async fn whole(&self, mut sent: Sent) -> Result<Reply, ClientError> {
        let mut trace = std::mem::take(&mut sent.trace);
        let result = self.read_whole(sent, &mut trace).await;
        match &result {
            Ok(reply) => trace.finish(&reply.message),
            Err(error) => trace.fail(error),
        }
        result
    }

    async fn read_whole(&self, sent: Sent, trace: &mut Trace) -> Result<Reply, ClientError> {
        let request_id = sent.request_id.clone();
        let broke_off = |event: usize, message: String, timeout: bool| ClientError::Transport {
            event,
            message,
            timeout,
            partial: Box::default(),
            request_id: request_id.clone(),
        };
        let (body, end) = read_capped(sent.response, self.idle_timeout, self.max_event, || {
            trace.chunk();
        })
        .await;
        match end {
            BodyEnd::Whole => {}
            BodyEnd::Broke { message, timeout } => return Err(broke_off(0, message, timeout)),
            BodyEnd::Over { at } => {
                return Err(ClientError::Decode {
                    source: StreamError::Frame(crate::providers::FrameError {
                        event: 0,
                        offset: at as u64,
                        kind: crate::providers::FrameErrorKind::TooLarge {
                            limit: self.max_event,
                        },
                    }),
                    partial: Box::default(),
                    request_id,
                });
            }
        }
        let text = String::from_utf8_lossy(&body);
        let (mut message, warnings) = match self.api().decode_response(&text) {
            Ok(decoded) => decoded,
            Err(source) => {
                let source = StreamError::Response(source);
                return Err(match &sent.content_type {
                    // Said when a stream was asked for and this came instead.
                    Some(content_type) if sent.streamed => ClientError::NotAStream {
                        content_type: content_type.clone(),
                        head: head(&body),
                        source: Box::new(source),
                        request_id,
                    },
                    _ => ClientError::Decode {
                        source,
                        partial: Box::default(),
                        request_id,
                    },
                });
            }
        };
        stamped(&mut message, self.endpoint.provider(), &sent.model);
        Ok(Reply {
            message,
            warnings,
            report: sent.report,
            options: sent.options,
            request_id: sent.request_id,
            rate_limits: sent.rate_limits,
            retries: sent.retries,
        })
    }

    /// Sends `request` for a streamed reply. Once the provider has answered
    /// with success, the [`ReplyStream`] gives the reply's events as they
    /// come, then the whole [`Reply`]. Dropping it closes the connection.
    ///
    /// # Errors
    /// As [`complete`](Self::complete), for what happens before the reply
    /// streams; what breaks off after comes from the stream.
    pub async fn stream(&self, request: &Request<'_>) -> Result<ReplyStream, ClientError> {
        let mut sent = self.send(request, true).await?;
        // A gateway that answers a stream request with the whole reply as
        // JSON (LiteLLM does): the reply is decoded whole, and the stream
        // gives just it.
        if sent.content_type.as_deref().is_some_and(is_json) {
            sent.streamed = true;
            return Ok(ReplyStream::whole(self.whole(sent).await?));
        }
        Ok(ReplyStream::new(
            sent,
            self.api(),
            self.max_event,
            self.idle_timeout,
            self.endpoint.provider().map(str::to_owned),
        ))
    }

    /// Encodes and sends `request` until the provider answers with success,
    /// an error not worth a retry, or the retries run out.
    async fn send(&self, request: &Request<'_>, stream: bool) -> Result<Sent, ClientError> {
        let model = self.endpoint.model(&request.model);
        let provider = match (&request.provider, self.endpoint.provider()) {
            (None, Some(provider)) => Some(provider),
            _ => None,
        };
        let request = if request.stream != stream || model != request.model || provider.is_some() {
            let mut changed = request.for_model(model);
            changed.stream = stream;
            if let Some(provider) = provider {
                changed.provider = Some(provider.to_owned());
            }
            Cow::Owned(changed)
        } else {
            Cow::Borrowed(request)
        };
        let Encoded {
            mut body,
            report,
            options,
            ..
        } = self.api().encode(&request)?;
        if let Some(PayloadHook(hook)) = &self.on_payload {
            hook(&mut body);
        }
        let url = self.endpoint.url(&request.model, stream);
        #[cfg(all(feature = "vertex", feature = "anthropic"))]
        let (url, body) = super::vertex::claude(&self.endpoint, url, body, &request.model, stream);
        let headers = self.endpoint.headers(stream)?;
        let trace = Trace::start(
            self.api(),
            self.endpoint.provider(),
            &request,
            &url,
            &body,
            self.record_content,
        );
        let body = Bytes::from(serde_json::to_vec(&body).map_err(|e| {
            ClientError::Endpoint(format!("cannot serialize the request body: {e}"))
        })?);
        #[cfg(feature = "bedrock")]
        let headers = super::bedrock::signed(&self.endpoint, headers, &url, &body, stream)?;
        #[cfg(feature = "vertex")]
        let headers = super::vertex::authorized(&self.endpoint, headers).await?;
        let (response, retries) = match self.attempts(&url, &headers, &body, &trace).await {
            Ok(answered) => answered,
            Err(error) => {
                trace.fail(&error);
                return Err(error);
            }
        };
        let headers = response.headers();
        Ok(Sent {
            url: super::redact::url(&url),
            content_type: headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            streamed: false,
            request_id: request_id(headers),
            rate_limits: rate_limits(headers),
            response,
            report,
            options,
            retries,
            trace,
            model: if replies_name_no_model(self.api()) {
                request.model.clone()
            } else {
                String::new()
            },
        })
    }

    /// Sends `body` until the provider answers with success (the response
    /// and how many retries it took), an error not worth a retry, or the
    /// retries run out.
    async fn attempts(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Bytes,
        trace: &Trace,
    ) -> Result<(reqwest::Response, u32), ClientError> {
        let mut retries = 0;
        loop {
            let sending = self
                .http
                .post(url)
                .headers(headers.clone())
                .body(body.clone())
                .send();
            let error = match idle(self.idle_timeout, sending).await {
                Some(Ok(response)) if response.status().is_success() => {
                    return Ok((response, retries));
                }
                Some(Ok(response)) => {
                    let status = response.status().as_u16();
                    let headers = response.headers().clone();
                    let (text, cut) = self.error_body(response).await;
                    let error = api_error(status, url, &headers, &text, cut, retries);
                    if !error.is_retryable() {
                        return Err(ClientError::Api(Box::new(error)));
                    }
                    Failure::Status(error)
                }
                Some(Err(e)) if e.is_builder() => {
                    return Err(ClientError::Endpoint(describe(&e)));
                }
                Some(Err(e)) if e.is_redirect() => {
                    return Err(match super::redirect::refused(&e) {
                        Some(refused) => ClientError::Redirect {
                            status: refused.status,
                            url: super::redact::url(url),
                            location: refused.location,
                            reason: refused.reason.to_owned(),
                        },
                        None => ClientError::Endpoint(describe(&e)),
                    });
                }
                Some(Err(e)) => Failure::Connect(describe(&e), e.is_timeout()),
                None => Failure::Connect("no answer for the idle timeout".to_owned(), true),
            };
            let asked = match &error {
                Failure::Status(e) => e.retry_after,
                Failure::Connect(..) => None,
            };
            let wait = (retries < self.retry.max_retries)
                .then(|| self.retry.delay(retries, asked))
                .flatten();
            let Some(wait) = wait else {
                return Err(match error {
                    Failure::Status(e) => ClientError::Api(Box::new(e)),
                    Failure::Connect(message, timeout) => ClientError::Connect {
                        url: super::redact::url(url),
                        message,
                        timeout,
                        retries,
                    },
                });
            };
            log::debug!(
                "{} request failed ({}), retry {} in {wait:?}",
                self.api(),
                match &error {
                    Failure::Status(e) => e.status.to_string(),
                    Failure::Connect(message, _) => message.clone(),
                },
                retries + 1
            );
            tokio::time::sleep(wait).await;
            retries += 1;
            trace.retried(retries);
        }
    }
}

impl Client {
    /// The body of an error reply, at most [`MAX_ERROR_BODY`] bytes of it,
    /// and whether there was more (left unread: the connection is dropped).
    /// A body that breaks off or stalls gives what came.
    async fn error_body(&self, response: reqwest::Response) -> (String, bool) {
        let (body, end) = read_capped(response, self.idle_timeout, MAX_ERROR_BODY, || {}).await;
        let cut = matches!(end, BodyEnd::Over { .. });
        (String::from_utf8_lossy(&body).into_owned(), cut)
    }
}

/// How a [`read_capped`] read of a body ended.
enum BodyEnd {
    /// The body came whole.
    Whole,
    /// A chunk took the body past the limit; `at`: the bytes before it.
    Over { at: usize },
    /// The body broke off, or no bytes came for the idle timeout.
    Broke { message: String, timeout: bool },
}

/// A reply's body, at most `limit` bytes of it (a chunk that goes past the
/// limit is kept up to it and the rest left unread), and how the read ended;
/// `on_chunk` is called as each chunk comes.
async fn read_capped(
    response: reqwest::Response,
    idle_timeout: Option<Duration>,
    limit: usize,
    mut on_chunk: impl FnMut(),
) -> (Vec<u8>, BodyEnd) {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    let end = loop {
        let chunk = match idle(idle_timeout, chunks.next()).await {
            None => {
                break BodyEnd::Broke {
                    message: "no bytes for the idle timeout".to_owned(),
                    timeout: true,
                }
            }
            Some(None) => break BodyEnd::Whole,
            Some(Some(Err(e))) => {
                break BodyEnd::Broke {
                    message: describe(&e),
                    timeout: e.is_timeout(),
                }
            }
            Some(Some(Ok(chunk))) => chunk,
        };
        on_chunk();
        let room = limit - body.len();
        if chunk.len() > room {
            let at = body.len();
            body.extend_from_slice(&chunk[..room]);
            break BodyEnd::Over { at };
        }
        body.extend_from_slice(&chunk);
    };
    (body, end)
}

/// Why one try failed.
enum Failure {
    Status(ApiError),
    Connect(String, bool),
}

/// `future`, or `None` when `timeout` runs out first.
pub(crate) async fn idle<F: std::future::Future>(
    timeout: Option<Duration>,
    future: F,
) -> Option<F::Output> {
    match timeout {
        Some(timeout) => tokio::time::timeout(timeout, future).await.ok(),
        None => Some(future.await),
    }
}

/// The rate-limit headers among `headers`, by name.
fn rate_limits(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| name.as_str().contains("ratelimit") || name.as_str() == "retry-after")
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect()
}
