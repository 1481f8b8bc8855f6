//! [`ScriptedModel`]: a model for tests that answers from a script (pi's
//! "faux" provider), through the real Anthropic codecs.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use serde_json::{json, Value};

use super::model::{BoxModelStream, Model, ModelStream, StreamFuture};
use crate::http::{ClientError, Reply, StreamItem};
use crate::project::Report;
use crate::providers::{Api, OptionChange, Request, StreamError, StreamEvent, StreamReader};
use crate::{AssistantContent, AssistantMessage, Message, StopReason};

type ReplyFn = dyn FnMut(&Request<'_>) -> AssistantMessage + Send;

enum Script {
    Replies(VecDeque<AssistantMessage>),
    Function(Box<ReplyFn>),
}

/// A model that answers from a list of replies or a function, for tests that
/// run offline in milliseconds.
///
/// It is a stand-in for a real provider, not a shortcut around one: each
/// request is encoded by the API's encoder (Anthropic Messages by default,
/// OpenAI Chat Completions with [`with_api`](Self::with_api); a tool schema or
/// an option the API refuses fails here as it would there), and the reply is
/// written as the API's server-sent events ([`ScriptedModel::sse_for`]) and
/// read back, in small chunks, by the same [`StreamReader`] an
/// [`http::Client`](crate::http::Client) uses. The loop sees the same
/// [`StreamItem`]s, partial messages and usage as from a real reply. A reply
/// given without usage is charged an estimate (pi's characters over four).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agentmsg::agent::{Model, ScriptedModel};
/// use agentmsg::http::StreamItem;
/// use agentmsg::providers::Request;
/// use agentmsg::{AssistantMessage, Message};
/// use futures_util::StreamExt;
///
/// let model = ScriptedModel::new([AssistantMessage::new(["Hello there."])]);
/// let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]);
/// let mut stream = model.stream(&request).await?;
/// let mut reply = None;
/// while let Some(item) = stream.next().await {
///     if let StreamItem::Reply(whole) = item? {
///         reply = Some(whole.message);
///     }
/// }
/// let reply = reply.unwrap();
/// assert_eq!(reply.text_content(), "Hello there.");
/// assert_eq!(reply.api, "anthropic-messages");
/// assert!(reply.usage.output > 0);
/// assert_eq!(model.requests()[0]["messages"][0]["content"][0]["text"], "Hi");
/// # Ok::<(), agentmsg::http::ClientError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ScriptedModel {
    script: Arc<Mutex<Script>>,
    requests: Arc<Mutex<Vec<Value>>>,
    chunk: usize,
    delay: Option<Duration>,
    api: Api,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("requests", &self.requests.lock().map(|r| r.len()).ok())
            .field("chunk", &self.chunk)
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// A model that gives these replies, one per request, in order. A request
    /// past the last one fails.
    pub fn new(replies: impl IntoIterator<Item = AssistantMessage>) -> Self {
        Self::with_script(Script::Replies(replies.into_iter().collect()))
    }

    /// A model whose reply to each request is `reply(request)`.
    pub fn from_fn(reply: impl FnMut(&Request<'_>) -> AssistantMessage + Send + 'static) -> Self {
        Self::with_script(Script::Function(Box::new(reply)))
    }

    fn with_script(script: Script) -> Self {
        Self {
            script: Arc::new(Mutex::new(script)),
            requests: Arc::default(),
            chunk: 16,
            delay: None,
            api: Api::Anthropic,
        }
    }

    /// The same model speaking `api`: Anthropic Messages (the default) or,
    /// with the `openai-chat` feature, OpenAI Chat Completions.
    ///
    /// # Panics
    /// For another API, which it cannot write a stream of.
    #[must_use]
    pub fn with_api(mut self, api: Api) -> Self {
        assert!(
            Self::speaks(api),
            "the scripted model speaks anthropic-messages and openai-completions, not {api}"
        );
        self.api = api;
        self
    }

    fn speaks(api: Api) -> bool {
        // With Anthropic the only API built, the last arm is unreachable.
        #[allow(unreachable_patterns)]
        match api {
            Api::Anthropic => true,
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => true,
            _ => false,
        }
    }

    /// The same model, feeding the decoder `bytes` bytes at a time (default
    /// 16, so every block streams in several deltas).
    #[must_use]
    pub fn with_chunk_size(mut self, bytes: usize) -> Self {
        self.chunk = bytes.max(1);
        self
    }

    /// The same model, waiting `delay` before each chunk (for tests that
    /// cancel a reply while it streams).
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// The request bodies it was sent, as the API's encoder wrote them.
    pub fn requests(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many scripted replies are left (`None` for a function).
    pub fn remaining(&self) -> Option<usize> {
        match &*self.script.lock().unwrap_or_else(PoisonError::into_inner) {
            Script::Replies(replies) => Some(replies.len()),
            Script::Function(_) => None,
        }
    }

    /// `reply` as the server-sent events of an Anthropic Messages stream for
    /// `model`: what a loopback server serves to stand in for Anthropic.
    /// Text and thinking come in deltas of a few words, a tool call's
    /// arguments in two pieces.
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] naming the block, for a block Anthropic does
    /// not stream (an image, another provider's block).
    pub fn sse(reply: &AssistantMessage, model: &str) -> Result<String, ClientError> {
        let mut out = String::new();
        let usage = &reply.usage;
        let start = json!({
            "type": "message_start",
            "message": {
                "id": reply.response_id.clone().unwrap_or_else(|| "msg_scripted".to_owned()),
                "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input,
                    "cache_read_input_tokens": usage.cache_read,
                    "cache_creation_input_tokens": usage.cache_write,
                    "output_tokens": 1,
                },
            },
        });
        event(&mut out, "message_start", &start);
        for (index, block) in reply.content.iter().enumerate() {
            let (first, deltas) = match block {
                AssistantContent::Text(text) => (
                    json!({"type": "text", "text": ""}),
                    pieces(&text.text)
                        .map(|p| json!({"type": "text_delta", "text": p}))
                        .collect(),
                ),
                AssistantContent::Thinking(thinking) => {
                    let mut deltas: Vec<Value> = pieces(&thinking.thinking)
                        .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                        .collect();
                    if let Some(signature) = &thinking.signature {
                        deltas.push(json!({"type": "signature_delta", "signature": signature}));
                    }
                    (json!({"type": "thinking", "thinking": ""}), deltas)
                }
                AssistantContent::RedactedThinking(redacted) => (
                    json!({"type": "redacted_thinking", "data": redacted.data}),
                    Vec::new(),
                ),
                AssistantContent::ToolCall(call) => {
                    let deltas = halves(call.arguments.as_str())
                        .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                        .collect();
                    (
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                        deltas,
                    )
                }
                other => {
                    return Err(ClientError::Endpoint(format!(
                        "the scripted model cannot stream content[{index}] (a `{}` block) as anthropic-messages",
                        other.kind()
                    )))
                }
            };
            let start =
                json!({"type": "content_block_start", "index": index, "content_block": first});
            event(&mut out, "content_block_start", &start);
            for delta in deltas {
                let delta = json!({"type": "content_block_delta", "index": index, "delta": delta});
                event(&mut out, "content_block_delta", &delta);
            }
            let stop = json!({"type": "content_block_stop", "index": index});
            event(&mut out, "content_block_stop", &stop);
        }
        let stop_reason = match reply.stop_reason {
            StopReason::ToolUse => "tool_use",
            StopReason::Length => "max_tokens",
            StopReason::GuardRail => "refusal",
            StopReason::Paused => "pause_turn",
            _ => "end_turn",
        };
        let delta = json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": usage.output},
        });
        event(&mut out, "message_delta", &delta);
        event(&mut out, "message_stop", &json!({"type": "message_stop"}));
        Ok(out)
    }

    /// `reply` as the stream `api` sends for `model`: [`sse`](Self::sse) for
    /// Anthropic, `chat.completion.chunk` events ending in `[DONE]` for
    /// OpenAI Chat Completions (usage in the last chunk, as
    /// `stream_options.include_usage` asks).
    ///
    /// # Errors
    /// [`ClientError::Endpoint`] naming the block or the API, for what the
    /// API does not stream.
    pub fn sse_for(api: Api, reply: &AssistantMessage, model: &str) -> Result<String, ClientError> {
        // With Anthropic the only API built, the last arm is unreachable.
        #[allow(unreachable_patterns)]
        match api {
            Api::Anthropic => Self::sse(reply, model),
            #[cfg(feature = "openai-chat")]
            Api::OpenaiChat => openai_chat_sse(reply, model),
            other => Err(ClientError::Endpoint(format!(
                "the scripted model cannot stream {other}"
            ))),
        }
    }

    fn next_reply(
        &self,
        request: &Request<'_>,
        number: usize,
    ) -> Result<AssistantMessage, ClientError> {
        let mut script = self.script.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *script {
            Script::Replies(replies) => replies.pop_front().ok_or_else(|| {
                ClientError::Endpoint(format!(
                    "the scripted model has no reply left for request {number}"
                ))
            }),
            Script::Function(reply) => Ok(reply(request)),
        }
    }
}

