//! [`Agent`]: the loop. Each turn sends the session's context to the model,
//! appends the reply, runs the tools it asked for and appends their results.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use tokio::sync::watch;

use super::compact::{Compacted, Compactor};
use super::error::AgentError;
use super::event::AgentEvent;
use super::model::Model;
use super::tool::{CallFuture, Tool, ToolError, ToolOutput, Toolset};
use crate::http::{ClientError, StreamItem};
use crate::project::PromptEditor;
use crate::providers::{Request, ResponseFormat};
use crate::session::ContextMessage;
use crate::store::{SessionStore, StoredSession};
use crate::{
    AgentMessage, AssistantMessage, Message, MessageId, Session, StopReason, ToolArguments,
    ToolCall, ToolResultMessage, Usage,
};

/// Where a run appends: a [`Session`] in memory or a [`StoredSession`],
/// which persists each message as it is appended (a crash loses at most the
/// reply in flight).
pub trait AgentSession: Send {
    /// The session as it stands.
    fn session(&self) -> &Session;

    /// Appends `message` at the leaf.
    fn append(
        &mut self,
        message: AgentMessage,
    ) -> impl Future<Output = Result<MessageId, AgentError>> + Send;

    /// Appends a compaction ([`Session::compact`]).
    fn compact(
        &mut self,
        compacted: &Compacted,
    ) -> impl Future<Output = Result<MessageId, AgentError>> + Send;
}

impl AgentSession for Session {
    fn session(&self) -> &Session {
        self
    }

    async fn append(&mut self, message: AgentMessage) -> Result<MessageId, AgentError> {
        Session::append(self, message).map_err(|e| AgentError::Session(Box::new(e)))
    }

    async fn compact(&mut self, c: &Compacted) -> Result<MessageId, AgentError> {
        record_compaction(self, c).map_err(|e| AgentError::Session(Box::new(e)))
    }
}

impl<S: SessionStore> AgentSession for StoredSession<S> {
    fn session(&self) -> &Session {
        StoredSession::session(self)
    }

    async fn append(&mut self, message: AgentMessage) -> Result<MessageId, AgentError> {
        StoredSession::append(self, message)
            .await
            .map_err(|e| AgentError::Session(Box::new(e)))
    }

    async fn compact(&mut self, c: &Compacted) -> Result<MessageId, AgentError> {
        let c = c.clone();
        StoredSession::apply(self, move |session| record_compaction(session, &c))
            .await
            .map_err(|e| AgentError::Session(Box::new(e)))
    }
}

/// Records `c` in `session`: when it was planned, with its plan's file
/// lists and what the summariser's calls cost (pi's `details`, with
/// `summarizer` beside the lists, as `Session::compact_with` records it).
fn record_compaction(
    session: &mut Session,
    c: &Compacted,
) -> Result<MessageId, crate::session::SessionError> {
    match &c.plan {
        Some(plan) => {
            let calls = vec![serde_json::json!({ "usage": c.usage })];
            session.apply_with_details(plan, c.summary.clone(), Some(calls))
        }
        None => session.compact(c.summary.clone(), c.first_kept.as_str(), c.tokens_before),
    }
}

/// What an approval hook decides about a tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it as the model wrote it.
    Allow,
    /// Do not run it; the model reads this reason as an error result.
    Deny(String),
    /// Run it with these arguments instead.
    Edit(ToolArguments),
}

type ApproveFn = dyn Fn(&ToolCall) -> Pin<Box<dyn Future<Output = Approval> + Send>> + Send + Sync;
type TransformFn = dyn Fn(&mut Vec<AgentMessage>) + Send + Sync;
type EditFn = dyn Fn(&mut PromptEditor) + Send + Sync;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// Why: the last reply's stop reason (`stop`, `length`…; `toolUse` when
    /// a tool ended the run), `maxTurns` at the turn limit, `aborted` when
    /// cancelled.
    pub stop_reason: StopReason,
    /// How many requests were sent.
    pub turns: u32,
    /// The usage of every turn, summed.
    pub usage: Usage,
    /// Whether a turn's tool results all asked to end the run.
    pub terminated: bool,
    /// The model's last reply.
    pub reply: Option<AssistantMessage>,
}

