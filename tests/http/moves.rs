//! One session moved between providers with nothing changed but the endpoint
//! (issue 39): Anthropic, Claude on Bedrock, Gemini on Vertex AI, Claude on
//! Vertex AI, back to Anthropic, then Gemini on Vertex again and another
//! Claude on Bedrock. Each provider is a real HTTP server on loopback that
//! answers its own API's way; every request goes through the same
//! [`ask`] — a session's context, a request, `Client::complete`, the reply
//! appended — and what each request body carries is checked: thinking goes
//! back to the model that wrote it, on any platform serving that model with
//! Anthropic's signatures (Anthropic says a signature made on the Claude API,
//! Bedrock or Vertex verifies on the others), and is dropped, and reported,
//! everywhere else.

use agentmsg::http::{ApiKey, Client, Endpoint, Reply, Retry};
use agentmsg::project::ChangeKind;
use agentmsg::providers::bedrock::AwsCredentials;
use agentmsg::providers::{Reasoning, Request};
use agentmsg::{AssistantContent, Message, Session};
use serde_json::{json, Value};

use crate::server::{Canned, Received, Server};

/// Claude Sonnet 4.5 as each platform names it.
const ANTHROPIC: &str = "claude-sonnet-4-5";
const BEDROCK: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const VERTEX_CLAUDE: &str = "claude-sonnet-4-5@20250929";
const GEMINI: &str = "gemini-2.5-pro";
/// Another Claude on Bedrock: nothing signed by Sonnet goes to it.
const BEDROCK_OPUS: &str = "us.anthropic.claude-opus-4-1-20250805-v1:0";

/// The one code path of every turn: the session read back from its bytes
/// (as an application keeps it between turns), `question` appended, the
/// session's context sent to `model` through `client`, the reply appended.
async fn ask(session: &mut Session, client: &Client, model: &str, question: &str) -> Reply {
    turn(session, client, model, question, false).await
}

/// [`ask`], the reply streamed or whole.
async fn turn(
    session: &mut Session,
    client: &Client,
    model: &str,
    question: &str,
    stream: bool,
) -> Reply {
    *session = Session::read(&session.to_bytes()).unwrap();
    session.append(Message::user(question).into()).unwrap();
    let context = session.context(None).unwrap();
    let request = Request::new(model, &context)
        .with_reasoning(Reasoning::Budget(1024))
        .with_max_tokens(4096);
    let reply = if stream {
        crate::drain(client, &request).await.1.unwrap()
    } else {
        client.complete(&request).await.unwrap()
    };
    session
        .append(Message::Assistant(reply.message.clone()).into())
        .unwrap();
    reply
}

fn anthropic_reply(model: &str, thought: &str, signature: &str, text: &str) -> Canned {
    Canned::body(
        200,
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "thinking", "thinking": thought, "signature": signature},
                        {"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 20, "output_tokens": 10}})
        .to_string(),
    )
}

fn converse_reply(thought: &str, signature: &str, text: &str) -> Canned {
    Canned::body(
        200,
        json!({"output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": thought, "signature": signature}}},
                {"text": text}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 30, "outputTokens": 10, "totalTokens": 40}})
        .to_string(),
    )
}

fn gemini_reply(thought: &str, signature: &str, text: &str) -> Canned {
    Canned::body(
        200,
        json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": thought, "thought": true, "thoughtSignature": signature},
                {"text": text}]},
              "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 10, "totalTokenCount": 50},
            "modelVersion": GEMINI, "responseId": "r1"})
        .to_string(),
    )
}

/// The last request `server` received.
fn last(server: &Server) -> Received {
    server.received().pop().expect("a request")
}

/// The blocks of each model turn of `body` (`list`: the turns' key; `role`:
/// the model's role name; `blocks`: a turn's key of its blocks), each as
/// `describe` tells it.
fn model_turns(
    body: &Value,
    [list, role, blocks]: [&str; 3],
    describe: impl Fn(&Value) -> String,
) -> Vec<Vec<String>> {
    body[list]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| {
            m[blocks]
                .as_array()
                .unwrap()
                .iter()
                .map(&describe)
                .collect()
        })
        .collect()
}

/// The Anthropic-body assistant turns' blocks, by type (thinking with its
/// signature, text with its text).
fn anthropic_turns(body: &Value) -> Vec<Vec<String>> {
    model_turns(body, ["messages", "assistant", "content"], |b| {
        match b["type"].as_str().unwrap() {
            "thinking" => format!("thinking {}", b["signature"].as_str().unwrap()),
            "text" => format!("text {}", b["text"].as_str().unwrap()),
            other => other.to_owned(),
        }
    })
}

