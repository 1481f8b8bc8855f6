//! Compacting a session: estimate its tokens, decide when, plan what to
//! summarise, write the summariser's input, and apply the summary.
//!
//! A [`CompactionPolicy`] decides where to cut: pi 0.73.1's rule
//! ([`CompactionPolicy::Pi`], the default) or agentmsg's own
//! ([`CompactionPolicy::Agentmsg`]); its docs say how the two differ and
//! why `Pi` is the default.
//!
//! The application sends the plan's requests ([`CompactionPlan::prompt`],
//! [`CompactionPlan::turn_prefix_prompt`], with
//! [`CompactionPlan::system_prompt`]) to its own model and records the answer
//! with [`Session::apply_compaction`].

mod cut;
mod files;
mod prompts;
mod serialize;
#[cfg(all(feature = "http", any_provider))]
mod summarise;
mod tokens;

pub use files::FileLists;
pub use prompts::{
    DEFAULT_SUMMARY_PROMPT, PI_SUMMARY_PROMPT, PI_SUMMARY_SYSTEM_PROMPT, PI_TURN_PREFIX_PROMPT,
    PI_UPDATE_SUMMARY_PROMPT, SUMMARY_SYSTEM_PROMPT, UPDATE_SUMMARY_PROMPT,
};
pub use serialize::{serialize_conversation, summary_prompt, TOOL_RESULT_MAX_CHARS};
#[cfg(all(feature = "http", any_provider))]
pub use summarise::{CompactError, CompactOptions, Compacted};
pub use tokens::{estimate_context_tokens, estimate_tokens, ContextTokens};

use std::borrow::Borrow;

use serde_json::{json, Value};

use super::context::SessionContext;
use super::{Session, SessionError};
use crate::{AgentMessage, MessageId};

/// What pi writes as the summary of the history when a split turn's start
/// is all there is to summarise.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// How a compaction decides what to summarise and what to keep.
///
/// - [`Pi`](Self::Pi) (the default) is pi 0.73.1's rule, to the character:
///   its budget walk, its cut moving forward to a turn boundary, the start
///   of a turn it cuts in two summarised by a second request, its prompts
///   and its token estimate. It is checked against pi's own code
///   (`tests/session/compaction_differential.rs`).
/// - [`Agentmsg`](Self::Agentmsg) cuts back instead, to a message that does
///   not part a tool call from its result, so it keeps more and never needs
///   the second request; its prompts name no kind of work.
///
/// Both collect the files the summarised span read and changed, carry the
/// previous compaction's lists, and write them as pi does (see
/// [`FileLists`]); neither plans a summary of nothing the model is sent.
/// That is `Pi`'s one departure from pi, which then asks the summariser
/// about an empty conversation (when the budget keeps every message, say)
/// and records a summary the model reads beside everything it already had.
///
/// `Pi` is the default because the files this library reads and writes are
/// pi's: a session compacted here and continued in pi (or the other way
/// round) then holds what pi itself would have written, cut for cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompactionPolicy {
    /// pi 0.73.1's rule (`prepareCompaction`, `compact`).
    #[default]
    Pi,
    /// agentmsg's own rule: the cut moves back, keeping whole tool calls and
    /// more of the conversation; one request, prompts for any agent.
    Agentmsg,
}

