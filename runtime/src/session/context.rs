//! What the model sees at a leaf: pi's `buildSessionContext`.

use super::entry::{Entry, EntryKind};
use super::error::SessionError;
use super::Session;
use crate::{AgentMessage, CompactionSummary, MessageId};

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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext {
    /// The messages, in order: a compaction's summary first when one lies on
    /// the path, then the entries it kept, then those after it. Project them
    /// with [`to_llm`](crate::to_llm).
    pub messages: Vec<AgentMessage>,
    /// The id of the entry each message came from (parallel to `messages`).
    pub entry_ids: Vec<Option<MessageId>>,
    /// The model the path last set (`model_change`, an assistant message).
    pub model: Option<ModelRef>,
    /// The thinking level the path last set (`off` when none did).
    pub thinking_level: String,
}

impl Session {
    /// The context at `leaf` (the current leaf when `None`), by pi's rules:
    ///
    /// - the path runs from the leaf to its root (a missing parent ends it);
    /// - when a compaction lies on the path, the last one's summary comes
    ///   first, then the entries from its first kept entry up to it, then
    ///   everything after it;
    /// - messages, custom messages (as they declare) and branch summaries are
    ///   sent in place; compactions, labels, custom entries, model and
    ///   thinking-level changes are not;
    /// - `model` and `thinking_level` are the last the path set.
    ///
    /// Linear in the length of the path.
    ///
    /// ```
    /// # use agentmsg_runtime::{Message, Session, to_llm};
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
    pub fn context(&self, leaf: Option<&str>) -> Result<SessionContext, SessionError> {
        let path = self.path_indexes(leaf)?;
        let mut context = SessionContext {
            thinking_level: "off".to_owned(),
            ..SessionContext::default()
        };
        let mut compaction: Option<usize> = None;
        for (at, &i) in path.iter().enumerate() {
            let entry = &self.entries[i];
            match &entry.kind {
                EntryKind::ThinkingLevelChange { level } => context.thinking_level = level.clone(),
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
            if entry.as_compaction().is_some() {
                compaction = Some(at);
            }
        }
        context.messages.reserve(path.len());
        context.entry_ids.reserve(path.len());
        match compaction {
            Some(at) => {
                let entry = &self.entries[path[at]];
                let summary = entry.as_compaction().cloned().unwrap_or_default();
                let first_kept = summary.first_kept_id.clone();
                let mut message = CompactionSummary {
                    timestamp: entry.timestamp(),
                    ..summary
                };
                if message.timestamp == 0 {
                    message.timestamp = entry.timestamp;
                }
                context.push(AgentMessage::custom(message), entry.id.clone());
                let mut kept = false;
                for &i in &path[..at] {
                    let e = &self.entries[i];
                    if !kept && first_kept.is_some() && e.id == first_kept {
                        kept = true;
                    }
                    if kept {
                        self.send(e, &mut context);
                    }
                }
                for &i in &path[at + 1..] {
                    self.send(&self.entries[i], &mut context);
                }
            }
            None => {
                for &i in &path {
                    self.send(&self.entries[i], &mut context);
                }
            }
        }
        Ok(context)
    }

    /// Adds what `entry` sends to the model, if anything.
    fn send(&self, entry: &Entry, context: &mut SessionContext) {
        let message = match &entry.kind {
            // An earlier compaction's summary is not sent again.
            EntryKind::Message(m) if m.downcast_ref::<CompactionSummary>().is_none() => m.clone(),
            EntryKind::CustomMessage(c) => AgentMessage::custom(c.clone()),
            EntryKind::BranchSummary(b) if !b.summary.is_empty() => AgentMessage::custom(b.clone()),
            _ => return,
        };
        context.push(message, entry.id.clone());
    }
}

impl SessionContext {
    fn push(&mut self, message: AgentMessage, id: Option<MessageId>) {
        self.messages.push(message);
        self.entry_ids.push(id);
    }
}
