//! The loop on the scripted model.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentmsg::agent::{Agent, AgentEvent, Approval, ScriptedModel};
use agentmsg::providers::StreamEvent;
use agentmsg::{Message, Session, StopReason, ToolArguments, Usage};
use serde_json::json;

use crate::{
    call, calls, outline, reply_at, text, tool_results, transcript, Act, Add, Notice, MODEL,
};

#[tokio::test]
async fn events_come_in_order_and_usage_is_summed() {
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "add", json!({"a": 1, "b": 2})),
            call("c2", "add", json!({"a": 3, "b": 4})),
        ])
        .with_usage(Usage::new(100, 20)),
        text("3 and 7.").with_usage(Usage::new(150, 5)),
    ]);
    let agent = Agent::new(model.clone(), MODEL).tool(Add::default());
    let mut session = Session::new();
    let mut events = Vec::new();
    let outcome = agent
        .prompt(&mut session, Message::user("Add 1+2 and 3+4"), |e| {
            events.push(e)
        })
        .await
        .unwrap();

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
            "tool_start c1",
            "tool_start c2",
            "tool_end c1",
            "tool_end c2",
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
    assert_eq!(outcome.stop_reason, StopReason::Stop);
    assert_eq!(outcome.turns, 2);
    assert_eq!((outcome.usage.input, outcome.usage.output), (250, 25));
    let turn_usages: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnEnd { usage, .. } => Some(usage.input),
            _ => None,
        })
        .collect();
    assert_eq!(turn_usages, [100, 150]);
    match events.last() {
        Some(AgentEvent::AgentEnd { usage, .. }) => assert_eq!(usage.output, 25),
        other => panic!("{other:?}"),
    }
    // The text streamed in deltas through the real decoder.
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageUpdate {
                event: StreamEvent::TextDelta { delta, .. },
            } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "3 and 7.");
    assert_eq!(
        transcript(&session),
        [
            ("user".to_owned(), "Add 1+2 and 3+4".to_owned()),
            ("assistant".to_owned(), String::new()),
            ("toolResult".to_owned(), "3".to_owned()),
            ("toolResult".to_owned(), "7".to_owned()),
            ("assistant".to_owned(), "3 and 7.".to_owned()),
        ]
    );
    // The second request carried the results, encoded by the real encoder.
    let second = &model.requests()[1];
    let tools = &second["tools"];
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["description"], "Adds two numbers.");
    assert_eq!(
        tools[0]["input_schema"]["properties"]["b"]["description"],
        "The second number."
    );
    let results = &second["messages"][2]["content"];
    assert_eq!(results[0]["tool_use_id"], "c1");
    assert_eq!(results[1]["tool_use_id"], "c2");
}

#[tokio::test]
async fn tools_run_in_parallel_up_to_the_limit() {
    for (limit, expected) in [(8, 3), (2, 2), (1, 1)] {
        let model = ScriptedModel::new([
            calls(vec![
                call("c1", "add", json!({"a": 1, "b": 1})),
                call("c2", "add", json!({"a": 2, "b": 2})),
                call("c3", "add", json!({"a": 3, "b": 3})),
            ]),
            text("done"),
        ]);
        let add = Add {
            delay: Duration::from_millis(30),
            ..Add::default()
        };
        let agent = Agent::new(model, MODEL)
            .tool(add.clone())
            .parallel_tools(limit);
        let mut session = Session::new();
        agent
            .prompt(&mut session, Message::user("go"), |_| {})
            .await
            .unwrap();
        assert_eq!(add.most.load(Ordering::SeqCst), expected, "limit {limit}");
        // Results are appended in call order whatever order they end in.
        let results = tool_results(&session);
        assert_eq!(results, ["2", "4", "6"]);
    }
}

