//! What a stream decoder reports as it reads: the events one input produced
//! ([`StreamEvent`]) and the message so far. Each decoder describes its state
//! as a [`Snapshot`]; one [`Differ`] turns two snapshots into the events
//! between them, so the four decoders report alike.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    AssistantContent, AssistantMessage, RedactedThinkingContent, StopReason, TextContent,
    ThinkingContent, ToolArguments, ToolCall, Usage,
};

/// One thing a stream told, in order. `index` is the block's index in the
/// message's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The response began.
    Start,
    /// A text block began.
    TextStart {
        /// The block's index.
        index: usize,
    },
    /// More text.
    TextDelta {
        /// The block's index.
        index: usize,
        /// The new text.
        delta: String,
    },
    /// A text block is complete.
    TextEnd {
        /// The block's index.
        index: usize,
        /// The whole block.
        text: TextContent,
    },
    /// A thinking block began.
    ThinkingStart {
        /// The block's index.
        index: usize,
    },
    /// More thinking.
    ThinkingDelta {
        /// The block's index.
        index: usize,
        /// The new thinking text.
        delta: String,
    },
    /// A thinking block is complete (with its signature).
    ThinkingEnd {
        /// The block's index.
        index: usize,
        /// The whole block: thinking, or redacted thinking.
        block: AssistantContent,
    },
    /// A tool call began.
    ToolCallStart {
        /// The block's index.
        index: usize,
        /// The call id (for Gemini, which may send none, the id is given at
        /// the end).
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's arguments.
    ToolCallDelta {
        /// The block's index.
        index: usize,
        /// The new JSON text. The arguments so far are computed only when
        /// asked for: by the decoder's `partial()`, or by a [`PartialJson`]
        /// the caller pushes the deltas into.
        delta: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The block's index.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// A block that does not stream arrived whole: an image the model made,
    /// or a provider's own block (a server-side tool call or result…), which
    /// is never a client tool call.
    Block {
        /// The block's index.
        index: usize,
        /// The block.
        block: AssistantContent,
    },
    /// The token usage so far.
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// The response ended.
    Done {
        /// Why it ended.
        stop_reason: StopReason,
    },
    /// The provider reported an error in the stream.
    Error {
        /// What it said.
        message: String,
    },
}

/// The kind of a block in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Thinking,
    Redacted,
    ToolCall,
    /// A block that arrives whole (an image, a provider block).
    Whole,
}

/// One block as a decoder holds it: its text so far (for a tool call, the JSON
/// text of the arguments) and whether it is complete.
#[derive(Debug)]
pub(crate) struct BlockView<'a> {
    pub(crate) kind: Kind,
    pub(crate) text: Cow<'a, str>,
    /// Thinking's signature; a text block's.
    pub(crate) signature: Option<&'a str>,
    /// A tool call's id and name.
    pub(crate) id: Cow<'a, str>,
    pub(crate) name: &'a str,
    /// A complete tool call's arguments, when the decoder holds them parsed.
    pub(crate) arguments: Option<&'a ToolArguments>,
    /// The finished block, when the decoder holds it (always for a block
    /// that arrives whole): what [`content`](Self::content) gives.
    pub(crate) whole: Option<Cow<'a, AssistantContent>>,
    pub(crate) closed: bool,
}

impl<'a> BlockView<'a> {
    pub(crate) fn new(kind: Kind, text: impl Into<Cow<'a, str>>, closed: bool) -> Self {
        Self {
            kind,
            text: text.into(),
            signature: None,
            id: Cow::Borrowed(""),
            name: "",
            arguments: None,
            whole: None,
            closed,
        }
    }

    /// The view of a block that arrives whole (complete when it is seen).
    pub(crate) fn whole(block: Cow<'a, AssistantContent>) -> Self {
        Self {
            whole: Some(block),
            ..Self::new(Kind::Whole, "", true)
        }
    }

