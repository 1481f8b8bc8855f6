//! What the model sees at a leaf: pi's `buildSessionContext`.

use std::borrow::Borrow;
use std::ops::Deref;

use super::entry::{Entry, EntryKind};
use super::error::SessionError;
use super::{Session, SessionFormat};
use crate::custom::{BranchSummary, CompactionSummary};
use crate::{AgentMessage, MessageId};

/// A model as the path last set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// The provider (`anthropic`, `openai`…).
    pub provider: String,
    /// The model id.
    pub model_id: String,
}

/// The context of a session at a leaf: the messages to project, and the model
/// and thinking level the path last set.
///
/// The messages are borrowed from the session where they are its entries, and
/// owned where the context made them (a compaction's or a branch's summary, a
/// pi custom message): building a context copies no message. Call
/// [`into_owned`](Self::into_owned) to keep it past the session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext<'s> {
    /// The messages, in order: a compaction's summary first when one lies on
    /// the path, then the entries it kept, then those after it. Project them
    /// with [`to_llm`](crate::to_llm).
    pub messages: Vec<ContextMessage<'s>>,
    /// The id of the entry each message came from (parallel to `messages`).
    pub entry_ids: Vec<Option<MessageId>>,
    /// The model the path last set (`model_change`, an assistant message).
    pub model: Option<ModelRef>,
    /// The thinking level the path last set (`off` when none did).
    pub thinking_level: String,
}

/// A message of a [`SessionContext`]: an entry's message, borrowed from the
/// session, or one the context made. It dereferences to the
/// [`AgentMessage`], so a slice of them projects with
/// [`to_llm`](crate::to_llm). Two words wide, where a `Cow` of a message
/// would be as wide as the message.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{Message, Session};
/// # use agentmsg::session::ContextMessage;
/// let mut session = Session::new();
/// session.append(Message::user("hi").into()).unwrap();
/// let context = session.context(None).unwrap();
/// assert!(matches!(context.messages[0], ContextMessage::Entry(_)));
/// assert_eq!(context.messages[0].kind(), "user");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ContextMessage<'s> {
    /// A message of the session's entries.
    Entry(&'s AgentMessage),
    /// A message the context made (a summary, a pi custom message).
    Made(Box<AgentMessage>),
}

impl ContextMessage<'_> {
    /// The message, owned (an entry's is cloned).
    pub fn into_owned(self) -> AgentMessage {
        match self {
            Self::Entry(message) => message.clone(),
            Self::Made(message) => *message,
        }
    }
}

impl Deref for ContextMessage<'_> {
    type Target = AgentMessage;

    fn deref(&self) -> &AgentMessage {
        match self {
            Self::Entry(message) => message,
            Self::Made(message) => message,
        }
    }
}

impl Borrow<AgentMessage> for ContextMessage<'_> {
    fn borrow(&self) -> &AgentMessage {
        self
    }
}

