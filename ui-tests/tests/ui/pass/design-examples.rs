//! The derive examples of DESIGN.md, as a new user writes them.
use agentmsg::{AgentMessage, CustomMessage, ImageContent, Message, TextContent};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("[Request from {from}]: {request}"))]
struct AgentCall {
    from: String,
    request: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[agent_message(kind = "screenshot", to_llm = user)]
struct Screenshot {
    #[agent_message(content)]
    caption: TextContent,
    #[agent_message(content)]
    image: ImageContent,
    path: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[agent_message(kind = "approval", version = 2, migrate = approval_from_v1, to_llm = with(Approval::render))]
struct Approval {
    tool_call_id: String,
    granted: bool,
}

impl Approval {
    fn render(&self) -> Vec<Message> {
        vec![Message::user(format!(
            "{}: {}",
            self.tool_call_id, self.granted
        ))]
    }
}

fn approval_from_v1(_from: u32, value: serde_json::Value) -> Result<serde_json::Value, String> {
    Ok(value)
}

fn main() {
    let transcript: Vec<agentmsg::AgentMessage> = vec![
        Notice { text: "hi".into() }.into(),
        AgentCall {
            from: "a".into(),
            request: "b".into(),
        }
        .into(),
        Screenshot {
            caption: TextContent::new("c"),
            image: image_url("https://example.com/x.png"),
            path: "x.png".into(),
        }
        .into(),
        Approval {
            tool_call_id: "t".into(),
            granted: true,
        }
        .into(),
    ];
    assert_eq!(agentmsg::to_llm(&transcript).len(), 3);
    assert_eq!(Approval::VERSION, 2);
}

fn image_url(url: &str) -> agentmsg::ImageContent {
    agentmsg::ImageContent {
        source: agentmsg::message::MediaSource::Url(url.to_owned()),
    }
}
