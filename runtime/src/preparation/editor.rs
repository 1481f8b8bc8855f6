//! Editing a prompt without inventing ids or timestamps.

use crate::message::{AssistantMessage, Message, MessageId, UserMessage};
use crate::message::{IntoAssistantContent, IntoUserContent};
use crate::{AssistantContent, Role, UserContent};

use super::report::Provenance;
use super::Prepared;

/// A user or assistant message for [`PromptEditor`], with nothing but its
/// content: no id, no timestamp (written as unknown), no usage or origin.
///
/// The constructors hold the role rules: `PromptMessage::assistant([image])`
/// does not compile.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptMessage {
    /// A user message.
    User(Vec<UserContent>),
    /// An assistant message.
    Assistant(Vec<AssistantContent>),
}

impl PromptMessage {
    /// A user message from blocks a user message may hold (text, image, audio,
    /// document, strings).
    pub fn user<I>(parts: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoUserContent,
    {
        Self::User(
            parts
                .into_iter()
                .map(IntoUserContent::into_user_content)
                .collect(),
        )
    }

    /// An assistant message from blocks an assistant message may hold (text,
    /// thinking, redacted thinking, tool calls, strings).
    pub fn assistant<I>(parts: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoAssistantContent,
    {
        Self::Assistant(
            parts
                .into_iter()
                .map(IntoAssistantContent::into_assistant_content)
                .collect(),
        )
    }

    fn into_message(self) -> Message {
        match self {
            Self::User(content) => Message::User(UserMessage {
                content,
                timestamp: 0,
            }),
            Self::Assistant(content) => Message::Assistant(AssistantMessage {
                content,
                ..AssistantMessage::default()
            }),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::LastUser {}
    impl Sealed for super::LastAssistant {}
}

/// The last user message, for [`PromptEditor::append_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LastUser;

/// The last assistant message, for [`PromptEditor::append_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LastAssistant;

/// Where [`PromptEditor::append_to`] appends: [`LastUser`] or
/// [`LastAssistant`]. Each takes the blocks its role allows, through
/// [`IntoUserContent`] and [`IntoAssistantContent`].
pub trait AppendTarget: sealed::Sealed {
    /// The role of the message appended to.
    const ROLE: Role;
    /// The content of that role.
    type Content;

    /// Appends `parts` to `message` if it has the role; `false` otherwise.
    #[doc(hidden)]
    fn extend(message: &mut Message, parts: &mut Vec<Self::Content>) -> bool;
}

impl AppendTarget for LastUser {
    const ROLE: Role = Role::User;
    type Content = UserContent;

    fn extend(message: &mut Message, parts: &mut Vec<UserContent>) -> bool {
        match message {
            Message::User(user) => {
                user.content.append(parts);
                true
            }
            _ => false,
        }
    }
}

impl AppendTarget for LastAssistant {
    const ROLE: Role = Role::Assistant;
    type Content = AssistantContent;

    fn extend(message: &mut Message, parts: &mut Vec<AssistantContent>) -> bool {
        match message {
            Message::Assistant(assistant) => {
                assistant.content.append(parts);
                true
            }
            _ => false,
        }
    }
}

/// A block that may be appended to the message `T` names: anything
/// [`IntoUserContent`] for [`LastUser`], anything [`IntoAssistantContent`] for
/// [`LastAssistant`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be appended to `{T}`",
    label = "not allowed in that message",
    note = "`LastUser` takes what a user message may hold (text, image, audio, document); `LastAssistant` takes what an assistant message may hold (text, image, thinking, redacted thinking, tool calls, provider blocks)"
)]
pub trait PartOf<T: AppendTarget> {
    /// The block as content of that role.
    fn into_part(self) -> T::Content;
}

impl<C: IntoUserContent> PartOf<LastUser> for C {
    fn into_part(self) -> UserContent {
        self.into_user_content()
    }
}

impl<C: IntoAssistantContent> PartOf<LastAssistant> for C {
    fn into_part(self) -> AssistantContent {
        self.into_assistant_content()
    }
}

/// An edit that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// No message has this id.
    #[error("no message has id `{id}`")]
    UnknownId {
        /// The id asked for.
        id: MessageId,
    },
    /// There is no message of the role to append to.
    #[error("there is no {role} message to append to")]
    NoMessage {
        /// The role asked for.
        role: Role,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    id: Option<MessageId>,
    message: Message,
    /// Made by prepare (a synthetic result, moved images), not in the transcript.
    derived: bool,
}

/// Adjusts a request's messages for a hook, without inventing ids or
/// timestamps (seed 001, "prompt mutators").
///
/// **What an id is here.** Prepared [`Message`]s carry no ids; the ids are
/// those of the transcript lines ([`MessageId`], the `"id"` of a line) the
/// messages came from. The editor keeps each message paired with the id of its
/// line: [`from_prepared`](Self::from_prepared) takes the ids of the messages
/// given to [`prepare`](crate::prepare), in the same order, and follows
/// [`Prepared::provenance`]; messages that prepare made (synthetic results, moved
/// images) and messages the editor adds have no id and cannot be anchors.
///
/// **Turns stay whole.** An assistant turn with tool calls and the results
/// after it are one unit: [`insert_after`](Self::insert_after) the turn or one
/// of its results inserts after the last result, and
/// [`insert_before`](Self::insert_before) inserts before the assistant
/// message, so no call is separated from its results.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::{Message, MessageId, TextContent};
/// use agentmsg::project::{LastUser, PromptEditor, PromptMessage};
///
/// let mut editor = PromptEditor::with_ids([
///     (Some(MessageId::from("m1")), Message::user("Fix the build")),
///     (Some(MessageId::from("m2")), Message::assistant("Done.")),
/// ]);
/// editor.append(PromptMessage::user(["Summarize the tool output above and continue."]));
/// editor.append_to(LastUser, [TextContent::new("(build mode)")])?;
/// editor.insert_before(&MessageId::from("m2"), PromptMessage::user(["Be brief."]))?;
/// assert!(editor.insert_after(&MessageId::from("nope"), PromptMessage::user(["x"])).is_err());
/// let messages = editor.into_messages();
/// assert_eq!(messages.len(), 4);
/// # Ok::<(), agentmsg::project::EditError>(())
/// ```
///
/// The role rules hold: audio cannot be appended to an assistant message.
///
/// ```compile_fail
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::AudioContent;
/// use agentmsg::project::{LastAssistant, PromptEditor};
/// let mut editor = PromptEditor::new(Vec::new());
/// let clip = AudioContent { data: "SUQz".into(), mime_type: "audio/mpeg".into() };
/// editor.append_to(LastAssistant, [clip]);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PromptEditor {
    entries: Vec<Entry>,
}

impl PromptEditor {
    /// An editor over messages without ids (so without anchors for
    /// `insert_after`/`insert_before`).
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            entries: messages
                .into_iter()
                .map(|message| Entry {
                    id: None,
                    message,
                    derived: false,
                })
                .collect(),
        }
    }

    /// An editor over messages paired with the ids of their transcript lines.
    pub fn with_ids<I>(messages: I) -> Self
    where
        I: IntoIterator<Item = (Option<MessageId>, Message)>,
    {
        Self {
            entries: messages
                .into_iter()
                .map(|(id, message)| Entry {
                    id,
                    message,
                    derived: false,
                })
                .collect(),
        }
    }

    /// An editor over prepared messages. `ids[i]` is the id of the `i`-th
    /// message given to [`prepare`](crate::prepare); each prepared message
    /// that is an input message gets its id, messages prepare made get none.
    pub fn from_prepared(prepared: Prepared, ids: &[Option<MessageId>]) -> Self {
        let mut origins = prepared.provenance.into_iter();
        Self {
            entries: prepared
                .messages
                .into_iter()
                .map(|message| {
                    let origin = origins.next();
                    let (id, derived) = match origin {
                        Some(Provenance::Input(i)) => (ids.get(i).cloned().flatten(), false),
                        Some(_) => (None, true),
                        None => (None, false),
                    };
                    Entry {
                        id,
                        message,
                        derived,
                    }
                })
                .collect(),
        }
    }

    /// Adds a message at the end.
    pub fn append(&mut self, message: PromptMessage) {
        self.entries.push(Self::added(message));
    }

    /// Adds a message at the start of the conversation, after the leading
    /// system messages.
    pub fn prepend(&mut self, message: PromptMessage) {
        let at = self
            .entries
            .iter()
            .position(|e| !matches!(e.message, Message::System(_)))
            .unwrap_or(self.entries.len());
        self.entries.insert(at, Self::added(message));
    }

    /// Appends blocks to the last user ([`LastUser`]) or assistant
    /// ([`LastAssistant`]) message; the blocks must be allowed in that role.
    ///
    /// # Errors
    ///
    /// [`EditError::NoMessage`] when there is no message of that role.
    pub fn append_to<T, I>(&mut self, target: T, parts: I) -> Result<(), EditError>
    where
        T: AppendTarget,
        I: IntoIterator,
        I::Item: PartOf<T>,
    {
        let _ = target;
        let mut parts: Vec<T::Content> = parts.into_iter().map(PartOf::into_part).collect();
        for entry in self.entries.iter_mut().rev() {
            if T::extend(&mut entry.message, &mut parts) {
                return Ok(());
            }
        }
        Err(EditError::NoMessage { role: T::ROLE })
    }

    /// Inserts a message after the message with this id (after its turn's
    /// results, for an assistant turn or one of its results).
    ///
    /// # Errors
    ///
    /// [`EditError::UnknownId`] when no message has the id.
    pub fn insert_after(
        &mut self,
        id: &MessageId,
        message: PromptMessage,
    ) -> Result<(), EditError> {
        let (_, end) = self.unit(id)?;
        self.entries.insert(end, Self::added(message));
        Ok(())
    }

    /// Inserts a message before the message with this id (before the assistant
    /// message, for one of its turn's results).
    ///
    /// # Errors
    ///
    /// [`EditError::UnknownId`] when no message has the id.
    pub fn insert_before(
        &mut self,
        id: &MessageId,
        message: PromptMessage,
    ) -> Result<(), EditError> {
        let (start, _) = self.unit(id)?;
        self.entries.insert(start, Self::added(message));
        Ok(())
    }

    /// The messages, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> + '_ {
        self.entries.iter().map(|e| &e.message)
    }

    /// The id of each message (`None` for messages without one), in order.
    pub fn ids(&self) -> impl Iterator<Item = Option<&MessageId>> + '_ {
        self.entries.iter().map(|e| e.id.as_ref())
    }

    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The edited messages.
    pub fn into_messages(self) -> Vec<Message> {
        self.entries.into_iter().map(|e| e.message).collect()
    }

    fn added(message: PromptMessage) -> Entry {
        Entry {
            id: None,
            message: message.into_message(),
            derived: false,
        }
    }

    /// The range `start..end` of the unit holding the message with `id`: the
    /// message alone, or an assistant turn with the results (and derived
    /// messages) that follow it.
    fn unit(&self, id: &MessageId) -> Result<(usize, usize), EditError> {
        let at = self
            .entries
            .iter()
            .position(|e| e.id.as_ref() == Some(id))
            .ok_or_else(|| EditError::UnknownId { id: id.clone() })?;
        let follows_turn = |e: &Entry| e.derived || matches!(e.message, Message::ToolResult(_));
        let is_assistant = |k: usize| {
            matches!(
                self.entries.get(k).map(|e| &e.message),
                Some(Message::Assistant(_))
            )
        };
        // Back to the assistant message that opens the turn, if there is one.
        let mut start = at;
        while self.entries.get(start).is_some_and(follows_turn) && start > 0 {
            start -= 1;
        }
        if !is_assistant(start) {
            start = at;
        }
        // Forward past the turn's results and what prepare added after them.
        let mut end = start + 1;
        if is_assistant(start) || start != at {
            while self.entries.get(end).is_some_and(follows_turn) {
                end += 1;
            }
        }
        Ok((start, end.max(at + 1)))
    }
}
