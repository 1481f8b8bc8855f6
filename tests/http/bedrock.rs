//! Bedrock through the client against a loopback server: ConverseStream as
//! AWS event-stream frames (written by AWS's own encoder) in small chunks,
//! an exception frame, a frame with a bad CRC, SigV4 signing checked against
//! the headers the server received, a Bedrock API key, and no secret shown.

use std::time::{Duration, UNIX_EPOCH};

use agentmsg::http::{ApiKey, Client, ClientError, Endpoint, Retry};
use agentmsg::providers::bedrock::{sign_request, AwsCredentials};
use agentmsg::providers::{Request, StreamError};
use agentmsg::{Message, StopReason};
use bytes::Bytes;

use crate::common::event_stream::{event_frame as frame, exception_frame as exception};
use crate::drain;
use crate::server::{Canned, Server};

const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLETOKEN";

fn start_and_text() -> Vec<u8> {
    let mut bytes = frame("messageStart", r#"{"role":"assistant"}"#);
    bytes.extend(frame(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"text":"Hel"}}"#,
    ));
    bytes.extend(frame(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"text":"lo."}}"#,
    ));
    bytes
}

/// The bytes in chunks of 7, as the server sends them.
fn event_stream(bytes: &[u8]) -> Canned {
    Canned::event_stream(bytes.chunks(7).map(Bytes::copy_from_slice).collect())
}

