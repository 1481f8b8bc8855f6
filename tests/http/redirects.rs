//! Redirects: no key, caller header or body ever reaches another origin, on
//! any redirect code, for any endpoint; a redirect that would turn the POST
//! into a GET is refused; a 307 or 308 within the origin is followed with the
//! method, the headers and the body.

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, Retry};
use agentmsg::providers::Api;
use bytes::Bytes;

use crate::server::{Canned, Server};
use crate::{anthropic_sse, drain, whole_reply};

const SECRET: &str = "sk-redirect-0f9e8d7c6b5a4938271605f4e3d2c1b0";
const CALLER_SECRET: &str = "caller-header-secret-77aa";
const PROMPT: &str = "the prompt is private";

/// Every endpoint kind, at `base`, with the key and a caller header.
fn endpoints(base: &str) -> Vec<(&'static str, Endpoint)> {
    let key = || ApiKey::new(SECRET);
    let keyed = |endpoint: Endpoint| {
        endpoint
            .with_base_url(base)
            .with_key(key())
            .with_header("x-caller-token", CALLER_SECRET)
    };
    vec![
        ("openai chat", keyed(Endpoint::openai_chat())),
        ("openai responses", keyed(Endpoint::openai_responses())),
        ("anthropic", keyed(Endpoint::anthropic())),
        ("gemini", keyed(Endpoint::gemini())),
        (
            "azure chat",
            keyed(Endpoint::azure_openai(
                Api::OpenaiChat,
                base,
                "dep",
                "2024-10-21",
            )),
        ),
        (
            "azure responses",
            keyed(Endpoint::azure_openai(
                Api::OpenaiResponses,
                base,
                "dep",
                "2024-10-21",
            )),
        ),
        (
            "mistral",
            keyed(Endpoint::compatible("mistral").expect("a known server")),
        ),
        (
            "compatible",
            Endpoint::openai_compatible(base)
                .with_key(key())
                .with_header("x-caller-token", CALLER_SECRET),
        ),
    ]
}

fn prompt(api: Api) -> agentmsg::providers::Request<'static> {
    agentmsg::providers::Request::new(crate::model(api), vec![agentmsg::Message::user(PROMPT)])
}

#[tokio::test]
async fn no_redirect_to_another_origin_carries_a_secret_or_the_body() {
    // The other origin: the same host on another port, and recording all.
    let other = Server::start(vec![Canned::body(200, "{}")]).await;
    for status in [301, 302, 303, 307, 308] {
        for stream in [false, true] {
            let origin = Server::start(vec![Canned::body(status, "")
                .header("location", &format!("{}/stolen?from={status}", other.url()))])
            .await;
            for (name, endpoint) in endpoints(&origin.url()) {
                let api = endpoint.api();
                // The default retries: a refused redirect is never retried.
                let client = Client::builder(endpoint)
                    .retry(Retry::default())
                    .build()
                    .unwrap();
                let error = if stream {
                    drain(&client, &prompt(api)).await.1.unwrap_err()
                } else {
                    client.complete(&prompt(api)).await.unwrap_err()
                };
                let ClientError::Redirect {
                    status: got,
                    location,
                    url,
                    ..
                } = &error
                else {
                    panic!("{name} {status}: {error:?}");
                };
                assert_eq!(*got, status, "{name}");
                assert!(location.contains(&other.addr.to_string()), "{error}");
                assert!(url.contains(&origin.addr.to_string()), "{error}");
                let text = format!("{error} {error:?}");
                assert!(
                    text.contains("/stolen"),
                    "the error names the Location: {text}"
                );
                assert!(!text.contains(SECRET) && !text.contains(CALLER_SECRET));
            }
            assert_eq!(
                origin.received().len(),
                endpoints("http://x").len(),
                "one try each, no retry ({status})"
            );
        }
    }
    let leaked = other.received();
    assert!(
        leaked.is_empty(),
        "another origin received {} requests: {:?}",
        leaked.len(),
        leaked.first()
    );
}

#[tokio::test]
async fn a_redirect_to_another_host_name_of_the_same_machine_is_refused() {
    // `localhost` is another origin than `127.0.0.1`, even on the same port.
    let server = Server::start(vec![Canned::body(200, "{}")]).await;
    let origin = Server::start(vec![Canned::body(307, "").header(
        "location",
        &format!("http://localhost:{}/v1/messages", server.addr.port()),
    )])
    .await;
    let client = Client::new(
        Endpoint::anthropic()
            .with_base_url(&origin.url())
            .with_key(ApiKey::new(SECRET)),
    )
    .unwrap();
    let error = client.complete(&prompt(Api::Anthropic)).await.unwrap_err();
    assert!(
        matches!(error, ClientError::Redirect { status: 307, .. }),
        "{error:?}"
    );
    assert!(server.received().is_empty());
}

/// Anthropic at `server`'s `/v1`, keyed.
fn anthropic_at(server: &Server) -> Endpoint {
    Endpoint::anthropic()
        .with_base_url(&format!("{}/v1", server.url()))
        .with_key(ApiKey::new(SECRET))
}

#[tokio::test]
async fn a_307_or_308_within_the_origin_keeps_the_post_its_headers_and_body() {
    for status in [307, 308] {
        let server = Server::start(vec![
            Canned::body(status, "").header("location", "/v2/messages"),
            Canned::body(200, whole_reply(Api::Anthropic, "moved")),
        ])
        .await;
        let client =
            Client::new(anthropic_at(&server).with_header("x-caller-token", CALLER_SECRET))
                .unwrap();
        let reply = client.complete(&prompt(Api::Anthropic)).await.unwrap();
        assert_eq!(reply.message.text_content(), "moved");
        let received = server.received();
        assert_eq!(received.len(), 2);
        assert_eq!(received[1].path, "/v2/messages");
        assert_eq!(received[1].method, "POST");
        assert_eq!(received[1].header("x-api-key"), Some(SECRET));
        assert_eq!(received[1].header("x-caller-token"), Some(CALLER_SECRET));
        assert_eq!(received[1].body, received[0].body);
        assert!(received[1].body.to_string().contains(PROMPT));
    }
}

#[tokio::test]
async fn a_301_302_or_303_within_the_origin_is_refused_not_followed_as_a_get() {
    for status in [301, 302, 303] {
        // Were the GET followed, its reply would be decoded as the answer.
        let server = Server::start(vec![
            Canned::body(status, "").header("location", "/v1/elsewhere"),
            Canned::body(200, whole_reply(Api::Anthropic, "moved")),
        ])
        .await;
        let client = Client::new(anthropic_at(&server)).unwrap();
        let error = client.complete(&prompt(Api::Anthropic)).await.unwrap_err();
        let ClientError::Redirect {
            status: got,
            location,
            ..
        } = &error
        else {
            panic!("{status}: {error:?}");
        };
        assert_eq!(*got, status);
        assert!(location.ends_with("/v1/elsewhere"), "{error}");
        assert!(error.to_string().contains("GET"), "{error}");
        assert_eq!(server.received().len(), 1, "{status}");
    }
}

#[tokio::test]
async fn a_stream_redirected_within_the_origin_streams() {
    let server = Server::start(vec![
        Canned::body(308, "").header("location", "/v2/messages"),
        Canned::sse(vec![Bytes::from(anthropic_sse("here"))]),
    ])
    .await;
    let client = Client::new(anthropic_at(&server)).unwrap();
    let (_, reply) = drain(&client, &prompt(Api::Anthropic)).await;
    assert_eq!(reply.unwrap().message.text_content(), "here");
    assert_eq!(server.received()[1].body["stream"], true);
}