    /// The view of a block of content.
    #[cfg(any(feature = "anthropic", feature = "gemini", feature = "bedrock"))]
    pub(crate) fn of(block: &'a AssistantContent, closed: bool) -> Self {
        let view = match block {
            AssistantContent::Image(_) | AssistantContent::ProviderBlock(_) => {
                Self::whole(Cow::Borrowed(block))
            }
            AssistantContent::Text(t) => Self {
                signature: t.signature.as_deref(),
                ..Self::new(Kind::Text, t.text.as_str(), closed)
            },
            AssistantContent::Thinking(t) => Self {
                signature: t.signature.as_deref(),
                ..Self::new(Kind::Thinking, t.thinking.as_str(), closed)
            },
            AssistantContent::RedactedThinking(r) => {
                Self::new(Kind::Redacted, r.data.as_str(), closed)
            }
            AssistantContent::ToolCall(call) => Self {
                id: Cow::Borrowed(call.id.as_str()),
                name: &call.name,
                arguments: Some(&call.arguments),
                signature: call.signature.as_deref(),
                ..Self::new(Kind::ToolCall, call.arguments.as_str(), closed)
            },
        };
        // A finished text keeps what its view does not carry (its citations);
        // a block that arrives whole is its own content.
        let keep = view.kind == Kind::Whole || (view.closed && view.kind == Kind::Text);
        Self {
            whole: keep.then_some(Cow::Borrowed(block)),
            ..view
        }
    }

    /// The block as content: a tool call's arguments parsed (best effort while
    /// they stream).
    pub(crate) fn content(&self) -> AssistantContent {
        let signature = self.signature.map(str::to_owned);
        if let Some(block) = &self.whole {
            return block.as_ref().clone();
        }
        match self.kind {
            // Never without its block (see `whole`).
            Kind::Whole => AssistantContent::Text(TextContent::default()),
            Kind::Text => AssistantContent::Text(TextContent {
                signature,
                ..TextContent::new(self.text.as_ref())
            }),
            Kind::Thinking => AssistantContent::Thinking(ThinkingContent {
                thinking: self.text.to_string(),
                signature,
            }),
            Kind::Redacted => {
                AssistantContent::RedactedThinking(RedactedThinkingContent::new(self.text.as_ref()))
            }
            Kind::ToolCall => AssistantContent::ToolCall(ToolCall {
                id: self.id.to_string(),
                name: self.name.to_owned(),
                arguments: match self.arguments {
                    Some(arguments) => arguments.clone(),
                    None => partial_arguments(&self.text),
                },
                signature,
            }),
        }
    }
}

/// A decoder's state, as the differ reads it.
#[derive(Debug, Default)]
pub(crate) struct Snapshot<'a> {
    pub(crate) started: bool,
    pub(crate) blocks: Vec<BlockView<'a>>,
    pub(crate) usage: Option<Usage>,
    /// Set once the response ended.
    pub(crate) stop: Option<StopReason>,
    pub(crate) error: Option<&'a str>,
}

impl Snapshot<'_> {
    /// The message so far, on `base` (the decoder's id, model, api…).
    pub(crate) fn partial(&self, mut base: AssistantMessage) -> AssistantMessage {
        base.content = self.blocks.iter().map(BlockView::content).collect();
        if let Some(usage) = &self.usage {
            base.usage = usage.clone();
        }
        if let Some(stop) = self.stop {
            base.stop_reason = stop;
        }
        if let Some(error) = self.error {
            base.stop_reason = StopReason::Error;
            base.error_message = Some(error.to_owned());
        }
        base
    }
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    sent: usize,
    ended: bool,
}

/// The events between one snapshot and the next.
#[derive(Debug, Default)]
pub(crate) struct Differ {
    started: bool,
    blocks: Vec<Seen>,
    usage: Option<Usage>,
    done: bool,
    error: bool,
}

