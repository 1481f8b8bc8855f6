//! The derive on the DESIGN.md examples: kinds, registration, projections,
//! versions and migrations, aliases, round trips through the global registry.

use agentmsg::custom::Registry;
use agentmsg::transcript::UnknownReason;
use agentmsg::{
    AgentMessage, AssistantContent, CustomMessage, ImageContent, Message, TextContent,
    ThinkingContent, ToolCall, UserContent,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("[Request from {from}]: {request} ({from}, {{literal}})"))]
struct AgentCall {
    from: String,
    request: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "screenshot", to_llm = user)]
struct Screenshot {
    #[agent_message(content)]
    caption: TextContent,
    #[agent_message(content)]
    image: ImageContent,
    path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "approval", version = 2, migrate = approval_from_v1, to_llm = with(Approval::render), aliases = ["permission"])]
struct Approval {
    tool_call_id: String,
    granted: bool,
}

impl Approval {
    fn render(&self) -> Vec<Message> {
        let verdict = if self.granted { "granted" } else { "denied" };
        vec![Message::user(format!(
            "Tool call {} was {verdict}.",
            self.tool_call_id
        ))]
    }
}

/// v1 stored `{"call": "...", "ok": "yes"|"no"}`.
fn approval_from_v1(from: u32, value: serde_json::Value) -> Result<serde_json::Value, String> {
    if from != 1 {
        return Err(format!("no migration from {from}"));
    }
    let call = value
        .get("call")
        .and_then(|v| v.as_str())
        .ok_or("v1 approval without `call`")?;
    let ok = value
        .get("ok")
        .and_then(|v| v.as_str())
        .ok_or("v1 approval without `ok`")?;
    Ok(serde_json::json!({ "toolCallId": call, "granted": ok == "yes" }))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "plan", to_llm = assistant)]
struct Plan {
    #[agent_message(content)]
    thought: ThinkingContent,
    #[agent_message(content)]
    text: String,
    #[agent_message(content)]
    call: ToolCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "rules", to_llm = system("Rules: {rules}"))]
struct Rules {
    rules: String,
    count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "empty")]
struct Empty {}

#[test]
fn consts_come_from_the_attributes() {
    assert_eq!(Notice::KIND, "notice");
    assert_eq!(Notice::VERSION, 1);
    assert_eq!(Approval::KIND, "approval");
    assert_eq!(Approval::VERSION, 2);
    assert_eq!(Approval::ALIASES, ["permission"]);
}

#[test]
fn every_derived_kind_is_registered_globally() {
    let registry = Registry::global();
    assert!(registry.check().is_ok(), "{:?}", registry.duplicates());
    let expected = [
        ("notice", "Notice"),
        ("agentCall", "AgentCall"),
        ("screenshot", "Screenshot"),
        ("approval", "Approval"),
        ("permission", "Approval"),
        ("plan", "Plan"),
        ("rules", "Rules"),
        ("empty", "Empty"),
    ];
    for (kind, type_name) in expected {
        let registration = registry
            .get(kind)
            .unwrap_or_else(|| panic!("{kind} not registered"));
        assert!(
            registration
                .type_name()
                .ends_with(&format!("::{type_name}")),
            "{kind}: {}",
            registration.type_name()
        );
    }
    assert_eq!(registry.get("approval").unwrap().version(), 2);
    assert_eq!(registry.get("permission").unwrap().kind(), "approval");
}

fn round_trip(message: AgentMessage) -> AgentMessage {
    let line = message.to_line().unwrap();
    assert_eq!(serde_json::to_string(&message).unwrap(), line);
    let back = AgentMessage::from_line(&line).unwrap();
    assert_eq!(back, message, "{line}");
    let generic: AgentMessage = serde_json::from_str(&line).unwrap();
    assert_eq!(generic, message, "{line}");
    back
}

