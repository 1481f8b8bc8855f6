//! [`Conversation`]: the messages of a [`Request`](super::Request), owned or
//! borrowed.

use std::borrow::{Borrow, Cow};

use crate::project::Prepared;
use crate::{AgentMessage, Message, Target};

/// The messages of a [`Request`](super::Request): owned, or borrowed from
/// whatever holds them, so that encoding a conversation (for one provider, then
/// for another) copies no message.
///
/// Everything that holds a conversation converts into one: a `Vec<Message>`
/// (owned), a `&[Message]` or `&Vec<Message>`, a [`to_llm`](crate::to_llm)
/// result (`Vec<Cow<Message>>`, or a slice of it), a
/// [`SessionContext`](crate::session::SessionContext) (projected with
/// [`to_llm`](crate::to_llm), borrowing its entries) and a `&[AgentMessage]`
/// (projected the same way).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::{anthropic, openai_chat, Request};
/// use agentmsg::{Message, Session};
///
/// let mut session = Session::new();
/// session.append(Message::user("Hi").into()).unwrap();
/// let context = session.context(None).unwrap();
///
/// // One conversation, two providers, no message copied.
/// let request = Request::new("claude-sonnet-4-5", &context);
/// let claude = anthropic::encode_request(&request)?;
/// let gpt = openai_chat::encode_request(&request.for_model("gpt-4.1"))?;
/// assert_eq!(claude.body["messages"][0]["content"][0]["text"], "Hi");
/// assert_eq!(gpt.body["messages"][0]["content"], "Hi");
/// # Ok::<(), agentmsg::providers::EncodeError>(())
/// ```
#[derive(Debug, Clone)]
pub enum Conversation<'a> {
    /// Messages the request owns.
    Owned(Vec<Message>),
    /// Messages borrowed from a slice.
    Borrowed(&'a [Message]),
    /// A projection ([`to_llm`](crate::to_llm)'s result): its messages
    /// borrowed from a transcript, or made by the projection.
    Projected(Vec<Cow<'a, Message>>),
    /// A projection borrowed from a slice.
    BorrowedProjected(&'a [Cow<'a, Message>]),
}

impl Default for Conversation<'_> {
    fn default() -> Self {
        Self::Owned(Vec::new())
    }
}

impl<'a> Conversation<'a> {
    /// The projection of `messages` ([`to_llm`](crate::to_llm)): LLM messages
    /// borrowed, custom messages projected as they declare, unknown lines left
    /// out.
    pub fn project<M: Borrow<AgentMessage>>(messages: &'a [M]) -> Self {
        Self::Projected(crate::to_llm(messages))
    }

    /// How many messages there are.
    pub fn len(&self) -> usize {
        match self {
            Self::Owned(m) => m.len(),
            Self::Borrowed(m) => m.len(),
            Self::Projected(m) => m.len(),
            Self::BorrowedProjected(m) => m.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&Message> {
        match self {
            Self::Owned(m) => m.get(index),
            Self::Borrowed(m) => m.get(index),
            Self::Projected(m) => m.get(index).map(|m| &**m),
            Self::BorrowedProjected(m) => m.get(index).map(|m| &**m),
        }
    }

    /// The messages, in order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = &Message> + ExactSizeIterator + use<'_, 'a> {
        (0..self.len()).map(move |i| &self[i])
    }

    /// The same messages, borrowed from this one: copies no message.
    pub fn reborrow(&self) -> Conversation<'_> {
        match self {
            Self::Owned(m) => Conversation::Borrowed(m),
            Self::Borrowed(m) => Conversation::Borrowed(m),
            Self::Projected(m) => Conversation::BorrowedProjected(m),
            Self::BorrowedProjected(m) => Conversation::BorrowedProjected(m),
        }
    }

    /// The messages, owned (borrowed ones are cloned).
    pub fn into_owned(self) -> Vec<Message> {
        match self {
            Self::Owned(m) => m,
            Self::Borrowed(m) => m.to_vec(),
            Self::Projected(m) => m.into_iter().map(Cow::into_owned).collect(),
            Self::BorrowedProjected(m) => m.iter().map(|m| Message::clone(m)).collect(),
        }
    }

    /// [`prepare`](crate::prepare) of these messages for `target`.
    pub fn prepare(&self, target: &Target) -> Prepared {
        match self {
            Self::Owned(m) => crate::prepare(m, target),
            Self::Borrowed(m) => crate::prepare(m, target),
            Self::Projected(m) => crate::prepare(m, target),
            Self::BorrowedProjected(m) => crate::prepare(m, target),
        }
    }
}

impl std::ops::Index<usize> for Conversation<'_> {
    type Output = Message;

    /// Message `index`.
    ///
    /// # Panics
    /// When `index` is out of bounds, as a slice does; [`Conversation::get`]
    /// returns `None` instead.
    fn index(&self, index: usize) -> &Message {
        match self {
            Self::Owned(m) => &m[index],
            Self::Borrowed(m) => &m[index],
            Self::Projected(m) => &m[index],
            Self::BorrowedProjected(m) => &m[index],
        }
    }
}

impl PartialEq for Conversation<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<Message>> for Conversation<'_> {
    fn from(messages: Vec<Message>) -> Self {
        Self::Owned(messages)
    }
}

impl<'a> From<&'a [Message]> for Conversation<'a> {
    fn from(messages: &'a [Message]) -> Self {
        Self::Borrowed(messages)
    }
}

impl<'a> From<&'a Vec<Message>> for Conversation<'a> {
    fn from(messages: &'a Vec<Message>) -> Self {
        Self::Borrowed(messages)
    }
}

impl<'a> From<Vec<Cow<'a, Message>>> for Conversation<'a> {
    fn from(messages: Vec<Cow<'a, Message>>) -> Self {
        Self::Projected(messages)
    }
}

impl<'a> From<&'a [Cow<'a, Message>]> for Conversation<'a> {
    fn from(messages: &'a [Cow<'a, Message>]) -> Self {
        Self::BorrowedProjected(messages)
    }
}

impl<'a> From<&'a Vec<Cow<'a, Message>>> for Conversation<'a> {
    fn from(messages: &'a Vec<Cow<'a, Message>>) -> Self {
        Self::BorrowedProjected(messages)
    }
}

impl<'a> From<&'a [AgentMessage]> for Conversation<'a> {
    fn from(messages: &'a [AgentMessage]) -> Self {
        Self::project(messages)
    }
}

impl<'a> From<&'a Vec<AgentMessage>> for Conversation<'a> {
    fn from(messages: &'a Vec<AgentMessage>) -> Self {
        Self::project(messages)
    }
}

impl<const N: usize> From<[Message; N]> for Conversation<'_> {
    fn from(messages: [Message; N]) -> Self {
        Self::Owned(messages.into())
    }
}
