//! [`Model`]: what the loop asks for a reply, a real [`Client`] or a
//! [`ScriptedModel`](super::ScriptedModel).

use std::future::Future;
use std::pin::Pin;

use futures_core::Stream;

use crate::http::{Client, ClientError, ReplyStream, StreamItem};
use crate::providers::{Api, Request};
use crate::AssistantMessage;

/// A reply as it streams: [`StreamItem`]s (the events, then the whole reply),
/// and the message so far, which the loop keeps when a run is cancelled.
pub trait ModelStream: Stream<Item = Result<StreamItem, ClientError>> + Send + Unpin {
    /// The message as far as it was read (`None` once the stream ended).
    fn partial(&self) -> Option<AssistantMessage>;
}

impl ModelStream for ReplyStream {
    fn partial(&self) -> Option<AssistantMessage> {
        ReplyStream::partial(self)
    }
}

/// A boxed [`ModelStream`].
pub type BoxModelStream = Box<dyn ModelStream>;

/// The future of [`Model::stream`].
pub type StreamFuture<'a> =
    Pin<Box<dyn Future<Output = Result<BoxModelStream, ClientError>> + Send + 'a>>;

/// What answers the loop's requests: an [`http::Client`](Client), or a
/// [`ScriptedModel`](super::ScriptedModel) in tests. Both encode the request
/// with the API's real encoder and decode the reply with its real stream
/// decoder.
pub trait Model: Send + Sync {
    /// The API it speaks.
    fn api(&self) -> Api;

    /// Sends `request` and streams the reply.
    fn stream<'a>(&'a self, request: &'a Request<'a>) -> StreamFuture<'a>;
}

impl Model for Client {
    fn api(&self) -> Api {
        Client::api(self)
    }

    fn stream<'a>(&'a self, request: &'a Request<'a>) -> StreamFuture<'a> {
        Box::pin(async move {
            let stream = Client::stream(self, request).await?;
            Ok(Box::new(stream) as BoxModelStream)
        })
    }
}

impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn api(&self) -> Api {
        (**self).api()
    }

    fn stream<'a>(&'a self, request: &'a Request<'a>) -> StreamFuture<'a> {
        (**self).stream(request)
    }
}