/// The same of a Converse body.
fn converse_turns(body: &Value) -> Vec<Vec<String>> {
    model_turns(body, ["messages", "assistant", "content"], |b| {
        match (&b["reasoningContent"], &b["text"]) {
            (Value::Object(r), _) => format!(
                "thinking {}",
                r["reasoningText"]["signature"].as_str().unwrap()
            ),
            (_, Value::String(text)) => format!("text {text}"),
            _ => b.to_string(),
        }
    })
}

/// The same of a Gemini body (`model` turns; a thought part with its
/// signature).
fn gemini_turns(body: &Value) -> Vec<Vec<String>> {
    model_turns(body, ["contents", "model", "parts"], |p| {
        match p["thought"] {
            Value::Bool(true) => format!("thinking {}", p["thoughtSignature"].as_str().unwrap()),
            _ => format!("text {}", p["text"].as_str().unwrap()),
        }
    })
}

/// The turns (0-based, of the context sent) whose thinking was dropped.
fn dropped(reply: &Reply) -> Vec<usize> {
    reply
        .report
        .iter()
        .filter(|c| c.kind == ChangeKind::DroppedThinking)
        .map(|c| c.index)
        .collect()
}

fn strings(turns: &[&[&str]]) -> Vec<Vec<String>> {
    turns
        .iter()
        .map(|t| t.iter().map(|s| (*s).to_owned()).collect())
        .collect()
}

