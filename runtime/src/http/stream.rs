//! [`ReplyStream`]: a streamed reply's events, then the whole reply.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;

use super::error::{describe, ApiError, ClientError};
use super::reply::{head, is_stream, Body, Reply, Sent};
use super::trace::Trace;
use crate::project::Report;
use crate::providers::{Api, OptionChange, StreamEvent, StreamReader};

/// One item of a [`ReplyStream`].
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamItem {
    /// An event of the reply, as it came.
    Event(StreamEvent),
    /// The whole reply, last.
    Reply(Box<Reply>),
}

/// A streamed reply ([`Client::stream`](super::Client::stream)): a
/// [`Stream`] of [`StreamItem`]s, the reply's events as they come and then the
/// whole [`Reply`]. An error ends it; a transport error names the event it
/// happened at and holds the message so far ([`ClientError::partial`]).
///
/// Dropping it closes the connection. When no bytes come for the client's
/// idle timeout, it ends with a [`ClientError::Transport`] error whose
/// `timeout` is set.
pub struct ReplyStream {
    body: Option<Body>,
    reader: Option<StreamReader>,
    ready: VecDeque<Result<StreamItem, ClientError>>,
    idle_timeout: Option<Duration>,
    /// Fires at the idle deadline as it was when last armed; bytes that came
    /// since only move `last_bytes`, and the timer is armed again from there
    /// when it fires (resetting a timer takes the timer wheel's lock, once
    /// per chunk otherwise).
    idle: Option<Pin<Box<tokio::time::Sleep>>>,
    /// When bytes last came.
    last_bytes: tokio::time::Instant,
    report: Report,
    options: Vec<OptionChange>,
    request_id: Option<String>,
    rate_limits: BTreeMap<String, String>,
    retries: u32,
    url: String,
    /// The reply's content type (empty when it had none).
    content_type: String,
    /// The body's first bytes, kept while no event was read, for an error
    /// that says what came instead of a stream.
    head: Vec<u8>,
    /// The provider the reply is stamped with (an OpenAI-compatible
    /// endpoint's).
    provider: Option<String>,
    /// The model the request named, for a reply that names none.
    model: String,
    /// The request's span (feature `tracing`).
    trace: Trace,
}

/// How many of a body's first bytes are kept for an error.
const HEAD: usize = 256;

impl fmt::Debug for ReplyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplyStream")
            .field("api", &self.reader.as_ref().map(StreamReader::api))
            .field("request_id", &self.request_id)
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

impl ReplyStream {
    pub(crate) fn new(
        sent: Sent,
        api: Api,
        max_event: usize,
        idle_timeout: Option<Duration>,
        provider: Option<String>,
    ) -> Self {
        Self {
            provider,
            model: sent.model,
            trace: sent.trace,
            url: sent.url,
            content_type: sent.content_type.unwrap_or_default(),
            head: Vec::new(),
            body: Some(Box::pin(sent.response.bytes_stream())),
            reader: Some(StreamReader::with_max_event(api, max_event)),
            ready: VecDeque::new(),
            idle_timeout,
            idle: idle_timeout.map(|t| Box::pin(tokio::time::sleep(t))),
            last_bytes: tokio::time::Instant::now(),
            report: sent.report,
            options: sent.options,
            request_id: sent.request_id,
            rate_limits: sent.rate_limits,
            retries: sent.retries,
        }
    }

    /// A stream of one item: a reply that came whole (JSON to a stream
    /// request).
    pub(crate) fn whole(reply: Reply) -> Self {
        Self {
            body: None,
            reader: None,
            idle_timeout: None,
            idle: None,
            last_bytes: tokio::time::Instant::now(),
            report: Report::default(),
            options: Vec::new(),
            request_id: reply.request_id.clone(),
            rate_limits: reply.rate_limits.clone(),
            retries: reply.retries,
            url: String::new(),
            content_type: String::new(),
            head: Vec::new(),
            provider: None,
            model: String::new(),
            trace: Default::default(),
            ready: VecDeque::from([Ok(StreamItem::Reply(Box::new(reply)))]),
        }
    }

    /// The provider's request id.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The rate-limit headers of the reply, by lowercase name.
    pub fn rate_limits(&self) -> &BTreeMap<String, String> {
        &self.rate_limits
    }

    /// How many times the request was retried.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// The message so far (`None` once the stream ended).
    pub fn partial(&self) -> Option<crate::AssistantMessage> {
        self.reader.as_ref().map(StreamReader::partial)
    }

    /// Ends the stream with `error`, dropping the connection.
    fn fail(&mut self, error: ClientError) {
        self.body = None;
        self.reader = None;
        self.trace.fail(&error);
        self.ready.push_back(Err(error));
    }

    fn broke_off(&mut self, message: String, timeout: bool) {
        let Some(reader) = &self.reader else { return };
        let error = ClientError::Transport {
            event: reader.events(),
            message,
            timeout,
            partial: Box::new(reader.partial()),
            request_id: self.request_id.clone(),
        };
        self.fail(error);
    }

