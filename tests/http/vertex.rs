//! Vertex AI through the client: the URLs and bodies of Gemini and Claude on
//! Vertex pinned by golden files (`tests/http/vertex/`; written anew with
//! `AGENTMSG_BLESS=1`), and both sent to a loopback server with a bearer
//! token.

use std::path::PathBuf;

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::vertex::{model_url, Publisher};
use agentmsg::providers::{anthropic, gemini, vertex, Request};
use agentmsg::Message;

use crate::server::{Canned, Server};

fn golden(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/http/vertex")
        .join(name);
    if std::env::var_os("AGENTMSG_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        text,
        expected,
        "{} differs (AGENTMSG_BLESS=1 writes it anew)",
        path.display()
    );
}

fn request(model: &str) -> Request<'static> {
    Request::new(model, vec![Message::user("Hi")])
        .with_system("Be terse.")
        .with_max_tokens(64)
}

#[test]
fn urls_and_bodies_match_their_golden_files() {
    let mut urls = String::new();
    for (project, location) in [
        ("my-project", "us-central1"),
        ("my-project", "global"),
        ("p-2", "europe-west4"),
    ] {
        for publisher in [Publisher::Google, Publisher::Anthropic] {
            let model = match publisher {
                Publisher::Google => "gemini-2.5-pro",
                _ => "claude-sonnet-4-5@20250929",
            };
            for stream in [false, true] {
                urls.push_str(&model_url(project, location, publisher, model, stream));
                urls.push('\n');
            }
        }
    }
    // The endpoints build the same URLs.
    let gemini_endpoint = Endpoint::vertex_gemini("my-project", "global");
    assert!(urls.contains(&gemini_endpoint.url("gemini-2.5-pro", true)));
    golden("urls.txt", &urls);

    let mut claude = anthropic::encode_request(&request("claude-sonnet-4-5@20250929")).unwrap();
    vertex::anthropic_body(&mut claude.body);
    golden(
        "claude.json",
        &(serde_json::to_string_pretty(&claude.body).unwrap() + "\n"),
    );
    let gemini = gemini::encode_request(&request("gemini-2.5-pro")).unwrap();
    golden(
        "gemini.json",
        &(serde_json::to_string_pretty(&gemini.body).unwrap() + "\n"),
    );
}

#[tokio::test]
async fn claude_on_vertex_goes_to_raw_predict_without_model() {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
        "content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}}"#;
    let server = Server::start(vec![Canned::body(200, body)]).await;
    let endpoint = Endpoint::vertex_anthropic("my-project", "us-east5")
        .with_base_url(&server.url())
        .with_key(ApiKey::new("ya29.vertex-token"));
    let client = Client::builder(endpoint)
        .retry(Retry::none())
        .build()
        .unwrap();
    let reply = client
        .complete(&request("claude-sonnet-4-5@20250929"))
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "Hello.");
    let received = &server.received()[0];
    assert_eq!(
        received.path,
        "/models/claude-sonnet-4-5@20250929:rawPredict"
    );
    assert_eq!(
        received.header("authorization"),
        Some("Bearer ya29.vertex-token")
    );
    assert!(received.body.get("model").is_none());
    assert_eq!(received.body["anthropic_version"], "vertex-2023-10-16");
    assert!(!format!("{client:?}").contains("ya29.vertex-token"));
}

#[tokio::test]
async fn gemini_on_vertex_streams_from_stream_generate_content() {
    let chunk = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6},"modelVersion":"gemini-2.5-pro"}"#;
    let server = Server::start(vec![Canned::sse(vec![format!("data: {chunk}\n\n").into()])]).await;
    let endpoint = Endpoint::vertex_gemini("my-project", "global")
        .with_base_url(&server.url())
        .with_key(ApiKey::new("ya29.vertex-token"));
    let client = Client::builder(endpoint)
        .retry(Retry::none())
        .build()
        .unwrap();
    let (_, reply) = crate::drain(&client, &request("gemini-2.5-pro")).await;
    assert_eq!(reply.unwrap().message.text_content(), "Hello.");
    let received = &server.received()[0];
    assert_eq!(
        received.path,
        "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        received.header("authorization"),
        Some("Bearer ya29.vertex-token")
    );
    assert!(received.header("x-goog-api-key").is_none());
}