#[tokio::test]
async fn a_session_moves_between_anthropic_bedrock_and_vertex_with_only_the_endpoint_changed() {
    let anthropic_server = Server::start(vec![
        anthropic_reply(
            "claude-sonnet-4-5-20250929",
            "A thinks.",
            "sig-anthropic",
            "A.",
        ),
        anthropic_reply(
            "claude-sonnet-4-5-20250929",
            "A2 thinks.",
            "sig-anthropic-2",
            "A2.",
        ),
    ])
    .await;
    let bedrock_server = Server::start(vec![
        converse_reply("B thinks.", "sig-bedrock", "B."),
        converse_reply("O thinks.", "sig-opus", "O."),
    ])
    .await;
    let gemini_server = Server::start(vec![
        gemini_reply("G thinks.", "c2lnLWdlbWluaQ==", "G."),
        gemini_reply("G2 thinks.", "c2lnLWdlbWluaS0y", "G2."),
    ])
    .await;
    let claude_server = Server::start(vec![anthropic_reply(
        "claude-sonnet-4-5-20250929",
        "V thinks.",
        "sig-vertex",
        "V.",
    )])
    .await;

    let client = |endpoint: Endpoint| {
        Client::builder(endpoint)
            .retry(Retry::none())
            .build()
            .unwrap()
    };
    let anthropic = client(
        Endpoint::anthropic()
            .with_base_url(&anthropic_server.url())
            .with_key(ApiKey::new("sk-ant-test")),
    );
    let bedrock = client(
        Endpoint::bedrock_in("us-east-1")
            .with_aws_credentials(
                "us-east-1",
                AwsCredentials::new("AKIDEXAMPLE", "secret-example", None),
            )
            .with_base_url(&bedrock_server.url()),
    );
    let vertex_gemini = client(
        Endpoint::vertex_gemini("my-project", "global")
            .with_base_url(&gemini_server.url())
            .with_key(ApiKey::new("ya29.test")),
    );
    let vertex_claude = client(
        Endpoint::vertex_anthropic("my-project", "us-east5")
            .with_base_url(&claude_server.url())
            .with_key(ApiKey::new("ya29.test")),
    );

    let mut session = Session::new();

    // 1. Anthropic.
    let reply = ask(&mut session, &anthropic, ANTHROPIC, "one").await;
    assert_eq!(reply.message.text_content(), "A.");
    // Priced from the `genai-prices` database (feature `prices`).
    let priced = |reply: &Reply| {
        !cfg!(feature = "prices") || reply.message.usage.cost.is_some_and(|c| c.total > 0.0)
    };
    assert!(priced(&reply));

    // 2. Claude on Bedrock: Anthropic's signed thinking goes with it (the
    // same model, named Bedrock's way), nothing is reported.
    let reply = ask(&mut session, &bedrock, BEDROCK, "two").await;
    let sent = last(&bedrock_server);
    assert_eq!(
        sent.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    );
    assert!(sent
        .header("authorization")
        .unwrap()
        .starts_with("AWS4-HMAC-SHA256 "));
    assert_eq!(
        converse_turns(&sent.body),
        strings(&[&["thinking sig-anthropic", "text A."]])
    );
    assert_eq!(dropped(&reply), Vec::<usize>::new());
    // Converse names no model: the reply has the one asked for, and is priced.
    assert_eq!(
        (
            reply.message.provider.as_str(),
            reply.message.model.as_str()
        ),
        ("amazon-bedrock", BEDROCK)
    );
    assert!(priced(&reply));
    assert!(matches!(
        &reply.message.content[0],
        AssistantContent::Thinking(t) if t.signature.as_deref() == Some("sig-bedrock")
    ));

    // 3. Gemini on Vertex AI: Claude's thinking cannot go there; dropped from
    // both Claude turns (context messages 1 and 3), and reported.
    let reply = ask(&mut session, &vertex_gemini, GEMINI, "three").await;
    let sent = last(&gemini_server);
    assert_eq!(sent.path, "/models/gemini-2.5-pro:generateContent");
    assert_eq!(sent.header("authorization"), Some("Bearer ya29.test"));
    assert_eq!(
        gemini_turns(&sent.body),
        strings(&[&["text A."], &["text B."]])
    );
    assert_eq!(dropped(&reply), vec![1, 3]);

    // 4. Claude on Vertex AI: the Anthropic body without `model`; the
    // thinking of Claude on Anthropic and on Bedrock goes back, Gemini's is
    // dropped and reported.
    let reply = ask(&mut session, &vertex_claude, VERTEX_CLAUDE, "four").await;
    let sent = last(&claude_server);
    assert_eq!(sent.path, "/models/claude-sonnet-4-5@20250929:rawPredict");
    assert!(sent.body.get("model").is_none());
    assert_eq!(sent.body["anthropic_version"], "vertex-2023-10-16");
    assert_eq!(
        anthropic_turns(&sent.body),
        strings(&[
            &["thinking sig-anthropic", "text A."],
            &["thinking sig-bedrock", "text B."],
            &["text G."],
        ])
    );
    assert_eq!(dropped(&reply), vec![5]);

    // 5. Back to Anthropic: every Claude turn's thinking, Gemini's dropped.
    let reply = ask(&mut session, &anthropic, ANTHROPIC, "five").await;
    let sent = last(&anthropic_server);
    assert_eq!(sent.path, "/messages");
    assert_eq!(sent.body["model"], ANTHROPIC);
    assert_eq!(
        anthropic_turns(&sent.body),
        strings(&[
            &["thinking sig-anthropic", "text A."],
            &["thinking sig-bedrock", "text B."],
            &["text G."],
            &["thinking sig-vertex", "text V."],
        ])
    );
    assert_eq!(dropped(&reply), vec![5]);

    // 6. Gemini on Vertex again: its own thought goes back with its
    // signature; the four Claude turns' thinking is dropped.
    let reply = ask(&mut session, &vertex_gemini, GEMINI, "six").await;
    let sent = last(&gemini_server);
    assert_eq!(
        gemini_turns(&sent.body),
        strings(&[
            &["text A."],
            &["text B."],
            &["thinking c2lnLWdlbWluaQ==", "text G."],
            &["text V."],
            &["text A2."],
        ])
    );
    assert_eq!(dropped(&reply), vec![1, 3, 7, 9]);

    // 7. Another Claude on Bedrock: no signature Sonnet or Gemini wrote goes
    // to Opus; all six thinking turns are dropped and reported.
    let reply = ask(&mut session, &bedrock, BEDROCK_OPUS, "seven").await;
    let sent = last(&bedrock_server);
    assert_eq!(
        converse_turns(&sent.body),
        strings(&[
            &["text A."],
            &["text B."],
            &["text G."],
            &["text V."],
            &["text A2."],
            &["text G2."],
        ])
    );
    assert_eq!(dropped(&reply), vec![1, 3, 5, 7, 9, 11]);
    assert_eq!(reply.message.model, BEDROCK_OPUS);

    // The session holds every turn, each reply stamped with where it came from.
    let context = session.context(None).unwrap();
    let sources: Vec<(String, String)> = context
        .messages
        .iter()
        .filter_map(|m| m.as_llm()?.as_assistant())
        .map(|a| (a.provider.clone(), a.model.clone()))
        .collect();
    assert_eq!(
        sources,
        [
            ("anthropic", "claude-sonnet-4-5-20250929"),
            ("amazon-bedrock", BEDROCK),
            ("google", GEMINI),
            ("anthropic", "claude-sonnet-4-5-20250929"),
            ("anthropic", "claude-sonnet-4-5-20250929"),
            ("google", GEMINI),
            ("amazon-bedrock", BEDROCK_OPUS),
        ]
        .map(|(p, m)| (p.to_owned(), m.to_owned()))
    );
}

