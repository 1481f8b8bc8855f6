//! Faults: error statuses and their retries, replies that break off, stall or
//! are malformed, each provider's error bodies.

use std::sync::atomic::Ordering;
use std::time::Duration;

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, Retry, StreamItem};
use agentmsg::providers::{Api, StreamEvent};
use bytes::Bytes;
use futures_util::StreamExt;

use crate::server::{Canned, End, Server};
use crate::{anthropic_sse, client, drain, paused_time_client, request};

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test(start_paused = true)]
async fn a_429_with_retry_after_is_retried_after_the_delay_asked_for() {
    let server = Server::start(vec![
        Canned::body(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "7")
        .header("request-id", "req_1"),
        Canned::sse(vec![Bytes::from(anthropic_sse("Hello"))])
            .header("anthropic-ratelimit-requests-remaining", "41"),
    ])
    .await;
    let client = paused_time_client(Endpoint::anthropic(), &server, Retry::with_max_retries(3));
    let start = tokio::time::Instant::now();
    let (events, reply) = drain(&client, &request(Api::Anthropic)).await;
    let reply = reply.expect("a reply");
    assert_eq!(reply.retries, 1);
    assert!(
        start.elapsed() >= Duration::from_secs(7),
        "{:?}",
        start.elapsed()
    );
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(reply.message.text_content(), "Hello");
    assert_eq!(
        reply.rate_limits["anthropic-ratelimit-requests-remaining"],
        "41"
    );
    assert!(events.contains(&StreamEvent::TextDelta {
        index: 0,
        delta: "Hello".into()
    }));
    assert_eq!(server.received().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn retry_after_ms_is_honoured_and_the_budget_is_kept() {
    let server = Server::start(vec![
        Canned::body(529, OVERLOADED).header("retry-after-ms", "250")
    ])
    .await;
    let client = paused_time_client(Endpoint::anthropic(), &server, Retry::with_max_retries(2));
    let start = tokio::time::Instant::now();
    let error = client.complete(&request(Api::Anthropic)).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    assert_eq!(server.received().len(), 3);
    let api = error.api_error().expect("an API error");
    assert_eq!((api.status, api.retries), (529, 2));
    assert_eq!(api.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(error.retry_after(), Some(Duration::from_millis(250)));
    assert!(error.to_string().contains("after 2 retries"), "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_500_then_success_is_retried_with_backoff() {
    let server = Server::start(vec![
        Canned::body(500, r#"{"error":{"message":"boom","type":"server_error"}}"#),
        Canned::body(503, ""),
        Canned::body(
            200,
            r#"{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
        )
        .header("x-request-id", "req_chat"),
    ])
    .await;
    let client = paused_time_client(Endpoint::openai_chat(), &server, Retry::with_max_retries(2));
    let start = tokio::time::Instant::now();
    let reply = client
        .complete(&request(Api::OpenaiChat))
        .await
        .expect("a reply");
    // Two backoffs of 0.25..0.5 s and 0.5..1 s.
    assert!(
        start.elapsed() >= Duration::from_millis(750),
        "{:?}",
        start.elapsed()
    );
    assert!(
        start.elapsed() <= Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(reply.retries, 2);
    assert_eq!(reply.request_id.as_deref(), Some("req_chat"));
    assert_eq!(reply.message.text_content(), "ok");
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for status in [400, 401, 403, 404] {
        let server = Server::start(vec![Canned::body(
            status,
            r#"{"error":{"message":"no","type":"invalid_request_error"}}"#,
        )])
        .await;
        let error = client(Api::OpenaiChat, &server.url(), Retry::with_max_retries(5))
            .complete(&request(Api::OpenaiChat))
            .await
            .unwrap_err();
        assert_eq!(error.status(), Some(status));
        assert_eq!(server.received().len(), 1, "{status}");
    }
}

/// Each provider's 401 body, and what the error must say.
#[tokio::test]
async fn a_401_decodes_each_providers_error_body() {
    let cases = [
        (
            Api::OpenaiChat,
            r#"{"error":{"message":"Incorrect API key provided: sk-test***-key.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            "invalid_request_error",
            "Incorrect API key provided",
        ),
        (
            Api::OpenaiResponses,
            r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            "invalid_request_error",
            "Incorrect API key provided.",
        ),
        (
            Api::Anthropic,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#,
            "authentication_error",
            "invalid x-api-key",
        ),
        (
            Api::Gemini,
            r#"{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}"#,
            "UNAUTHENTICATED",
            "API key not valid",
        ),
    ];
    for (api, body, kind, message) in cases {
        let server = Server::start(vec![Canned::body(401, body)]).await;
        let error = client(api, &server.url(), Retry::default())
            .stream(&request(api))
            .await
            .unwrap_err();
        let e = error.api_error().expect("an API error");
        assert_eq!(e.status, 401);
        assert_eq!(e.error_type.as_deref(), Some(kind), "{api}");
        assert!(e.message.contains(message), "{api}: {}", e.message);
        assert!(!error.is_context_overflow());
        if api == Api::Anthropic {
            assert_eq!(error.request_id(), Some("req_011CSHoEeqs5C35K2UUqR7Fy"));
        }
        assert_eq!(server.received().len(), 1);
    }
}

#[tokio::test]
async fn a_context_overflow_400_says_so_for_each_provider() {
    let cases = [
        (
            Api::OpenaiChat,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        (
            Api::OpenaiResponses,
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
        ),
        (
            Api::Anthropic,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#,
        ),
        (
            Api::Gemini,
            r#"{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}"#,
        ),
    ];
    for (api, body) in cases {
        let server = Server::start(vec![Canned::body(400, body)]).await;
        let error = client(api, &server.url(), Retry::default())
            .complete(&request(api))
            .await
            .unwrap_err();
        assert_eq!(error.status(), Some(400));
        assert!(error.is_context_overflow(), "{api}: {error}");
    }
}

#[tokio::test]
async fn a_connection_reset_mid_stream_names_the_event_and_keeps_the_partial_message() {
    let bytes = anthropic_sse("Hello there");
    // Cut after the text delta (3 events), before the block ends.
    let cut = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .nth(2)
        .map(|(i, _)| i + 2)
        .unwrap();
    let server = Server::start(vec![Canned::sse(vec![Bytes::copy_from_slice(
        &bytes[..cut],
    )])
    .ending(End::Reset)])
    .await;
    let (events, result) = drain(
        &client(Api::Anthropic, &server.url(), Retry::default()),
        &request(Api::Anthropic),
    )
    .await;
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            ClientError::Transport {
                event: 3,
                timeout: false,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.event(), Some(3));
    assert_eq!(error.partial().unwrap().text_content(), "Hello there");
    assert!(events.contains(&StreamEvent::TextDelta {
        index: 0,
        delta: "Hello there".into()
    }));
    // The body had begun: no retry.
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stalled_server_hits_the_idle_timeout() {
    let bytes = anthropic_sse("Hi");
    let server = Server::start(vec![Canned::sse(vec![Bytes::copy_from_slice(
        &bytes[..bytes.len() / 2],
    )])
    .ending(End::Stall)])
    .await;
    let client = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .idle_timeout(Some(Duration::from_millis(300)))
    .build()
    .unwrap();
    let (_, result) = drain(&client, &request(Api::Anthropic)).await;
    let error = result.unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert!(error.partial().is_some());
}

/// A timeout too long to add to the clock is no timeout, never a panic
/// (the idle timer is reset at each chunk).
#[tokio::test]
async fn timeouts_as_long_as_can_be_said_are_waited_for_without_a_panic() {
    let bytes = anthropic_sse("Hi");
    let (first, second) = bytes.split_at(bytes.len() / 2);
    let server = Server::start(vec![Canned::sse(vec![
        Bytes::copy_from_slice(first),
        Bytes::copy_from_slice(second),
    ])])
    .await;
    let client = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .idle_timeout(Some(Duration::MAX))
    .connect_timeout(Some(Duration::MAX))
    .pool_idle_timeout(Some(Duration::MAX))
    .build()
    .unwrap();
    let (_, result) = drain(&client, &request(Api::Anthropic)).await;
    assert_eq!(result.unwrap().message.text_content(), "Hi");
}

/// A stream whose connection closes cleanly before its end event: the
/// error says what was missing, and the message so far comes with it (the
/// reader is asked before it is consumed, so the copy is made only then).
#[tokio::test]
async fn a_stream_closed_before_its_end_keeps_the_partial_message() {
    let sse = String::from_utf8(anthropic_sse("Hello there")).unwrap();
    let cut = sse
        .find(r#"data: {"type":"content_block_stop""#)
        .expect("a block stop");
    let server = Server::start(vec![Canned::sse(vec![Bytes::from(sse[..cut].to_owned())])]).await;
    let (events, result) = drain(
        &client(Api::Anthropic, &server.url(), Retry::none()),
        &request(Api::Anthropic),
    )
    .await;
    assert!(!events.is_empty());
    let error = result.unwrap_err();
    assert!(matches!(error, ClientError::Decode { .. }), "{error:?}");
    assert!(error.to_string().contains("no message_stop"), "{error}");
    assert_eq!(error.partial().unwrap().text_content(), "Hello there");
}

#[tokio::test]
async fn malformed_sse_is_a_decode_error_naming_the_event() {
    let mut bytes = anthropic_sse("Hi");
    bytes.splice(
        0..0,
        b"data: {\"type\":\"message_start\",\"message\":\n\n"
            .iter()
            .copied(),
    );
    let server = Server::start(vec![Canned::sse(vec![Bytes::from(bytes)])]).await;
    let (_, result) = drain(
        &client(Api::Anthropic, &server.url(), Retry::default()),
        &request(Api::Anthropic),
    )
    .await;
    let error = result.unwrap_err();
    assert!(matches!(error, ClientError::Decode { .. }), "{error:?}");
    assert_eq!(error.event(), Some(0));

    let server = Server::start(vec![Canned::sse(vec![Bytes::from_static(
        b"data: \xff\xfe\n\n",
    )])])
    .await;
    let (_, result) = drain(
        &client(Api::Anthropic, &server.url(), Retry::default()),
        &request(Api::Anthropic),
    )
    .await;
    assert!(result.unwrap_err().to_string().contains("not UTF-8"));
}

#[tokio::test]
async fn an_event_over_the_size_limit_is_refused() {
    let bytes = anthropic_sse(&"x".repeat(10_000));
    let server = Server::start(vec![Canned::sse(vec![Bytes::from(bytes)])]).await;
    let client = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .max_event(4096)
    .build()
    .unwrap();
    let (_, result) = drain(&client, &request(Api::Anthropic)).await;
    let error = result.unwrap_err();
    assert!(
        error.to_string().contains("longer than 4096 bytes"),
        "{error}"
    );
    assert_eq!(error.event(), Some(2));
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let bytes = anthropic_sse("Hi");
    let head = bytes.split(|&b| b == b'\n').next().unwrap().len() + 2;
    // The first event, then pings forever.
    let mut chunks = vec![Bytes::copy_from_slice(&bytes[..head])];
    chunks.extend(std::iter::repeat_n(
        Bytes::from_static(b": ping\n\n"),
        100_000,
    ));
    let server = Server::start(vec![Canned::sse(chunks)]).await;
    let client = client(Api::Anthropic, &server.url(), Retry::default());
    let mut stream = client.stream(&request(Api::Anthropic)).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(
        matches!(first, StreamItem::Event(StreamEvent::Start)),
        "{first:?}"
    );
    drop(stream);
    for _ in 0..200 {
        if server.closed.load(Ordering::SeqCst) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server kept sending to a dropped stream");
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let retry =
        Retry::with_max_retries(2).with_backoff(Duration::from_millis(1), Duration::from_millis(2));
    let error = client(Api::Gemini, &url, retry)
        .complete(&request(Api::Gemini))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ClientError::Connect { retries: 2, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_whole_reply_over_the_size_limit_is_refused() {
    let text = "x".repeat(10_000);
    let reply = serde_json::json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":text}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}});
    let body = reply.to_string().into_bytes();
    // In chunks of 1000 bytes: the limit falls inside the fifth.
    let chunks = body.chunks(1000).map(Bytes::copy_from_slice).collect();
    let mut canned = Canned::body(200, "");
    canned.chunks = chunks;
    let server = Server::start(vec![canned]).await;
    let client = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("k")),
    )
    .max_event(4096)
    .build()
    .unwrap();
    let error = client.complete(&request(Api::Anthropic)).await.unwrap_err();
    let ClientError::Decode {
        source: agentmsg::providers::StreamError::Frame(frame),
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    // Named at the start of the chunk that went past the limit (the client
    // may read the 1000-byte chunks joined).
    assert!(frame.offset <= 4000 && frame.offset % 1000 == 0, "{error}");
    assert!(
        error.to_string().contains("longer than 4096 bytes"),
        "{error}"
    );
}
