//! The loop on a real `http::Client`, against a real HTTP server on loopback
//! serving Anthropic streams.

use agentmsg::agent::{Agent, AgentEvent, ScriptedModel};
use agentmsg::http::{ApiKey, Client, Endpoint, Retry};
use agentmsg::providers::StreamEvent;
use agentmsg::{AssistantMessage, Message, Session, StopReason, Usage};
use bytes::Bytes;
use serde_json::json;

use crate::server::{Canned, End, Server};
use crate::{call, calls, outline, reply_at, text, transcript, Act, Add, MODEL};

/// `reply` as an Anthropic stream, cut in 7-byte chunks.
fn streamed(reply: &AssistantMessage) -> Canned {
    let sse = ScriptedModel::sse(reply, "claude-sonnet-4-5-20250929").unwrap();
    Canned::sse(
        sse.as_bytes()
            .chunks(7)
            .map(Bytes::copy_from_slice)
            .collect(),
    )
}

fn client(server: &Server) -> Client {
    Client::builder(
        Endpoint::anthropic()
            .with_base_url(&server.url())
            .with_key(ApiKey::new("sk-loopback")),
    )
    .retry(Retry::none())
    .idle_timeout(Some(std::time::Duration::from_secs(20)))
    .build()
    .unwrap()
}

#[tokio::test]
async fn the_loop_runs_tools_over_http() {
    let server = Server::start(vec![
        streamed(
            &calls(vec![
                call("toolu_1", "add", json!({"a": 2, "b": 3})),
                call("toolu_2", "act", json!({"what": "fail"})),
            ])
            .with_usage(Usage::new(610, 64)),
        ),
        streamed(&text("5, and the disk is full.").with_usage(Usage::new(700, 9))),
    ])
    .await;
    let agent = Agent::new(client(&server), MODEL)
        .system("Use the tools.")
        .max_tokens(1024)
        .tool(Add::default())
        .tool(Act);
    let mut session = Session::new();
    let mut events = Vec::new();
    let outcome = agent
        .prompt(&mut session, Message::user("2+3?"), |e| events.push(e))
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Stop);
    assert_eq!((outcome.usage.input, outcome.usage.output), (1310, 73));
    assert_eq!(
        outline(&events),
        [
            "agent_start",
            "turn_start 1",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "update",
            "message_end assistant",
            "tool_start toolu_1",
            "tool_start toolu_2",
            "tool_end toolu_2 error",
            "tool_end toolu_1",
            "message_start toolResult",
            "message_end toolResult",
            "message_start toolResult",
            "message_end toolResult",
            "turn_end 1",
            "turn_start 2",
            "message_start assistant",
            "update",
            "message_end assistant",
            "turn_end 2",
            "agent_end Stop",
        ]
    );
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].path, "/messages");
    assert_eq!(received[0].body["stream"], true);
    assert_eq!(received[0].body["tools"][1]["name"], "act");
    let results = &received[1].body["messages"][2]["content"];
    assert_eq!(results[0]["content"][0]["text"], "5");
    assert_eq!(results[1]["is_error"], true);
    let reply = session.entries()[4].message().unwrap().as_llm().unwrap();
    assert_eq!(
        reply.as_assistant().unwrap().model,
        "claude-sonnet-4-5-20250929"
    );
    assert_eq!(transcript(&session)[4].1, "5, and the disk is full.");
}

