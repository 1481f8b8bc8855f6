//! The rules themselves: one pass pairs calls with results, a second builds
//! the prepared messages and records every finding.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

use crate::message::content::{
    AssistantContent, BlockKind, ImageContent, MediaSource, TextContent, ToolResultContent,
    UserContent,
};
use crate::message::{AssistantMessage, Message, StopReason, ToolResultMessage, UserMessage};
use crate::Role;

use super::ids::{self, Assigned, IdFix, IdMap};
use super::report::{Change, ChangeKind, Problem, ProblemKind, Provenance};
use super::target::{Target, ThinkingPolicy};

/// The text of a synthetic result for a call that has none.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// Why thinking could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Why {
    /// It comes from another provider, api or model (named).
    Foreign(String),
    /// It has no signature and the target takes only signed thinking.
    Unsigned,
    /// It is empty.
    Empty,
}

impl Why {
    fn describe(&self) -> String {
        match self {
            Self::Foreign(origin) => format!("it was written by {origin}"),
            Self::Unsigned => {
                "it has no signature and the target takes only signed thinking".to_owned()
            }
            Self::Empty => "it is empty".to_owned(),
        }
    }
}

/// One thing found (and, when preparing, done) at an input message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    FailedTurn {
        stop: StopReason,
        calls: usize,
    },
    ThinkingDropped {
        block: usize,
        why: Why,
    },
    ThinkingAsText {
        block: usize,
        why: Why,
    },
    RedactedDropped {
        block: usize,
        why: Why,
    },
    SignatureDropped {
        block: usize,
        on: BlockKind,
        why: Why,
    },
    EmptySignature {
        block: usize,
        on: BlockKind,
    },
    ResultOfFailedTurn {
        id: String,
    },
    ResultWithoutCall {
        id: String,
    },
    DuplicateResult {
        id: String,
    },
    MissingResult {
        id: String,
        name: String,
    },
    MisplacedResult {
        id: String,
    },
    IdMapped {
        from: String,
        to: String,
        fix: IdFix,
        call: bool,
    },
    ImagePlaceholder {
        block: usize,
        mime: String,
    },
    MovedImages {
        count: usize,
    },
    EmptyMessage {
        role: Role,
    },
    InvalidMedia {
        block: usize,
        what: &'static str,
        error: String,
    },
    ProviderBlockDropped {
        block: usize,
        kind: String,
        origin: String,
    },
    CitationsDropped {
        block: usize,
        origin: String,
    },
    AssistantImage {
        block: usize,
        mime: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Finding {
    pub(super) index: usize,
    pub(super) event: Event,
}

impl Finding {
    fn change(&self) -> Change {
        let (kind, detail) = match &self.event {
            Event::FailedTurn { stop, calls } => (
                ChangeKind::SkippedFailedTurn,
                format!("skipped an assistant turn that ended in `{stop}` ({calls} tool calls)"),
            ),
            Event::ThinkingDropped { block, why } => (
                ChangeKind::DroppedThinking,
                format!("dropped thinking block {block}: {}", why.describe()),
            ),
            Event::ThinkingAsText { block, why } => (
                ChangeKind::ThinkingAsText,
                format!(
                    "turned thinking block {block} into text: {}",
                    why.describe()
                ),
            ),
            Event::RedactedDropped { block, why } => (
                ChangeKind::DroppedThinking,
                format!(
                    "dropped redacted thinking block {block}: {}",
                    why.describe()
                ),
            ),
            Event::SignatureDropped { block, on, why } => (
                ChangeKind::DroppedThinking,
                format!(
                    "removed the signature of {on} block {block}: {}",
                    why.describe()
                ),
            ),
            Event::EmptySignature { block, on } => (
                ChangeKind::DroppedThinking,
                format!("removed the empty signature of {on} block {block}"),
            ),
            Event::ResultOfFailedTurn { id } => (
                ChangeKind::DroppedResult,
                format!("dropped the result for `{id}`: its call is in a skipped failed turn"),
            ),
            Event::ResultWithoutCall { id } => (
                ChangeKind::DroppedResult,
                format!("dropped the result for `{id}`: no earlier call has that id"),
            ),
            Event::DuplicateResult { id } => (
                ChangeKind::DroppedResult,
                format!("dropped a second result for `{id}`"),
            ),
            Event::MissingResult { id, name } => (
                ChangeKind::SyntheticResult,
                format!("added an error result \"{NO_RESULT_TEXT}\" for the `{name}` call `{id}`"),
            ),
            Event::MisplacedResult { id } => (
                ChangeKind::ReorderedResult,
                format!("moved the result for `{id}` to follow its call"),
            ),
            Event::IdMapped {
                from,
                to,
                fix,
                call,
            } => (
                ChangeKind::MappedId,
                format!(
                    "{} id `{from}` → `{to}` ({})",
                    if *call { "tool-call" } else { "tool-result" },
                    match fix {
                        IdFix::Empty => "empty",
                        IdFix::Duplicate => "used by an earlier call",
                        IdFix::Rule => "not accepted by the target",
                        IdFix::Split => "pi's call id and item id, sent apart",
                    }
                ),
            ),
            Event::ImagePlaceholder { block, mime } => (
                ChangeKind::ImagePlaceholder,
                format!("replaced {mime} image block {block} by a text placeholder"),
            ),
            Event::MovedImages { count } => (
                ChangeKind::MovedImages,
                format!("moved {count} image(s) into a user message after the tool results"),
            ),
            Event::EmptyMessage { role } => (
                ChangeKind::DroppedEmptyMessage,
                format!("dropped a {role} message with no content left"),
            ),
            Event::InvalidMedia { block, what, error } => (
                ChangeKind::InvalidMedia,
                format!(
                    "replaced {what} block {block} with a placeholder: its base64 data does not decode ({error})"
                ),
            ),
            Event::ProviderBlockDropped {
                block,
                kind,
                origin,
            } => (
                ChangeKind::DroppedProviderData,
                format!(
                    "dropped provider block {block} (`{kind}`): it was written by {origin} and only goes back there"
                ),
            ),
            Event::CitationsDropped { block, origin } => (
                ChangeKind::DroppedProviderData,
                format!(
                    "removed the citations of text block {block}: they were written by {origin} and only go back there"
                ),
            ),
            Event::AssistantImage { block, mime } => (
                ChangeKind::ImagePlaceholder,
                format!(
                    "replaced {mime} image block {block} of an assistant message by a text placeholder: the target takes no images in assistant turns"
                ),
            ),
        };
        Change::new(self.index, kind, detail)
    }

    pub(super) fn problem(&self) -> Option<Problem> {
        let (kind, detail) = match &self.event {
            Event::FailedTurn { stop, calls } => (
                ProblemKind::FailedTurn,
                format!(
                    "assistant turn ended in `{stop}` ({calls} tool calls); it is not replayed"
                ),
            ),
            Event::EmptySignature { block, on } => (
                ProblemKind::EmptySignature,
                format!("{on} block {block} has an empty signature"),
            ),
            Event::ResultOfFailedTurn { id } => (
                ProblemKind::ResultOfFailedTurn,
                format!("result for `{id}` answers a call of a failed turn"),
            ),
            Event::ResultWithoutCall { id } => (
                ProblemKind::ResultWithoutCall,
                format!("result for `{id}` answers no earlier call"),
            ),
            Event::DuplicateResult { id } => (
                ProblemKind::DuplicateResult,
                format!("second result for `{id}`"),
            ),
            Event::MissingResult { id, name } => (
                ProblemKind::MissingResult,
                format!("the `{name}` call `{id}` has no result"),
            ),
            Event::MisplacedResult { id } => (
                ProblemKind::MisplacedResult,
                format!("result for `{id}` does not directly follow its call's turn"),
            ),
            Event::IdMapped {
                from,
                fix: IdFix::Duplicate,
                call: true,
                ..
            } => (
                ProblemKind::DuplicateCallId,
                format!("tool-call id `{from}` is used by an earlier call"),
            ),
            Event::IdMapped {
                fix: IdFix::Empty,
                call: true,
                ..
            } => (
                ProblemKind::EmptyCallId,
                "a tool call has an empty id".to_owned(),
            ),
            Event::EmptyMessage { role } => (
                ProblemKind::EmptyMessage,
                format!("{role} message has no content"),
            ),
            Event::InvalidMedia { block, what, error } => (
                ProblemKind::InvalidMedia,
                format!("{what} block {block} has base64 data that does not decode: {error}"),
            ),
            _ => return None,
        };
        Some(Problem {
            index: self.index,
            kind,
            detail,
        })
    }
}

/// What one run produced.
#[derive(Debug, Clone)]
pub(super) struct Outcome {
    pub messages: Vec<Message>,
    pub provenance: Vec<Provenance>,
    pub ids: IdMap,
    findings: Vec<Finding>,
}

impl Outcome {
    pub fn changes(&self) -> Vec<Change> {
        self.findings.iter().map(Finding::change).collect()
    }
}

/// A call of a kept assistant turn.
struct Call<'a> {
    id: &'a str,
    name: &'a str,
    result: Option<usize>,
}

