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
    // Counts of zero are left out, as the conventions recommend.
    assert!(
        !f.contains_key("gen_ai.usage.cache_creation.input_tokens"),
        "{f:?}"
    );
    assert!(
        !f.contains_key("gen_ai.usage.reasoning.output_tokens"),
        "{f:?}"
    );
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

/// The cache-write and reasoning counts, by the conventions' names
/// (`gen_ai.usage.cache_creation.input_tokens`,
/// `gen_ai.usage.reasoning.output_tokens`): Anthropic reports cache writes,
/// OpenAI reasoning tokens.
#[tokio::test]
async fn cache_writes_and_reasoning_tokens_have_the_conventions_names() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let anthropic = r#"{"id":"msg_c","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"cache_creation_input_tokens":200,"cache_read_input_tokens":0,"output_tokens":2}}"#;
    let server = Server::start(vec![Canned::body(200, anthropic)]).await;
    client(&server, false).complete(&request()).await.unwrap();
    let chat = r#"{"id":"c1","object":"chat.completion","created":1,"model":"o4-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":40,"total_tokens":90,"prompt_tokens_details":{"cached_tokens":20},"completion_tokens_details":{"reasoning_tokens":32}}}"#;
    let server = Server::start(vec![Canned::body(200, chat)]).await;
    Client::builder(
        Endpoint::openai_chat()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .build()
    .unwrap()
    .complete(&Request::new("o4-mini", vec![Message::user("Hi")]))
    .await
    .unwrap();
    let spans = capture.spans("chat");
    assert_eq!(spans.len(), 2, "{spans:?}");
    let (anthropic, chat) = (&spans[0].fields, &spans[1].fields);
    assert_eq!(
        anthropic["gen_ai.usage.input_tokens"], "203",
        "{anthropic:?}"
    );
    assert_eq!(anthropic["gen_ai.usage.cache_creation.input_tokens"], "200");
    assert!(!anthropic.contains_key("gen_ai.usage.cache_read.input_tokens"));
    assert!(!anthropic.contains_key("gen_ai.usage.reasoning.output_tokens"));
    // OpenAI's counts include the cached and the reasoning tokens already.
    assert_eq!(chat["gen_ai.usage.input_tokens"], "50", "{chat:?}");
    assert_eq!(chat["gen_ai.usage.cache_read.input_tokens"], "20");
    assert_eq!(chat["gen_ai.usage.output_tokens"], "40");
    assert_eq!(chat["gen_ai.usage.reasoning.output_tokens"], "32");
    assert!(!chat.contains_key("gen_ai.usage.cache_creation.input_tokens"));
}