impl RunOutcome {
    /// The last reply decoded as `T` (see [`Agent::output`]).
    ///
    /// # Errors
    /// [`OutputError`](super::output::OutputError): no reply or no text, not
    /// JSON, or JSON that does not fit `T` (with the field path).
    pub fn output<T: serde::de::DeserializeOwned>(&self) -> Result<T, super::output::OutputError> {
        match &self.reply {
            Some(reply) => super::output::decode(reply),
            None => Err(super::output::OutputError::NoText {
                stop_reason: self.stop_reason,
            }),
        }
    }
}

#[derive(Debug, Default)]
struct Queues {
    steering: VecDeque<AgentMessage>,
    follow_up: VecDeque<AgentMessage>,
}

#[derive(Debug)]
struct Shared {
    queues: Mutex<Queues>,
    cancel: watch::Sender<bool>,
}

/// A handle on an [`Agent`]'s runs, for another task (a UI): queue messages
/// and cancel.
///
/// - A **steering** message is appended at the next turn boundary (after the
///   current turn's tools), before the next request.
/// - A **follow-up** message is appended when the model would otherwise
///   stop, and the run goes on with it.
/// - [`cancel`](Self::cancel) stops the run going on: a reply being streamed
///   is kept as far as it came, with stop reason `aborted`; running tools get
///   error results.
#[derive(Debug, Clone)]
pub struct AgentHandle {
    shared: Arc<Shared>,
}

impl AgentHandle {
    fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                queues: Mutex::default(),
                cancel: watch::Sender::new(false),
            }),
        }
    }

    fn queues(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.shared
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a message for the next turn boundary.
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        self.queues().steering.push_back(message.into());
    }

    /// Queues a message for when the model stops.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        self.queues().follow_up.push_back(message.into());
    }

    /// Cancels the run going on.
    pub fn cancel(&self) {
        self.shared.cancel.send_replace(true);
    }

    fn take_steering(&self) -> Vec<AgentMessage> {
        self.queues().steering.drain(..).collect()
    }

    fn take_follow_up(&self) -> Vec<AgentMessage> {
        self.queues().follow_up.drain(..).collect()
    }
}

/// Resolves once `cancel` says so.
async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    if cancel.wait_for(|c| *c).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The agent loop: a model, its tools and the request's settings.
///
/// Each turn: the session's context at the leaf, the application's
/// transformations ([`transform_context`](Self::transform_context) on the
/// messages, then [`to_llm`](crate::to_llm), then
/// [`edit_prompt`](Self::edit_prompt) on the projected ones), the request
/// streamed, the reply appended, the tools it asked for run (in parallel, at
/// most [`parallel_tools`](Self::parallel_tools) at once, each within
/// [`tool_timeout`](Self::tool_timeout)), their results appended. The run
/// stops when the model stops, when every tool result of a turn sets
/// [`terminate`](ToolOutput::terminate), at [`max_turns`](Self::max_turns)
/// (`maxTurns`), or when cancelled (`aborted`).
///
/// Before each request a [`Compactor`] (see [`compactor`](Self::compactor)),
/// when there is one, may compact the session; the summariser's usage counts
/// in the run's.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agentmsg::agent::{Agent, AgentEvent, ScriptedModel};
/// use agentmsg::{AssistantMessage, Message, Session, StopReason};
///
/// let model = ScriptedModel::new([AssistantMessage::new(["Hi!"])]);
/// let agent = Agent::new(model, "claude-sonnet-4-5").system("Be brief.");
/// let mut session = Session::new();
/// let mut events = Vec::new();
/// let outcome = agent
///     .prompt(&mut session, Message::user("Hello"), |e| events.push(e))
///     .await?;
/// assert_eq!(outcome.stop_reason, StopReason::Stop);
/// assert_eq!(session.entries().len(), 2);
/// assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { .. })));
/// # Ok::<(), agentmsg::agent::AgentError>(())
/// # }).unwrap();
/// ```
pub struct Agent<M> {
    model: M,
    request: Request<'static>,
    tools: Toolset,
    max_turns: u32,
    parallel: usize,
    tool_timeout: Option<Duration>,
    transform: Option<Box<TransformFn>>,
    edit: Option<Box<EditFn>>,
    approve: Option<Box<ApproveFn>>,
    compactor: Option<Box<dyn Compactor>>,
    handle: AgentHandle,
}

