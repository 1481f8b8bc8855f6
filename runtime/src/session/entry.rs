//! One entry of a session: a line of the file, what it is, and where it hangs.

use crate::custom::{BranchSummary, CompactionSummary, InjectedMessage};
use crate::{AgentMessage, MessageId, ParentId};

/// What an entry is.
///
/// An agentmsg transcript's entries are all [`EntryKind::Message`] (a
/// `compactionSummary` line acts as a compaction); a pi session's entries are
/// its entry types.
// Nearly every entry is a message: boxing it would cost an allocation per
// entry (as `load::Body` in the CLI).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EntryKind {
    /// pi's `session` header (not part of the tree).
    Header,
    /// A message: an agentmsg transcript line, or a pi `message` entry's
    /// message.
    Message(AgentMessage),
    /// pi's `compaction`: the model sees the summary, then what it kept.
    Compaction(CompactionSummary),
    /// pi's `branch_summary`: sent in place.
    BranchSummary(BranchSummary),
    /// pi's `custom_message`: an extension's message, sent as user content.
    CustomMessage(InjectedMessage),
    /// pi's `custom`: an extension's state, never sent.
    Custom {
        /// The extension's name for it.
        custom_type: String,
    },
    /// A label on another entry (`None` clears it).
    Label {
        /// The labelled entry.
        target: MessageId,
        /// The label.
        label: Option<String>,
    },
    /// pi's `session_info` (the session's display name).
    SessionInfo {
        /// The name.
        name: Option<String>,
    },
    /// pi's `model_change`.
    ModelChange {
        /// The provider.
        provider: String,
        /// The model.
        model_id: String,
    },
    /// pi's `thinking_level_change`.
    ThinkingLevelChange {
        /// The new level (`off`, `low`, `medium`, `high`…).
        level: String,
    },
    /// A pi entry of a type this version does not know; kept, never sent.
    Other {
        /// Its `type`.
        kind: String,
    },
}

impl EntryKind {
    /// The entry's type as its format names it: the message's kind for a
    /// message (`user`, `assistant`, `bashExecution`…), pi's entry type
    /// otherwise.
    pub fn name(&self) -> &str {
        match self {
            Self::Header => "session",
            Self::Message(message) => message.kind(),
            Self::Compaction(_) => "compaction",
            Self::BranchSummary(_) => "branch_summary",
            Self::CustomMessage(_) => "custom_message",
            Self::Custom { .. } => "custom",
            Self::Label { .. } => "label",
            Self::SessionInfo { .. } => "session_info",
            Self::ModelChange { .. } => "model_change",
            Self::ThinkingLevelChange { .. } => "thinking_level_change",
            Self::Other { kind } => kind,
        }
    }
}

/// Where an entry's text is: a span of the text the session was read from, or
/// its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineText {
    /// Bytes `start..end` of the text read.
    Span(usize, usize),
    /// Bytes `start..end` of the text read, replaced by this text (the entry
    /// was given an id).
    Replaced(usize, usize, String),
    /// An appended entry's line.
    Owned(String),
}

/// One entry of a [`Session`](super::Session): its line, its id and parent, and
/// what it is.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{ParentId, Session};
/// let text = "{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1,\"id\":\"a\"}\n";
/// let session = Session::read(text.as_bytes()).unwrap();
/// let entry = &session.entries()[0];
/// assert_eq!(entry.id().unwrap().as_str(), "a");
/// assert_eq!(entry.parent_id(&session), None);
/// assert_eq!(entry.declared_parent(), &ParentId::Previous);
/// assert_eq!(session.line(entry), text.trim_end());
/// assert_eq!(entry.line_no(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub(crate) line_no: usize,
    pub(crate) text: LineText,
    pub(crate) id: Option<MessageId>,
    /// The parent as the line declares it (pi v1: as migrated).
    pub(crate) declared: ParentId,
    /// The parent's index in the session's entries, once resolved.
    pub(crate) parent: Option<usize>,
    pub(crate) kind: EntryKind,
    /// ISO timestamp of a pi entry, in Unix milliseconds (0 when none).
    pub(crate) timestamp: u64,
}

impl Entry {
    /// The line of the file it was read from (1-based); for an appended entry,
    /// the line it will have.
    pub fn line_no(&self) -> usize {
        self.line_no
    }

    /// Its id, if it has one (a pi v1 entry has the one its migration gave it).
    pub fn id(&self) -> Option<&MessageId> {
        self.id.as_ref()
    }

    /// Its parent as the line says it ([`ParentId::Previous`] when the line has
    /// no `parentId`).
    pub fn declared_parent(&self) -> &ParentId {
        &self.declared
    }

    /// Its parent's id, as resolved: `None` for a root (or a parent without an
    /// id).
    pub fn parent_id<'s>(&self, session: &'s super::Session) -> Option<&'s MessageId> {
        self.parent.and_then(|p| session.entries[p].id.as_ref())
    }

    /// Its parent's index in [`Session::entries`](super::Session::entries),
    /// as resolved (`None` for a root).
    pub fn parent_index(&self) -> Option<usize> {
        self.parent
    }

    /// What it is.
    pub fn kind(&self) -> &EntryKind {
        &self.kind
    }

    /// The message, for a message entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message(message) => Some(message),
            _ => None,
        }
    }

    /// Whether it is a node of the tree (everything but pi's header).
    pub fn in_tree(&self) -> bool {
        !matches!(self.kind, EntryKind::Header)
    }

    /// The compaction it stands for: a pi `compaction` entry or an agentmsg
    /// `compactionSummary` line.
    pub fn as_compaction(&self) -> Option<&CompactionSummary> {
        match &self.kind {
            EntryKind::Compaction(c) => Some(c),
            EntryKind::Message(m) => m.downcast_ref::<CompactionSummary>(),
            _ => None,
        }
    }

    /// Its timestamp in Unix milliseconds: a pi entry's own, or its message's.
    pub fn timestamp(&self) -> u64 {
        if self.timestamp != 0 {
            return self.timestamp;
        }
        match &self.kind {
            EntryKind::Message(m) => m.timestamp().unwrap_or(0),
            _ => 0,
        }
    }
}

/// The `extension` kind of an agentmsg label line: `data` is
/// `{"targetId": …, "label": …}`.
pub(crate) const LABEL_EXTENSION: &str = "label";

impl Entry {
    /// The target and text of a label: pi's `label` entry, or an agentmsg
    /// `extension` line of kind `label`.
    pub fn label(&self) -> Option<(MessageId, Option<&str>)> {
        match &self.kind {
            EntryKind::Label { target, label } => Some((target.clone(), label.as_deref())),
            EntryKind::Message(m) => {
                let ext = m.downcast_ref::<crate::custom::ExtensionMessage>()?;
                if ext.kind != LABEL_EXTENSION {
                    return None;
                }
                let target = ext.data.get("targetId")?.as_str()?;
                Some((
                    MessageId::from(target),
                    ext.data.get("label").and_then(serde_json::Value::as_str),
                ))
            }
            _ => None,
        }
    }
}