#[tokio::test]
async fn cancelling_a_stalled_stream_keeps_what_came() {
    // The server sends half the reply, then nothing more.
    let sse = ScriptedModel::sse(
        &text("alpha beta gamma delta epsilon zeta eta theta"),
        MODEL,
    )
    .unwrap();
    // Up to the end of the first text delta.
    let first = sse.find("alpha").unwrap();
    let half = first + sse[first..].find("\n\n").unwrap() + 2;
    let canned =
        Canned::sse(vec![Bytes::copy_from_slice(&sse.as_bytes()[..half])]).ending(End::Stall);
    let server = Server::start(vec![canned]).await;
    let agent = Agent::new(client(&server), MODEL);
    let handle = agent.handle();
    let mut session = Session::new();
    let mut events = Vec::new();
    let outcome = agent
        .prompt(&mut session, Message::user("letters"), |e| {
            if matches!(
                &e,
                AgentEvent::MessageUpdate {
                    event: StreamEvent::TextDelta { .. }
                }
            ) {
                handle.cancel();
            }
            events.push(e);
        })
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let reply = reply_at(&session, 1);
    assert_eq!(reply.stop_reason, StopReason::Aborted);
    assert!(
        reply.text_content().starts_with("alpha beta"),
        "{:?}",
        reply.text_content()
    );
    // The server never sent usage: both counts are estimated.
    assert!(reply.usage.input > 0);
    assert!(reply.usage.output > 0);
    assert_eq!(outcome.usage, reply.usage);
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentEnd {
            stop_reason: StopReason::Aborted,
            ..
        })
    ));
}

#[tokio::test]
async fn an_error_event_mid_stream_keeps_what_came() {
    // Half the reply, then the provider's own error event.
    let sse = ScriptedModel::sse(
        &text("alpha beta gamma delta epsilon zeta eta theta"),
        MODEL,
    )
    .unwrap();
    let first = sse.find("alpha").unwrap();
    let half = first + sse[first..].find("\n\n").unwrap() + 2;
    let body = format!(
        "{}event: error\ndata: {}\n\n",
        &sse[..half],
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
    );
    let server = Server::start(vec![Canned::sse(vec![Bytes::from(body)])]).await;
    let agent = Agent::new(client(&server), MODEL);
    let mut session = Session::new();
    let error = agent
        .prompt(&mut session, Message::user("letters"), |_| {})
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Overloaded"), "{error}");
    let reply = reply_at(&session, 1);
    assert_eq!(reply.stop_reason, StopReason::Error);
    assert!(reply
        .error_message
        .as_deref()
        .unwrap()
        .contains("Overloaded"));
    // The text that came before the error is kept.
    assert!(
        reply.text_content().starts_with("alpha"),
        "{:?}",
        reply.text_content()
    );
}

#[tokio::test]
async fn an_error_status_ends_the_run_with_an_error() {
    let server = Server::start(vec![Canned::body(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad tool"}}"#,
    )])
    .await;
    let agent = Agent::new(client(&server), MODEL);
    let mut session = Session::new();
    let mut events = Vec::new();
    let error = agent
        .prompt(&mut session, Message::user("hi"), |e| events.push(e))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("bad tool"), "{error}");
    let reply = reply_at(&session, 1);
    assert_eq!(reply.stop_reason, StopReason::Error);
    assert_eq!(
        (reply.api.as_str(), reply.model.as_str()),
        ("anthropic-messages", MODEL)
    );
    assert!(reply.error_message.unwrap().contains("bad tool"));
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentEnd {
            stop_reason: StopReason::Error,
            ..
        })
    ));
}