impl<M> fmt::Debug for Agent<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.request.model)
            .field("tools", &self.tools)
            .field("max_turns", &self.max_turns)
            .field("parallel", &self.parallel)
            .field("tool_timeout", &self.tool_timeout)
            .finish_non_exhaustive()
    }
}

impl<M: Model> Agent<M> {
    /// An agent asking `model` for the model id `model_id`: at most 50 turns
    /// a run, 8 tools at once, 5 minutes per tool.
    pub fn new(model: M, model_id: impl Into<String>) -> Self {
        Self::with_request(model, Request::new(model_id, Vec::<Message>::new()))
    }

    /// An agent whose requests start from `request` (its model, system
    /// prompt, options); the messages and tools are the loop's.
    pub fn with_request(model: M, request: Request<'static>) -> Self {
        Self {
            model,
            request,
            tools: Toolset::default(),
            max_turns: 50,
            parallel: 8,
            tool_timeout: Some(Duration::from_secs(300)),
            transform: None,
            edit: None,
            approve: None,
            compactor: None,
            handle: AgentHandle::new(),
        }
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The same agent with a system prompt.
    #[must_use]
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.request.system = Some(system.into());
        self
    }

    /// The same agent with an output token limit per reply.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.request.max_tokens = Some(max_tokens);
        self
    }

    /// The same agent with one more tool.
    #[must_use]
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools.add(tool);
        self
    }

    /// The same agent with one more tool, made of a name and an async
    /// function of its arguments (the description is the doc comment of
    /// `A`).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::agent::{Agent, ScriptedModel, ToolError, ToolOutput};
    ///
    /// /// Counts the words of a text.
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Words { text: String }
    ///
    /// let agent = Agent::new(ScriptedModel::new([]), "claude-sonnet-4-5")
    ///     .tool_fn("word_count", |w: Words| async move {
    ///         Ok(w.text.split_whitespace().count().to_string())
    ///     })
    ///     .tool_fn("shout", |w: Words| async move {
    ///         if w.text.is_empty() {
    ///             return Err(ToolError::new("nothing to shout"));
    ///         }
    ///         Ok(ToolOutput::text(w.text.to_uppercase()))
    ///     });
    /// ```
    #[must_use]
    pub fn tool_fn<A, F, Fut, O>(mut self, name: impl Into<String>, function: F) -> Self
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        O: Into<ToolOutput> + 'static,
    {
        self.tools
            .add_dyn(Arc::new(super::tool::FnTool::new(name, function)));
        self
    }

    /// The same agent asking every reply for JSON matching `format` (see
    /// [`output`](super::output)).
    #[must_use]
    pub fn response_format(mut self, format: ResponseFormat) -> Self {
        self.request.response_format = Some(format);
        self
    }

    /// The same agent asking every reply for JSON of type `T`
    /// ([`output::response_format`](super::output::response_format)); read it
    /// with [`RunOutcome::output`].
    #[must_use]
    pub fn output<T: schemars::JsonSchema + ?Sized>(self) -> Self {
        self.response_format(super::output::response_format::<T>())
    }

    /// The same agent, sending at most `turns` requests a run.
    #[must_use]
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }

    /// The same agent, running at most `limit` tools at once (1: one after
    /// the other).
    #[must_use]
    pub fn parallel_tools(mut self, limit: usize) -> Self {
        self.parallel = limit.max(1);
        self
    }

    /// The same agent, giving each tool at most `timeout` (`None`: no
    /// limit).
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// The same agent, changing the context's messages before they are
    /// projected (pi's `transformContext`): the session is not changed.
    #[must_use]
    pub fn transform_context(
        mut self,
        transform: impl Fn(&mut Vec<AgentMessage>) + Send + Sync + 'static,
    ) -> Self {
        self.transform = Some(Box::new(transform));
        self
    }

    /// The same agent, editing the projected messages before each request
    /// with a [`PromptEditor`] (which knows each message's id).
    #[must_use]
    pub fn edit_prompt(mut self, edit: impl Fn(&mut PromptEditor) + Send + Sync + 'static) -> Self {
        self.edit = Some(Box::new(edit));
        self
    }

    /// The same agent, asking `approve` before each tool call runs.
    #[must_use]
    pub fn approve<F, Fut>(mut self, approve: F) -> Self
    where
        F: Fn(&ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approve = Some(Box::new(move |call| Box::pin(approve(call))));
        self
    }

    /// The same agent, asking `compactor` before each request whether to
    /// compact the session.
    #[must_use]
    pub fn compactor(mut self, compactor: impl Compactor + 'static) -> Self {
        self.compactor = Some(Box::new(compactor));
        self
    }

    /// A handle to steer, follow up and cancel its runs from elsewhere.
    pub fn handle(&self) -> AgentHandle {
        self.handle.clone()
    }

    /// Appends `message` and runs until the model stops.
    ///
    /// # Errors
    /// [`AgentError`]: the model failed, the session could not be appended to.
    pub async fn prompt<S: AgentSession>(
        &self,
        session: &mut S,
        message: impl Into<AgentMessage>,
        on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<RunOutcome, AgentError> {
        self.run(session, vec![message.into()], on_event).await
    }

    /// Runs from the session as it is (after a crash, or a message appended
    /// by hand).
    ///
    /// # Errors
    /// As [`prompt`](Self::prompt).
    pub async fn resume<S: AgentSession>(
        &self,
        session: &mut S,
        on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<RunOutcome, AgentError> {
        self.run(session, Vec::new(), on_event).await
    }

    async fn run<S: AgentSession>(
        &self,
        session: &mut S,
        prompts: Vec<AgentMessage>,
        mut on_event: impl FnMut(AgentEvent) + Send,
    ) -> Result<RunOutcome, AgentError> {
        self.handle.shared.cancel.send_replace(false);
        let mut cancel = self.handle.shared.cancel.subscribe();
        let emit: &mut (dyn FnMut(AgentEvent) + Send) = &mut on_event;
        emit(AgentEvent::AgentStart);
        let mut outcome = RunOutcome {
            stop_reason: StopReason::Stop,
            turns: 0,
            usage: Usage::default(),
            terminated: false,
            reply: None,
        };
        let result = self
            .turns(session, prompts, &mut cancel, emit, &mut outcome)
            .await;
        if result.is_err() {
            outcome.stop_reason = StopReason::Error;
        }
        emit(AgentEvent::AgentEnd {
            stop_reason: outcome.stop_reason,
            usage: outcome.usage.clone(),
        });
        result.map(|()| outcome)
    }

    async fn turns<S: AgentSession>(
        &self,
        session: &mut S,
        prompts: Vec<AgentMessage>,
        cancel: &mut watch::Receiver<bool>,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
        outcome: &mut RunOutcome,
    ) -> Result<(), AgentError> {
        // What is appended at the top of the next turn (after its
        // `TurnStart`, as pi does): the prompts, then steering and follow-ups.
        let mut pending = prompts;
        loop {
            let stop = if *cancel.borrow() {
                Some(StopReason::Aborted)
            } else if outcome.turns >= self.max_turns {
                Some(StopReason::MaxTurns)
            } else {
                None
            };
            if let Some(stop) = stop {
                append_all(session, pending, emit).await?;
                outcome.stop_reason = stop;
                return Ok(());
            }
            outcome.turns += 1;
            let turn = outcome.turns;
            emit(AgentEvent::TurnStart { turn });
            pending.extend(self.handle.take_steering());
            append_all(session, std::mem::take(&mut pending), emit).await?;
            if let Some(compactor) = &self.compactor {
                if let Some(compacted) = compactor.compact(session.session(), &self.model).await? {
                    record(session, &compacted, emit).await?;
                    outcome.usage += &compacted.usage;
                }
            }
            let (reply, error) = self.reply(session.session(), cancel, emit).await?;
            let usage = reply.usage.clone();
            outcome.usage += &usage;
            let aborted = reply.stop_reason == StopReason::Aborted;
            // A reply cut off (cancelled, or broken) runs none of its calls.
            let calls: Vec<ToolCall> = if aborted || error.is_some() {
                Vec::new()
            } else {
                reply.tool_calls().cloned().collect()
            };
            outcome.stop_reason = reply.stop_reason;
            outcome.reply = Some(reply.clone());
            append(session, Message::Assistant(reply).into(), emit).await?;
            if calls.is_empty() {
                emit(AgentEvent::TurnEnd { turn, usage });
                if let Some(error) = error {
                    return Err(error.into());
                }
                if aborted {
                    return Ok(());
                }
                // Steering that came during the last reply goes first (it is
                // appended at the top of the loop); follow-ups only when
                // there is none.
                if !self.handle.queues().steering.is_empty() {
                    continue;
                }
                // Follow-ups wait in the queue when no turn is left for them.
                if outcome.turns >= self.max_turns {
                    return Ok(());
                }
                pending = self.handle.take_follow_up();
                if pending.is_empty() {
                    return Ok(());
                }
                continue;
            }
            let (results, cancelled) = self.run_tools(calls, cancel, emit).await;
            let terminate = results.iter().all(|(_, output)| output.terminate);
            let mut extra = Vec::new();
            for (result, output) in results {
                extra.extend(output.messages);
                append(session, Message::ToolResult(result).into(), emit).await?;
            }
            append_all(session, extra, emit).await?;
            emit(AgentEvent::TurnEnd { turn, usage });
            if cancelled {
                outcome.stop_reason = StopReason::Aborted;
                return Ok(());
            }
            if terminate {
                outcome.terminated = true;
                return Ok(());
            }
        }
    }

    /// The request for the context at the session's leaf. The session's own
    /// messages are borrowed, not copied, unless the application transforms
    /// or edits them.
    fn request<'s>(&self, session: &'s Session) -> Result<Request<'s>, AgentError> {
        let context = session.context(None)?;
        let messages: Vec<(Option<MessageId>, Cow<'s, AgentMessage>)> = match &self.transform {
            None => context
                .entry_ids
                .into_iter()
                .zip(context.messages.into_iter().map(|m| match m {
                    ContextMessage::Entry(m) => Cow::Borrowed(m),
                    ContextMessage::Made(m) => Cow::Owned(*m),
                }))
                .collect(),
            Some(transform) => {
                let mut messages: Vec<AgentMessage> = context
                    .messages
                    .into_iter()
                    .map(ContextMessage::into_owned)
                    .collect();
                transform(&mut messages);
                messages
                    .into_iter()
                    .map(|m| (m.id().cloned(), Cow::Owned(m)))
                    .collect()
            }
        };
        // Each message projected on its own, so that what it becomes keeps
        // the id of its line (for the prompt editor's anchors).
        let mut projected: Vec<(Option<MessageId>, Cow<'s, Message>)> =
            Vec::with_capacity(messages.len());
        for (id, message) in messages {
            match message {
                Cow::Borrowed(m) => projected.extend(
                    crate::to_llm(std::slice::from_ref(m))
                        .into_iter()
                        .map(|m| (id.clone(), m)),
                ),
                Cow::Owned(m) => projected.extend(
                    crate::to_llm(std::slice::from_ref(&m))
                        .into_iter()
                        .map(|m| (id.clone(), Cow::Owned(m.into_owned()))),
                ),
            }
        }
        let messages: Vec<Cow<'s, Message>> = match &self.edit {
            None => projected.into_iter().map(|(_, m)| m).collect(),
            Some(edit) => {
                let mut editor = PromptEditor::with_ids(
                    projected.into_iter().map(|(id, m)| (id, m.into_owned())),
                );
                edit(&mut editor);
                editor.into_messages().into_iter().map(Cow::Owned).collect()
            }
        };
        let mut request: Request<'s> = self.request.reborrow().into_owned();
        request.messages = messages.into();
        request.tools = self.tools.specs().to_vec();
        Ok(request)
    }

    /// Streams one reply. On cancellation, the reply as far as it came with
    /// stop reason `aborted`; on an error, as far as it came with `error`,
    /// and the error.
    async fn reply(
        &self,
        session: &Session,
        cancel: &mut watch::Receiver<bool>,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<(AssistantMessage, Option<ClientError>), AgentError> {
        let request = self.request(session)?;
        let input_estimate: u64 = request.messages.iter().map(|m| m.estimated_tokens()).sum();
        // A reply with nothing read yet, named after the request.
        let api = self.model.api().to_string();
        let provider = request.provider.clone().unwrap_or_default();
        let empty = || {
            AssistantMessage::new(Vec::<String>::new()).with_origin(
                api.clone(),
                provider.clone(),
                request.model.clone(),
            )
        };
        let started = tokio::select! {
            biased;
            () = cancelled(cancel) => None,
            stream = self.model.stream(&request) => Some(stream),
        };
        // Cancelled or failed before a byte came: the empty reply, whole.
        let early = match started {
            Some(Ok(stream)) => Ok(stream),
            Some(Err(error)) => Err(broke_off(empty(), error)),
            None => Err((aborted(empty(), input_estimate), None)),
        };
        let mut stream = match early {
            Ok(stream) => stream,
            Err((reply, error)) => {
                emit(AgentEvent::MessageStart {
                    message: Message::Assistant(reply.clone()).into(),
                });
                return Ok((reply, error));
            }
        };
        emit(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::new(Vec::<String>::new())).into(),
        });
        loop {
            let item = tokio::select! {
                biased;
                () = cancelled(cancel) => {
                    let partial = stream.partial().unwrap_or_else(empty);
                    return Ok((aborted(partial, input_estimate), None));
                }
                item = stream.next() => item,
            };
            match item {
                Some(Ok(StreamItem::Event(event))) => emit(AgentEvent::MessageUpdate { event }),
                Some(Ok(StreamItem::Reply(reply))) => return Ok((reply.message, None)),
                Some(Err(error)) => {
                    let partial = error.partial().cloned().unwrap_or_else(empty);
                    return Ok(broke_off(partial, error));
                }
                None => {
                    let mut partial = stream.partial().unwrap_or_else(empty);
                    partial.stop_reason = StopReason::Error;
                    let message = "the reply stream ended without its reply".to_owned();
                    partial.error_message = Some(message.clone());
                    return Ok((partial, Some(ClientError::Endpoint(message))));
                }
            }
        }
    }

    /// Runs `calls`: approvals first, in order, then the tools, at most
    /// `parallel` at once. The results in call order, and whether the run was
    /// cancelled.
    async fn run_tools(
        &self,
        calls: Vec<ToolCall>,
        cancel: &mut watch::Receiver<bool>,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> (Vec<(ToolResultMessage, ToolOutput)>, bool) {
        let mut results: Vec<Option<(ToolResultMessage, ToolOutput)>> = vec![None; calls.len()];
        let mut queue = VecDeque::new();
        let mut was_cancelled = false;
        for (index, mut call) in calls.into_iter().enumerate() {
            let decision = match &self.approve {
                // A call not yet approved when the run is cancelled is
                // queued; nothing queued starts once cancelled.
                Some(_) if was_cancelled => Approval::Allow,
                Some(approve) => tokio::select! {
                    biased;
                    () = cancelled(cancel) => {
                        was_cancelled = true;
                        Approval::Allow
                    }
                    decision = approve(&call) => decision,
                },
                None => Approval::Allow,
            };
            match decision {
                Approval::Allow => {}
                Approval::Edit(arguments) => call.arguments = arguments,
                Approval::Deny(reason) => {
                    emit(AgentEvent::ToolExecutionStart { call: call.clone() });
                    let text = format!("the call was denied: {reason}");
                    results[index] = Some(not_run(call, text, emit));
                    continue;
                }
            }
            queue.push_back((index, call));
        }
        let mut running = FuturesUnordered::new();
        let mut calls_running = vec![None; results.len()];
        loop {
            while running.len() < self.parallel && !was_cancelled {
                let Some((index, call)) = queue.pop_front() else {
                    break;
                };
                emit(AgentEvent::ToolExecutionStart { call: call.clone() });
                let future = match self.tools.get(&call.name) {
                    Some(tool) => Ok(tool.call(&call.arguments)),
                    None => Err(format!("no tool named `{}`", call.name)),
                };
                running.push(run_tool(index, future, self.tool_timeout));
                calls_running[index] = Some(call);
            }
            if running.is_empty() {
                break;
            }
            let done = tokio::select! {
                biased;
                () = cancelled(cancel), if !was_cancelled => None,
                done = running.next() => done,
            };
            let Some((index, outcome, elapsed)) = done else {
                was_cancelled = true;
                running.clear();
                for (index, call) in calls_running.iter_mut().enumerate() {
                    if let Some(call) = call.take() {
                        results[index] = Some(not_run(call, CANCELLED.to_owned(), emit));
                    }
                }
                continue;
            };
            let Some(call) = calls_running[index].take() else {
                continue;
            };
            let (result, output) = match outcome {
                Ok(mut output) => {
                    // What the model reads moves to the result; the output
                    // keeps what the loop still needs (terminate, messages).
                    let mut result =
                        ToolResultMessage::new(&call.id, &call.name, Vec::<String>::new());
                    result.content = std::mem::take(&mut output.content);
                    result.details = output.details.take().or_else(|| output.json.take());
                    (result, output)
                }
                Err(text) => (error_result(&call, text), ToolOutput::default()),
            };
            emit(AgentEvent::ToolExecutionEnd {
                call,
                result: result.clone(),
                elapsed,
            });
            results[index] = Some((result, output));
        }
        for (index, call) in queue {
            emit(AgentEvent::ToolExecutionStart { call: call.clone() });
            results[index] = Some(not_run(call, CANCELLED.to_owned(), emit));
        }
        let results = results.into_iter().flatten().collect();
        (results, was_cancelled)
    }
}