/// `reply` as OpenAI Chat Completions chunks.
#[cfg(feature = "openai-chat")]
fn openai_chat_sse(reply: &AssistantMessage, model: &str) -> Result<String, ClientError> {
    let id = reply
        .response_id
        .clone()
        .unwrap_or_else(|| "chatcmpl-scripted".to_owned());
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = String::new();
    let mut data = |value: &Value| {
        out.push_str("data: ");
        out.push_str(&value.to_string());
        out.push_str("\n\n");
    };
    data(&chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    let mut calls = 0;
    for (index, block) in reply.content.iter().enumerate() {
        match block {
            AssistantContent::Text(text) => {
                for piece in pieces(&text.text) {
                    data(&chunk(json!({"content": piece}), Value::Null));
                }
            }
            AssistantContent::ToolCall(call) => {
                let start = json!({"tool_calls": [{"index": calls, "id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": ""}}]});
                data(&chunk(start, Value::Null));
                for piece in halves(call.arguments.as_str()) {
                    let delta = json!({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]});
                    data(&chunk(delta, Value::Null));
                }
                calls += 1;
            }
            other => {
                return Err(ClientError::Endpoint(format!(
                    "the scripted model cannot stream content[{index}] (a `{}` block) as openai-completions",
                    other.kind()
                )))
            }
        }
    }
    let finish = match reply.stop_reason {
        StopReason::ToolUse => "tool_calls",
        StopReason::Length => "length",
        StopReason::GuardRail => "content_filter",
        _ => "stop",
    };
    data(&chunk(json!({}), json!(finish)));
    let usage = &reply.usage;
    data(&json!({
        "id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
        "usage": {
            "prompt_tokens": usage.input + usage.cache_read,
            "completion_tokens": usage.output,
            "total_tokens": usage.input + usage.cache_read + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        },
    }));
    out.push_str("data: [DONE]\n\n");
    Ok(out)
}

