//! OpenAI-compatible providers over HTTP on loopback, with the rules the
//! built-in endpoints need: DeepSeek's `reasoning_content` goes back on the
//! turn that called a tool; Mistral's tool-call ids are `[a-zA-Z0-9]{9}`,
//! each call paired with its result.

use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::Request;
use agentmsg::{AssistantContent, AssistantMessage, Message, StopReason, TextContent, ToolCall};
use bytes::Bytes;
use serde_json::Value;

use crate::drain;
use crate::server::{Canned, Server};

const DEEPSEEK_REPLY: &str = r#"{"id":"ds1","object":"chat.completion","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"The user wants the weather; call the tool.","content":"","tool_calls":[{"id":"call_00_x1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#;

fn deepseek_stream() -> Vec<Bytes> {
    [
        r#"{"id":"ds1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user wants "}}]}"#,
        r#"{"id":"ds1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"reasoning_content":"the weather; call the tool."}}]}"#,
        r#"{"id":"ds1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_00_x1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]}}]}"#,
        r#"{"id":"ds1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#,
        "[DONE]",
    ]
    .iter()
    .map(|e| Bytes::from(format!("data: {e}\n\n")))
    .collect()
}

const FINAL: &str = r#"{"id":"ds2","object":"chat.completion","created":2,"model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":2,"total_tokens":32}}"#;

fn deepseek(server: &Server) -> Client {
    Client::builder(
        Endpoint::compatible("deepseek")
            .unwrap()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("sk-ds")),
    )
    .retry(Retry::none())
    .build()
    .unwrap()
}

/// The second request's body after `first`, its tool result and a new turn.
async fn second_request(server: &Server, client: &Client, first: AssistantMessage) -> Value {
    let call = first.tool_calls().next().expect("a tool call").clone();
    let messages = vec![
        Message::user("Weather in Paris?"),
        Message::Assistant(first),
        Message::tool_result(&call.id, &call.name, "18°C, sunny"),
    ];
    let reply = client
        .complete(&Request::new("deepseek-reasoner", messages))
        .await
        .unwrap();
    assert_eq!(reply.message.text_content(), "Sunny.");
    server.received().last().unwrap().body.clone()
}

#[tokio::test]
async fn deepseek_reasoning_content_goes_back_with_the_tool_call() {
    for stream in [false, true] {
        let first = if stream {
            Canned::sse(deepseek_stream())
        } else {
            Canned::body(200, DEEPSEEK_REPLY)
        };
        let server = Server::start(vec![first, Canned::body(200, FINAL)]).await;
        let client = deepseek(&server);
        let request = Request::new(
            "deepseek-reasoner",
            vec![Message::user("Weather in Paris?")],
        );
        let reply = if stream {
            drain(&client, &request).await.1.unwrap()
        } else {
            client.complete(&request).await.unwrap()
        };
        let message = reply.message;
        assert_eq!(message.provider, "deepseek", "the endpoint's provider");
        let thinking = message.thinking().next().expect("a thinking block");
        assert_eq!(
            thinking.thinking,
            "The user wants the weather; call the tool."
        );
        assert_eq!(thinking.signature.as_deref(), Some("reasoning_content"));
        assert_eq!(message.stop_reason, StopReason::ToolUse);

        let body = second_request(&server, &client, message).await;
        let assistant = &body["messages"][1];
        assert_eq!(assistant["role"], "assistant");
        assert_eq!(
            assistant["reasoning_content"], "The user wants the weather; call the tool.",
            "stream {stream}: {assistant}"
        );
        assert_eq!(assistant["tool_calls"][0]["id"], "call_00_x1");
        assert_eq!(body["messages"][2]["tool_call_id"], "call_00_x1");
    }
}