#[tokio::test]
async fn failing_panicking_slow_and_misfed_tools_become_error_results() {
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "act", json!({"what": "fail"})),
            call("c2", "act", json!({"what": "panic"})),
            call("c3", "add", json!({"a": 1, "b": "two"})),
            call("c4", "nope", json!({})),
            call("c5", "act", json!({"what": "sleep"})),
            call("c6", "act", json!({"what": "json"})),
            call("c7", "add", json!({"a": 1})),
        ]),
        text("I see."),
    ]);
    let agent = Agent::new(model.clone(), MODEL)
        .tool(Add::default())
        .tool(Act)
        .tool_timeout(Some(Duration::from_millis(50)));
    let mut session = Session::new();
    let outcome = agent
        .prompt(&mut session, Message::user("go"), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Stop);
    let results: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|e| e.message()?.as_llm()?.as_tool_result().cloned())
        .collect();
    let seen: Vec<(bool, String)> = results.iter().map(|r| (r.is_error, r.text())).collect();
    assert_eq!(
        seen,
        [
            (true, "the disk is full".to_owned()),
            (true, "the tool panicked: the tool broke".to_owned()),
            (
                true,
                "invalid arguments for `add` at `b`: invalid type: string \"two\", expected f64"
                    .to_owned()
            ),
            (true, "no tool named `nope`".to_owned()),
            (true, "the tool did not finish within 50ms".to_owned()),
            (false, r#"{"ok":true,"rows":3}"#.to_owned()),
            (
                true,
                "invalid arguments for `add`: missing field `b`".to_owned()
            ),
        ]
    );
    // Structured output is kept for the application too.
    assert_eq!(results[5].details, Some(json!({"rows": 3, "ok": true})));
    // The model read them all as errors.
    let sent = &model.requests()[1]["messages"][2]["content"];
    assert_eq!(sent[1]["is_error"], true);
    assert!(!sent[5]
        .get("is_error")
        .and_then(|v| v.as_bool())
        .unwrap_or(false));
}

#[tokio::test]
async fn a_tool_that_terminates_ends_the_run() {
    let model = ScriptedModel::new([
        calls(vec![call("c1", "act", json!({"what": "stop"}))]),
        text("never asked for"),
    ]);
    let agent = Agent::new(model.clone(), MODEL).tool(Act);
    let mut session = Session::new();
    let outcome = agent
        .prompt(&mut session, Message::user("go"), |_| {})
        .await
        .unwrap();
    assert!(outcome.terminated);
    assert_eq!(outcome.turns, 1);
    assert_eq!(outcome.stop_reason, StopReason::ToolUse);
    assert_eq!(model.remaining(), Some(1));

    // One result of two asking to stop is not enough.
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "act", json!({"what": "stop"})),
            call("c2", "act", json!({"what": "wave"})),
        ]),
        text("asked"),
    ]);
    let agent = Agent::new(model.clone(), MODEL).tool(Act);
    let outcome = agent
        .prompt(&mut Session::new(), Message::user("go"), |_| {})
        .await
        .unwrap();
    assert!(!outcome.terminated);
    assert_eq!(outcome.turns, 2);
}

#[tokio::test]
async fn the_turn_limit_stops_a_model_that_never_stops() {
    let model = ScriptedModel::from_fn(|request| {
        let n = request.messages.len();
        calls(vec![call(&format!("c{n}"), "add", json!({"a": n, "b": 1}))])
    });
    let agent = Agent::new(model.clone(), MODEL)
        .tool(Add::default())
        .max_turns(3);
    let mut session = Session::new();
    let mut events = Vec::new();
    let outcome = agent
        .prompt(&mut session, Message::user("loop"), |e| events.push(e))
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::MaxTurns);
    assert_eq!(outcome.turns, 3);
    assert_eq!(model.requests().len(), 3);
    assert!(matches!(
        events.last(),
        Some(AgentEvent::AgentEnd {
            stop_reason: StopReason::MaxTurns,
            ..
        })
    ));
    // Every call got its result: the session is ready for the next run.
    assert_eq!(session.entries().len(), 1 + 3 * 2);
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_the_partial_reply() {
    let long = "one two three four five six seven eight nine ten eleven twelve";
    let model = ScriptedModel::new([text(long)])
        .with_chunk_size(8)
        .with_delay(Duration::from_millis(2));
    let agent = Agent::new(model, MODEL);
    let handle = agent.handle();
    let mut session = Session::new();
    let mut seen = String::new();
    let outcome = agent
        .prompt(&mut session, Message::user("count"), |e| {
            if let AgentEvent::MessageUpdate {
                event: StreamEvent::TextDelta { delta, .. },
            } = &e
            {
                seen.push_str(delta);
                handle.cancel();
            }
        })
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let reply = reply_at(&session, 1);
    assert_eq!(reply.stop_reason, StopReason::Aborted);
    assert_eq!(reply.text_content(), seen);
    assert!(!seen.is_empty() && seen.len() < long.len(), "{seen:?}");
    // Anthropic sent the input count at the start; the output is estimated.
    assert!(reply.usage.input > 0);
    assert!(reply.usage.output >= 1);
    assert_eq!(outcome.usage.input, reply.usage.input);
}