/// Splits `text` after each third space, so a block streams in several deltas.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest
            .match_indices(' ')
            .nth(2)
            .map_or(rest.len(), |(i, _)| i + 1);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// `text` in two pieces, cut at a character boundary near its middle (the
/// empty ones left out): how a tool call's arguments stream.
fn halves(text: &str) -> impl Iterator<Item = &str> {
    let cut = (0..=text.len() / 2)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let (first, second) = text.split_at(cut);
    [first, second].into_iter().filter(|p| !p.is_empty())
}

fn event(out: &mut String, name: &str, data: &Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

impl Model for ScriptedModel {
    fn api(&self) -> Api {
        self.api
    }

    fn stream<'a>(&'a self, request: &'a Request<'a>) -> StreamFuture<'a> {
        Box::pin(async move {
            let streamed = request.reborrow().with_stream(true);
            let encoded = self.api.encode(&streamed)?;
            let number = {
                let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
                requests.push(encoded.body.value().clone());
                requests.len()
            };
            let mut reply = self.next_reply(request, number)?;
            if reply.usage == crate::Usage::default() {
                reply.usage.input = (encoded.body.value().to_string().len() / 4) as u64;
                reply.usage.output = Message::Assistant(reply.clone()).estimated_tokens().max(1);
            }
            let bytes = Self::sse_for(self.api, &reply, &request.model)?.into_bytes();
            let stream = ScriptedStream {
                bytes,
                at: 0,
                chunk: self.chunk,
                delay: self.delay,
                sleep: None,
                reader: Some(StreamReader::new(self.api)),
                ready: VecDeque::new(),
                report: encoded.report,
                options: encoded.options,
                request_id: format!("scripted-{number}"),
            };
            Ok(Box::new(stream) as BoxModelStream)
        })
    }
}

