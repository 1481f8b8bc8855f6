//! An error inside a 200 stream ends `stream()` in `Err` on all four APIs,
//! with the provider's type, message, request id, whether to retry, and the
//! message so far; a stream request answered with JSON is read whole.

use agentmsg::http::ClientError;
use agentmsg::providers::{Api, StreamEvent, StreamReader};
use agentmsg::StopReason;
use bytes::Bytes;

use crate::server::{Canned, Server};
use crate::{client, drain, request, whole_reply};
use agentmsg::http::Retry;

fn sse(events: &[&str]) -> Bytes {
    Bytes::from(
        events
            .iter()
            .map(|e| format!("data: {e}\n\n"))
            .collect::<String>(),
    )
}

/// A Responses stream's first events, up to its text "Hello wor".
const RESPONSES_HELLO: [&str; 4] = [
    r#"{"type":"response.created","response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"gpt-4.1","output":[]}}"#,
    r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}"#,
    r#"{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#,
    r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello wor"}"#,
];

/// One API's stream that breaks off with the provider's error.
struct Case {
    api: Api,
    name: &'static str,
    body: Bytes,
    kind: Option<&'static str>,
    code: Option<&'static str>,
    message: &'static str,
    retryable: bool,
}

/// Each API's stream: "Hello wor", then the provider's error; with the error
/// type, code, message and whether it is retryable.
fn cases() -> Vec<Case> {
    let case = |api, name, body, kind, code, message, retryable| Case {
        api,
        name,
        body,
        kind,
        code,
        message,
        retryable,
    };
    vec![
        case(
            Api::Anthropic,
            "anthropic event: error",
            Bytes::from(
                [
                    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
                    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello wor\"}}\n\n",
                    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
                ]
                .concat(),
            ),
            Some("overloaded_error"),
            None,
            "Overloaded",
            true,
        ),
        case(
            Api::OpenaiResponses,
            "responses response.failed",
            sse(&[&RESPONSES_HELLO[..], &[
                r#"{"type":"response.failed","response":{"id":"resp_1","object":"response","created_at":1,"status":"failed","model":"gpt-4.1","error":{"code":"server_error","message":"The model failed to finish"},"output":[]}}"#,
            ]].concat()),
            None,
            Some("server_error"),
            "The model failed to finish",
            true,
        ),
        case(
            Api::OpenaiResponses,
            "responses error",
            sse(&[&RESPONSES_HELLO[..], &[
                r#"{"type":"error","code":"invalid_prompt","message":"The prompt was flagged","param":null}"#,
            ]].concat()),
            None,
            Some("invalid_prompt"),
            "The prompt was flagged",
            false,
        ),
        case(
            Api::OpenaiChat,
            "chat error chunk",
            sse(&[
                r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello wor"}}]}"#,
                r#"{"error":{"message":"upstream overloaded","type":"server_error","code":"overloaded"}}"#,
                "[DONE]",
            ]),
            Some("server_error"),
            Some("overloaded"),
            "upstream overloaded",
            true,
        ),
        case(
            Api::Gemini,
            "gemini error chunk",
            sse(&[
                r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello wor"}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
                r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#,
            ]),
            Some("UNAVAILABLE"),
            Some("503"),
            "The model is overloaded.",
            true,
        ),
    ]
}