#[tokio::test]
async fn reasoning_goes_only_to_the_provider_and_model_that_wrote_it() {
    let server = Server::start(vec![
        Canned::body(200, DEEPSEEK_REPLY),
        Canned::body(200, FINAL),
    ])
    .await;
    let client = deepseek(&server);
    let first = client
        .complete(&Request::new(
            "deepseek-reasoner",
            vec![Message::user("Weather in Paris?")],
        ))
        .await
        .unwrap()
        .message;
    // The same turn sent to another model of DeepSeek, and to Groq.
    let call = first.tool_calls().next().unwrap().clone();
    let messages = vec![
        Message::user("Weather in Paris?"),
        Message::Assistant(first),
        Message::tool_result(&call.id, &call.name, "18°C"),
    ];
    client
        .complete(&Request::new("deepseek-chat", messages.clone()))
        .await
        .unwrap();
    let other_model = server.received().last().unwrap().body.clone();
    assert!(
        other_model["messages"][1]
            .get("reasoning_content")
            .is_none(),
        "{other_model}"
    );
    let groq_server = Server::start(vec![Canned::body(200, FINAL)]).await;
    Client::new(
        Endpoint::compatible("groq")
            .unwrap()
            .with_base_url(&groq_server.url())
            .with_key(ApiKey::new("gsk")),
    )
    .unwrap()
    .complete(&Request::new("deepseek-reasoner", messages))
    .await
    .unwrap();
    let groq = groq_server.received()[0].body.clone();
    assert!(
        groq["messages"][1].get("reasoning_content").is_none(),
        "{groq}"
    );
}

fn mistral_id(id: &str) -> bool {
    id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric())
}

#[tokio::test]
async fn mistral_ids_are_nine_alphanumerics_and_stay_paired() {
    let reply = r#"{"id":"m1","object":"chat.completion","created":1,"model":"mistral-large-latest","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"Qx7Zk2Lm9","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}"#;
    let server = Server::start(vec![Canned::body(200, reply)]).await;
    let client = Client::new(
        Endpoint::compatible("mistral")
            .unwrap()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("mk")),
    )
    .unwrap();
    // A conversation begun with Anthropic: its ids are not Mistral's.
    let claude = AssistantMessage::new([
        AssistantContent::Text(TextContent::new("Checking both.")),
        AssistantContent::ToolCall(ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "weather",
            serde_json::json!({"city": "Paris"}),
        )),
        AssistantContent::ToolCall(ToolCall::new(
            "toolu_01B11",
            "weather",
            serde_json::json!({"city": "Oslo"}),
        )),
    ])
    .with_origin("anthropic-messages", "anthropic", "claude-sonnet-4-5");
    let messages = vec![
        Message::user("Weather in Paris and Oslo?"),
        Message::Assistant(claude),
        Message::tool_result("toolu_01B11", "weather", "2°C"),
        Message::tool_result("toolu_01A09q90qw90lq917835lq9", "weather", "18°C"),
        Message::user("And Rome?"),
    ];
    let request = Request::new("mistral-large-latest", messages.clone());
    let first = client.complete(&request).await.unwrap();
    assert_eq!(first.message.provider, "mistral");
    assert!(first
        .report
        .changes
        .iter()
        .any(|c| c.detail.contains("toolu_01B11")));
    let body = server.received()[0].body.clone();
    let messages_sent = body["messages"].as_array().unwrap();
    let calls: Vec<&str> = messages_sent[1]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|id| mistral_id(id)), "{calls:?}");
    assert_ne!(calls[0], calls[1]);
    // Each result carries its own call's id.
    assert_eq!(messages_sent[2]["tool_call_id"], calls[1]);
    assert_eq!(messages_sent[3]["tool_call_id"], calls[0]);
    // The mapping is deterministic: the same conversation, the same ids.
    client.complete(&request).await.unwrap();
    assert_eq!(server.received()[1].body, body);

    // Mistral's own id goes back unchanged.
    let mut next = messages;
    next.push(Message::Assistant(first.message.clone()));
    next.push(Message::tool_result("Qx7Zk2Lm9", "weather", "25°C"));
    client
        .complete(&Request::new("mistral-large-latest", next))
        .await
        .unwrap();
    let body = server.received()[2].body.clone();
    let sent = body["messages"].as_array().unwrap();
    let last_call = &sent[sent.len() - 2];
    assert_eq!(last_call["tool_calls"][0]["id"], "Qx7Zk2Lm9");
    assert_eq!(sent[sent.len() - 1]["tool_call_id"], "Qx7Zk2Lm9");
}