fn signed_client(url: &str) -> Client {
    let credentials = AwsCredentials::new("AKIDEXAMPLE", SECRET, Some(TOKEN.to_owned()));
    let endpoint = Endpoint::bedrock_in("us-west-2")
        .with_aws_credentials("us-west-2", credentials)
        .with_base_url(url);
    Client::builder(endpoint)
        .retry(Retry::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_signed_stream_of_event_stream_frames_decodes() {
    let mut bytes = start_and_text();
    bytes.extend(frame("contentBlockStop", r#"{"contentBlockIndex":0}"#));
    bytes.extend(frame("messageStop", r#"{"stopReason":"end_turn"}"#));
    bytes.extend(frame(
        "metadata",
        r#"{"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7}}"#,
    ));
    let server = Server::start(vec![event_stream(&bytes)]).await;
    let client = signed_client(&server.url());
    let request = Request::new(MODEL, vec![Message::user("Hi")]);
    let (events, reply) = drain(&client, &request).await;
    let reply = reply.unwrap();
    assert_eq!(reply.message.text_content(), "Hello.");
    assert_eq!(reply.message.stop_reason, StopReason::Stop);
    assert_eq!(reply.message.usage.input, 5);
    assert!(!events.is_empty());

    let received = &server.received()[0];
    assert_eq!(
        received.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert_eq!(
        received.header("accept"),
        Some("application/vnd.amazon.eventstream")
    );
    assert_eq!(received.header("x-amz-security-token"), Some(TOKEN));
    // The signature covers what was sent: signed again here at the time the
    // request names, over the headers and body the server received, it is
    // the same.
    let date = received.header("x-amz-date").unwrap();
    let time = parse_amz_date(date);
    let authorization = received.header("authorization").unwrap();
    assert!(authorization.starts_with(&format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/us-west-2/bedrock/aws4_request",
        &date[..8]
    )));
    let url = format!("{}{}", server.url(), received.path);
    let headers = [
        ("content-type", received.header("content-type").unwrap()),
        ("accept", received.header("accept").unwrap()),
    ];
    let body = serde_json::to_vec(&received.body).unwrap();
    let credentials = AwsCredentials::new("AKIDEXAMPLE", SECRET, Some(TOKEN.to_owned()));
    // The body as sent, byte for byte (the server keeps it parsed).
    let encoded =
        agentmsg::providers::bedrock::encode_request(&request.clone().with_stream(true)).unwrap();
    let sent = serde_json::to_vec(&encoded.body).unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&sent).unwrap(),
        serde_json::from_slice::<serde_json::Value>(&body).unwrap()
    );
    let again = sign_request(
        &credentials,
        "us-west-2",
        "bedrock",
        "POST",
        &url,
        &headers,
        &sent,
        time,
    )
    .unwrap();
    let again = &again.iter().find(|(n, _)| n == "authorization").unwrap().1;
    assert_eq!(authorization, again);
    // No secret in the client's or the endpoint's Debug.
    let shown = format!("{client:?}");
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");
}

/// `20260101T120000Z` as a time.
fn parse_amz_date(date: &str) -> std::time::SystemTime {
    let n = |r: std::ops::Range<usize>| date[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(4..6), n(6..8));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(9..11) * 3600 + n(11..13) * 60 + n(13..15);
    UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).unwrap())
}

#[tokio::test]
async fn an_exception_frame_ends_the_reply_with_its_error() {
    let mut bytes = start_and_text();
    bytes.extend(exception(
        "throttlingException",
        r#"{"message":"Too many requests, please wait before trying again."}"#,
    ));
    let server = Server::start(vec![event_stream(&bytes)]).await;
    let client = signed_client(&server.url());
    let (_, reply) = drain(&client, &Request::new(MODEL, vec![Message::user("Hi")])).await;
    let message = match reply {
        Ok(reply) => reply.message,
        Err(ClientError::Api(e)) => panic!("{e:?}"),
        Err(e) => *e
            .partial()
            .cloned()
            .map(Box::new)
            .unwrap_or_else(|| panic!("{e}")),
    };
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text_content(), "Hello.");
    assert_eq!(
        message.error_message.as_deref(),
        Some("throttlingException: Too many requests, please wait before trying again.")
    );
}

#[tokio::test]
async fn a_frame_with_a_bad_crc_is_a_decode_error_naming_it() {
    let mut bytes = start_and_text();
    let at = bytes.len();
    let mut stop = frame("messageStop", r#"{"stopReason":"end_turn"}"#);
    let last = stop.len() - 6;
    stop[last] ^= 0x01;
    bytes.extend(stop);
    let server = Server::start(vec![event_stream(&bytes)]).await;
    let client = signed_client(&server.url());
    let (_, reply) = drain(&client, &Request::new(MODEL, vec![Message::user("Hi")])).await;
    let Err(ClientError::Decode {
        source, partial, ..
    }) = reply
    else {
        panic!("{reply:?}")
    };
    let StreamError::EventStream(error) = &source else {
        panic!("{source}")
    };
    assert_eq!((error.frame, error.offset), (3, at as u64), "{error}");
    assert!(error.to_string().contains("checksum"), "{error}");
    assert_eq!(partial.text_content(), "Hello.");
}

#[tokio::test]
async fn a_bedrock_api_key_is_a_bearer_token_and_complete_reads_converse() {
    let body = r#"{"output":{"message":{"role":"assistant","content":[{"text":"Hi."}]}},"stopReason":"end_turn",
        "usage":{"inputTokens":3,"outputTokens":1,"cacheReadInputTokens":0,"cacheWriteInputTokens":0,"totalTokens":4}}"#;
    let server = Server::start(vec![Canned::body(200, body)]).await;
    let endpoint = Endpoint::bedrock_in("eu-central-1")
        .with_key(ApiKey::new("bedrock-api-key-secret"))
        .with_base_url(&server.url());
    let client = Client::builder(endpoint)
        .retry(Retry::none())
        .build()
        .unwrap();
    let reply = client
        .complete(&Request::new(
            "arn:aws:bedrock:eu-central-1:123456789012:inference-profile/x",
            vec![Message::user("Hi")],
        ))
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "Hi.");
    let received = &server.received()[0];
    assert_eq!(
        received.path,
        "/model/arn%3Aaws%3Abedrock%3Aeu-central-1%3A123456789012%3Ainference-profile%2Fx/converse"
    );
    assert_eq!(
        received.header("authorization"),
        Some("Bearer bedrock-api-key-secret")
    );
    assert!(received.header("x-amz-date").is_none());
    assert!(!format!("{client:?}").contains("bedrock-api-key-secret"));
}