    fn read(&mut self, bytes: &[u8]) {
        let Some(reader) = &mut self.reader else {
            return;
        };
        if self.head.len() < HEAD && reader.events() == 0 {
            let room = HEAD - self.head.len();
            self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        let mut failed = None;
        for event in reader.feed(bytes) {
            match event {
                Ok(event) => self.ready.push_back(Ok(StreamItem::Event(event))),
                Err(source) => failed = Some(source),
            }
        }
        if let Some(source) = failed {
            self.decode_failed(source);
        } else {
            self.provider_failed();
        }
    }

    /// Ends the stream in [`ClientError::Stream`] once the provider reported
    /// an error in it.
    fn provider_failed(&mut self) {
        let Some(reader) = &self.reader else { return };
        let Some(provider) = reader.provider_error() else {
            return;
        };
        let error = ApiError {
            status: 200,
            error_type: provider.error_type.clone(),
            code: provider.code.clone(),
            url: self.url.clone(),
            should_retry: Some(provider.is_retryable()),
            message: provider.message.clone(),
            request_id: provider
                .request_id
                .clone()
                .or_else(|| self.request_id.clone()),
            retry_after: None,
            retries: self.retries,
        };
        let event = reader.events().saturating_sub(1);
        // The decoder's whole message when it can end here (it holds what
        // the error event carried: usage, the response id), else the
        // message so far.
        let partial = reader.partial();
        let partial = match self.reader.take().map(StreamReader::finish) {
            Some(Ok((message, _))) => message,
            _ => partial,
        };
        let error = ClientError::Stream {
            error: Box::new(error),
            event,
            partial: Box::new(partial),
        };
        self.fail(error);
    }

    /// Ends the stream in a decode error, with the reader's message so far.
    fn decode_failed(&mut self, source: crate::providers::StreamError) {
        let Some(reader) = &self.reader else { return };
        let error = self.decode_error(source, reader.events(), || reader.partial());
        self.fail(error);
    }

    /// [`ClientError::NotAStream`] when what came was not a stream (no event
    /// read, or a content type of neither stream), else
    /// [`ClientError::Decode`] with the message so far.
    fn decode_error(
        &self,
        source: crate::providers::StreamError,
        events: usize,
        partial: impl FnOnce() -> crate::AssistantMessage,
    ) -> ClientError {
        if events == 0 || !is_stream(&self.content_type) {
            ClientError::NotAStream {
                content_type: self.content_type.clone(),
                head: head(&self.head),
                source: Box::new(source),
                request_id: self.request_id.clone(),
            }
        } else {
            ClientError::Decode {
                source,
                partial: Box::new(partial()),
                request_id: self.request_id.clone(),
            }
        }
    }

    fn end(&mut self) {
        self.body = None;
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let mut failed = None;
        for event in reader.end() {
            match event {
                Ok(event) => self.ready.push_back(Ok(StreamItem::Event(event))),
                Err(source) => failed = Some(source),
            }
        }
        if let Some(source) = failed {
            return self.decode_failed(source);
        }
        if reader.provider_error().is_some() {
            return self.provider_failed();
        }
        let Some(reader) = self.reader.take() else {
            return;
        };
        let events = reader.events();
        if let Some(source) = reader.unfinished() {
            let error = self.decode_error(source, events, || reader.partial());
            return self.fail(error);
        }
        match reader.finish() {
            Ok((mut message, warnings)) => {
                super::reply::stamped(&mut message, self.provider.as_deref(), &self.model);
                self.trace.finish(&message);
                let reply = Reply {
                    message,
                    warnings,
                    report: std::mem::take(&mut self.report),
                    options: std::mem::take(&mut self.options),
                    request_id: self.request_id.clone(),
                    rate_limits: self.rate_limits.clone(),
                    retries: self.retries,
                };
                self.ready.push_back(Ok(StreamItem::Reply(Box::new(reply))));
            }
            // A last event that could not be read: what came before it went
            // with the decoder.
            Err(source) => {
                let error = self.decode_error(source, events, crate::AssistantMessage::default);
                self.fail(error);
            }
        }
    }
}

impl Stream for ReplyStream {
    type Item = Result<StreamItem, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(item));
            }
            let Some(body) = this.body.as_mut() else {
                return Poll::Ready(None);
            };
            match body.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => {
                    if this.idle.is_some() {
                        this.last_bytes = tokio::time::Instant::now();
                    }
                    this.trace.chunk();
                    this.read(&bytes);
                }
                Poll::Ready(Some(Err(e))) => this.broke_off(describe(&e), e.is_timeout()),
                Poll::Ready(None) => this.end(),
                Poll::Pending => {
                    let (Some(idle), Some(timeout)) = (this.idle.as_mut(), this.idle_timeout)
                    else {
                        return Poll::Pending;
                    };
                    if idle.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    let at = tokio::time::Instant::from_std(crate::time::deadline(
                        this.last_bytes.into_std(),
                        timeout,
                    ));
                    if at > idle.deadline() {
                        // Bytes came since the timer was armed: armed again
                        // from the last of them, and polled to be woken then.
                        idle.as_mut().reset(at);
                        continue;
                    }
                    let message = format!("no bytes for {timeout:?} (the idle timeout)");
                    this.broke_off(message, true);
                }
            }
        }
    }
}