impl Session {
    /// The context at `leaf` (the current leaf when `None`), by pi's rules:
    ///
    /// - the path runs from the leaf to its root (a missing parent ends it);
    /// - when a compaction lies on the path, the last one's summary comes
    ///   first, then the entries from its first kept entry up to it, then
    ///   everything after it;
    /// - in a pi session, a `message` entry is sent whatever its role (one of
    ///   role `compactionSummary` as user text, not as a compaction), except a
    ///   `system` one and, in a version 3 file, a `hookMessage`, which pi's
    ///   `convertToLlm` does not send; a branch summary without text is not
    ///   sent;
    /// - messages, custom messages (as they declare) and branch summaries are
    ///   sent in place; compactions, labels, custom entries, model and
    ///   thinking-level changes are not;
    /// - `model` and `thinking_level` are the last the path set.
    ///
    /// Linear in the length of the path.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session, to_llm};
    /// let mut session = Session::new();
    /// session.append(Message::user("old question").into()).unwrap();
    /// let kept = session.append(Message::user("recent question").into()).unwrap();
    /// session.compact("We talked about old things.", kept.as_str(), 1200).unwrap();
    /// session.append(Message::user("next").into()).unwrap();
    /// let context = session.context(None).unwrap();
    /// let sent = to_llm(&context.messages);
    /// assert_eq!(sent.len(), 3);
    /// assert!(sent[0].as_user().unwrap().text().contains("We talked about old things."));
    /// assert_eq!(sent[1].as_user().unwrap().text(), "recent question");
    /// ```
    pub fn context(&self, leaf: Option<&str>) -> Result<SessionContext<'_>, SessionError> {
        let (path, compaction, mut context) = self.walk(leaf)?;
        self.for_each_item(&path, compaction, |item, at| {
            let message = match item {
                Item::Entry(i) => match &self.entries[i].kind {
                    EntryKind::Message(m) => ContextMessage::Entry(m),
                    _ => return,
                },
                Item::Made(message) => ContextMessage::Made(message),
            };
            context.push(message, self.entries[at].id.clone());
        });
        Ok(context)
    }

    /// [`context`](Self::context), moving the messages out of the session: a
    /// context that owns its messages, without copying them.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// session.append(Message::user("hi").into()).unwrap();
    /// let bytes = session.to_bytes();
    /// let context = Session::read(&bytes).unwrap().into_context(None).unwrap();
    /// assert_eq!(context.messages.len(), 1);
    /// ```
    pub fn into_context(
        mut self,
        leaf: Option<&str>,
    ) -> Result<SessionContext<'static>, SessionError> {
        let (path, compaction, mut context) = self.walk(leaf)?;
        let mut plan = Vec::with_capacity(path.len() + 1);
        self.for_each_item(&path, compaction, |item, at| plan.push((item, at)));
        for (item, at) in plan {
            let id = self.entries[at].id.clone();
            let message = match item {
                Item::Entry(i) => {
                    match std::mem::replace(&mut self.entries[i].kind, EntryKind::Header) {
                        EntryKind::Message(m) => m,
                        _ => continue,
                    }
                }
                Item::Made(message) => *message,
            };
            let message = ContextMessage::Made(Box::new(message));
            context.push(message, id);
        }
        Ok(context)
    }

    /// The path at `leaf` (entry indexes, root first), the position on it of
    /// the last compaction, and a context with the model and thinking level
    /// the path set and room for its messages.
    fn walk<'c>(&self, leaf: Option<&str>) -> Result<Walk<'c>, SessionError> {
        let path = self.path_indexes(leaf)?;
        let mut context = SessionContext {
            thinking_level: "off".to_owned(),
            ..SessionContext::default()
        };
        let mut compaction: Option<usize> = None;
        // The entry that last set the model: read once, at the end.
        let mut model_at: Option<usize> = None;
        for (at, &i) in path.iter().enumerate() {
            let entry = &self.entries[i];
            match &entry.kind {
                EntryKind::ThinkingLevelChange { level } => context.thinking_level = level.clone(),
                EntryKind::ModelChange { .. } => model_at = Some(i),
                EntryKind::Message(AgentMessage::Llm(m)) => {
                    if matches!(m.message, crate::Message::Assistant(_)) {
                        model_at = Some(i);
                    }
                }
                EntryKind::Message(AgentMessage::Custom(c)) => {
                    // A pi `message` entry of role `compactionSummary` is
                    // a message pi sends as user text, not a compaction.
                    if c.downcast_ref::<CompactionSummary>().is_some() && !self.is_pi() {
                        compaction = Some(at);
                    } else if let Some(ext) = c.downcast_ref::<crate::custom::ExtensionMessage>() {
                        if imported_setting(ext, &mut context) {
                            model_at = None;
                        }
                    }
                }
                EntryKind::Compaction(_) => compaction = Some(at),
                _ => {}
            }
        }
        if let Some(i) = model_at {
            match &self.entries[i].kind {
                EntryKind::ModelChange { provider, model_id } => {
                    context.model = Some(ModelRef {
                        provider: provider.clone(),
                        model_id: model_id.clone(),
                    });
                }
                EntryKind::Message(m) => {
                    if let Some(a) = m.as_llm().and_then(crate::Message::as_assistant) {
                        context.model = Some(ModelRef {
                            provider: a.provider.clone(),
                            model_id: a.model.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        context.messages.reserve(path.len() + 1);
        context.entry_ids.reserve(path.len() + 1);
        Ok((path, compaction, context))
    }

    /// Calls `each` with what the path sends, in order (an entry's message by
    /// its index, or a message made for it), and the index of the entry it
    /// came from: the summary of the compaction at `compaction` first, then
    /// the entries it kept, then those after it.
    fn for_each_item(
        &self,
        path: &[usize],
        compaction: Option<usize>,
        mut each: impl FnMut(Item, usize),
    ) {
        match compaction {
            Some(at) => {
                let entry = &self.entries[path[at]];
                let summary = entry.as_compaction().cloned().unwrap_or_default();
                let first_kept = summary.first_kept_id.clone();
                each(
                    Item::Made(Box::new(AgentMessage::custom(summary))),
                    path[at],
                );
                let mut kept = false;
                for &i in &path[..at] {
                    let e = &self.entries[i];
                    if !kept && first_kept.is_some() && e.id == first_kept {
                        kept = true;
                    }
                    if kept {
                        self.send_entry(i, &mut each);
                    }
                }
                for &i in &path[at + 1..] {
                    self.send_entry(i, &mut each);
                }
            }
            None => {
                for &i in path {
                    self.send_entry(i, &mut each);
                }
            }
        }
    }

    /// Gives `each` what entry `i` sends to the model, if anything.
    fn send_entry(&self, i: usize, each: &mut impl FnMut(Item, usize)) {
        if let Some(item) = send_item(self.format, &self.entries[i], i) {
            each(item, i);
        }
    }

    fn is_pi(&self) -> bool {
        self.format.is_pi()
    }
}

impl SessionFormat {
    fn is_pi(self) -> bool {
        matches!(self, SessionFormat::Pi { .. })
    }
}

/// What `entry`, entry `i` of a session of `format`, sends to the model in
/// place, if anything: its message when [`sends`] says so, a custom
/// message or a branch summary with text as the message made of it.
fn send_item(format: SessionFormat, entry: &Entry, i: usize) -> Option<Item> {
    match &entry.kind {
        EntryKind::Message(m) if sends(format, m) => Some(Item::Entry(i)),
        EntryKind::CustomMessage(c) => Some(Item::Made(Box::new(AgentMessage::custom(c.clone())))),
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => {
            Some(Item::Made(Box::new(AgentMessage::custom(b.clone()))))
        }
        _ => None,
    }
}

/// Whether a message entry on the path is sent. In a pi session, as pi's
/// `convertToLlm`: every message but a `system` one (a role it does not
/// send). In an agentmsg transcript: not an earlier compaction's summary
/// (not sent again), nor an empty branch summary (pi skips a
/// `branch_summary` entry without one, and this is what it imports as).
fn sends(format: SessionFormat, message: &AgentMessage) -> bool {
    if format.is_pi() {
        return !matches!(message.as_llm(), Some(crate::Message::System(_)));
    }
    message.downcast_ref::<CompactionSummary>().is_none()
        && !message
            .downcast_ref::<BranchSummary>()
            .is_some_and(|b| b.summary.is_empty())
}

/// A path (entry indexes, root first), the position on it of its last
/// compaction, and the context it starts.
type Walk<'c> = (Vec<usize>, Option<usize>, SessionContext<'c>);

/// One message of a context: an entry's message, or one made for it.
enum Item {
    Entry(usize),
    Made(Box<AgentMessage>),
}

/// pi's `model_change` and `thinking_level_change` entries as `agentmsg
/// import` keeps them: `extension` lines of kind `pi.<type>` holding the entry.
/// Returns true when it set the model.
fn imported_setting(ext: &crate::custom::ExtensionMessage, context: &mut SessionContext) -> bool {
    let text = |key: &str| ext.data.get(key).and_then(serde_json::Value::as_str);
    match ext.kind.as_str() {
        "pi.thinking_level_change" => {
            if let Some(level) = text("thinkingLevel") {
                context.thinking_level = level.to_owned();
            }
            false
        }
        "pi.model_change" => match (text("provider"), text("modelId")) {
            (Some(provider), Some(model_id)) => {
                context.model = Some(ModelRef {
                    provider: provider.to_owned(),
                    model_id: model_id.to_owned(),
                });
                true
            }
            _ => false,
        },
        _ => false,
    }
}

// The providers' requests take a context as they take any messages; the
// conversion lives here, with the context, so that the providers need no
// session.
#[cfg(any_provider)]
impl<'a> From<&'a SessionContext<'_>> for crate::providers::Conversation<'a> {
    fn from(context: &'a SessionContext<'_>) -> Self {
        Self::project(&context.messages)
    }
}

impl<'s> SessionContext<'s> {
    fn push(&mut self, message: ContextMessage<'s>, id: Option<MessageId>) {
        self.messages.push(message);
        self.entry_ids.push(id);
    }

    /// The context with every message owned, to keep past the session.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// # use agentmsg::session::SessionContext;
    /// let mut session = Session::new();
    /// session.append(Message::user("hi").into()).unwrap();
    /// let context: SessionContext<'static> = session.context(None).unwrap().into_owned();
    /// drop(session);
    /// assert_eq!(context.messages.len(), 1);
    /// ```
    pub fn into_owned(self) -> SessionContext<'static> {
        SessionContext {
            messages: self
                .messages
                .into_iter()
                .map(|m| match m {
                    ContextMessage::Entry(m) => ContextMessage::Made(Box::new(m.clone())),
                    ContextMessage::Made(m) => ContextMessage::Made(m),
                })
                .collect(),
            entry_ids: self.entry_ids,
            model: self.model,
            thinking_level: self.thinking_level,
        }
    }
}

/// Whether `entry`, of a session of `format`, acts as a compaction when it is
/// the last one on a path (as [`Session::context`] reads it): a pi
/// `compaction` entry, or an agentmsg `compactionSummary` line (in a pi
/// session, a message of that role is sent as user text instead).
#[cfg(feature = "html")]
pub(crate) fn acts_as_compaction(format: SessionFormat, entry: &Entry) -> bool {
    match &entry.kind {
        EntryKind::Compaction(_) => true,
        EntryKind::Message(m) => m.downcast_ref::<CompactionSummary>().is_some() && !format.is_pi(),
        _ => false,
    }
}

/// What `entry`, of a session of `format`, gives a context it lies in (kept
/// or after the last compaction); for a compaction, its summary, which a
/// context gives when the compaction is the last on the path.
#[cfg(feature = "html")]
pub(crate) fn entry_sends(format: SessionFormat, entry: &Entry) -> Option<ContextMessage<'_>> {
    if acts_as_compaction(format, entry) {
        let summary = entry.as_compaction().cloned().unwrap_or_default();
        return Some(ContextMessage::Made(Box::new(AgentMessage::custom(
            summary,
        ))));
    }
    Some(match send_item(format, entry, 0)? {
        Item::Entry(_) => match &entry.kind {
            EntryKind::Message(m) => ContextMessage::Entry(m),
            _ => return None,
        },
        Item::Made(message) => ContextMessage::Made(message),
    })
}
