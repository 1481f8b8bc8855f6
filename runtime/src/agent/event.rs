//! [`AgentEvent`]: what a run tells its UI, in order.

use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::providers::StreamEvent;
use crate::{AgentMessage, MessageId, StopReason, ToolCall, ToolResultMessage, Usage};

/// One thing a run did, in the order it happened: the one stream a UI
/// renders.
///
/// A run gives `AgentStart`, then per turn `TurnStart`, the messages
/// appended (each `MessageStart`, for the model's reply its
/// `MessageUpdate`s, then `MessageEnd`), the tools run (`ToolExecutionStart`
/// and `ToolExecutionEnd`, as each begins and ends), and `TurnEnd` with the
/// turn's usage; last `AgentEnd` with the run's. Every message appended gets
/// its start and end, the application's own included (a UI-only kind that
/// never reaches the model still reaches the UI).
///
/// Serialized, an event is one JSON object tagged by pi's event names, for a
/// UI in another process: `{"type":"tool_execution_end","call":{…},"result":{…},"elapsedMs":12}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum AgentEvent {
    /// The run began.
    AgentStart,
    /// A turn began: a request is about to be sent.
    TurnStart {
        /// The turn's number, from 1.
        turn: u32,
    },
    /// A message begins: for the model's reply, the empty message its stream
    /// fills; for any other, the whole message.
    MessageStart {
        /// The message.
        message: AgentMessage,
    },
    /// The model's reply grew (text, thinking, a tool call's arguments).
    MessageUpdate {
        /// What the stream told.
        event: StreamEvent,
    },
    /// A message is complete and appended to the session.
    MessageEnd {
        /// Its id in the session.
        id: MessageId,
        /// The message.
        message: AgentMessage,
    },
    /// A tool began running (after approval).
    ToolExecutionStart {
        /// The call, with the arguments it runs with.
        call: ToolCall,
    },
    /// A tool ended: its result, an error result when it failed, panicked,
    /// timed out, was denied or was cancelled.
    ToolExecutionEnd {
        /// The call.
        call: ToolCall,
        /// Its result, as it will be appended.
        result: ToolResultMessage,
        /// How long it ran.
        #[serde(rename = "elapsedMs", serialize_with = "millis")]
        elapsed: Duration,
    },
    /// A turn ended.
    TurnEnd {
        /// The turn's number, from 1.
        turn: u32,
        /// The turn's usage (its reply's).
        usage: Usage,
    },
    /// The session was compacted before a request (the summary entry has
    /// its own `MessageStart` and `MessageEnd` too).
    Compacted {
        /// The summary entry's id.
        id: MessageId,
        /// The tokens of the context before.
        tokens_before: u64,
        /// What the summariser's call cost (part of the run's usage).
        usage: Usage,
    },
    /// The run ended.
    AgentEnd {
        /// Why: the last reply's stop reason, `maxTurns` at the turn limit,
        /// `aborted` when cancelled, `error` when the model failed.
        stop_reason: StopReason,
        /// The usage of every turn, summed.
        usage: Usage,
    },
}

fn millis<S: Serializer>(elapsed: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}
