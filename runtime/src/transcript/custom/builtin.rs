//! The built-in custom kinds: `compactionSummary`, `branchSummary` (both shown to
//! the model as a user message carrying the summary, worded as pi words it) and
//! `extension` (an untyped UI-only entry).

use serde::{Deserialize, Serialize};

use agentmsg_macros::AgentMessage;

use crate::message::{Message, UserMessage};
use crate::TextContent;

/// What precedes a compaction summary in the user message the model sees (pi's wording).
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// What follows a compaction summary (pi's wording).
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// What precedes a branch summary in the user message the model sees (pi's wording).
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// What follows a branch summary (pi's wording).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn summary_message(prefix: &str, summary: &str, suffix: &str, timestamp: u64) -> Vec<Message> {
    let text = format!("{prefix}{summary}{suffix}");
    vec![Message::User(
        UserMessage::new([TextContent::new(text)]).with_timestamp(timestamp),
    )]
}

/// The summary of the history before a compaction; the model sees it as a user
/// message.
///
/// ```json
/// {"role":"compactionSummary","summary":"We fixed the parser.","tokensBefore":48213,"firstKeptId":"0193…","timestamp":1765238302057}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(crate = crate, kind = "compactionSummary", to_llm = with(CompactionSummary::render))]
pub struct CompactionSummary {
    /// The summary written by the model.
    pub summary: String,
    /// How many tokens the context held before the compaction.
    #[serde(default)]
    pub tokens_before: u64,
    /// The id of the first message kept after the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_id: Option<crate::MessageId>,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[agent_message(timestamp)]
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
    /// What the compaction carries for the next one, as pi writes it:
    /// `{"readFiles": […], "modifiedFiles": […]}`, the paths the summarised
    /// span read and changed (see
    /// [`FileLists`](crate::session::FileLists)). A compaction an extension
    /// made may hold anything here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl CompactionSummary {
    /// A summary of `tokens_before` tokens of history.
    pub fn new(summary: impl Into<String>, tokens_before: u64) -> Self {
        Self {
            summary: summary.into(),
            tokens_before,
            first_kept_id: None,
            timestamp: crate::message::now_ms(),
            details: None,
        }
    }

    /// The user message the model sees: the summary in pi's framing.
    pub fn render(&self) -> Vec<Message> {
        summary_message(
            COMPACTION_SUMMARY_PREFIX,
            &self.summary,
            COMPACTION_SUMMARY_SUFFIX,
            self.timestamp,
        )
    }
}

/// The summary of a branch the conversation came back from; the model sees it as
/// a user message.
///
/// ```json
/// {"role":"branchSummary","summary":"Tried a regex parser; too slow.","fromId":"0193…","timestamp":1765238302057}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(crate = crate, kind = "branchSummary", to_llm = with(BranchSummary::render))]
pub struct BranchSummary {
    /// The summary written by the model.
    pub summary: String,
    /// The id of the message the branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_id: Option<crate::MessageId>,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[agent_message(timestamp)]
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
}

impl BranchSummary {
    /// A summary of a branch.
    pub fn new(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            from_id: None,
            timestamp: crate::message::now_ms(),
        }
    }

    /// The user message the model sees: the summary in pi's framing.
    pub fn render(&self) -> Vec<Message> {
        summary_message(
            BRANCH_SUMMARY_PREFIX,
            &self.summary,
            BRANCH_SUMMARY_SUFFIX,
            self.timestamp,
        )
    }
}

/// An untyped, UI-only entry: a category and any JSON payload. It never reaches a
/// model.
///
/// ```json
/// {"role":"extension","kind":"notification","data":{"text":"build passed"}}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, AgentMessage)]
#[agent_message(crate = crate, kind = "extension")]
pub struct ExtensionMessage {
    /// The application's category, such as `notification` or `debug`.
    pub kind: String,
    /// The payload.
    #[serde(default)]
    pub data: serde_json::Value,
}

impl ExtensionMessage {
    /// An entry of category `kind` whose payload is `data` serialized.
    pub fn new<T: Serialize + ?Sized>(
        kind: impl Into<String>,
        data: &T,
    ) -> serde_json::Result<Self> {
        Ok(Self {
            kind: kind.into(),
            data: serde_json::to_value(data)?,
        })
    }

    /// The payload decoded as a `T`.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        T::deserialize(&self.data)
    }
}