#[test]
fn ui_only_message_round_trips_and_projects_to_nothing() {
    let notice = Notice {
        text: "session resumed".into(),
    };
    assert!(notice.to_llm().is_empty());
    let back = round_trip(AgentMessage::from(notice.clone()).with_timestamp(1765238302057));
    assert_eq!(
        back.to_line().unwrap(),
        r#"{"role":"notice","text":"session resumed","timestamp":1765238302057}"#
    );
    assert_eq!(back.downcast_ref::<Notice>(), Some(&notice));
    assert!(back.as_llm().is_none());
    round_trip(AgentMessage::custom(Empty {}));
    assert_eq!(
        AgentMessage::custom(Empty {})
            .with_timestamp(3)
            .to_line()
            .unwrap(),
        r#"{"role":"empty","timestamp":3}"#
    );
}

#[test]
fn template_projection_formats_fields() {
    let call = AgentCall {
        from: "planner".into(),
        request: "list files".into(),
    };
    let projected = call.to_llm();
    assert_eq!(projected.len(), 1);
    let user = projected[0].as_user().unwrap();
    assert_eq!(
        user.text(),
        "[Request from planner]: list files (planner, {literal})"
    );
    assert_eq!(user.timestamp, 0, "projections are deterministic");
    round_trip(call.into());
    let rules = Rules {
        rules: "be terse".into(),
        count: 1,
    }
    .to_llm();
    assert_eq!(rules[0].as_system().unwrap().text(), "Rules: be terse");
}

#[test]
fn content_projection_uses_content_fields_in_order() {
    let shot = Screenshot {
        caption: TextContent::new("the login page"),
        image: image_url("https://example.com/a.png"),
        path: "/tmp/a.png".into(),
    };
    let projected = shot.to_llm();
    let user = projected[0].as_user().unwrap();
    assert_eq!(
        user.content,
        vec![
            UserContent::Text(TextContent::new("the login page")),
            UserContent::Image(image_url("https://example.com/a.png")),
        ]
    );
    let line = AgentMessage::from(shot.clone())
        .with_timestamp(7)
        .to_line()
        .unwrap();
    assert_eq!(
        line,
        r#"{"role":"screenshot","caption":{"text":"the login page"},"image":{"url":"https://example.com/a.png"},"path":"/tmp/a.png","timestamp":7}"#
    );
    round_trip(shot.into());

    let plan = Plan {
        thought: ThinkingContent::new("hmm"),
        text: "reading".into(),
        call: ToolCall::new("c1", "read", serde_json::json!({"path": "a"})),
    };
    let projected = plan.to_llm();
    let assistant = projected[0].as_assistant().unwrap();
    assert!(matches!(
        assistant.content[0],
        AssistantContent::Thinking(_)
    ));
    assert_eq!(
        assistant.content[1],
        AssistantContent::Text(TextContent::new("reading"))
    );
    assert_eq!(assistant.tool_calls().count(), 1);
}

#[test]
fn versioned_kind_writes_v_and_migrates_old_lines() {
    let approval = Approval {
        tool_call_id: "toolu_1".into(),
        granted: true,
    };
    let line = AgentMessage::from(approval.clone())
        .with_timestamp(7)
        .to_line()
        .unwrap();
    assert_eq!(
        line,
        r#"{"role":"approval","toolCallId":"toolu_1","granted":true,"timestamp":7,"v":2}"#
    );
    round_trip(approval.clone().into());
    assert_eq!(
        approval.to_llm()[0].as_user().unwrap().text(),
        "Tool call toolu_1 was granted."
    );

    // A v1 line (no "v") under the old alias, with the role last.
    let old = r#"{"call":"toolu_9","ok":"no","id":"m9","role":"permission"}"#;
    let migrated = AgentMessage::from_line(old).unwrap();
    assert_eq!(
        migrated.downcast_ref::<Approval>(),
        Some(&Approval {
            tool_call_id: "toolu_9".into(),
            granted: false
        })
    );
    assert_eq!(migrated.id().unwrap().as_str(), "m9");
    // The same through the generic Deserialize.
    let generic: AgentMessage = serde_json::from_str(old).unwrap();
    assert_eq!(generic, migrated);

    // A failing migration keeps the line, with the function's own error.
    let bad = r#"{"role":"approval","ok":"yes"}"#;
    let kept = AgentMessage::from_line(bad).unwrap();
    let unknown = kept.as_unknown().unwrap();
    assert_eq!(unknown.raw(), bad);
    assert_eq!(
        unknown.reason(),
        &UnknownReason::Migration {
            from: 1,
            error: "v1 approval without `call`".into()
        }
    );

    // A newer one is kept as it is.
    let newer = r#"{"role":"approval","toolCallId":"x","granted":true,"scope":"all","v":3}"#;
    let kept = AgentMessage::from_line(newer).unwrap();
    assert_eq!(kept.to_line().unwrap(), newer);
    assert_eq!(
        kept.as_unknown().unwrap().reason(),
        &UnknownReason::NewerVersion {
            found: 3,
            supported: 2
        }
    );
}