impl CompactionPolicy {
    /// Its name: `pi` or `agentmsg`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pi => "pi",
            Self::Agentmsg => "agentmsg",
        }
    }

    /// The policy of this name (`pi`, `agentmsg`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "pi" => Some(Self::Pi),
            "agentmsg" => Some(Self::Agentmsg),
            _ => None,
        }
    }

    /// An estimate of the tokens a message costs, by this policy's rule
    /// (see [`estimate_tokens`] and [`ContextTokens`]).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{ImageContent, Message, UserMessage, UserContent, TextContent};
    /// # use agentmsg::session::CompactionPolicy;
    /// let user = Message::User(UserMessage::new([
    ///     UserContent::Text(TextContent::new("12345678")),
    ///     UserContent::Image(ImageContent::from_base64("iVBORw0KGgo=").unwrap()),
    /// ]));
    /// // pi counts no image in a user's message; agentmsg counts what is sent.
    /// assert_eq!(CompactionPolicy::Pi.estimate_tokens(&user.clone().into()), 2);
    /// assert_eq!(CompactionPolicy::Agentmsg.estimate_tokens(&user.into()), 1202);
    /// ```
    pub fn estimate_tokens(self, message: &AgentMessage) -> u64 {
        match self {
            Self::Pi => tokens::pi_estimate_tokens(message),
            Self::Agentmsg => estimate_tokens(message),
        }
    }

    /// The tokens of a context by this policy's rule (pi's
    /// `estimateContextTokens` for [`Pi`](Self::Pi), a reply with all-zero
    /// usage counted as 0 tokens as pi counts it; [`estimate_context_tokens`]
    /// for [`Agentmsg`](Self::Agentmsg)).
    pub fn context_tokens<M: Borrow<AgentMessage>>(self, messages: &[M]) -> ContextTokens {
        match self {
            Self::Pi => tokens::pi_context_tokens(messages),
            Self::Agentmsg => estimate_context_tokens(messages),
        }
    }

    /// Whether a context should be compacted in a window of `window`
    /// tokens keeping `reserve` free for the answer: [`should_compact`] of
    /// its [`context_tokens`](Self::context_tokens), the rule an agent loop
    /// checks after each reply (pi: `shouldCompact`, with its default
    /// reserve of 16,384 tokens).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, AssistantMessage, Message, TextContent, Usage};
    /// # use agentmsg::session::CompactionPolicy;
    /// let reply = AssistantMessage::new([TextContent::new("ok")]).with_usage(Usage::new(190_000, 10));
    /// let messages: Vec<AgentMessage> = vec![Message::user("hi").into(), Message::Assistant(reply).into()];
    /// assert!(CompactionPolicy::Pi.should_compact(&messages, 200_000, 16_384));
    /// assert!(!CompactionPolicy::Pi.should_compact(&messages, 400_000, 16_384));
    /// ```
    pub fn should_compact<M: Borrow<AgentMessage>>(
        self,
        messages: &[M],
        window: u64,
        reserve: u64,
    ) -> bool {
        should_compact(self.context_tokens(messages).tokens, window, reserve)
    }

    /// Plans a compaction of `session` at `leaf` (its leaf when `None`)
    /// that keeps about `keep_recent_tokens` of the most recent messages.
    /// `None` when there is nothing to compact: the leaf is a compaction,
    /// the budget keeps everything, or what would be summarised is nothing
    /// the model is sent.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// # use agentmsg::session::CompactionPolicy;
    /// let mut session = Session::new();
    /// for i in 0..10 {
    ///     session.append(Message::user(format!("message {i} {}", "x".repeat(400))).into()).unwrap();
    /// }
    /// let plan = CompactionPolicy::Pi.plan(&session, None, 300).unwrap().unwrap();
    /// assert_eq!(plan.summarise.len(), 7);
    /// assert!(!plan.split_turn);
    /// let summary = plan.summary_text(Some("Messages 0 to 6 were x."), None);
    /// session.apply_compaction(&plan, &summary).unwrap();
    /// assert_eq!(session.context(None).unwrap().messages.len(), 1 + 3);
    /// ```
    ///
    /// # Errors
    /// [`SessionError::NoSuchEntry`] when no entry has the id `leaf`.
    pub fn plan(
        self,
        session: &Session,
        leaf: Option<&str>,
        keep_recent_tokens: u64,
    ) -> Result<Option<CompactionPlan>, SessionError> {
        let cut = match self {
            Self::Pi => cut::pi(session, leaf, keep_recent_tokens)?,
            Self::Agentmsg => cut::agentmsg(&session.context(leaf)?, keep_recent_tokens),
        };
        Ok(cut.and_then(|cut| CompactionPlan::new(self, cut)))
    }
}

/// Whether a context of `context_tokens` should be compacted in a window of
/// `window` tokens, keeping `reserve` free for the answer (pi's
/// `shouldCompact`: `context_tokens > window - reserve`; both policies use
/// it, with their own [`CompactionPolicy::context_tokens`]).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::session::should_compact;
/// assert!(should_compact(190_000, 200_000, 16_384));
/// assert!(!should_compact(100_000, 200_000, 16_384));
/// ```
pub fn should_compact(context_tokens: u64, window: u64, reserve: u64) -> bool {
    // pi subtracts in doubles: a reserve past the window makes every
    // context too big, as it does here.
    i128::from(context_tokens) > i128::from(window) - i128::from(reserve)
}