/// A kept (not failed) assistant turn and its calls.
struct Turn<'a> {
    calls: Vec<Call<'a>>,
}

struct Run<'t> {
    target: &'t Target,
    findings: Vec<Finding>,
}

impl Run<'_> {
    fn found(&mut self, index: usize, event: Event) {
        self.findings.push(Finding { index, event });
    }
}

/// Applies every rule to `input`.
pub(super) fn run<M: Borrow<Message>>(input: &[M], target: &Target) -> Outcome {
    let mut run = Run {
        target,
        findings: Vec::new(),
    };
    let messages: Vec<&Message> = input.iter().map(Borrow::borrow).collect();

    // Pass 1: pair every result with the call it answers.
    let mut turns: Vec<Turn<'_>> = Vec::new();
    let mut turn_at: BTreeMap<usize, usize> = BTreeMap::new();
    let mut open: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    let mut answered: BTreeSet<&str> = BTreeSet::new();
    let mut failed: BTreeSet<&str> = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant(a) if a.stop_reason.is_failure() => {
                let calls = a.tool_calls().count();
                for call in a.tool_calls() {
                    failed.insert(call.id.as_str());
                }
                run.found(
                    i,
                    Event::FailedTurn {
                        stop: a.stop_reason,
                        calls,
                    },
                );
            }
            Message::Assistant(a) => {
                let t = turns.len();
                let calls: Vec<Call<'_>> = a
                    .tool_calls()
                    .map(|c| Call {
                        id: c.id.as_str(),
                        name: c.name.as_str(),
                        result: None,
                    })
                    .collect();
                for (c, call) in calls.iter().enumerate() {
                    open.entry(call.id).or_default().push((t, c));
                }
                turns.push(Turn { calls });
                turn_at.insert(i, t);
            }
            Message::ToolResult(r) => {
                let id = r.tool_call_id.as_str();
                match open.get_mut(id).and_then(take_open) {
                    Some((t, c)) => {
                        if let Some(call) = turns.get_mut(t).and_then(|turn| turn.calls.get_mut(c))
                        {
                            call.result = Some(i);
                        }
                        answered.insert(id);
                    }
                    None => {
                        let event = if answered.contains(id) {
                            Event::DuplicateResult { id: id.to_owned() }
                        } else if failed.contains(id) {
                            Event::ResultOfFailedTurn { id: id.to_owned() }
                        } else {
                            Event::ResultWithoutCall { id: id.to_owned() }
                        };
                        run.found(i, event);
                    }
                }
            }
            Message::System(_) | Message::User(_) => {}
        }
    }

    // Ids: every call of a kept turn, in order.
    let rule = target.id_rule;
    let stored: Vec<&str> = turns
        .iter()
        .flat_map(|t| t.calls.iter().map(|c| c.id))
        .collect();
    let mut assigned = ids::assign(&stored, rule).into_iter();
    let assigned: Vec<Vec<Assigned>> = turns
        .iter()
        .map(|t| assigned.by_ref().take(t.calls.len()).collect())
        .collect();
    let mut id_map = IdMap::default();
    for (turn, ids) in turns.iter().zip(&assigned) {
        for (call, a) in turn.calls.iter().zip(ids) {
            if a.fix.is_some() {
                id_map.insert(a.id.clone(), call.id.to_owned());
            }
        }
    }

    // Pass 2: build the prepared messages.
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut origins: Vec<Provenance> = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::System(s) => {
                out.push(Message::System(s.clone()));
                origins.push(Provenance::Input(i));
            }
            Message::User(u) => {
                let user = run.user(i, u);
                if user.content.is_empty() {
                    run.found(i, Event::EmptyMessage { role: Role::User });
                } else {
                    out.push(Message::User(user));
                    origins.push(Provenance::Input(i));
                }
            }
            Message::ToolResult(_) => {}
            Message::Assistant(a) => {
                let Some((turn, ids)) = turn_at
                    .get(&i)
                    .and_then(|&t| Some((turns.get(t)?, assigned.get(t)?)))
                else {
                    continue;
                };
                let assistant = run.assistant(i, a, ids);
                if assistant.content.is_empty() {
                    run.found(
                        i,
                        Event::EmptyMessage {
                            role: Role::Assistant,
                        },
                    );
                    continue;
                }
                let timestamp = assistant.timestamp;
                out.push(Message::Assistant(assistant));
                origins.push(Provenance::Input(i));
                run.results(i, timestamp, turn, ids, &messages, &mut out, &mut origins);
            }
        }
    }

    run.findings.sort_by_key(|f| f.index);
    Outcome {
        messages: out,
        provenance: origins,
        ids: id_map,
        findings: run.findings,
    }
}