#[tokio::test]
async fn cancelling_during_tools_gives_every_call_a_result() {
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "act", json!({"what": "sleep"})),
            call("c2", "act", json!({"what": "sleep"})),
        ]),
        text("never"),
    ]);
    let agent = Agent::new(model.clone(), MODEL).tool(Act).parallel_tools(1);
    let handle = agent.handle();
    let mut session = Session::new();
    let outcome = agent
        .prompt(&mut session, Message::user("go"), |e| {
            if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
                handle.cancel();
            }
        })
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let results = tool_results(&session);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|t| t == "the run was cancelled"));
    assert_eq!(model.remaining(), Some(1));
}

#[tokio::test]
async fn steering_and_follow_up_messages_are_taken_at_the_boundaries() {
    let model = ScriptedModel::from_fn(|request| {
        let last = request.messages[request.messages.len() - 1].clone();
        match last {
            Message::User(u) if u.text() == "go" => {
                calls(vec![call("c1", "add", json!({"a": 1, "b": 1}))])
            }
            Message::User(u) => text(&format!("heard: {}", u.text())),
            _ => text("other"),
        }
    });
    let agent = Agent::new(model.clone(), MODEL).tool(Add::default());
    let handle = agent.handle();
    let mut session = Session::new();
    let mut followed = false;
    let outcome = agent
        .prompt(&mut session, Message::user("go"), |e| match &e {
            AgentEvent::ToolExecutionStart { .. } => {
                handle.steer(Message::user("also, be brief"));
                handle.steer(Notice {
                    text: "steered".into(),
                });
            }
            AgentEvent::TurnEnd { turn: 2, .. } if !followed => {
                followed = true;
                handle.follow_up(Message::user("one more thing"));
            }
            _ => {}
        })
        .await
        .unwrap();
    assert_eq!(outcome.turns, 3);
    let kinds: Vec<(String, String)> = transcript(&session);
    assert_eq!(
        kinds,
        [
            ("user".to_owned(), "go".to_owned()),
            ("assistant".to_owned(), String::new()),
            ("toolResult".to_owned(), "2".to_owned()),
            // Steering: after the tool results, before the next request.
            ("user".to_owned(), "also, be brief".to_owned()),
            ("notice".to_owned(), String::new()),
            ("assistant".to_owned(), "heard: also, be brief".to_owned()),
            // Follow-up: when the model had stopped.
            ("user".to_owned(), "one more thing".to_owned()),
            ("assistant".to_owned(), "heard: one more thing".to_owned()),
        ]
    );
    // The UI-only notice never reached the model.
    let second = model.requests()[1].to_string();
    assert!(second.contains("also, be brief"));
    assert!(!second.contains("steered"));
}

#[tokio::test]
async fn approval_allows_denies_and_edits() {
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "add", json!({"a": 1, "b": 1})),
            call("c2", "add", json!({"a": 2, "b": 2})),
            call("c3", "add", json!({"a": 3, "b": 3})),
        ]),
        text("ok"),
    ]);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let agent = Agent::new(model, MODEL)
        .tool(Add::default())
        .approve(move |call| {
            seen.lock().unwrap().push(call.id.clone());
            let decision = match call.id.as_str() {
                "c1" => Approval::Allow,
                "c2" => Approval::Deny("not on weekends".into()),
                _ => Approval::Edit(ToolArguments::from(json!({"a": 30, "b": 3}))),
            };
            async move { decision }
        });
    let mut session = Session::new();
    let mut ran = Vec::new();
    agent
        .prompt(&mut session, Message::user("go"), |e| {
            if let AgentEvent::ToolExecutionStart { call } = e {
                ran.push(call.arguments.to_string());
            }
        })
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), ["c1", "c2", "c3"]);
    let results = tool_results(&session);
    assert_eq!(results, ["2", "the call was denied: not on weekends", "33"]);
    assert_eq!(ran[2], r#"{"a":30,"b":3}"#);
}

