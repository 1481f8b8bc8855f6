//! pi's own message kinds, built in: `bashExecution` (a `!command` the user ran,
//! sent to the model as pi words it unless `excludeFromContext`) and `custom` (a
//! message an extension injected, sent as user content). Sessions written by pi
//! hold both inside `message` entries.

use serde::{Deserialize, Serialize};

use agentmsg_macros::AgentMessage;

use crate::message::{Message, UserMessage};
use crate::{TextContent, UserContent};

fn is_false(value: &bool) -> bool {
    !*value
}

/// A shell command the user ran from pi's editor (`!ls`), with its output. The
/// model sees it as a user message worded as pi words it
/// ([`BashExecution::to_text`]); with `excludeFromContext` (`!!ls`) it never
/// reaches the model.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AgentMessage, to_llm};
/// # use agentmsg::custom::BashExecution;
/// let line = r#"{"role":"bashExecution","command":"ls","output":"a.rs\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1765238302057}"#;
/// let message = AgentMessage::from_line(line).unwrap();
/// assert!(message.downcast_ref::<BashExecution>().is_some());
/// let sent = to_llm(std::slice::from_ref(&message));
/// assert_eq!(sent[0].as_user().unwrap().text(), "Ran `ls`\n```\na.rs\n\n```");
/// assert_eq!(message.to_line().unwrap(), line);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(crate = crate, kind = "bashExecution", to_llm = with(BashExecution::render))]
pub struct BashExecution {
    /// The command line.
    pub command: String,
    /// What it printed (possibly truncated).
    #[serde(default)]
    pub output: String,
    /// Its exit code; absent when it did not exit (cancelled, killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Whether the user cancelled it.
    #[serde(default)]
    pub cancelled: bool,
    /// Whether `output` was cut.
    #[serde(default)]
    pub truncated: bool,
    /// Where the whole output was saved, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Unix milliseconds.
    #[agent_message(timestamp)]
    #[serde(default)]
    pub timestamp: u64,
    /// Kept from the model (pi's `!!` prefix).
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_from_context: bool,
}

impl BashExecution {
    /// The text the model sees, as pi's `bashExecutionToText` words it.
    pub fn to_text(&self) -> String {
        let mut text = format!("Ran `{}`\n", self.command);
        if self.output.is_empty() {
            text.push_str("(no output)");
        } else {
            text.push_str("```\n");
            text.push_str(&self.output);
            text.push_str("\n```");
        }
        if self.cancelled {
            text.push_str("\n\n(command cancelled)");
        } else if let Some(code) = self.exit_code.filter(|code| *code != 0) {
            text.push_str(&format!("\n\nCommand exited with code {code}"));
        }
        if self.truncated {
            if let Some(path) = &self.full_output_path {
                text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
            }
        }
        text
    }

    /// The user message the model sees, or nothing with `excludeFromContext`.
    pub fn render(&self) -> Vec<Message> {
        if self.exclude_from_context {
            return Vec::new();
        }
        vec![Message::User(
            UserMessage::new([TextContent::new(self.to_text())]).with_timestamp(self.timestamp),
        )]
    }
}

/// The content of a pi [`InjectedMessage`]: a string or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InjectedContent {
    /// A plain string (sent as one text block).
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<UserContent>),
}

impl Default for InjectedContent {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

/// A message a pi extension injected (`"role":"custom"`; pi's older
/// `hookMessage` reads as this). The model sees its content as a user message;
/// `display` only says whether pi's UI shows it.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AgentMessage, to_llm};
/// # use agentmsg::custom::InjectedMessage;
/// let line = r#"{"role":"custom","customType":"todo","content":"remember the tests","display":true,"timestamp":5}"#;
/// let message = AgentMessage::from_line(line).unwrap();
/// assert_eq!(message.downcast_ref::<InjectedMessage>().unwrap().custom_type, "todo");
/// let sent = to_llm(std::slice::from_ref(&message));
/// assert_eq!(sent[0].as_user().unwrap().text(), "remember the tests");
/// assert_eq!(message.to_line().unwrap(), line);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(
    crate = crate,
    kind = "custom",
    aliases = ["hookMessage"],
    to_llm = with(InjectedMessage::render)
)]
pub struct InjectedMessage {
    /// The extension's name for the message.
    pub custom_type: String,
    /// What the model sees.
    #[serde(default)]
    pub content: InjectedContent,
    /// Whether pi's UI shows it.
    #[serde(default)]
    pub display: bool,
    /// The extension's own data (never sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// Unix milliseconds.
    #[agent_message(timestamp)]
    #[serde(default)]
    pub timestamp: u64,
}

impl InjectedMessage {
    /// The user message the model sees: the content, a string as one text block.
    pub fn render(&self) -> Vec<Message> {
        let content = match &self.content {
            InjectedContent::Text(text) => vec![UserContent::Text(TextContent::new(text.clone()))],
            InjectedContent::Blocks(blocks) => blocks.clone(),
        };
        vec![Message::User(
            UserMessage::new(content).with_timestamp(self.timestamp),
        )]
    }
}