#[tokio::test]
async fn steering_approval_and_a_panicking_tool_over_http() {
    let server = Server::start(vec![
        streamed(&calls(vec![
            call("toolu_1", "add", json!({"a": 1, "b": 1})),
            call("toolu_2", "act", json!({"what": "panic"})),
            call("toolu_3", "act", json!({"what": "wave"})),
        ])),
        streamed(&calls(vec![call(
            "toolu_4",
            "act",
            json!({"what": "stop"}),
        )])),
        streamed(&text("never asked for")),
    ])
    .await;
    let agent = Agent::new(client(&server), MODEL)
        .tool(Add::default())
        .tool(Act)
        .approve(|call| {
            let deny = call.id == "toolu_3";
            async move {
                if deny {
                    agentmsg::agent::Approval::Deny("no waving".into())
                } else {
                    agentmsg::agent::Approval::Allow
                }
            }
        });
    let handle = agent.handle();
    let mut session = Session::new();
    let mut steered = false;
    let outcome = agent
        .prompt(&mut session, Message::user("go"), |e| {
            if matches!(e, AgentEvent::ToolExecutionStart { .. }) && !steered {
                steered = true;
                handle.steer(Message::user("steer: hurry"));
            }
        })
        .await
        .unwrap();
    // The second turn's only result asked to stop: no third request.
    assert!(outcome.terminated);
    assert_eq!(outcome.turns, 2);
    let received = server.received();
    assert_eq!(received.len(), 2);
    let second = &received[1].body["messages"];
    let results = &second[2]["content"];
    assert_eq!(results[0]["content"][0]["text"], "2");
    assert_eq!(
        results[1]["content"][0]["text"],
        "the tool panicked: the tool broke"
    );
    assert_eq!(
        results[2]["content"][0]["text"],
        "the call was denied: no waving"
    );
    // The steering message follows the results, in the same user turn.
    assert!(second.to_string().contains("steer: hurry"));
    assert_eq!(
        transcript(&session)
            .iter()
            .map(|(kind, _)| kind.as_str())
            .collect::<Vec<_>>(),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "toolResult",
            "user",
            "assistant",
            "toolResult"
        ]
    );
}

#[tokio::test]
async fn the_turn_limit_over_http() {
    let server = Server::start(vec![streamed(&calls(vec![call(
        "toolu_1",
        "add",
        json!({"a": 1, "b": 1}),
    )]))])
    .await;
    let agent = Agent::new(client(&server), MODEL)
        .tool(Add::default())
        .max_turns(2);
    let outcome = agent
        .prompt(&mut Session::new(), Message::user("go"), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::MaxTurns);
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn the_loop_on_openai_chat_scripted_and_over_http() {
    use agentmsg::providers::Api;
    let replies = [
        calls(vec![call("call_1", "add", json!({"a": 20, "b": 22}))]).with_usage(Usage::new(50, 7)),
        text("It is 42.").with_usage(Usage::new(80, 4)),
    ];
    // Scripted, through the Chat encoder and stream decoder.
    let model = ScriptedModel::new(replies.clone()).with_api(Api::OpenaiChat);
    let agent = Agent::new(model.clone(), "gpt-4.1").tool(Add::default());
    let mut session = Session::new();
    let outcome = agent
        .prompt(&mut session, Message::user("20+22?"), |_| {})
        .await
        .unwrap();
    assert_eq!((outcome.usage.input, outcome.usage.output), (130, 11));
    assert_eq!(transcript(&session)[2].1, "42");
    assert_eq!(transcript(&session)[3].1, "It is 42.");
    let second = &model.requests()[1];
    assert_eq!(second["tools"][0]["function"]["name"], "add");
    assert_eq!(second["messages"][2]["role"], "tool");
    assert_eq!(second["messages"][2]["tool_call_id"], "call_1");

    // The same chunks served on loopback to a real Chat client.
    let server = Server::start(
        replies
            .iter()
            .map(|reply| {
                let sse = ScriptedModel::sse_for(Api::OpenaiChat, reply, "gpt-4.1").unwrap();
                Canned::sse(
                    sse.as_bytes()
                        .chunks(5)
                        .map(Bytes::copy_from_slice)
                        .collect(),
                )
            })
            .collect(),
    )
    .await;
    let client = Client::builder(
        Endpoint::openai_compatible(&server.url()).with_key(ApiKey::new("sk-loopback")),
    )
    .retry(Retry::none())
    .build()
    .unwrap();
    let agent = Agent::new(client, "gpt-4.1").tool(Add::default());
    let mut over_http = Session::new();
    let outcome = agent
        .prompt(&mut over_http, Message::user("20+22?"), |_| {})
        .await
        .unwrap();
    assert_eq!((outcome.usage.input, outcome.usage.output), (130, 11));
    assert_eq!(transcript(&over_http), transcript(&session));
    assert_eq!(server.received()[1].body["messages"], second["messages"]);
}
