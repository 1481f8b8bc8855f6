//! The API key never shows: not in `Debug`, an error, or a log line; and it
//! goes in each API's own header.

use std::sync::{Mutex, OnceLock};

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::Api;
use bytes::Bytes;

use crate::server::{Canned, End, Server};
use crate::{drain, request};

const SECRET: &str = "sk-secret-5f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// Every log line of the process, at every level.
struct Capture(Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", record.target(), record.args()));
    }
    fn flush(&self) {}
}

fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<&'static Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::new(Capture(Mutex::new(Vec::new()))));
        let _ = log::set_logger(capture);
        log::set_max_level(log::LevelFilter::Trace);
        capture
    })
}

#[tokio::test]
async fn the_key_never_leaks_and_goes_in_each_apis_header() {
    let capture = capture();
    let mut shown = Vec::new();
    for (api, header, value) in [
        (Api::OpenaiChat, "authorization", format!("Bearer {SECRET}")),
        (
            Api::OpenaiResponses,
            "authorization",
            format!("Bearer {SECRET}"),
        ),
        (Api::Anthropic, "x-api-key", SECRET.to_owned()),
        (Api::Gemini, "x-goog-api-key", SECRET.to_owned()),
    ] {
        let server = Server::start(vec![
            Canned::body(
                401,
                r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#,
            ),
            Canned::body(500, "oops"),
            Canned::sse(vec![Bytes::from_static(b"data: {\"broken\n\n")]).ending(End::Reset),
        ])
        .await;
        let endpoint = Endpoint::for_api(api)
            .with_base_url(&server.url())
            .with_key(ApiKey::new(SECRET));
        shown.push(format!("{endpoint:?}"));
        let client = Client::builder(endpoint)
            .retry(Retry::none())
            .build()
            .unwrap();
        shown.push(format!("{client:?}"));
        for _ in 0..3 {
            let (events, result) = drain(&client, &request(api)).await;
            shown.push(format!("{events:?}"));
            match result {
                Ok(reply) => shown.push(format!("{reply:?}")),
                Err(e) => shown.push(format!("{e} {e:?}")),
            }
        }
        let received = server.received();
        assert_eq!(received[0].header(header), Some(value.as_str()), "{api}");
        if api == Api::Anthropic {
            assert_eq!(received[0].header("anthropic-version"), Some("2023-06-01"));
        }
        // A connection that fails.
        drop(server);
    }
    let refused = Client::builder(
        Endpoint::anthropic()
            .with_base_url("http://127.0.0.1:9")
            .with_key(ApiKey::new(SECRET)),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let error = refused
        .complete(&request(Api::Anthropic))
        .await
        .unwrap_err();
    shown.push(format!("{error} {error:?}"));
    shown.extend(capture.0.lock().unwrap().iter().cloned());
    assert!(shown.len() > 20);
    for text in &shown {
        assert!(!text.contains(SECRET), "the key leaked: {text}");
        assert!(
            !text.contains(&SECRET[3..20]),
            "part of the key leaked: {text}"
        );
    }
}

#[test]
fn a_missing_key_is_an_error_naming_the_variable() {
    let endpoint = Endpoint::gemini().without_key();
    assert!(!endpoint.has_key());
    let endpoint = Endpoint::openai_compatible("http://localhost:11434/v1");
    assert!(Client::new(endpoint).is_ok());
}

#[test]
fn endpoints_build_each_apis_url() {
    let azure = Endpoint::azure_openai(
        Api::OpenaiChat,
        "https://r.openai.azure.com/",
        "gpt4o",
        "2024-10-21",
    );
    assert_eq!(
        azure.url("ignored", true),
        "https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
    );
    let azure = Endpoint::azure_openai(
        Api::OpenaiResponses,
        "https://r.openai.azure.com",
        "gpt4o",
        "preview",
    );
    assert_eq!(
        azure.url("x", true),
        "https://r.openai.azure.com/openai/responses?api-version=preview"
    );
    assert_eq!(
        Endpoint::anthropic().url("m", true),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        Endpoint::gemini().url("gemini-2.5-pro", false),
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
    );
    assert_eq!(
        Endpoint::openai_responses().url("m", false),
        "https://api.openai.com/v1/responses"
    );
    let groq = Endpoint::compatible("groq").unwrap();
    assert_eq!(
        groq.url("m", true),
        "https://api.groq.com/openai/v1/chat/completions"
    );
    assert!(Endpoint::compatible("nowhere").is_none());
}

#[test]
fn debug_shows_no_base_url_password_nor_caller_header_value() {
    let endpoint = Endpoint::openai_compatible("https://agent:hunter2-pw@gateway.example/v1")
        .with_key(ApiKey::new(SECRET))
        .with_header("x-gateway-key", "gw-secret-0042")
        .with_header("authorization", "Bearer tok-0043");
    let token_url = Endpoint::anthropic().with_base_url("https://tok-0044@gw.example/v1");
    let client = Client::new(endpoint.clone()).unwrap();
    let builder = Client::builder(endpoint.clone());
    let shown = format!("{endpoint:?} {client:?} {builder:?} {token_url:?}");
    for secret in [
        SECRET,
        "hunter2-pw",
        "gw-secret-0042",
        "tok-0043",
        "tok-0044",
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    // What is not secret still shows.
    assert!(shown.contains("agent:***@gateway.example"), "{shown}");
    assert!(shown.contains("x-gateway-key"), "{shown}");
}

#[tokio::test]
async fn an_error_shows_no_base_url_password() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::builder(Endpoint::openai_compatible(&format!(
        "http://agent:hunter2-pw@{addr}/v1"
    )))
    .retry(Retry::none())
    .build()
    .unwrap();
    let error = client
        .complete(&request(Api::OpenaiChat))
        .await
        .unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("hunter2-pw"), "{shown}");
    assert!(shown.contains("agent:***@"), "{shown}");
}