/// What a tool the run cancelled reads.
const CANCELLED: &str = "the run was cancelled";

/// Runs call `index`'s `future` (an error for a tool that is not there)
/// within `timeout`: its output, or the error text the model reads when it
/// failed, panicked or ran out of time; and how long it ran.
async fn run_tool(
    index: usize,
    future: Result<CallFuture, String>,
    timeout: Option<Duration>,
) -> (usize, Result<ToolOutput, String>, Duration) {
    let started = Instant::now();
    let future = match future {
        Ok(future) => future,
        Err(missing) => return (index, Err(missing), started.elapsed()),
    };
    let guarded = AssertUnwindSafe(future).catch_unwind();
    let outcome = match timeout {
        Some(limit) => tokio::time::timeout(limit, guarded)
            .await
            .unwrap_or_else(|_| {
                Ok(Err(ToolError::new(format!(
                    "the tool did not finish within {limit:?}"
                ))))
            }),
        None => guarded.await,
    };
    let outcome = match outcome {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(error)) => Err(error.to_string()),
        Err(panic) => Err(format!("the tool panicked: {}", panic_message(&*panic))),
    };
    (index, outcome, started.elapsed())
}

/// `call` ends without running (denied, or cancelled): its error result
/// saying `text`, told as its `ToolExecutionEnd`.
fn not_run(
    call: ToolCall,
    text: String,
    emit: &mut (dyn FnMut(AgentEvent) + Send),
) -> (ToolResultMessage, ToolOutput) {
    let result = error_result(&call, text);
    emit(AgentEvent::ToolExecutionEnd {
        call,
        result: result.clone(),
        elapsed: Duration::ZERO,
    });
    (result, ToolOutput::default())
}