#[tokio::test]
async fn an_error_in_a_200_stream_ends_it_in_err_with_the_partial_message() {
    for Case {
        api,
        name,
        body,
        kind,
        code,
        message,
        retryable,
    } in cases()
    {
        let server = Server::start(vec![
            Canned::sse(vec![body]).header("x-request-id", "req_42")
        ])
        .await;
        // Retries allowed: an error after the reply began is never retried.
        let (events, result) =
            drain(&client(api, &server.url(), Retry::default()), &request(api)).await;
        let error = result.expect_err(name);
        let ClientError::Stream {
            error: api_error,
            partial,
            ..
        } = &error
        else {
            panic!("{name}: {error:?}");
        };
        assert_eq!(api_error.status, 200, "{name}");
        assert_eq!(api_error.error_type.as_deref(), kind, "{name}");
        assert_eq!(api_error.code.as_deref(), code, "{name}");
        assert_eq!(api_error.message, message, "{name}");
        assert_eq!(api_error.request_id.as_deref(), Some("req_42"), "{name}");
        assert_eq!(error.is_retryable(), retryable, "{name}");
        assert_eq!(partial.text_content(), "Hello wor", "{name}");
        assert_eq!(partial.stop_reason, StopReason::Error, "{name}");
        assert_eq!(error.partial().unwrap().text_content(), "Hello wor");
        assert!(error.to_string().contains(message), "{name}: {error}");
        assert!(error.to_string().contains(&server.url()), "{name}: {error}");
        // The text streamed; no `Done` other than an error's.
        assert!(
            events.contains(&StreamEvent::TextDelta {
                index: 0,
                delta: "Hello wor".into()
            }),
            "{name}: {events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, StreamEvent::Done { stop_reason } if *stop_reason != StopReason::Error)),
            "{name}: {events:?}"
        );
        assert_eq!(server.received().len(), 1, "{name}");
    }
}

#[test]
fn the_anthropic_decoder_keeps_the_text_and_sends_no_done_after_an_error() {
    let body = cases().remove(0).body;
    let mut reader = StreamReader::new(Api::Anthropic);
    let events: Vec<StreamEvent> = reader.feed(&body).map(Result::unwrap).collect();
    let error_at = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Error { .. }))
        .expect("an Error event");
    assert!(
        !events[error_at..]
            .iter()
            .any(|e| matches!(e, StreamEvent::Done { .. })),
        "{events:?}"
    );
    let provider = reader
        .provider_error()
        .expect("the provider's error")
        .clone();
    assert_eq!(provider.error_type.as_deref(), Some("overloaded_error"));
    assert!(provider.is_retryable());
    let (message, _) = reader.finish().unwrap();
    assert_eq!(message.text_content(), "Hello wor");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("overloaded_error: Overloaded")
    );
}

#[tokio::test]
async fn a_stream_request_answered_with_json_is_read_as_the_whole_reply() {
    for api in [
        Api::Anthropic,
        Api::OpenaiChat,
        Api::OpenaiResponses,
        Api::Gemini,
    ] {
        let body = whole_reply(api, "whole");
        let server = Server::start(vec![
            Canned::body(200, body).header("x-request-id", "req_json")
        ])
        .await;
        let (events, reply) =
            drain(&client(api, &server.url(), Retry::none()), &request(api)).await;
        let reply = reply.unwrap_or_else(|e| panic!("{api}: {e}"));
        assert_eq!(reply.message.text_content(), "whole", "{api}");
        assert_eq!(reply.request_id.as_deref(), Some("req_json"));
        assert!(events.is_empty(), "{api}: {events:?}");
    }
}

#[tokio::test]
async fn a_stream_request_answered_otherwise_says_what_came() {
    for (content_type, body) in [
        (
            "text/html; charset=utf-8",
            "<html><body>502 Bad Gateway</body></html>",
        ),
        ("application/json", r#"{"detail":"a gateway's own JSON"}"#),
        ("text/event-stream", ""),
    ] {
        let mut canned = Canned::body(200, body);
        canned.headers = vec![("content-type".into(), content_type.into())];
        let server = Server::start(vec![canned]).await;
        let (_, result) = drain(
            &client(Api::Anthropic, &server.url(), Retry::none()),
            &request(Api::Anthropic),
        )
        .await;
        let error = result.unwrap_err();
        let ClientError::NotAStream {
            content_type: named,
            head,
            ..
        } = &error
        else {
            panic!("{content_type}: {error:?}");
        };
        assert_eq!(named, content_type);
        assert_eq!(head, body);
        let text = error.to_string();
        assert!(text.contains(content_type), "{text}");
        if !body.is_empty() {
            assert!(text.contains(&body[2..8]), "{text}");
        }
    }
}