/// Takes the call a result answers: among the open calls with its id, the
/// first one of the latest turn that has one.
fn take_open(list: &mut Vec<(usize, usize)>) -> Option<(usize, usize)> {
    let (last_turn, _) = *list.last()?;
    let position = list.iter().position(|&(t, _)| t == last_turn)?;
    Some(list.remove(position))
}

impl Run<'_> {
    fn user(&mut self, i: usize, user: &UserMessage) -> UserMessage {
        let mut user = user.clone();
        for (b, block) in user.content.iter_mut().enumerate() {
            let (what, data, mime) = match &*block {
                UserContent::Image(ImageContent {
                    source: MediaSource::Base64 { data, mime_type },
                }) => ("image", data, mime_type),
                UserContent::Audio(audio) => ("audio", &audio.data, &audio.mime_type),
                UserContent::Document(document) => match &document.source {
                    MediaSource::Base64 { data, mime_type } => ("document", data, mime_type),
                    MediaSource::Url(_) => continue,
                },
                _ => continue,
            };
            if let Some(text) = self.invalid_media(i, b, what, data, mime) {
                *block = UserContent::Text(text);
            }
        }
        if !self.target.vision {
            for (b, block) in user.content.iter_mut().enumerate() {
                if let UserContent::Image(image) = block {
                    let (mime, text) = placeholder(image);
                    self.found(i, Event::ImagePlaceholder { block: b, mime });
                    *block = UserContent::Text(TextContent::new(text));
                }
            }
        }
        user
    }

    fn assistant(
        &mut self,
        i: usize,
        message: &AssistantMessage,
        ids: &[Assigned],
    ) -> AssistantMessage {
        let same = self
            .target
            .produced(&message.provider, &message.api, &message.model);
        let foreign = || {
            Why::Foreign(format!(
                "{}/{}/{}",
                or_unknown(&message.provider),
                or_unknown(&message.api),
                or_unknown(&message.model)
            ))
        };
        let mut content = Vec::with_capacity(message.content.len());
        let mut calls = ids.iter();
        for (b, block) in message.content.iter().enumerate() {
            match block {
                AssistantContent::Thinking(thinking) => {
                    let empty_signature = thinking.signature.as_deref() == Some("");
                    let signed = thinking.signature().is_some();
                    if same && (signed || self.target.unsigned_thinking) {
                        let mut thinking = thinking.clone();
                        if empty_signature {
                            thinking.signature = None;
                            self.found(
                                i,
                                Event::EmptySignature {
                                    block: b,
                                    on: BlockKind::Thinking,
                                },
                            );
                        }
                        content.push(AssistantContent::Thinking(thinking));
                        continue;
                    }
                    let why = if same { Why::Unsigned } else { foreign() };
                    match self.target.thinking {
                        ThinkingPolicy::AsText if !thinking.thinking.trim().is_empty() => {
                            content.push(AssistantContent::Text(TextContent::new(
                                thinking.thinking.clone(),
                            )));
                            self.found(i, Event::ThinkingAsText { block: b, why });
                        }
                        ThinkingPolicy::AsText | ThinkingPolicy::Drop => {
                            self.found(i, Event::ThinkingDropped { block: b, why });
                        }
                    }
                }
                AssistantContent::RedactedThinking(redacted) => {
                    if same && !redacted.data.is_empty() {
                        content.push(block.clone());
                    } else {
                        let why = if same { Why::Empty } else { foreign() };
                        self.found(i, Event::RedactedDropped { block: b, why });
                    }
                }
                AssistantContent::ToolCall(call) => {
                    let mut call = call.clone();
                    let on = (b, BlockKind::ToolCall);
                    self.signature(i, on, &mut call.signature, same, &foreign);
                    if let Some(assigned) = calls.next() {
                        if let Some(fix) = assigned.fix {
                            self.found(
                                i,
                                Event::IdMapped {
                                    from: call.id.clone(),
                                    to: assigned.id.clone(),
                                    fix,
                                    call: true,
                                },
                            );
                            // The item id of pi's joined Responses id goes
                            // back as the item's id, to the model that made
                            // it (pi leaves it out for another model).
                            if let (IdFix::Split, true, None) = (fix, same, &call.signature) {
                                call.signature = ids::split_pi_id(&call.id, self.target.id_rule)
                                    .map(|(_, item)| item.to_owned())
                                    .filter(|item| item.starts_with("fc"));
                            }
                            call.id.clone_from(&assigned.id);
                        }
                    }
                    content.push(AssistantContent::ToolCall(call));
                }
                AssistantContent::Text(text) => {
                    let mut text = text.clone();
                    let on = (b, BlockKind::Text);
                    self.signature(i, on, &mut text.signature, same, &foreign);
                    if text.citations.is_some() && !self.same_provider_api(message, &message.api) {
                        text.citations = None;
                        let origin = origin(&message.provider, &message.api);
                        self.found(i, Event::CitationsDropped { block: b, origin });
                    }
                    content.push(AssistantContent::Text(text));
                }
                AssistantContent::ProviderBlock(provider) => {
                    if self.same_provider_api(message, &provider.api) {
                        content.push(block.clone());
                    } else {
                        let origin = origin(&message.provider, &provider.api);
                        let kind = provider.type_name();
                        self.found(
                            i,
                            Event::ProviderBlockDropped {
                                block: b,
                                kind,
                                origin,
                            },
                        );
                    }
                }
                AssistantContent::Image(image) => {
                    if let MediaSource::Base64 { data, mime_type } = &image.source {
                        if let Some(text) = self.invalid_media(i, b, "image", data, mime_type) {
                            content.push(AssistantContent::Text(text));
                            continue;
                        }
                    }
                    if !self.target.vision {
                        let (mime, text) = placeholder(image);
                        self.found(i, Event::ImagePlaceholder { block: b, mime });
                        content.push(AssistantContent::Text(TextContent::new(text)));
                    } else if !self.target.assistant_images {
                        let (mime, text) = assistant_image_placeholder(image);
                        self.found(i, Event::AssistantImage { block: b, mime });
                        content.push(AssistantContent::Text(TextContent::new(text)));
                    } else {
                        content.push(block.clone());
                    }
                }
            }
        }
        AssistantMessage {
            content,
            ..without_content(message)
        }
    }

    /// Whether a provider's own data written through `api` in `message` goes
    /// back to the target: the same api and provider (the model may differ: a
    /// server-side tool block is the provider's, not the model's).
    fn same_provider_api(&self, message: &AssistantMessage, api: &str) -> bool {
        self.target.api == api && self.target.provider == message.provider
    }

    /// The signature of a text block or a tool call (`on`: its index and kind),
    /// which only the model that wrote it can read: an empty one is reported
    /// and removed; so is one written by another model.
    fn signature(
        &mut self,
        i: usize,
        (block, on): (usize, BlockKind),
        signature: &mut Option<String>,
        same: bool,
        foreign: &dyn Fn() -> Why,
    ) {
        match signature.as_deref() {
            Some("") => {
                self.found(i, Event::EmptySignature { block, on });
                *signature = None;
            }
            Some(_) if !same => {
                *signature = None;
                let why = foreign();
                self.found(i, Event::SignatureDropped { block, on, why });
            }
            _ => {}
        }
    }

    /// Emits the results of one turn, in call order, then synthetic results
    /// for the calls without one, then the images moved out of the results.
    #[allow(clippy::too_many_arguments)]
    fn results(
        &mut self,
        turn_index: usize,
        timestamp: u64,
        turn: &Turn<'_>,
        ids: &[Assigned],
        messages: &[&Message],
        out: &mut Vec<Message>,
        origins: &mut Vec<Provenance>,
    ) {
        let run_end = messages
            .iter()
            .enumerate()
            .skip(turn_index + 1)
            .find(|(_, m)| !matches!(m, Message::ToolResult(_)))
            .map_or(messages.len(), |(k, _)| k);
        // Results already after the turn keep their order; results from further
        // down (always later in the input) come after them.
        let mut answered: Vec<(usize, &Assigned)> = turn
            .calls
            .iter()
            .zip(ids)
            .filter_map(|(call, assigned)| Some((call.result?, assigned)))
            .collect();
        answered.sort_by_key(|&(r, _)| r);

        let mut moved: Vec<UserContent> = Vec::new();
        let mut moved_from: Option<usize> = None;
        let mut moved_timestamp = timestamp;
        for (r, assigned) in answered {
            let Some(Message::ToolResult(result)) = messages.get(r) else {
                continue;
            };
            if r <= turn_index || r >= run_end {
                self.found(
                    r,
                    Event::MisplacedResult {
                        id: result.tool_call_id.clone(),
                    },
                );
            }
            let mut result = result.clone();
            for (b, block) in result.content.iter_mut().enumerate() {
                if let ToolResultContent::Image(ImageContent {
                    source: MediaSource::Base64 { data, mime_type },
                }) = &*block
                {
                    if let Some(text) = self.invalid_media(r, b, "image", data, mime_type) {
                        *block = ToolResultContent::Text(text);
                    }
                }
            }
            if let Some(fix) = assigned.fix {
                self.found(
                    r,
                    Event::IdMapped {
                        from: result.tool_call_id.clone(),
                        to: assigned.id.clone(),
                        fix,
                        call: false,
                    },
                );
                result.tool_call_id.clone_from(&assigned.id);
            }
            let images = self.result_images(r, &mut result);
            if !images.is_empty() {
                moved.push(UserContent::Text(TextContent::new(format!(
                    "The images of the `{}` tool result:",
                    result.tool_name
                ))));
                moved.extend(images.into_iter().map(UserContent::Image));
                if moved_from.is_none() {
                    moved_from = Some(r);
                    moved_timestamp = result.timestamp;
                }
            }
            out.push(Message::ToolResult(result));
            origins.push(Provenance::Input(r));
        }
        for (call, assigned) in turn.calls.iter().zip(ids) {
            if call.result.is_some() {
                continue;
            }
            self.found(
                turn_index,
                Event::MissingResult {
                    id: call.id.to_owned(),
                    name: call.name.to_owned(),
                },
            );
            let id = assigned.id.clone();
            out.push(Message::ToolResult(ToolResultMessage {
                tool_call_id: id,
                tool_name: call.name.to_owned(),
                content: vec![ToolResultContent::Text(TextContent::new(NO_RESULT_TEXT))],
                is_error: true,
                timestamp,
                details: None,
            }));
            origins.push(Provenance::SyntheticResult(turn_index));
        }
        if let Some(from) = moved_from {
            out.push(Message::User(UserMessage {
                content: moved,
                timestamp: moved_timestamp,
            }));
            origins.push(Provenance::MovedImages(from));
        }
    }

    /// When `data` is not base64, records it and gives the text that stands in
    /// for the block (a provider refuses a request with bad base64 whole).
    fn invalid_media(
        &mut self,
        i: usize,
        block: usize,
        what: &'static str,
        data: &str,
        mime: &str,
    ) -> Option<TextContent> {
        let error = crate::message::media::base64_problem(data)?.to_string();
        self.found(i, Event::InvalidMedia { block, what, error });
        let mime = if mime.is_empty() { what } else { mime };
        Some(TextContent::new(format!(
            "[{mime} {what} omitted: its data is not valid base64]"
        )))
    }

    /// Applies the image rules to one tool result; returns the images to move.
    fn result_images(&mut self, r: usize, result: &mut ToolResultMessage) -> Vec<ImageContent> {
        let mut moved = Vec::new();
        for (b, block) in result.content.iter_mut().enumerate() {
            let ToolResultContent::Image(image) = block else {
                continue;
            };
            if !self.target.vision {
                let (mime, text) = placeholder(image);
                self.found(r, Event::ImagePlaceholder { block: b, mime });
                *block = ToolResultContent::Text(TextContent::new(text));
            } else if !self.target.tool_result_images {
                let mime = mime_of(image);
                let note =
                    format!("[{mime} image: attached in the user message after the tool results]");
                let ToolResultContent::Image(image) =
                    std::mem::replace(block, ToolResultContent::Text(TextContent::new(note)))
                else {
                    continue;
                };
                moved.push(image);
            }
        }
        if !moved.is_empty() {
            self.found(r, Event::MovedImages { count: moved.len() });
        }
        moved
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "(unknown)"
    } else {
        s
    }
}