impl Differ {
    /// The events that lead from the last snapshot to `now`.
    pub(crate) fn events(&mut self, now: &Snapshot<'_>) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if now.started && !self.started {
            self.started = true;
            out.push(StreamEvent::Start);
        }
        let ending = now.stop.is_some() || now.error.is_some();
        for (index, block) in now.blocks.iter().enumerate() {
            if index == self.blocks.len() {
                if !self.started {
                    self.started = true;
                    out.push(StreamEvent::Start);
                }
                self.blocks.push(Seen {
                    sent: 0,
                    ended: false,
                });
                out.push(match block.kind {
                    Kind::Whole => {
                        self.blocks[index].ended = true;
                        StreamEvent::Block {
                            index,
                            block: block.content(),
                        }
                    }
                    Kind::Text => StreamEvent::TextStart { index },
                    Kind::Thinking | Kind::Redacted => StreamEvent::ThinkingStart { index },
                    Kind::ToolCall => StreamEvent::ToolCallStart {
                        index,
                        id: block.id.to_string(),
                        name: block.name.to_owned(),
                    },
                });
            }
            let seen = &mut self.blocks[index];
            if seen.ended {
                continue;
            }
            let text = block.text.as_ref();
            if block.kind != Kind::Redacted
                && text.len() > seen.sent
                && text.is_char_boundary(seen.sent)
            {
                let delta = text[seen.sent..].to_owned();
                seen.sent = text.len();
                out.push(match block.kind {
                    Kind::Text => StreamEvent::TextDelta { index, delta },
                    Kind::Thinking | Kind::Redacted | Kind::Whole => {
                        StreamEvent::ThinkingDelta { index, delta }
                    }
                    Kind::ToolCall => StreamEvent::ToolCallDelta { index, delta },
                });
            }
            if block.closed || ending {
                seen.ended = true;
                out.push(match (block.kind, block.content()) {
                    (Kind::Text, AssistantContent::Text(text)) => {
                        StreamEvent::TextEnd { index, text }
                    }
                    (Kind::ToolCall, AssistantContent::ToolCall(call)) => {
                        StreamEvent::ToolCallEnd { index, call }
                    }
                    (_, block) => StreamEvent::ThinkingEnd { index, block },
                });
            }
        }
        if let Some(usage) = &now.usage {
            if self.usage.as_ref() != Some(usage) && *usage != Usage::default() {
                self.usage = Some(usage.clone());
                out.push(StreamEvent::Usage {
                    usage: usage.clone(),
                });
            }
        }
        if let (Some(message), false) = (now.error, self.error) {
            self.error = true;
            out.push(StreamEvent::Error {
                message: message.to_owned(),
            });
        }
        if let (Some(stop_reason), false) = (now.stop, self.done) {
            self.done = true;
            out.push(StreamEvent::Done { stop_reason });
        }
        out
    }
}

/// The arguments in a JSON text that may stop anywhere: what is complete, with
/// an unfinished string cut where it stops, an unfinished key or value dropped,
/// and the open objects and arrays closed, keys in the order written. Not an
/// object: empty.
pub(crate) fn partial_arguments(text: &str) -> ToolArguments {
    let mut scan = Scan::new(usize::MAX);
    scan.advance(text);
    scan.closed(text, |t| ToolArguments::from_json(t).ok())
        .unwrap_or_default()
}

/// [`partial_arguments`] as a map (serde_json's order).
fn partial_map(text: &str) -> Map<String, Value> {
    let mut scan = Scan::new(usize::MAX);
    scan.advance(text);
    scan.value(text)
}

