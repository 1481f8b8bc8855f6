//! The client's `tracing` spans (feature `tracing`): one per request, named
//! and attributed by the OpenTelemetry GenAI conventions, checked with a
//! capturing subscriber against a loopback server.

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::Request;
use agentmsg::Message;
use bytes::Bytes;

use crate::drain;
use crate::server::{Canned, Server};
use crate::span_capture::Capture;

const REPLY: &str = r#"{"id":"msg_9","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Bonjour"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_read_input_tokens":30,"output_tokens":4}}"#;

fn client(server: &Server, record_content: bool) -> Client {
    Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .retry(Retry::with_max_retries(2).with_backoff(
        std::time::Duration::from_millis(1),
        std::time::Duration::from_millis(2),
    ))
    .record_content(record_content)
    .build()
    .unwrap()
}

fn request() -> Request<'static> {
    let mut request = Request::new("claude-sonnet-4-5", vec![Message::user("Say hi in French")])
        .with_max_tokens(100);
    request.top_k = Some(5);
    request.stop = vec!["END".into()];
    request
}

#[tokio::test]
async fn a_request_is_one_span_with_the_genai_attributes() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let server = Server::start(vec![
        Canned::body(
            503,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#,
        ),
        Canned::body(200, REPLY),
    ])
    .await;
    let reply = client(&server, false).complete(&request()).await.unwrap();
    assert_eq!(reply.retries, 1);
    let spans = capture.spans("chat");
    assert_eq!(spans.len(), 1, "{spans:?}");
    let f = &spans[0].fields;
    let port = server.addr.port().to_string();
    for (field, value) in [
        ("otel.name", "chat claude-sonnet-4-5"),
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "anthropic"),
        ("gen_ai.request.model", "claude-sonnet-4-5"),
        ("gen_ai.request.max_tokens", "100"),
        ("gen_ai.request.top_k", "5"),
        ("gen_ai.request.stop_sequences", r#"["END"]"#),
        ("server.address", "127.0.0.1"),
        ("server.port", port.as_str()),
        ("gen_ai.response.model", "claude-sonnet-4-5-20250929"),
        ("gen_ai.response.id", "msg_9"),
        ("gen_ai.response.finish_reasons", r#"["stop"]"#),
        ("gen_ai.usage.input_tokens", "42"),
        ("gen_ai.usage.output_tokens", "4"),
        ("gen_ai.usage.cache_read.input_tokens", "30"),
        ("agentmsg.retries", "1"),
    ] {
        assert_eq!(
            f.get(field).map(String::as_str),
            Some(value),
            "{field}: {f:?}"
        );
    }
    assert!(f.contains_key("agentmsg.time_to_first_chunk_ms"), "{f:?}");
    // Content only when asked for.
    assert!(!f.contains_key("gen_ai.input.messages"), "{f:?}");
    assert!(!f.contains_key("gen_ai.output.messages"), "{f:?}");
    assert!(!f.contains_key("error.type"), "{f:?}");
}

#[tokio::test]
async fn a_stream_records_its_content_when_asked_and_its_error_type() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_s","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Salut"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let server = Server::start(vec![
        Canned::sse(vec![Bytes::from(body)]),
        Canned::body(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"no"}}"#,
        ),
    ])
    .await;
    let client = client(&server, true);
    let (_, reply) = drain(&client, &request()).await;
    assert_eq!(reply.unwrap().message.text_content(), "Salut");
    client.complete(&request()).await.unwrap_err();
    let spans = capture.spans("chat");
    assert_eq!(spans.len(), 2);
    let streamed = &spans[0].fields;
    assert!(
        streamed["gen_ai.input.messages"].contains("Say hi in French"),
        "{streamed:?}"
    );
    assert!(
        streamed["gen_ai.output.messages"].contains("Salut"),
        "{streamed:?}"
    );
    assert_eq!(streamed["gen_ai.response.id"], "msg_s");
    assert!(streamed.contains_key("agentmsg.time_to_first_chunk_ms"));
    let failed = &spans[1].fields;
    assert_eq!(failed["error.type"], "invalid_request_error", "{failed:?}");
    assert!(!failed.contains_key("gen_ai.response.id"));
}