/// The MIME type of an image: its own, the one of a `data:` URL, or the one
/// its URL's extension names; `image` when none is known.
fn mime_of(image: &ImageContent) -> String {
    match &image.source {
        MediaSource::Base64 { mime_type, .. } if !mime_type.is_empty() => mime_type.clone(),
        MediaSource::Base64 { .. } => "image".to_owned(),
        MediaSource::Url(url) => {
            if let Some(rest) = url.strip_prefix("data:") {
                if let Some(mime) = rest.split([';', ',']).next().filter(|m| !m.is_empty()) {
                    return mime.to_owned();
                }
            }
            let path = url.split(['?', '#']).next().unwrap_or(url);
            let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            match ext.as_deref() {
                Some("png") => "image/png",
                Some("jpg" | "jpeg") => "image/jpeg",
                Some("gif") => "image/gif",
                Some("webp") => "image/webp",
                Some("svg") => "image/svg+xml",
                _ => "image",
            }
            .to_owned()
        }
    }
}

/// The MIME type and the text that stands in for an image the model made, for
/// a target that takes no images in assistant turns.
fn assistant_image_placeholder(image: &ImageContent) -> (String, String) {
    let mime = mime_of(image);
    let text = format!("[{mime} image made by the model omitted]");
    (mime, text)
}

/// The MIME type and the text that stands in for an image.
fn placeholder(image: &ImageContent) -> (String, String) {
    let mime = mime_of(image);
    let text = format!("[{mime} image omitted: this model does not read images]");
    (mime, text)
}

/// `provider/api` as a report names an origin.
fn origin(provider: &str, api: &str) -> String {
    format!("{}/{}", or_unknown(provider), or_unknown(api))
}

/// Every field of `message` but the content, which is left empty.
fn without_content(message: &AssistantMessage) -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        api: message.api.clone(),
        provider: message.provider.clone(),
        model: message.model.clone(),
        response_id: message.response_id.clone(),
        usage: message.usage.clone(),
        stop_reason: message.stop_reason,
        error_message: message.error_message.clone(),
        timestamp: message.timestamp,
    }
}
