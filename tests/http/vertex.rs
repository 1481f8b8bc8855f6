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

mod token {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use agentmsg::http::{ClientError, ServiceAccountKey, TokenSource};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    fn key_file() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/http/vertex/test-service-account.json")
    }

    /// A token server on loopback (a real socket, HTTP/1.1 read by hand):
    /// it checks each JWT assertion against the test key's public half, its
    /// claims and grant, and answers with `ya29.token-N` living `expires_in`
    /// seconds, or 401 when the check fails.
    async fn token_server(expires_in: u64) -> (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let count = Arc::new(AtomicUsize::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let public =
            std::fs::read(key_file().with_file_name("test-service-account.pub.pem")).unwrap();
        let (served, failed, audience) = (count.clone(), failures.clone(), url.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                let body = loop {
                    let n = socket.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break None;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            break Some(text[end + 4..end + 4 + length].to_owned());
                        }
                    }
                };
                let check = || -> Result<(), String> {
                    let body = body.ok_or("no body")?;
                    let assertion = body
                        .strip_prefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=")
                        .ok_or(format!("grant: {body}"))?;
                    let mut validation =
                        jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
                    validation.set_audience(&[audience.as_str()]);
                    let key = jsonwebtoken::DecodingKey::from_rsa_pem(&public).unwrap();
                    let claims =
                        jsonwebtoken::decode::<serde_json::Value>(assertion, &key, &validation)
                            .map_err(|e| e.to_string())?
                            .claims;
                    (claims["iss"] == "tester@agentmsg-test.iam.gserviceaccount.com"
                        && claims["scope"] == "https://www.googleapis.com/auth/cloud-platform")
                        .then_some(())
                        .ok_or(format!("claims {claims}"))
                };
                let reply = match check() {
                    Ok(()) => {
                        let n = served.fetch_add(1, Ordering::SeqCst);
                        let body = format!(
                            r#"{{"access_token":"ya29.token-{n}","expires_in":{expires_in},"token_type":"Bearer"}}"#
                        );
                        format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                    }
                    Err(why) => {
                        failed.lock().unwrap().push(why);
                        let body = r#"{"error":"invalid_grant"}"#;
                        format!("HTTP/1.1 401 Unauthorized\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                    }
                };
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        (url, count, failures)
    }

    fn gemini_reply() -> Canned {
        Canned::body(
            200,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}"#,
        )
    }

    #[tokio::test]
    async fn a_service_account_key_is_exchanged_and_the_token_cached() {
        let (token_url, fetched, failures) = token_server(3600).await;
        let key = ServiceAccountKey::from_file(&key_file())
            .unwrap()
            .with_token_uri(&token_url);
        assert_eq!(key.project_id(), Some("agentmsg-test"));
        assert!(!format!("{key:?}").contains("PRIVATE KEY"));
        let server = Server::start(vec![gemini_reply(), gemini_reply()]).await;
        let endpoint = Endpoint::vertex_gemini("agentmsg-test", "us-central1")
            .with_base_url(&server.url())
            .with_token_source(Arc::new(TokenSource::new(key)));
        let client = Client::builder(endpoint)
            .retry(Retry::none())
            .build()
            .unwrap();
        for _ in 0..2 {
            client.complete(&request("gemini-2.5-flash")).await.unwrap();
        }
        assert!(
            failures.lock().unwrap().is_empty(),
            "{:?}",
            failures.lock().unwrap()
        );
        assert_eq!(fetched.load(Ordering::SeqCst), 1, "the token is cached");
        for received in server.received() {
            assert_eq!(
                received.header("authorization"),
                Some("Bearer ya29.token-0")
            );
        }
    }

    #[tokio::test]
    async fn a_token_about_to_expire_is_fetched_again() {
        // 60 seconds left is inside the five minutes before expiry.
        let (token_url, fetched, _) = token_server(60).await;
        let key = ServiceAccountKey::from_file(&key_file())
            .unwrap()
            .with_token_uri(&token_url);
        let tokens = TokenSource::new(key);
        let first = tokens.token().await.unwrap();
        let second = tokens.token().await.unwrap();
        assert_ne!(first, second);
        assert_eq!(fetched.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_expiry_past_the_clock_is_kept_as_a_long_one() {
        let (token_url, fetched, _) = token_server(u64::MAX).await;
        let key = ServiceAccountKey::from_file(&key_file())
            .unwrap()
            .with_token_uri(&token_url);
        let tokens = TokenSource::new(key);
        let first = tokens.token().await.unwrap();
        assert_eq!(tokens.token().await.unwrap(), first);
        assert_eq!(fetched.load(Ordering::SeqCst), 1, "the token is cached");
    }

    #[tokio::test]
    async fn a_refused_exchange_and_a_bad_key_file_are_clear_errors_without_secrets() {
        let (token_url, _, failures) = token_server(3600).await;
        // Another service account's email: the server's claim check refuses it.
        let text = std::fs::read_to_string(key_file())
            .unwrap()
            .replace("tester@", "intruder@");
        let key = ServiceAccountKey::from_json(&text)
            .unwrap()
            .with_token_uri(&token_url);
        let error = TokenSource::new(key).token().await.unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, ClientError::Endpoint(_)));
        assert!(
            message.contains("401")
                && message.contains("invalid_grant")
                && message.contains("intruder@"),
            "{message}"
        );
        assert!(
            !message.contains("PRIVATE KEY") && !message.contains("assertion="),
            "{message}"
        );
        assert_eq!(failures.lock().unwrap().len(), 1);
        let error =
            ServiceAccountKey::from_json(r#"{"type":"service_account","client_email":"a@b"}"#)
                .unwrap_err();
        assert!(error.to_string().contains("private_key"), "{error}");
        let error = ServiceAccountKey::from_json(r#"{"type":"authorized_user"}"#).unwrap_err();
        assert!(
            error.to_string().contains("not a service-account key"),
            "{error}"
        );
    }
}