/// What to compact, owning everything the caller needs: the transcript
/// text(s) for the summariser, the entry to keep from, the tokens of the
/// context before, the previous summary to fold the new span into, and the
/// file lists to carry.
///
/// Ask a model for the summary of [`CompactionPlan::prompt`] (and of
/// [`CompactionPlan::turn_prefix_prompt`] when there is one), with
/// [`CompactionPlan::system_prompt`], then record it with
/// [`Session::apply_compaction`] (through
/// [`CompactionPlan::summary_text`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionPlan {
    /// The policy that made it.
    pub policy: CompactionPolicy,
    /// The messages the history summary replaces, as
    /// [`serialize_conversation`] writes them (custom messages projected as
    /// they declare).
    pub conversation: String,
    /// How many messages the history summary replaces (a previous summary
    /// not counted: its text is [`CompactionPlan::previous_summary`]).
    pub summarized: usize,
    /// The entries of those messages (an agentmsg line without an id is
    /// not listed).
    pub summarise: Vec<MessageId>,
    /// The first entry kept after the summary.
    pub first_kept: MessageId,
    /// The index in the context's messages of the first kept message.
    pub first_kept_index: usize,
    /// The tokens of the whole context, by the policy's rule.
    pub tokens_before: u64,
    /// The summary of the compaction the context starts with, if it does: the
    /// new summary updates it.
    pub previous_summary: Option<String>,
    /// Whether the cut falls inside a turn (pi's `isSplitTurn`: the first
    /// kept entry is not a user's message and a turn starts before it).
    pub split_turn: bool,
    /// The entries of the split turn's start, summarised on their own
    /// (empty unless the cut splits a turn after its start).
    pub turn_prefix: Vec<MessageId>,
    /// Those messages as [`serialize_conversation`] writes them; `None`
    /// when there are none.
    pub turn_prefix_conversation: Option<String>,
    /// The files read and changed: the previous compaction's and those of
    /// the calls in the summarised messages.
    pub files: FileLists,
}

impl CompactionPlan {
    fn new(policy: CompactionPolicy, cut: cut::Cut) -> Option<Self> {
        // Nothing the model sees would leave its context: no summary.
        let sent = |span: &cut::Span| {
            span.iter()
                .any(|(_, m)| !crate::to_llm(std::slice::from_ref(m)).is_empty())
        };
        if !sent(&cut.history) && !sent(&cut.turn_prefix) {
            return None;
        }
        let mut ops = files::FileOps::default();
        if let Some(previous) = &cut.previous {
            ops.carry(previous);
        }
        for (_, message) in cut.history.iter().chain(&cut.turn_prefix) {
            ops.add(message);
        }
        let conversation = |span: &cut::Span| {
            let messages: Vec<&AgentMessage> = span.iter().map(|(_, m)| m).collect();
            serialize_conversation(&crate::to_llm(&messages))
        };
        let ids = |span: &cut::Span| span.iter().filter_map(|(id, _)| id.clone()).collect();
        Some(Self {
            policy,
            conversation: conversation(&cut.history),
            summarized: cut.history.len(),
            summarise: ids(&cut.history),
            first_kept: cut.first_kept,
            first_kept_index: cut.first_kept_index,
            tokens_before: cut.tokens_before,
            previous_summary: cut.previous.map(|p| p.summary),
            split_turn: cut.split_turn,
            turn_prefix: ids(&cut.turn_prefix),
            turn_prefix_conversation: (cut.split_turn && !cut.turn_prefix.is_empty())
                .then(|| conversation(&cut.turn_prefix)),
            files: ops.lists(),
        })
    }