/// A scripted reply's bytes, fed to the real decoder a chunk at a time.
struct ScriptedStream {
    bytes: Vec<u8>,
    at: usize,
    chunk: usize,
    delay: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    reader: Option<StreamReader>,
    ready: VecDeque<Result<StreamItem, ClientError>>,
    report: Report,
    options: Vec<OptionChange>,
    request_id: String,
}

impl ScriptedStream {
    fn decode_error(&mut self, source: StreamError) {
        let partial = self.reader.take().map(|r| r.partial()).unwrap_or_default();
        self.ready.push_back(Err(ClientError::Decode {
            source,
            partial: Box::new(partial),
            request_id: Some(self.request_id.clone()),
        }));
    }

    fn feed(&mut self) {
        let Some(reader) = &mut self.reader else {
            return;
        };
        let end = (self.at + self.chunk).min(self.bytes.len());
        let failed = queue(&mut self.ready, reader.feed(&self.bytes[self.at..end]));
        self.at = end;
        if let Some(e) = failed {
            return self.decode_error(e);
        }
        if self.at < self.bytes.len() {
            return;
        }
        let Some(mut reader) = self.reader.take() else {
            return;
        };
        let failed = queue(&mut self.ready, reader.end());
        let finished = match failed {
            Some(e) => Err(e),
            None => reader.finish(),
        };
        match finished {
            Ok((message, warnings)) => {
                let reply = Reply {
                    message,
                    warnings,
                    report: std::mem::take(&mut self.report),
                    options: std::mem::take(&mut self.options),
                    request_id: Some(self.request_id.clone()),
                    rate_limits: BTreeMap::new(),
                    retries: 0,
                };
                self.ready.push_back(Ok(StreamItem::Reply(Box::new(reply))));
            }
            Err(source) => {
                self.ready.push_back(Err(ClientError::Decode {
                    source,
                    partial: Box::default(),
                    request_id: Some(self.request_id.clone()),
                }));
            }
        }
    }
}

/// Queues the decoded `events` in `ready`; the last decode error, if any.
fn queue(
    ready: &mut VecDeque<Result<StreamItem, ClientError>>,
    events: impl IntoIterator<Item = Result<StreamEvent, StreamError>>,
) -> Option<StreamError> {
    let mut failed = None;
    for event in events {
        match event {
            Ok(event) => ready.push_back(Ok(StreamItem::Event(event))),
            Err(e) => failed = Some(e),
        }
    }
    failed
}

impl Stream for ScriptedStream {
    type Item = Result<StreamItem, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.reader.is_none() {
                return Poll::Ready(None);
            }
            if let Some(delay) = this.delay {
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
            }
            this.feed();
        }
    }
}

impl ModelStream for ScriptedStream {
    fn partial(&self) -> Option<AssistantMessage> {
        self.reader.as_ref().map(StreamReader::partial)
    }
}
