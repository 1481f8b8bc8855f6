//! The tree: the leaf, paths, children and leaves, and the operations that
//! grow it (append, branch, branch with a summary, compact, label).

use serde_json::Value;

use super::entry::{Entry, EntryKind, LineText, LABEL_EXTENSION};
use super::error::SessionError;
use super::pi;
use super::{Session, SessionFormat};
use crate::custom::{BranchSummary, CompactionSummary, ExtensionMessage};
use crate::time::now_millis;
use crate::{AgentMessage, MessageId, ParentId};

impl Session {
    /// The current leaf: the last entry read, then the last appended, or the
    /// entry [`branch`](Self::branch) moved to.
    pub fn leaf(&self) -> Option<&Entry> {
        self.leaf.map(|i| &self.entries[i])
    }

    /// The current leaf's id.
    pub fn leaf_id(&self) -> Option<&MessageId> {
        self.leaf().and_then(Entry::id)
    }

    /// The entries from the root to `leaf` (the current leaf when `None`).
    /// Fails when no entry has that id.
    pub fn path(&self, leaf: Option<&str>) -> Result<Vec<&Entry>, SessionError> {
        Ok(self
            .path_indexes(leaf)?
            .into_iter()
            .map(|i| &self.entries[i])
            .collect())
    }

    pub(crate) fn path_indexes(&self, leaf: Option<&str>) -> Result<Vec<usize>, SessionError> {
        let start = match leaf {
            Some(id) => Some(self.find(id)?),
            None => self.leaf,
        };
        Ok(self.path_from(start))
    }

    /// The indexes from the root to entry `start`.
    fn path_from(&self, start: Option<usize>) -> Vec<usize> {
        super::read::path_from(&self.entries, start)
    }