#[tokio::test]
async fn the_context_is_transformed_and_edited_before_each_request() {
    let model = ScriptedModel::new([text("one")]);
    let agent = Agent::new(model.clone(), MODEL)
        .system("Be terse.")
        .transform_context(|messages| {
            messages.retain(|m| {
                m.as_llm()
                    .and_then(|m| m.as_user())
                    .is_none_or(|u| u.text() != "secret")
            });
        })
        .edit_prompt(|editor| {
            editor
                .append_to(
                    agentmsg::project::LastUser,
                    [agentmsg::TextContent::new("(edited)")],
                )
                .unwrap();
        });
    let mut session = Session::new();
    session.append(Message::user("secret").into()).unwrap();
    session.append(Message::assistant("noted").into()).unwrap();
    agent
        .prompt(&mut session, Message::user("hello"), |_| {})
        .await
        .unwrap();
    let body = &model.requests()[0];
    assert_eq!(body["system"][0]["text"], "Be terse.");
    let sent = body["messages"].to_string();
    assert!(!sent.contains("secret"), "{sent}");
    assert!(sent.contains("(edited)"));
    // The session itself is unchanged.
    assert_eq!(transcript(&session)[0].1, "secret");
}

#[tokio::test]
async fn a_stored_session_keeps_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = agentmsg::store::JsonlDir::open(dir.path()).unwrap();
    let mut session = agentmsg::store::StoredSession::create(&store, "s1")
        .await
        .unwrap();
    let model = ScriptedModel::new([
        calls(vec![call("c1", "act", json!({"what": "wave"}))]),
        text("waved"),
    ]);
    let agent = Agent::new(model, MODEL).tool(Act);
    agent
        .prompt(&mut session, Message::user("wave"), |_| {})
        .await
        .unwrap();
    let reopened = agentmsg::store::StoredSession::open(&store, "s1")
        .await
        .unwrap();
    let kinds: Vec<String> = transcript(reopened.session())
        .into_iter()
        .map(|(kind, _)| kind)
        .collect();
    // The tool's own UI-only message follows the results.
    assert_eq!(
        kinds,
        ["user", "assistant", "toolResult", "notice", "assistant"]
    );
    let notice = reopened.session().entries()[3]
        .message()
        .and_then(|m| m.downcast_ref::<Notice>())
        .cloned();
    assert_eq!(
        notice,
        Some(Notice {
            text: "acted: wave".into()
        })
    );
}

#[tokio::test]
async fn a_run_can_be_spawned_on_another_task() {
    let model = ScriptedModel::new([text("from a task")]);
    let agent = Arc::new(Agent::new(model, MODEL));
    let dir = tempfile::tempdir().unwrap();
    let store = agentmsg::store::JsonlDir::open(dir.path()).unwrap();
    let mut session = agentmsg::store::StoredSession::create(store, "spawned")
        .await
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn({
        let agent = agent.clone();
        async move {
            let outcome = agent
                .prompt(&mut session, Message::user("hi"), move |e| {
                    let _ = tx.send(e);
                })
                .await;
            (outcome.map(|o| o.stop_reason), session)
        }
    });
    let mut kinds = Vec::new();
    while let Some(event) = rx.recv().await {
        kinds.push(outline(&[event]).remove(0));
    }
    let (stop, session) = task.await.unwrap();
    assert_eq!(stop.unwrap(), StopReason::Stop);
    assert_eq!(kinds.first().map(String::as_str), Some("agent_start"));
    assert_eq!(kinds.last().map(String::as_str), Some("agent_end Stop"));
    assert_eq!(transcript(session.session())[1].1, "from a task");
}

/// Compacts once the session holds `after` entries or more, keeping from the
/// last user message, with a summary the agent's own model writes.
struct KeepLastUser {
    after: usize,
}

impl agentmsg::agent::Compactor for KeepLastUser {
    fn compact<'a>(
        &'a self,
        session: &'a Session,
        model: &'a dyn agentmsg::agent::Model,
    ) -> agentmsg::agent::CompactFuture<'a> {
        Box::pin(async move {
            let entries = session.entries();
            let compacted = entries
                .iter()
                .any(|e| e.message().is_some_and(|m| m.kind() == "compactionSummary"));
            if compacted || entries.len() < self.after {
                return Ok(None);
            }
            let first_kept = entries
                .iter()
                .rev()
                .find(|e| e.message().is_some_and(|m| m.kind() == "user"))
                .and_then(|e| e.id().cloned())
                .unwrap();
            let request = agentmsg::providers::Request::new(
                MODEL,
                vec![Message::user("Summarize the conversation.")],
            );
            let mut stream = model.stream(&request).await?;
            let mut reply = None;
            while let Some(item) = futures_util::StreamExt::next(&mut stream).await {
                if let agentmsg::http::StreamItem::Reply(whole) = item? {
                    reply = Some(whole.message);
                }
            }
            let reply = reply.unwrap();
            Ok(Some(agentmsg::agent::Compacted::new(
                reply.text_content(),
                first_kept,
                1234,
                reply.usage,
            )))
        })
    }
}