mod shadowing {
    //! A user's own module named `agentmsg` does not break the generated code,
    //! which names `::agentmsg`.

    #[allow(dead_code)]
    mod agentmsg {}

    #[derive(
        Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ::agentmsg::AgentMessage,
    )]
    #[agent_message(kind = "shadowed")]
    pub struct Shadowed {
        pub x: u8,
    }

    #[test]
    fn a_local_module_named_agentmsg_does_not_break_the_expansion() {
        assert!(::agentmsg::custom::Registry::global()
            .get("shadowed")
            .is_some());
    }
}

mod renamed {
    extern crate agentmsg as am;

    pub mod shim {
        //! A re-export of the facade, as a crate renaming the dependency would have.
        pub use super::am::__private_0_1_0;
    }

    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, am::AgentMessage)]
    #[agent_message(kind = "renamedPath", crate = crate::basic::renamed::shim, to_llm = user("{n}"))]
    pub struct Renamed {
        pub n: u8,
    }

    #[test]
    fn crate_path_override_works() {
        use am::CustomMessage;
        assert_eq!(Renamed::KIND, "renamedPath");
        assert_eq!(Renamed { n: 7 }.to_llm()[0].as_user().unwrap().text(), "7");
        assert!(am::custom::Registry::global().get("renamedPath").is_some());
    }
}

fn image_url(url: &str) -> agentmsg::ImageContent {
    agentmsg::ImageContent {
        source: agentmsg::message::MediaSource::Url(url.to_owned()),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[serde(deny_unknown_fields)]
#[agent_message(kind = "strictFields", version = 2)]
struct StrictFields {
    a: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Extra {
    b: u8,
    c: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "flattened")]
struct Flattened {
    a: u8,
    #[serde(flatten)]
    extra: Extra,
}

#[test]
fn envelope_keys_never_reach_the_type() {
    // `deny_unknown_fields` does not see role, id, turnId or v.
    let line = r#"{"id":"i","role":"strictFields","a":1,"turnId":"t","v":2}"#;
    for message in [
        AgentMessage::from_line(line).unwrap(),
        serde_json::from_str::<AgentMessage>(line).unwrap(),
    ] {
        assert_eq!(
            message.downcast_ref::<StrictFields>(),
            Some(&StrictFields { a: 1 })
        );
        assert_eq!(message.turn_id().unwrap().as_str(), "t");
    }
    let extra = r#"{"role":"strictFields","a":1,"b":2,"v":2}"#;
    let kept = AgentMessage::from_line(extra).unwrap();
    let reason = kept.as_unknown().unwrap().reason().to_string();
    assert!(reason.contains("unknown field `b`"), "{reason}");

    let flat = Flattened {
        a: 1,
        extra: Extra {
            b: 2,
            c: "x".into(),
        },
    };
    let line = AgentMessage::from(flat.clone())
        .with_id(Some("f".into()))
        .with_timestamp(7)
        .to_line()
        .unwrap();
    assert_eq!(
        line,
        r#"{"role":"flattened","a":1,"b":2,"c":"x","timestamp":7,"id":"f"}"#
    );
    let back = AgentMessage::from_line(&line).unwrap();
    assert_eq!(back.downcast_ref::<Flattened>(), Some(&flat));
    assert_eq!(back.id().unwrap().as_str(), "f");
}