fn error_result(call: &ToolCall, text: String) -> ToolResultMessage {
    ToolResultMessage::new(&call.id, &call.name, [text]).with_error(true)
}

/// `partial`, the reply as far as it came before `error`, marked as failed
/// with it.
fn broke_off(
    mut partial: AssistantMessage,
    error: ClientError,
) -> (AssistantMessage, Option<ClientError>) {
    partial.stop_reason = StopReason::Error;
    partial.error_message = Some(error.to_string());
    (partial, Some(error))
}

/// `partial` marked aborted, its usage estimated where the provider sent
/// none (an output count only comes at a reply's end).
fn aborted(mut partial: AssistantMessage, input_estimate: u64) -> AssistantMessage {
    partial.stop_reason = StopReason::Aborted;
    partial.error_message = Some(CANCELLED.to_owned());
    if partial.usage.input == 0 && partial.usage.cache_read == 0 {
        partial.usage.input = input_estimate;
    }
    let output = Message::Assistant(partial.clone()).estimated_tokens();
    partial.usage.output = partial.usage.output.max(output);
    partial
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_owned()
    }
}

async fn append<S: AgentSession>(
    session: &mut S,
    message: AgentMessage,
    emit: &mut (dyn FnMut(AgentEvent) + Send),
) -> Result<MessageId, AgentError> {
    let is_reply =
        matches!(&message, AgentMessage::Llm(m) if matches!(m.message, Message::Assistant(_)));
    if !is_reply {
        emit(AgentEvent::MessageStart {
            message: message.clone(),
        });
    }
    let id = session.append(message.clone()).await?;
    emit(AgentEvent::MessageEnd {
        id: id.clone(),
        message,
    });
    Ok(id)
}

/// Records `compacted` in `session`, telling the summary entry's start and
/// end, then [`AgentEvent::Compacted`].
async fn record<S: AgentSession>(
    session: &mut S,
    compacted: &Compacted,
    emit: &mut (dyn FnMut(AgentEvent) + Send),
) -> Result<(), AgentError> {
    let id = session.compact(compacted).await?;
    if let Some(message) = session
        .session()
        .entry(id.as_str())
        .and_then(|e| e.message())
    {
        emit(AgentEvent::MessageStart {
            message: message.clone(),
        });
        emit(AgentEvent::MessageEnd {
            id: id.clone(),
            message: message.clone(),
        });
    }
    emit(AgentEvent::Compacted {
        id,
        tokens_before: compacted.tokens_before,
        usage: compacted.usage.clone(),
    });
    Ok(())
}

async fn append_all<S: AgentSession>(
    session: &mut S,
    messages: Vec<AgentMessage>,
    emit: &mut (dyn FnMut(AgentEvent) + Send),
) -> Result<(), AgentError> {
    for message in messages {
        append(session, message, emit).await?;
    }
    Ok(())
}