#[tokio::test]
async fn a_compactor_compacts_at_the_turn_boundary_and_its_usage_counts() {
    let model = ScriptedModel::new([
        text("first answer").with_usage(Usage::new(100, 10)),
        text("Earlier: the user said hello.").with_usage(Usage::new(40, 8)),
        text("second answer").with_usage(Usage::new(60, 6)),
    ]);
    let agent = Agent::new(model.clone(), MODEL).compactor(KeepLastUser { after: 3 });
    let mut session = Session::new();
    agent
        .prompt(&mut session, Message::user("hello"), |_| {})
        .await
        .unwrap();
    let mut events = Vec::new();
    let outcome = agent
        .prompt(&mut session, Message::user("and now?"), |e| events.push(e))
        .await
        .unwrap();
    // The summariser's call and the reply, both counted.
    assert_eq!((outcome.usage.input, outcome.usage.output), (100, 14));
    let lines = outline(&events);
    assert_eq!(
        &lines[..6],
        [
            "agent_start",
            "turn_start 1",
            "message_start user",
            "message_end user",
            "message_start compactionSummary",
            "message_end compactionSummary",
        ]
    );
    assert!(matches!(
        events[6],
        AgentEvent::Compacted {
            tokens_before: 1234,
            ..
        }
    ));
    // The next request starts with the summary, then the kept user message.
    let sent = &model.requests()[2]["messages"];
    assert!(sent[0]
        .to_string()
        .contains("Earlier: the user said hello."));
    assert!(!sent.to_string().contains("first answer"));
    assert!(sent.to_string().contains("and now?"));
}

#[tokio::test]
async fn steering_during_the_last_reply_goes_before_any_follow_up() {
    let model = ScriptedModel::from_fn(|request| {
        let last = &request.messages[request.messages.len() - 1];
        text(&format!(
            "re: {}",
            last.as_user().map(|u| u.text()).unwrap_or_default()
        ))
    });
    let agent = Agent::new(model, MODEL);
    let handle = agent.handle();
    let mut session = Session::new();
    let mut once = true;
    let outcome = agent
        .prompt(&mut session, Message::user("first"), |e| {
            if matches!(e, AgentEvent::MessageUpdate { .. }) && once {
                once = false;
                handle.follow_up(Message::user("later"));
                handle.steer(Message::user("now"));
            }
        })
        .await
        .unwrap();
    assert_eq!(outcome.turns, 3);
    let texts: Vec<String> = transcript(&session).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        texts,
        ["first", "re: first", "now", "re: now", "later", "re: later"]
    );
}

#[tokio::test]
async fn cancelling_while_a_call_awaits_approval() {
    let model = ScriptedModel::new([
        calls(vec![
            call("c1", "add", json!({"a": 1, "b": 1})),
            call("c2", "add", json!({"a": 2, "b": 2})),
        ]),
        text("never"),
    ]);
    let agent = Agent::new(model, MODEL)
        .tool(Add::default())
        // An approval that never comes (a user who walked away).
        .approve(|_| std::future::pending::<Approval>());
    let handle = agent.handle();
    let mut session = Session::new();
    let run = agent.prompt(&mut session, Message::user("go"), |_| {});
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        handle.cancel();
    };
    let (outcome, ()) = tokio::join!(run, cancel);
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Aborted);
    let results = tool_results(&session);
    assert_eq!(results, ["the run was cancelled", "the run was cancelled"]);
}