/// Tool-call arguments as they stream: the JSON text so far, and, only when
/// asked for, the value it holds so far.
///
/// [`push`](Self::push) costs the length of the delta; [`value`](Self::value)
/// reads only the bytes pushed since it was last asked, then parses the text
/// cut at the last place it can be closed. A stream decoder reports a
/// [`StreamEvent::ToolCallDelta`]'s text; a caller that shows arguments as they
/// come keeps one of these per call.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::PartialJson;
/// let mut args = PartialJson::new();
/// args.push(r#"{"path": "src/ma"#);
/// assert_eq!(args.value()["path"], "src/ma");
/// args.push(r#"in.rs", "lines": [1, 2"#);
/// assert_eq!(args.value()["lines"], serde_json::json!([1, 2]));
/// args.push("]}");
/// assert_eq!(args.text(), r#"{"path": "src/main.rs", "lines": [1, 2]}"#);
/// ```
#[derive(Debug, Clone)]
pub struct PartialJson {
    text: String,
    scan: Scan,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialJson {
    /// No text yet.
    pub fn new() -> Self {
        Self {
            text: String::new(),
            scan: Scan::new(RECENT_CUTS),
        }
    }

    /// Appends a delta of the JSON text.
    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    /// The JSON text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The object so far (best effort: an unfinished string cut where it
    /// stops, an unfinished key or value dropped, open objects and arrays
    /// closed; empty when the text is no object).
    pub fn value(&mut self) -> Map<String, Value> {
        self.scan.advance(&self.text);
        let value = self.scan.value(&self.text);
        if value.is_empty() && !self.scan.cuts.is_empty() {
            // None of the recent cuts closes: an older one may.
            return partial_map(&self.text);
        }
        value
    }
}

/// How many places to cut the text a [`PartialJson`] remembers.
const RECENT_CUTS: usize = 16;

/// Where a JSON text may be cut and closed: its end, the closers open there.
#[derive(Debug, Clone)]
struct Cut {
    end: usize,
    closers: Vec<u8>,
}

/// The state of a scan of a JSON text: the open objects and arrays, whether a
/// string is open, and the last places where the text may be cut.
#[derive(Debug, Clone)]
struct Scan {
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// How many bytes were read.
    read: usize,
    cuts: std::collections::VecDeque<Cut>,
    keep: usize,
}

impl Scan {
    fn new(keep: usize) -> Self {
        Self {
            stack: Vec::new(),
            in_string: false,
            escaped: false,
            read: 0,
            cuts: std::collections::VecDeque::new(),
            keep,
        }
    }

    fn cut(&mut self, end: usize) {
        if self.cuts.len() == self.keep {
            self.cuts.pop_front();
        }
        self.cuts.push_back(Cut {
            end,
            closers: self.stack.clone(),
        });
    }

    /// Reads the bytes of `text` after those already read.
    fn advance(&mut self, text: &str) {
        let start = self.read;
        for (i, b) in text.bytes().enumerate().skip(start) {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => {
                        self.in_string = false;
                        self.cut(i + 1);
                    }
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' => self.stack.push(b'}'),
                b'[' => self.stack.push(b']'),
                b'}' | b']' => {
                    self.stack.pop();
                }
                b',' => self.cut(i),
                _ => {}
            }
            if matches!(b, b'}' | b']' | b'0'..=b'9' | b'e' | b'l') {
                self.cut(i + 1);
            }
        }
        self.read = text.len();
    }

    /// The object `text` holds, closed at the last cut that parses.
    fn value(&self, text: &str) -> Map<String, Value> {
        self.closed(text, |t| match serde_json::from_str(t) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
    }

    /// What `parse` reads from `text` as it is, or else closed at the last cut
    /// where it reads something.
    fn closed<T>(&self, text: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        if let Some(value) = parse(text) {
            return Some(value);
        }
        let open_string = (self.in_string && !self.escaped).then(|| Cut {
            end: text.len(),
            closers: self.stack.clone(),
        });
        let open_string = open_string.as_ref().map(|cut| (cut, true));
        let cuts = self.cuts.iter().rev().map(|cut| (cut, false));
        for (cut, string) in open_string.into_iter().chain(cuts) {
            let Some(head) = text.get(..cut.end) else {
                continue;
            };
            let mut candidate = String::with_capacity(cut.end + cut.closers.len() + 1);
            candidate.push_str(head);
            if string {
                candidate.push('"');
            }
            candidate.extend(cut.closers.iter().rev().map(|&c| char::from(c)));
            if let Some(value) = parse(&candidate) {
                return Some(value);
            }
        }
        None
    }
}