    /// The summariser's system prompt: pi's ([`PI_SUMMARY_SYSTEM_PROMPT`])
    /// or agentmsg's ([`SUMMARY_SYSTEM_PROMPT`]).
    pub fn system_prompt(&self) -> &'static str {
        match self.policy {
            CompactionPolicy::Pi => PI_SUMMARY_SYSTEM_PROMPT,
            CompactionPolicy::Agentmsg => SUMMARY_SYSTEM_PROMPT,
        }
    }

    /// The text to ask the summariser for the history: the conversation, the
    /// previous summary if any, and the policy's first-summary or update
    /// prompt. `None` when no message precedes a split turn's start (pi then
    /// writes [`NO_PRIOR_HISTORY`] and asks nothing).
    pub fn prompt(&self) -> Option<String> {
        self.prompt_with_focus(None)
    }

    /// [`CompactionPlan::prompt`] with `Additional focus: {focus}` after it
    /// (pi's custom instructions).
    pub fn prompt_with_focus(&self, focus: Option<&str>) -> Option<String> {
        if self.summarized == 0 {
            return None;
        }
        let (first, update) = match self.policy {
            CompactionPolicy::Pi => (PI_SUMMARY_PROMPT, PI_UPDATE_SUMMARY_PROMPT),
            CompactionPolicy::Agentmsg => (DEFAULT_SUMMARY_PROMPT, UPDATE_SUMMARY_PROMPT),
        };
        Some(serialize::prompt_with(
            &self.conversation,
            self.previous_summary.as_deref(),
            focus,
            first,
            update,
        ))
    }

    /// The text to ask the summariser for the start of the split turn (pi's
    /// turn-prefix request): the turn's messages in `<conversation>` tags,
    /// then [`PI_TURN_PREFIX_PROMPT`]. `None` when the plan splits no turn.
    pub fn turn_prefix_prompt(&self) -> Option<String> {
        let conversation = self.turn_prefix_conversation.as_ref()?;
        Some(format!(
            "<conversation>\n{conversation}\n</conversation>\n\n{PI_TURN_PREFIX_PROMPT}"
        ))
    }

    /// The summary to record, as pi's `compact` makes it of the
    /// summariser's answers: the history's (`history`; [`NO_PRIOR_HISTORY`]
    /// when `None`), then, when the plan splits a turn, pi's
    /// `**Turn Context (split turn):**` section with the turn's
    /// (`turn_prefix`; empty when `None`), then the file lists
    /// ([`FileLists::summary_suffix`]).
    pub fn summary_text(&self, history: Option<&str>, turn_prefix: Option<&str>) -> String {
        let history = history.unwrap_or(NO_PRIOR_HISTORY);
        let mut text = if self.turn_prefix_conversation.is_some() {
            format!(
                "{history}\n\n---\n\n**Turn Context (split turn):**\n\n{}",
                turn_prefix.unwrap_or("")
            )
        } else {
            history.to_owned()
        };
        text.push_str(&self.files.summary_suffix());
        text
    }

    /// The plan as one JSON object, as `agentmsg compact --plan --json`
    /// prints it: `firstKeptEntryId`, `splitTurn`, `tokensBefore`,
    /// `summarise` and `turnPrefix` (entry ids), `prompt` and
    /// `turnPrefixPrompt` (`null` when not asked), `readFiles`,
    /// `modifiedFiles`.
    pub fn to_json(&self) -> Value {
        json!({
            "firstKeptEntryId": self.first_kept.as_str(),
            "splitTurn": self.split_turn,
            "tokensBefore": self.tokens_before,
            "summarise": self.summarise.iter().map(MessageId::as_str).collect::<Vec<_>>(),
            "turnPrefix": self.turn_prefix.iter().map(MessageId::as_str).collect::<Vec<_>>(),
            "prompt": self.prompt(),
            "turnPrefixPrompt": self.turn_prefix_prompt(),
            "readFiles": self.files.read_files,
            "modifiedFiles": self.files.modified_files,
        })
    }

    /// The requests for the summary, to `model`, as pi sends them: the
    /// history's (when [`prompt`](Self::prompt) asks one) with an output
    /// limit of 80% of `reserve_tokens`, and the split turn's (when
    /// [`turn_prefix_prompt`](Self::turn_prefix_prompt) asks one) with 50%;
    /// each the system prompt and one user message. (With a provider
    /// feature: the request type is the providers'.)
    #[cfg(any_provider)]
    pub fn requests(
        &self,
        model: &str,
        reserve_tokens: u32,
    ) -> Vec<(SummaryPart, crate::providers::Request<'static>)> {
        let request = |text: String, share: f64| {
            crate::providers::Request::new(model, vec![crate::Message::user(text)])
                .with_system(self.system_prompt())
                .with_max_tokens((share * f64::from(reserve_tokens)).floor() as u32)
        };
        let mut requests = Vec::new();
        if let Some(text) = self.prompt() {
            requests.push((SummaryPart::History, request(text, 0.8)));
        }
        if let Some(text) = self.turn_prefix_prompt() {
            requests.push((SummaryPart::TurnPrefix, request(text, 0.5)));
        }
        requests
    }
}