#[tokio::test]
async fn events_serialize_with_pi_names() {
    let model = ScriptedModel::new([
        calls(vec![call("c1", "add", json!({"a": 1, "b": 2}))]),
        text("3"),
    ]);
    let agent = Agent::new(model, MODEL).tool(Add::default());
    let mut lines = Vec::new();
    agent
        .prompt(&mut Session::new(), Message::user("1+2"), |e| {
            lines.push(serde_json::to_value(&e).unwrap())
        })
        .await
        .unwrap();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types[0], "agent_start");
    assert!(types.contains(&"message_update"));
    assert_eq!(types.last(), Some(&"agent_end"));
    let end = lines
        .iter()
        .find(|l| l["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["result"]["toolCallId"], "c1");
    assert_eq!(end["result"]["content"][0]["text"], "3");
    assert!(end["elapsedMs"].is_u64());
    assert_eq!(lines.last().unwrap()["stopReason"], "stop");
}

#[tokio::test]
async fn the_threshold_compactor_summarises_near_the_window() {
    let model = ScriptedModel::new([
        text("noted").with_usage(Usage::new(3000, 5)),
        text("The user pasted a long log.").with_usage(Usage::new(900, 20)),
        text("ok").with_usage(Usage::new(200, 2)),
    ]);
    let agent = Agent::new(model.clone(), MODEL)
        .compactor(agentmsg::agent::ThresholdCompactor::new(MODEL, 4000).with_limits(1000, 1));
    let mut session = Session::new();
    agent
        .prompt(&mut session, Message::user("x ".repeat(6000)), |_| {})
        .await
        .unwrap();
    // 3,005 tokens reported plus the new prompt pass 4,000 - 1,000; the
    // last message (the new prompt) is kept.
    let outcome = agent
        .prompt(&mut session, Message::user("and now?"), |_| {})
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!((outcome.usage.input, outcome.usage.output), (1100, 22));
    assert_eq!(requests.len(), 3);
    // The summariser's request: the conversation to summarise, pi's prompt.
    assert!(requests[1].to_string().contains("[User]: x x x"));
    // The next request starts from the summary and keeps the last prompt.
    let sent = requests[2]["messages"].to_string();
    assert!(sent.contains("The user pasted a long log."));
    assert!(sent.contains("and now?"));
    assert!(!sent.contains("x x x"));
    // Recorded from the plan: pi's details with the (empty) file lists.
    let context = session.context(None).unwrap();
    let compaction = context.messages[0]
        .downcast_ref::<agentmsg::custom::CompactionSummary>()
        .expect("the context starts with the compaction");
    let details = compaction.details.as_ref().expect("pi's details");
    assert_eq!(details["readFiles"], serde_json::json!([]));
    assert_eq!(details["modifiedFiles"], serde_json::json!([]));
    // The summariser's call is recorded with its usage.
    assert_eq!(details["summarizer"][0]["usage"]["input"], 900);
    assert_eq!(details["summarizer"][0]["usage"]["output"], 20);
}

#[tokio::test]
async fn the_prompt_editor_knows_each_message_by_its_entry_id() {
    let model = ScriptedModel::new([text("two")]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let ids = seen.clone();
    let agent = Agent::new(model, MODEL).edit_prompt(move |editor| {
        *ids.lock().unwrap() = editor.ids().map(|id| id.cloned()).collect();
    });
    let mut session = Session::new();
    session.append(Message::user("one").into()).unwrap();
    // A UI-only message: an entry the model never sees, so no prompt id.
    session
        .append(
            Notice {
                text: "aside".into(),
            }
            .into(),
        )
        .unwrap();
    session.append(Message::assistant("ok").into()).unwrap();
    agent
        .prompt(&mut session, Message::user("two?"), |_| {})
        .await
        .unwrap();
    let entries = session.entries();
    let expected: Vec<_> = [0, 2, 3]
        .iter()
        .map(|&i| entries[i].id().cloned())
        .collect();
    assert!(expected.iter().all(Option::is_some));
    assert_eq!(*seen.lock().unwrap(), expected);
}

#[tokio::test]
async fn resume_runs_from_the_session_as_it_is() {
    let model = ScriptedModel::new([text("picked up")]);
    let agent = Agent::new(model.clone(), MODEL);
    let mut session = Session::new();
    // A prompt appended before a crash, never answered.
    session
        .append(Message::user("still there?").into())
        .unwrap();
    let mut events = Vec::new();
    let outcome = agent
        .resume(&mut session, |e| events.push(e))
        .await
        .unwrap();
    assert_eq!(outcome.turns, 1);
    assert_eq!(
        transcript(&session),
        [
            ("user".to_owned(), "still there?".to_owned()),
            ("assistant".to_owned(), "picked up".to_owned()),
        ]
    );
    // Nothing is appended for the prompt again: only the reply's events.
    assert_eq!(
        outline(&events),
        [
            "agent_start",
            "turn_start 1",
            "message_start assistant",
            "update",
            "message_end assistant",
            "turn_end 1",
            "agent_end Stop",
        ]
    );
    assert_eq!(
        model.requests()[0]["messages"][0]["content"][0]["text"],
        "still there?"
    );
}
