//! A real HTTP/1.1 server on loopback (hyper), serving canned replies in
//! order: whole bodies, bodies in chunks, bodies that break off or stall.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// How a canned body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The body is complete.
    Complete,
    /// The connection is cut (no terminating chunk).
    Reset,
    /// Nothing more is sent, and the connection stays open.
    Stall,
}

/// One canned reply.
#[derive(Debug, Clone)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Bytes>,
    pub end: End,
}

impl Canned {
    /// A reply with this status and whole body.
    pub fn body(status: u16, body: impl Into<Bytes>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.into()],
            end: End::Complete,
        }
    }

    /// A 200 event stream of these chunks.
    pub fn sse(chunks: Vec<Bytes>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            end: End::Complete,
        }
    }

    /// A 200 AWS event stream (Bedrock's ConverseStream) of these chunks:
    /// Bedrock's content type alone (not after [`sse`](Self::sse)'s own,
    /// which a client reading the first would take).
    pub fn event_stream(chunks: Vec<Bytes>) -> Self {
        Self {
            headers: vec![(
                "content-type".into(),
                "application/vnd.amazon.eventstream".into(),
            )],
            ..Self::sse(chunks)
        }
    }

    /// The same reply with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply, ending so.
    pub fn ending(mut self, end: End) -> Self {
        self.end = end;
        self
    }
}

/// What the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Received {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    /// Set when a streamed body could not be sent because the client went away.
    pub closed: Arc<AtomicUsize>,
}

impl Server {
    /// Serves `replies` in order (the last one again once they run out).
    pub async fn start(replies: Vec<Canned>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("an address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let replies = Arc::new(replies);
        let (rec, cl) = (received.clone(), closed.clone());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (replies, next, rec, cl) =
                    (replies.clone(), next.clone(), rec.clone(), cl.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: hyper::Request<Incoming>| {
                        let (replies, next, rec, cl) =
                            (replies.clone(), next.clone(), rec.clone(), cl.clone());
                        async move {
                            let method = request.method().to_string();
                            let path = request
                                .uri()
                                .path_and_query()
                                .map(|p| p.to_string())
                                .unwrap_or_default();
                            let headers = request
                                .headers()
                                .iter()
                                .map(|(n, v)| {
                                    (n.to_string(), v.to_str().unwrap_or_default().to_owned())
                                })
                                .collect();
                            let body = request.into_body().collect().await.map(|b| b.to_bytes());
                            let body = body
                                .ok()
                                .and_then(|b| serde_json::from_slice(&b).ok())
                                .unwrap_or_default();
                            rec.lock().unwrap().push(Received {
                                method,
                                path,
                                headers,
                                body,
                            });
                            let i = next.fetch_add(1, Ordering::SeqCst);
                            let canned = replies[i.min(replies.len() - 1)].clone();
                            Ok::<_, Infallible>(respond(canned, cl))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            received,
            closed,
        }
    }

    /// The base URL of the server.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

type Chunk = Result<Frame<Bytes>, std::io::Error>;
type Poll = Box<dyn FnMut(&mut std::task::Context<'_>) -> std::task::Poll<Option<Chunk>> + Send>;
type Body = StreamBody<futures_util::stream::PollFn<Poll>>;

fn respond(canned: Canned, closed: Arc<AtomicUsize>) -> hyper::Response<Body> {
    let (tx, mut rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(1);
    tokio::spawn(async move {
        for chunk in canned.chunks {
            if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                closed.fetch_add(1, Ordering::SeqCst);
                return;
            }
            tokio::task::yield_now().await;
        }
        match canned.end {
            End::Complete => {}
            End::Reset => {
                let _ = tx
                    .send(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "reset",
                    )))
                    .await;
            }
            End::Stall => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(tx);
            }
        }
    });
    let poll: Poll = Box::new(move |cx| rx.poll_recv(cx));
    let mut response = hyper::Response::builder().status(canned.status);
    for (name, value) in &canned.headers {
        response = response.header(name, value);
    }
    response
        .body(StreamBody::new(futures_util::stream::poll_fn(poll)))
        .expect("a response")
}