/// Which of a plan's summaries a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPart {
    /// The history before the cut ([`CompactionPlan::prompt`]).
    History,
    /// The start of the split turn ([`CompactionPlan::turn_prefix_prompt`]).
    TurnPrefix,
}

/// Plans a compaction of `context` by [`CompactionPolicy::Agentmsg`]'s rule:
/// keeps the most recent messages worth at least `keep_recent_tokens` (and
/// at least the last message) and summarises the rest. The cut never falls
/// between a tool call and its result (it moves back to the assistant
/// message that made the call), and never on a message without an entry id.
/// `None` when there is nothing before the cut the model is sent.
///
/// When the context starts with a compaction's summary, the plan carries it
/// as [`CompactionPlan::previous_summary`] (and its file lists) and
/// summarises what follows it (the entries that compaction kept included).
/// [`CompactionPolicy::plan`] plans from a session, by either policy.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{Message, Session};
/// # use agentmsg::session::plan_compaction;
/// let mut session = Session::new();
/// for i in 0..10 {
///     session.append(Message::user(format!("message {i} {}", "x".repeat(400))).into()).unwrap();
/// }
/// let context = session.context(None).unwrap();
/// let plan = plan_compaction(&context, 300).unwrap();
/// assert_eq!(plan.summarized, 7);
/// assert!(plan.conversation.starts_with("[User]: message 0 xxx"));
/// assert_eq!(Some(&plan.first_kept), context.entry_ids[7].as_ref());
/// drop(context);
/// session.apply_compaction(&plan, "Messages 0 to 6 were x.").unwrap();
/// assert_eq!(session.context(None).unwrap().messages.len(), 1 + 3);
/// ```
pub fn plan_compaction(
    context: &SessionContext<'_>,
    keep_recent_tokens: u64,
) -> Option<CompactionPlan> {
    CompactionPlan::new(
        CompactionPolicy::Agentmsg,
        cut::agentmsg(context, keep_recent_tokens)?,
    )
}

impl Session {
    /// Records a [`CompactionPlan`] with its summary: a compaction from the
    /// plan's first kept entry, with its tokens before and pi's `details`
    /// (the plan's [`FileLists`], `{"readFiles", "modifiedFiles"}`).
    /// `summary` is stored as given: make it with
    /// [`CompactionPlan::summary_text`] to merge a split turn's summary and
    /// append the file lists as pi does. Returns the compaction's id.
    ///
    /// # Errors
    /// [`SessionError`] when the plan's first kept entry is not in this
    /// session (a plan made from another one).
    pub fn apply_compaction(
        &mut self,
        plan: &CompactionPlan,
        summary: impl Into<String>,
    ) -> Result<MessageId, SessionError> {
        self.apply_with_details(plan, summary.into(), None)
    }

    /// [`apply_compaction`](Self::apply_compaction), recording the
    /// summariser's calls in the details too.
    pub(crate) fn apply_with_details(
        &mut self,
        plan: &CompactionPlan,
        summary: String,
        summarizer: Option<Vec<Value>>,
    ) -> Result<MessageId, SessionError> {
        let details = serde_json::to_string(&DetailsOut {
            read_files: &plan.files.read_files,
            modified_files: &plan.files.modified_files,
            summarizer,
        })?;
        self.append_compaction(
            summary,
            plan.first_kept.as_str(),
            plan.tokens_before,
            Some(details),
        )
    }
}

/// pi's `details`, in its key order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DetailsOut<'a> {
    read_files: &'a [String],
    modified_files: &'a [String],
    /// What the summariser's calls cost, when a model was asked here.
    #[serde(skip_serializing_if = "Option::is_none")]
    summarizer: Option<Vec<Value>>,
}
