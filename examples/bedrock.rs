//! Claude on Amazon Bedrock, streamed: `ConverseStream` answers in AWS's
//! binary event stream (not server-sent events), and the request is
//! SigV4-signed with AWS credentials. The deltas print as they come.
//!
//! With `AWS_BEARER_TOKEN_BEDROCK`, or `AWS_ACCESS_KEY_ID` and
//! `AWS_SECRET_ACCESS_KEY`, set, the request goes to Bedrock in `AWS_REGION`
//! (model: `AGENTMSG_BEDROCK_MODEL`, else Claude Sonnet 4.5's US inference
//! profile). Without them it goes to a server on loopback that checks the
//! signature's scope and answers with event-stream frames written by AWS's
//! own encoder (`aws-smithy-eventstream`), in 11-byte pieces that cut
//! through frames; the run then checks what came.
//!
//! Run with `cargo run --features http,bedrock --example bedrock`.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use agentmsg::http::{Client, Endpoint, StreamItem};
use agentmsg::providers::bedrock::AwsCredentials;
use agentmsg::providers::{Request, StreamEvent};
use agentmsg::{Message, StopReason};
use aws_smithy_types::event_stream::{Header, HeaderValue, Message as Frame};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame as BodyFrame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/// One ConverseStream event as an event-stream frame.
fn frame(kind: &str, payload: serde_json::Value) -> Vec<u8> {
    let headers = vec![
        Header::new(":message-type", HeaderValue::String("event".into())),
        Header::new(":event-type", HeaderValue::String(kind.to_owned().into())),
        Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ),
    ];
    let message = Frame::new_from_parts(headers, payload.to_string().into_bytes());
    let mut out = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(&message, &mut out)
        .expect("AWS's encoder writes a frame");
    out
}

/// What Bedrock streams for a short answer.
fn recorded() -> Vec<u8> {
    use serde_json::json;
    [
        frame("messageStart", json!({"role": "assistant"})),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "Bedrock streams "}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "binary frames, not SSE."}}),
        ),
        frame("contentBlockStop", json!({"contentBlockIndex": 0})),
        frame("messageStop", json!({"stopReason": "end_turn"})),
        frame(
            "metadata",
            json!({"usage": {"inputTokens": 14, "outputTokens": 9, "totalTokens": 23},
                   "metrics": {"latencyMs": 412}}),
        ),
    ]
    .concat()
}

/// A loopback server answering every request with [`recorded`]; it keeps
/// each request's path and `Authorization` header.
async fn serve() -> std::io::Result<(String, Arc<Mutex<Vec<(String, String)>>>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let kept = kept.clone();
            let service = service_fn(move |request: hyper::Request<Incoming>| {
                let kept = kept.clone();
                async move {
                    let path = request.uri().path().to_owned();
                    let authorization = request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let _ = request.into_body().collect().await;
                    kept.lock().map(|mut k| k.push((path, authorization))).ok();
                    let pieces: Vec<Result<BodyFrame<Bytes>, std::io::Error>> = recorded()
                        .chunks(11)
                        .map(|piece| Ok(BodyFrame::data(Bytes::copy_from_slice(piece))))
                        .collect();
                    hyper::Response::builder()
                        .header("content-type", "application/vnd.amazon.eventstream")
                        .body(StreamBody::new(futures_util::stream::iter(pieces)))
                        .map_err(std::io::Error::other)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    Ok((url, seen))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let live = ["AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID"]
        .iter()
        .any(|var| std::env::var_os(var).is_some());
    let (endpoint, model, seen) = if live {
        let model = std::env::var("AGENTMSG_BEDROCK_MODEL").unwrap_or_else(|_| MODEL.to_owned());
        (Endpoint::bedrock(), model, None)
    } else {
        let (url, seen) = serve().await?;
        // Example credentials (AWS's documentation's): the server on
        // loopback only reads the signature's scope.
        let credentials = AwsCredentials::new(
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            None,
        );
        let endpoint = Endpoint::bedrock_in("us-east-1")
            .with_aws_credentials("us-east-1", credentials)
            .with_base_url(&url);
        (endpoint, MODEL.to_owned(), Some(seen))
    };
    let client = Client::new(endpoint)?;
    let request = Request::new(
        model.as_str(),
        vec![Message::user("How does Bedrock stream, in one line?")],
    )
    .with_max_tokens(200);

    let mut stream = client.stream(&request).await?;
    let mut reply = None;
    let mut deltas = 0;
    while let Some(item) = stream.next().await {
        match item? {
            StreamItem::Event(StreamEvent::TextDelta { delta, .. }) => {
                deltas += 1;
                print!("{delta}");
                std::io::stdout().flush()?;
            }
            StreamItem::Reply(whole) => reply = Some(whole),
            _ => {}
        }
    }
    println!();
    let reply = reply.ok_or("the stream ended without its reply")?.message;
    println!(
        "[{} {}] {:?}, {} in / {} out, cost {:?}",
        reply.provider,
        reply.model,
        reply.stop_reason,
        reply.usage.input,
        reply.usage.output,
        reply.usage.cost.map(|c| c.total)
    );

    // Self-checks, against the loopback server only.
    let Some(seen) = seen else { return Ok(()) };
    let seen = seen.lock().map_err(|_| "poisoned")?.clone();
    let (path, authorization) = &seen[0];
    assert_eq!(
        path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert!(
        authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/")
            && authorization.contains("/us-east-1/bedrock/aws4_request"),
        "{authorization}"
    );
    assert_eq!(
        reply.text_content(),
        "Bedrock streams binary frames, not SSE."
    );
    assert_eq!(deltas, 2);
    assert_eq!(reply.stop_reason, StopReason::Stop);
    assert_eq!((reply.usage.input, reply.usage.output), (14, 9));
    // Converse names no model: the reply carries the one asked for, and with
    // the `prices` feature it is priced at Bedrock's rate for it.
    assert_eq!(reply.model, MODEL);
    assert_eq!(
        reply.usage.cost.is_some_and(|c| c.total > 0.0),
        cfg!(feature = "prices")
    );
    Ok(())
}