    /// Every branch of the tree: the path from the root to each leaf (as
    /// [`path`](Self::path) gives it), the leaves in file order. Leaves
    /// without an id have their branch too.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// let hi = session.append(Message::user("hi").into()).unwrap();
    /// session.append(Message::assistant("hello").into()).unwrap();
    /// session.branch(hi.as_str()).unwrap();
    /// session.append(Message::assistant("hey").into()).unwrap();
    /// let lengths: Vec<usize> = session.branches().map(|b| b.len()).collect();
    /// assert_eq!(lengths, [2, 2]);
    /// ```
    pub fn branches(&self) -> impl Iterator<Item = Vec<&Entry>> + '_ {
        self.leaf_indexes().map(|i| {
            self.path_from(Some(i))
                .into_iter()
                .map(|j| &self.entries[j])
                .collect()
        })
    }

    /// The indexes of the entries without children, in file order.
    fn leaf_indexes(&self) -> impl Iterator<Item = usize> + '_ {
        let mut has_child = vec![false; self.entries.len()];
        for entry in &self.entries {
            if let Some(p) = entry.parent {
                has_child[p] = true;
            }
        }
        (0..self.entries.len()).filter(move |&i| self.entries[i].in_tree() && !has_child[i])
    }

    fn find(&self, id: &str) -> Result<usize, SessionError> {
        self.index
            .get(&self.entries, id)
            .ok_or_else(|| SessionError::NoSuchEntry(id.to_owned()))
    }

    /// The entries whose parent is `id`, in file order.
    pub fn children(&self, id: &str) -> Result<Vec<&Entry>, SessionError> {
        let parent = self.find(id)?;
        Ok(self
            .entries
            .iter()
            .filter(|e| e.parent == Some(parent))
            .collect())
    }

    /// For each entry (by its index in [`entries`](Self::entries)), the
    /// indexes of its children, in file order.
    pub fn child_indexes(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.entries.len()];
        for (i, entry) in self.entries.iter().enumerate() {
            if let Some(p) = entry.parent {
                children[p].push(i);
            }
        }
        children
    }

    /// The entries without children: the tips of the branches, in file order.
    pub fn leaves(&self) -> Vec<&Entry> {
        self.leaf_indexes().map(|i| &self.entries[i]).collect()
    }

    /// Moves the leaf to the entry `from`: what is appended next is its child,
    /// and the context is that of `from`.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// let first = session.append(Message::user("one").into()).unwrap();
    /// session.append(Message::user("two").into()).unwrap();
    /// session.branch(first.as_str()).unwrap();
    /// assert_eq!(session.context(None).unwrap().messages.len(), 1);
    /// assert!(session.branch("nope").is_err());
    /// ```
    pub fn branch(&mut self, from: &str) -> Result<(), SessionError> {
        self.leaf = Some(self.find(from)?);
        Ok(())
    }

    /// Appends `message` as a child of the leaf, which moves to it; returns
    /// its id. In an agentmsg transcript the line keeps the message's id (or
    /// gets a UUIDv7) and says `parentId` unless it follows the line before
    /// it; in a pi session it is a pi `message` entry (8-hex id, ISO
    /// timestamp, pi's field names).
    pub fn append(&mut self, message: AgentMessage) -> Result<MessageId, SessionError> {
        match self.format {
            SessionFormat::Agentmsg | SessionFormat::ClaudeCode | SessionFormat::Codex => {
                self.append_agentmsg(message)
            }
            SessionFormat::Pi { .. } => {
                let body = pi::pi_message_json(&message)?;
                self.append_pi(
                    "message",
                    &[("message", Field::Raw(body))],
                    EntryKind::Message(message),
                )
            }
        }
    }

    /// Moves the leaf to `from` and appends a summary of the branch it left
    /// (sent to the model in place); returns the summary's id.
    pub fn branch_with_summary(
        &mut self,
        from: &str,
        summary: impl Into<String>,
    ) -> Result<MessageId, SessionError> {
        let summary = summary.into();
        self.branch(from)?;
        let from_id = self.ensure_id(self.find(from)?)?;
        match self.format {
            SessionFormat::Agentmsg | SessionFormat::ClaudeCode | SessionFormat::Codex => {
                let mut message = BranchSummary::new(summary);
                message.from_id = Some(from_id);
                message.timestamp = now_millis();
                self.append_agentmsg(AgentMessage::custom(message))
            }
            SessionFormat::Pi { .. } => {
                let kind = EntryKind::BranchSummary(BranchSummary {
                    summary: summary.clone(),
                    from_id: Some(from_id.clone()),
                    timestamp: 0,
                });
                self.append_pi(
                    "branch_summary",
                    &[
                        ("fromId", Field::Json(Value::from(from_id.as_str()))),
                        ("summary", Field::Json(Value::from(summary))),
                    ],
                    kind,
                )
            }
        }
    }

    /// Appends a compaction: the model sees `summary`, then the entries from
    /// `first_kept` on. Returns its id.
    pub fn compact(
        &mut self,
        summary: impl Into<String>,
        first_kept: &str,
        tokens_before: u64,
    ) -> Result<MessageId, SessionError> {
        self.append_compaction(summary.into(), first_kept, tokens_before, None)
    }

    /// [`compact`](Self::compact) with pi's `details` (the file lists a
    /// compaction carries): a JSON text, written after `tokensBefore` as it
    /// is, in pi's key order.
    pub(super) fn append_compaction(
        &mut self,
        summary: String,
        first_kept: &str,
        tokens_before: u64,
        details: Option<String>,
    ) -> Result<MessageId, SessionError> {
        let first_kept = self.ensure_id(self.find(first_kept)?)?;
        let compaction = CompactionSummary {
            summary: summary.clone(),
            tokens_before,
            first_kept_id: Some(first_kept.clone()),
            timestamp: now_millis(),
            details: match &details {
                Some(text) => Some(serde_json::from_str(text)?),
                None => None,
            },
        };
        match self.format {
            SessionFormat::Agentmsg | SessionFormat::ClaudeCode | SessionFormat::Codex => {
                self.append_agentmsg(AgentMessage::custom(compaction))
            }
            SessionFormat::Pi { .. } => {
                let mut fields = vec![
                    ("summary", Field::Json(Value::from(summary))),
                    (
                        "firstKeptEntryId",
                        Field::Json(Value::from(first_kept.as_str())),
                    ),
                    ("tokensBefore", Field::Json(Value::from(tokens_before))),
                ];
                if let Some(details) = details {
                    fields.push(("details", Field::Raw(details)));
                }
                self.append_pi("compaction", &fields, EntryKind::Compaction(compaction))
            }
        }
    }

    /// Labels the entry `target` (`None` clears its label); the label entry is
    /// a child of the leaf, as pi writes it. Returns the label entry's id.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// let hi = session.append(Message::user("hi").into()).unwrap();
    /// session.label(hi.as_str(), Some("start")).unwrap();
    /// assert_eq!(session.label_of(hi.as_str()), Some("start"));
    /// ```
    pub fn label(&mut self, target: &str, label: Option<&str>) -> Result<MessageId, SessionError> {
        let target = self.ensure_id(self.find(target)?)?;
        match self.format {
            SessionFormat::Agentmsg | SessionFormat::ClaudeCode | SessionFormat::Codex => {
                let data = serde_json::json!({"targetId": target.as_str(), "label": label});
                let message = ExtensionMessage::new(LABEL_EXTENSION, &data)?;
                self.append_agentmsg(AgentMessage::custom(message))
            }
            SessionFormat::Pi { .. } => {
                let mut fields = vec![("targetId", Field::Json(Value::from(target.as_str())))];
                if let Some(label) = label {
                    fields.push(("label", Field::Json(Value::from(label))));
                }
                let kind = EntryKind::Label {
                    target,
                    label: label.map(str::to_owned),
                };
                self.append_pi("label", &fields, kind)
            }
        }
    }

    /// The id of entry `i`, giving it a UUIDv7 (and rewriting its line) when it
    /// has none.
    fn ensure_id(&mut self, i: usize) -> Result<MessageId, SessionError> {
        if let Some(id) = &self.entries[i].id {
            return Ok(id.clone());
        }
        let line_no = self.entries[i].line_no;
        let EntryKind::Message(message) = &self.entries[i].kind else {
            return Err(SessionError::NoId { line: line_no });
        };
        if message.is_unknown() {
            return Err(SessionError::NoId { line: line_no });
        }
        let id = MessageId::new();
        let message = message.clone().with_id(Some(id.clone()));
        let line = message.to_line()?;
        let entry = &mut self.entries[i];
        entry.text = match entry.text {
            LineText::Span(start, end) | LineText::Replaced(start, end, _) => {
                LineText::Replaced(start, end, line)
            }
            LineText::Owned(_) => LineText::Owned(line),
        };
        entry.kind = EntryKind::Message(message);
        entry.id = Some(id.clone());
        // The id was drawn to be new, so nothing holds it yet.
        let _ = self.index.insert(&self.entries, i);
        Ok(id)
    }

    fn append_agentmsg(&mut self, message: AgentMessage) -> Result<MessageId, SessionError> {
        let last = self.entries.iter().rposition(Entry::in_tree);
        let declared = match self.leaf {
            _ if self.leaf == last => ParentId::Previous,
            Some(leaf) => ParentId::Id(self.ensure_id(leaf)?),
            None => ParentId::Root,
        };
        let id = match message.id() {
            Some(id) if !self.index.contains(&self.entries, id.as_str()) => id.clone(),
            _ => MessageId::new(),
        };
        let message = message
            .with_id(Some(id.clone()))
            .with_parent_id(declared.clone());
        let line = message.to_line()?;
        let line_no = self.next_line_no();
        self.push(Entry {
            line_no,
            text: LineText::Owned(line),
            id: Some(id.clone()),
            declared,
            parent: self.leaf,
            kind: EntryKind::Message(message),
            timestamp: 0,
        });
        Ok(id)
    }

    fn append_pi(
        &mut self,
        kind_name: &str,
        fields: &[(&str, Field)],
        kind: EntryKind,
    ) -> Result<MessageId, SessionError> {
        if let SessionFormat::Pi { version } = self.format {
            if version < 2 {
                return Err(SessionError::NeedsMigration);
            }
        }
        let parent = match self.leaf {
            Some(leaf) => Some(self.ensure_id(leaf)?),
            None => None,
        };
        let id = pi::new_id(|id| self.index.contains(&self.entries, id));
        let millis = now_millis();
        let mut line = pi::entry_head(kind_name, &id, parent.as_ref(), millis);
        for (key, value) in fields {
            match value {
                Field::Json(value) => pi::push_field(&mut line, key, value),
                Field::Raw(raw) => {
                    line.push_str(",\"");
                    line.push_str(key);
                    line.push_str("\":");
                    line.push_str(raw);
                }
            }
        }
        line.push('}');
        let mut kind = kind;
        if let EntryKind::BranchSummary(b) = &mut kind {
            b.timestamp = millis;
        }
        let line_no = self.next_line_no();
        self.push(Entry {
            line_no,
            text: LineText::Owned(line),
            id: Some(id.clone()),
            declared: match parent {
                Some(p) => ParentId::Id(p),
                None => ParentId::Root,
            },
            parent: self.leaf,
            kind,
            timestamp: millis,
        });
        Ok(id)
    }

    fn next_line_no(&mut self) -> usize {
        if self.next_line == 0 {
            self.next_line = self.text.iter().filter(|&&b| b == b'\n').count()
                + usize::from(!self.text.is_empty() && !self.text.ends_with(b"\n"))
                + 1;
        }
        self.next_line += 1;
        self.next_line - 1
    }

    fn push(&mut self, entry: Entry) {
        let i = self.entries.len();
        self.entries.push(entry);
        self.index.insert(&self.entries, i);
        self.leaf = Some(i);
    }
}

/// A field of a pi entry being written.
pub(crate) enum Field {
    Json(Value),
    Raw(String),
}