/// [`ask`] with the reply streamed: the same path for every API, whatever
/// its framing (server-sent events, AWS's event stream).
async fn ask_streamed(
    session: &mut Session,
    client: &Client,
    model: &str,
    question: &str,
) -> Reply {
    turn(session, client, model, question, true).await
}

/// An Anthropic stream: thinking with its signature, then `text`.
fn anthropic_stream(thought: &str, signature: &str, text: &str) -> Canned {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [], "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thought}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": signature}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 10}}),
        json!({"type": "message_stop"}),
    ];
    let sse: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Canned::sse(vec![sse.into()])
}

/// A ConverseStream reply as AWS event-stream frames, in 9-byte pieces:
/// reasoning in two deltas and its signature, then `text`.
fn converse_stream(thought: &str, signature: &str, text: &str) -> Canned {
    use crate::common::event_stream::event_frame as frame;
    let (first, rest) = thought.split_at(thought.len() / 2);
    let delta = |delta: Value| {
        frame(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": delta}).to_string(),
        )
    };
    let bytes = [
        frame("messageStart", r#"{"role":"assistant"}"#),
        delta(json!({"reasoningContent": {"text": first}})),
        delta(json!({"reasoningContent": {"text": rest}})),
        delta(json!({"reasoningContent": {"signature": signature}})),
        frame("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        frame(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 1, "delta": {"text": text}}).to_string(),
        ),
        frame("contentBlockStop", r#"{"contentBlockIndex":1}"#),
        frame("messageStop", r#"{"stopReason":"end_turn"}"#),
        frame(
            "metadata",
            r#"{"usage":{"inputTokens":30,"outputTokens":10,"totalTokens":40}}"#,
        ),
    ]
    .concat();
    Canned::event_stream(bytes.chunks(9).map(bytes::Bytes::copy_from_slice).collect())
}

#[tokio::test]
async fn streamed_replies_move_the_same_way() {
    let anthropic_server = Server::start(vec![
        anthropic_stream("A thinks.", "sig-anthropic", "A."),
        anthropic_stream("A2 thinks.", "sig-anthropic-2", "A2."),
    ])
    .await;
    let bedrock_server = Server::start(vec![converse_stream(
        "B thinks it over.",
        "sig-bedrock",
        "B.",
    )])
    .await;
    let anthropic = Client::builder(
        Endpoint::anthropic()
            .with_base_url(&anthropic_server.url())
            .with_key(ApiKey::new("sk-ant-test")),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let bedrock = Client::builder(
        Endpoint::bedrock_in("eu-west-1")
            .with_key(ApiKey::new("bedrock-api-key"))
            .with_base_url(&bedrock_server.url()),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let bedrock_eu = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0";

    let mut session = Session::new();
    ask_streamed(&mut session, &anthropic, ANTHROPIC, "one").await;
    let reply = ask_streamed(&mut session, &bedrock, bedrock_eu, "two").await;
    let sent = last(&bedrock_server);
    assert_eq!(
        sent.path,
        "/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert_eq!(
        converse_turns(&sent.body),
        strings(&[&["thinking sig-anthropic", "text A."]])
    );
    // The streamed reply, too, carries the model asked for, and its price.
    assert_eq!(reply.message.model, bedrock_eu);
    assert!(!cfg!(feature = "prices") || reply.message.usage.cost.is_some_and(|c| c.total > 0.0));
    assert!(matches!(
        &reply.message.content[0],
        AssistantContent::Thinking(t)
            if t.thinking == "B thinks it over." && t.signature.as_deref() == Some("sig-bedrock")
    ));

    ask_streamed(&mut session, &anthropic, ANTHROPIC, "three").await;
    let sent = last(&anthropic_server);
    assert_eq!(sent.body["stream"], true);
    assert_eq!(
        anthropic_turns(&sent.body),
        strings(&[
            &["thinking sig-anthropic", "text A."],
            &["thinking sig-bedrock", "text B."],
        ])
    );
}
