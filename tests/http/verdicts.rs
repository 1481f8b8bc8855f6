//! What the official SDKs obey and agentmsg now does too: `x-should-retry`
//! both ways, `Retry-After` as an HTTP date, a `User-Agent`, errors that name
//! their URL and keep OpenAI's `type` and `code`.

use std::time::{Duration, SystemTime};

use agentmsg::http::{Client, ClientError, Endpoint, Retry, USER_AGENT};
use agentmsg::providers::Api;

use crate::server::{Canned, Server};
use crate::{client, paused_time_client, request, whole_reply};

#[tokio::test(start_paused = true)]
async fn x_should_retry_false_stops_a_retryable_status() {
    let server = Server::start(vec![Canned::body(
        503,
        r#"{"error":{"message":"down","type":"server_error"}}"#,
    )
    .header("x-should-retry", "false")])
    .await;
    let error = paused_time_client(Endpoint::openai_chat(), &server, Retry::with_max_retries(2))
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap_err();
    assert_eq!(server.received().len(), 1, "the provider said no retry");
    let api = error.api_error().unwrap();
    assert_eq!(
        (api.status, api.retries, api.should_retry),
        (503, 0, Some(false))
    );
    assert!(!api.is_retryable());
}

#[tokio::test(start_paused = true)]
async fn x_should_retry_true_retries_a_client_error() {
    let server = Server::start(vec![
        Canned::body(400, r#"{"error":{"message":"try again","type":"x"}}"#)
            .header("x-should-retry", "true"),
        Canned::body(400, r#"{"error":{"message":"try again","type":"x"}}"#)
            .header("x-should-retry", "true"),
        Canned::body(200, whole_reply(Api::OpenaiChat, "ok")),
    ])
    .await;
    let reply = paused_time_client(Endpoint::openai_chat(), &server, Retry::with_max_retries(2))
        .complete(&request(Api::OpenaiChat))
        .await
        .expect("the third try succeeds");
    assert_eq!(reply.retries, 2);
    assert_eq!(server.received().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn retry_after_as_an_http_date_is_waited_for() {
    // Dates have whole seconds: three seconds ahead is a wait in (2 s, 3 s].
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3));
    let server = Server::start(vec![
        Canned::body(429, r#"{"error":{"message":"slow","type":"rate_limit"}}"#)
            .header("retry-after", &date),
        Canned::body(200, whole_reply(Api::OpenaiChat, "ok")),
    ])
    .await;
    let start = tokio::time::Instant::now();
    let reply = paused_time_client(Endpoint::openai_chat(), &server, Retry::with_max_retries(2))
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap();
    let waited = start.elapsed();
    assert_eq!(reply.retries, 1);
    assert!(
        waited > Duration::from_secs(2) && waited <= Duration::from_secs(3),
        "waited {waited:?} for a date 3 s ahead"
    );
}

/// A date already past, or `retry-after: 0`, is no ask: the backoff holds
/// (as for the SDKs, which wait only for an ask above zero).
#[tokio::test(start_paused = true)]
async fn retry_after_as_a_past_date_or_zero_falls_back_to_the_backoff() {
    let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
    for asked in [past.as_str(), "0"] {
        let server = Server::start(vec![
            Canned::body(503, "").header("retry-after", asked),
            Canned::body(200, whole_reply(Api::OpenaiChat, "ok")),
        ])
        .await;
        let start = tokio::time::Instant::now();
        paused_time_client(Endpoint::openai_chat(), &server, Retry::with_max_retries(1))
            .complete(&request(Api::OpenaiChat))
            .await
            .unwrap();
        // The first backoff: ¾ to all of 0.5 s.
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(375) && waited <= Duration::from_millis(500),
            "{asked}: waited {waited:?}"
        );
    }
}

#[tokio::test]
async fn requests_carry_the_user_agent_unless_the_caller_sets_one() {
    let server = Server::start(vec![Canned::body(200, whole_reply(Api::OpenaiChat, "ok"))]).await;
    let endpoint = Endpoint::openai_compatible(&server.url());
    Client::new(endpoint.clone())
        .unwrap()
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap();
    Client::new(endpoint.with_header("user-agent", "my-app/2"))
        .unwrap()
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap();
    let received = server.received();
    assert_eq!(USER_AGENT, concat!("agentmsg/", env!("CARGO_PKG_VERSION")));
    assert_eq!(received[0].header("user-agent"), Some(USER_AGENT));
    let agents: Vec<_> = received[1]
        .headers
        .iter()
        .filter(|(n, _)| n == "user-agent")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(agents, ["my-app/2"]);
}

#[tokio::test]
async fn an_error_names_its_url_and_keeps_type_and_code() {
    let server = Server::start(vec![Canned::body(
        404,
        r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
    )])
    .await;
    let error = client(
        Api::OpenaiChat,
        &format!("{}/v1", server.url()),
        Retry::default(),
    )
    .complete(&request(Api::OpenaiChat))
    .await
    .unwrap_err();
    let api = error.api_error().unwrap();
    assert_eq!(api.error_type.as_deref(), Some("invalid_request_error"));
    assert_eq!(api.code.as_deref(), Some("model_not_found"));
    let url = format!("{}/v1/chat/completions", server.url());
    assert_eq!(api.url, url);
    let text = error.to_string();
    assert!(text.contains(&url), "{text}");
    assert!(text.contains("model_not_found") && text.contains("invalid_request_error"));
    // A Gemini body's numeric code only repeats the status.
    let server = Server::start(vec![Canned::body(
        404,
        r#"{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}"#,
    )])
    .await;
    let error = client(Api::Gemini, &server.url(), Retry::default())
        .complete(&request(Api::Gemini))
        .await
        .unwrap_err();
    let api = error.api_error().unwrap();
    assert_eq!(api.error_type.as_deref(), Some("NOT_FOUND"));
    assert_eq!(api.code, None);
}

#[tokio::test]
async fn a_refused_connection_names_its_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let error = Client::builder(Endpoint::openai_compatible(&url))
        .retry(Retry::none())
        .build()
        .unwrap()
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap_err();
    let ClientError::Connect { url: named, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*named, format!("{url}/chat/completions"));
    assert!(error.to_string().contains(named.as_str()));
}
