//! A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
//!
//! A rollout is linear: each `response_item` follows the one before it.
//!
//! - `message` items become user, assistant or system messages (`developer` and
//!   `system` roles as system messages); the model's items of one response
//!   (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
//!   `local_shell_call`) merge into one assistant message; a
//!   `web_search_call` (a search the provider ran, with no result item) is a
//!   `providerBlock` of that message, as the Responses decoder keeps it; so
//!   are a `tool_search_call` and its `tool_search_output` (the output in the
//!   same message, after its call, as the Responses API takes them back; a
//!   search the client ran ends the response);
//! - an assistant `message` item's `phase` (`commentary`, `final_answer`),
//!   which Codex sends back, and its id when written, go in its first text
//!   block's signature as the Responses codec keeps them (`{"v":1,…}`); a
//!   `refusal` part is text;
//! - `function_call` and `custom_tool_call` become `toolCall` blocks (a custom
//!   tool's free-form input as `{"input": …}`), their `*_output` items
//!   `toolResult` messages named after the call (an output's content items
//!   as text and images);
//! - a `reasoning` item becomes the block the OpenAI Responses codec makes of
//!   it: the item (`encrypted_content` byte for byte) as compact JSON in a
//!   thinking block's signature, the summary as its text, or a
//!   `redactedThinking` block when it has no summary;
//! - a `compacted` item becomes a `compactionSummary` line that keeps nothing
//!   before it (Codex replaces the history with the summary); one with a
//!   `replacement_history` (Codex's remote compaction, whose `message` is
//!   empty) is the history Codex goes on from, so the line, kept whole as an
//!   `extension` line of kind `codex.compacted`, starts a new root and those
//!   items follow it as the messages they are (a `compaction` item, the
//!   encrypted history only the Responses API reads, as a provider block of
//!   an assistant message, replayed there in place);
//! - a `thread_rolled_back` event (Codex's backtrack, which drops the last
//!   `num_turns` user turns) is an `extension` line that branches off before
//!   the first turn dropped, so what follows continues from there (the
//!   dropped turns stay in the file, off the new path); user messages that
//!   are Codex's context (AGENTS.md, `<environment_context>`…) are no turns;
//! - a `turn_aborted` event (the user interrupted a turn) cuts the calls
//!   still without output: one whose output comes next (the tool ended
//!   after all) has it as its result; the others get the output `aborted`
//!   (a `toolResult` with that text, marked as an error) before what comes
//!   next, said, as Codex fills it in when it next sends the history; an
//!   output written after that is an `extension` line, said;
//! - every other line (`session_meta`, `turn_context`, `event_msg`…) becomes an
//!   `extension` line of kind `codex.<type>` holding it;
//! - the model an assistant message names is the last `turn_context`'s
//!   `model`, its provider `session_meta`'s `model_provider` (`openai` when
//!   absent); a `token_count` event's `last_token_usage` is the usage of the
//!   model's response it follows (the assistant message made of that
//!   response's items). Codex records no cost; `stats` estimates it from the
//!   catalog.
//!
//! The older rollout layout (items without the `{"type":"response_item",
//! "payload":…}` wrapper) reads the same.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::providers::openai_responses;

use super::{iso_millis, provider_block, ImportError, ImportWarning, Imported, WarningCode};

const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
];

fn text_of(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// Converts the parsed lines of a Codex rollout.
pub(crate) fn import(entries: &[(usize, Map<String, Value>)]) -> Result<Imported, ImportError> {
    let mut imported = Imported::default();
    let mut rollout = Rollout::default();
    for (line_no, entry) in entries {
        rollout.entry(line_no, entry, &mut imported)?;
    }
    rollout.end(&mut imported)?;
    imported.said_if_empty("Codex");
    Ok(imported)
}

/// Converts a Codex rollout read one line at a time (`entries`), writing
/// the transcript to `out` as it goes: only the lines after the last
/// assistant message still waiting for its usage are held back. The counts
/// and diagnostics are returned.
pub(crate) fn import_streamed(
    entries: impl Iterator<Item = Result<(usize, Map<String, Value>), ImportError>>,
    out: &mut dyn std::io::Write,
) -> Result<Imported, ImportError> {
    let mut imported = Imported::default();
    let mut rollout = Rollout::default();
    for entry in entries {
        let (line_no, entry) = entry?;
        rollout.entry(&line_no, &entry, &mut imported)?;
        let held = rollout
            .origin
            .awaiting_usage
            .as_ref()
            .map_or(imported.text.len(), |awaiting| awaiting.range.start);
        out.write_all(&imported.text[..held])?;
        imported.text.drain(..held);
        if let Some(awaiting) = &mut rollout.origin.awaiting_usage {
            awaiting.range = awaiting.range.start - held..awaiting.range.end - held;
        }
    }
    rollout.end(&mut imported)?;
    out.write_all(&imported.text)?;
    imported.text.clear();
    imported.said_if_empty("Codex");
    Ok(imported)
}

/// The state of a rollout's conversion.
#[derive(Default)]
struct Rollout {
    /// Each call's tool name, by call id.
    names: HashMap<String, String>,
    /// The assistant message being built from one response's items.
    open: Option<Map<String, Value>>,
    last_ts: u64,
    origin: Origin,
    /// The id of the last line written that has one.
    last_id: Option<String>,
    /// For each user turn of the history (as Codex counts them for a
    /// rollback), the id of the line before it (`None`: it starts the file).
    turns: Vec<Option<String>>,
    /// The line of the rollout being converted.
    line: usize,
    /// The calls with no output yet, in the order made.
    unanswered: Vec<String>,
    /// The calls a `turn_aborted` cut, with its line, waiting for what comes
    /// next: their output (the tool ended after all), or anything else.
    cut: Vec<CutCall>,
    /// The calls given the output `aborted`.
    aborted: std::collections::HashSet<String>,
}

/// The keys of a call item that its `toolCall` block holds (`id` as its
/// signature, as the Responses decoder keeps it).
const CALL_KEYS: &[&str] = &[
    "type",
    "id",
    "call_id",
    "name",
    "arguments",
    "input",
    "action",
    "status",
];

/// A rollout line that is no response item: the parts every kind is read by.
struct RolloutLine<'a> {
    /// The line whole (an `extension` line keeps it).
    map: &'a Map<String, Value>,
    /// Its number in the rollout.
    number: usize,
    /// Its `type` (empty when it has none).
    kind: &'a str,
    /// Its `payload`.
    payload: Option<&'a Value>,
    /// Its payload's `type` (an event's kind).
    event: Option<&'a str>,
    /// Its time, as Unix milliseconds (the line before's when it has none).
    ts: u64,
}

impl RolloutLine<'_> {
    /// The id of the lines it writes: `codex:<line>`.
    fn id(&self) -> String {
        format!("codex:{}", self.number)
    }
}

impl Rollout {
    /// Converts one entry: a response item, or a line of another kind.
    fn entry(
        &mut self,
        line_no: &usize,
        entry: &Map<String, Value>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        self.line = *line_no;
        let ts = text_of(entry.get("timestamp"))
            .and_then(iso_millis)
            .unwrap_or(self.last_ts);
        self.last_ts = ts;
        let kind = text_of(entry.get("type")).unwrap_or("");
        let item = match (kind, entry.get("payload").and_then(Value::as_object)) {
            ("response_item", Some(payload)) => Some(payload),
            (k, _) if ITEM_TYPES.contains(&k) => Some(entry),
            _ => None,
        };
        if let Some(item) = item {
            return self.item(&format!("codex:{line_no}"), ts, item, entry, imported);
        }
        let payload = entry.get("payload");
        let line = RolloutLine {
            map: entry,
            number: *line_no,
            kind,
            payload,
            event: payload.and_then(|p| text_of(p.get("type"))),
            ts,
        };
        self.context(&line, imported)?;
        let rollback = self.rollback(&line);
        // Codex writes events between the items of one response: they do not
        // end its assistant message (their lines come before it).
        if kind != "event_msg" || rollback.is_some() {
            close(&mut self.open, imported, &mut self.origin)?;
        }
        if (kind, line.event) == ("event_msg", Some("turn_aborted")) {
            self.turn_aborted(&line, imported)?;
        }
        if kind == "compacted" {
            return self.compacted(&line, imported);
        }
        if rollback.is_some() {
            self.fill_cut(ts, imported)?;
        }
        self.other(&line, rollback, imported)
    }

    /// What a line tells of the context the next messages are written in:
    /// the provider (`session_meta`), the model (`turn_context`), the usage
    /// of the last response (a `token_count` event).
    fn context(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let payload = line.payload;
        match (line.kind, line.event) {
            ("session_meta", _) => {
                if let Some(provider) = payload.and_then(|p| text_of(p.get("model_provider"))) {
                    self.origin.provider = provider.to_owned();
                }
            }
            ("turn_context", _) => {
                if let Some(model) = payload.and_then(|p| text_of(p.get("model"))) {
                    self.origin.model = model.to_owned();
                }
            }
            ("event_msg", Some("token_count")) => {
                let usage = payload
                    .and_then(|p| p.get("info"))
                    .and_then(|i| i.get("last_token_usage"))
                    .and_then(usage_of);
                if let Some(usage) = usage {
                    self.origin.attach(usage, &mut self.open, imported)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A rollback (Codex's backtrack, a `thread_rolled_back` event) drops the
    /// last `num_turns` user turns: what follows branches off before the
    /// first one dropped. The parent the event's line takes.
    fn rollback(&mut self, line: &RolloutLine<'_>) -> Option<Value> {
        if (line.kind, line.event) != ("event_msg", Some("thread_rolled_back")) {
            return None;
        }
        let n = line
            .payload?
            .get("num_turns")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0 && !self.turns.is_empty())?;
        let keep = self
            .turns
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
        let parent = self.turns[keep].clone();
        self.turns.truncate(keep);
        Some(parent.map_or(Value::Null, Value::from))
    }

    /// An interrupted turn (a `turn_aborted` event) leaves its running calls
    /// without output: they are cut (see [`Rollout::fill_cut`]).
    fn turn_aborted(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        if self.unanswered.is_empty() {
            return Ok(());
        }
        close(&mut self.open, imported, &mut self.origin)?;
        let cut = std::mem::take(&mut self.unanswered);
        self.cut.extend(cut.into_iter().map(|call| CutCall {
            call,
            line: line.number,
        }));
        Ok(())
    }

    /// A `compacted` line: Codex replaces the history. With a
    /// `replacement_history` (remote compaction) the line, kept whole, starts
    /// a new root and those items follow it; otherwise a `compactionSummary`
    /// line that keeps nothing before it.
    fn compacted(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        self.fill_cut(line.ts, imported)?;
        // Its turns are gone (those of a replacement history are counted as
        // its items are read), and so are its calls.
        self.turns.clear();
        self.unanswered.clear();
        let id = line.id();
        let replacement = line
            .payload
            .and_then(|p| p.get("replacement_history"))
            .and_then(Value::as_array);
        let Some(history) = replacement else {
            let summary = line
                .payload
                .and_then(|p| p.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let summary_line = json!({"role":"compactionSummary","summary":summary,"tokensBefore":0,"timestamp":line.ts,"id":id});
            push(imported, &summary_line)?;
            imported.summaries += 1;
            self.last_id = Some(id);
            return Ok(());
        };
        let root = json!({"role":"extension","kind":"codex.compacted","data":line.map,"id":id,"parentId":null});
        push(imported, &root)?;
        imported.extensions += 1;
        self.last_id = Some(id);
        for (i, item) in history.iter().enumerate() {
            let id = format!("codex:{}/{i}", line.number);
            match item.as_object() {
                Some(item) => self.item(&id, line.ts, item, item, imported)?,
                None => {
                    let kept = json!({"role":"extension","kind":"codex.entry","data":item,"id":id});
                    push(imported, &kept)?;
                    imported.extensions += 1;
                }
            }
        }
        close(&mut self.open, imported, &mut self.origin)?;
        // A `token_count` after it counts a new response, not these.
        self.origin.awaiting_usage = None;
        Ok(())
    }

    /// Any other line: an `extension` line of kind `codex.<type>` holding it
    /// (a rollback's with its id and the parent it branches from).
    fn other(
        &mut self,
        line: &RolloutLine<'_>,
        rollback: Option<Value>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let name = if line.kind.is_empty() {
            "codex.entry".to_owned()
        } else {
            format!("codex.{}", line.kind)
        };
        let mut kept = json!({"role":"extension","kind":name,"data":line.map});
        if let Some(parent) = rollback {
            let id = line.id();
            kept["id"] = Value::from(id.clone());
            kept["parentId"] = parent;
            self.last_id = Some(id);
        }
        push(imported, &kept)?;
        imported.extensions += 1;
        Ok(())
    }

    /// Gives each call an aborted turn cut the output `aborted`, as Codex
    /// does when it next sends the history (the output it fills in for a
    /// call that has none, right after the call), and says so.
    fn fill_cut(&mut self, ts: u64, imported: &mut Imported) -> Result<(), ImportError> {
        if self.cut.is_empty() {
            return Ok(());
        }
        close(&mut self.open, imported, &mut self.origin)?;
        for (i, CutCall { call, line }) in std::mem::take(&mut self.cut).into_iter().enumerate() {
            let id = format!("codex:{line}/{i}");
            let result = json!({
                "role": "toolResult",
                "toolCallId": call,
                "toolName": self.names.get(&call).cloned().unwrap_or_default(),
                "content": [{"type":"text","text":"aborted"}],
                "isError": true,
                "timestamp": ts,
                "id": id,
            });
            push(imported, &result)?;
            imported.messages += 1;
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::CallAborted,
                format!("the call `{call}` has no output when its turn is aborted; given the output `aborted`, as Codex sends it"),
            ));
            self.last_id = Some(id);
            self.aborted.insert(call);
        }
        Ok(())
    }

    /// Converts one response item (a `response_item` line's payload, or an
    /// item of a compaction's `replacement_history`), whose lines get ids
    /// from `id`; `entry` is what an `extension` line keeps of it.
    fn item(
        &mut self,
        id: &str,
        ts: u64,
        item: &Map<String, Value>,
        entry: &Map<String, Value>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let item_type = text_of(item.get("type")).unwrap_or("");
        let role = text_of(item.get("role")).unwrap_or("");
        // What follows an aborted turn: a cut call's output is its result
        // (the tool ended after all); anything else first gives the calls
        // still cut the output `aborted`.
        let output_of_cut = matches!(
            item_type,
            "function_call_output" | "custom_tool_call_output"
        ) && text_of(item.get("call_id"))
            .is_some_and(|c| self.cut.iter().any(|cut| cut.call == c));
        if output_of_cut {
            let call = text_of(item.get("call_id")).unwrap_or("");
            self.cut.retain(|cut| cut.call != call);
        } else {
            self.fill_cut(ts, imported)?;
        }
        match item_type {
            "message" if role == "assistant" => {
                let blocks = item
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let open = self
                    .open
                    .get_or_insert_with(|| self.origin.assistant(ts, id));
                // The item's phase (and id, when written) go in its first
                // text block's signature, as the Responses codec keeps them.
                let mut signature = message_signature(item);
                for block in blocks {
                    let text = text_of(block.get("text"))
                        .or_else(|| text_of(block.get("refusal")))
                        .map_or_else(|| block.to_string(), str::to_owned);
                    let mut text = json!({"type":"text","text":text});
                    if let Some(signature) = signature.take() {
                        text["signature"] = Value::from(signature);
                    }
                    if let Some(Value::Array(content)) = open.get_mut("content") {
                        content.push(text);
                    }
                }
            }
            "reasoning" => {
                let open = self
                    .open
                    .get_or_insert_with(|| self.origin.assistant(ts, id));
                let block = reasoning_block(item);
                if let Some(Value::Array(content)) = open.get_mut("content") {
                    content.push(block);
                }
            }
            // A search the provider ran itself (no call the client answers,
            // no result item), or a compaction's encrypted history (from a
            // remote compaction's `replacement_history`, which only the
            // Responses API reads): kept whole in a response, as the
            // Responses decoder keeps it, a provider block that a replay to
            // that API sends back in place.
            "web_search_call" | "tool_search_call" | "compaction" | "compaction_summary" => {
                let open = self
                    .open
                    .get_or_insert_with(|| self.origin.assistant(ts, id));
                let block = provider_block(openai_responses::API, item);
                if let Some(Value::Array(content)) = open.get_mut("content") {
                    content.push(block);
                }
            }
            // The tools a tool search found: the answer to its call, which
            // the Responses API takes back only with that call, so a
            // provider block of the same message, after it. A search the
            // client ran ends the response (what follows is the next one).
            "tool_search_output" if self.open.is_some() => {
                if let Some(Value::Array(content)) =
                    self.open.as_mut().and_then(|open| open.get_mut("content"))
                {
                    content.push(provider_block(openai_responses::API, item));
                }
                if text_of(item.get("execution")) != Some("server") {
                    close(&mut self.open, imported, &mut self.origin)?;
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let open = self
                    .open
                    .get_or_insert_with(|| self.origin.assistant(ts, id));
                let id = text_of(item.get("call_id"))
                    .or_else(|| text_of(item.get("id")))
                    .unwrap_or("")
                    .to_owned();
                let name = match item_type {
                    "local_shell_call" => "local_shell".to_owned(),
                    _ => text_of(item.get("name")).unwrap_or("").to_owned(),
                };
                let arguments = match item_type {
                    "function_call" => {
                        match text_of(item.get("arguments")).map(serde_json::from_str::<Value>) {
                            Some(Ok(Value::Object(map))) => Value::Object(map),
                            Some(Ok(other)) => json!({"input": other}),
                            Some(Err(_)) => {
                                json!({"input": item.get("arguments").cloned().unwrap_or(Value::Null)})
                            }
                            None => json!({}),
                        }
                    }
                    "custom_tool_call" => {
                        json!({"input": item.get("input").cloned().unwrap_or(Value::from(""))})
                    }
                    _ => json!({"action": item.get("action").cloned().unwrap_or(Value::Null)}),
                };
                self.names.insert(id.clone(), name.clone());
                self.unanswered.push(id.clone());
                let mut call = json!({"type":"toolCall","id":id,"name":name,"arguments":arguments});
                // The item's own id (`fc_…`, when the rollout has it) goes
                // back with the call, as the Responses decoder keeps it.
                if let Some(item_id) = text_of(item.get("id")).filter(|i| !i.is_empty() && *i != id)
                {
                    call["signature"] = Value::from(item_id);
                }
                if let Some(Value::Array(content)) = open.get_mut("content") {
                    content.push(call);
                }
                open.insert("stopReason".into(), Value::from("toolUse"));
                let unkept: Vec<&str> = item
                    .keys()
                    .map(String::as_str)
                    .filter(|k| !CALL_KEYS.contains(k))
                    .collect();
                if !unkept.is_empty() {
                    imported.warnings.push(ImportWarning::warning(
                        self.line,
                        WarningCode::FieldNotKept,
                        format!(
                            "`{}` of the {item_type} `{id}` not kept: a tool call has no place for it",
                            unkept.join("`, `")
                        ),
                    ));
                }
            }
            "function_call_output" | "custom_tool_call_output"
                if text_of(item.get("call_id")).is_some_and(|c| self.aborted.contains(c)) =>
            {
                // The output of a call its aborted turn already answered
                // (`aborted`): a second result would answer it twice.
                close(&mut self.open, imported, &mut self.origin)?;
                imported.warnings.push(ImportWarning::warning(
                    self.line,
                    WarningCode::LateOutput,
                    format!(
                        "the output of `{}` comes after its turn was aborted (answered `aborted`); kept as an extension line",
                        text_of(item.get("call_id")).unwrap_or("")
                    ),
                ));
                let line =
                    json!({"role":"extension","kind":format!("codex.{item_type}"),"data":entry});
                push(imported, &line)?;
                imported.extensions += 1;
            }
            "function_call_output" | "custom_tool_call_output" => {
                close(&mut self.open, imported, &mut self.origin)?;
                let call = text_of(item.get("call_id")).unwrap_or("").to_owned();
                self.unanswered.retain(|c| *c != call);
                let (content, is_error) = output_of(item.get("output"));
                let line = json!({
                    "role": "toolResult",
                    "toolCallId": call,
                    "toolName": self.names.get(&call).cloned().unwrap_or_default(),
                    "content": content,
                    "isError": is_error,
                    "timestamp": ts,
                    "id": id,
                });
                push(imported, &line)?;
                imported.messages += 1;
                self.last_id = Some(id.to_owned());
            }
            "message" => {
                close(&mut self.open, imported, &mut self.origin)?;
                let role = match role {
                    "developer" | "system" => "system",
                    _ => "user",
                };
                let blocks: Vec<Value> = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|blocks| blocks.iter().map(|b| input_block(b, role)).collect())
                    .unwrap_or_default();
                let mut line = json!({"role": role, "content": blocks, "id": id});
                if role == "user" {
                    line["timestamp"] = Value::from(ts);
                    if is_user_turn(item) {
                        self.turns.push(self.last_id.clone());
                    }
                }
                push(imported, &line)?;
                imported.messages += 1;
                self.last_id = Some(id.to_owned());
            }
            _ => {
                close(&mut self.open, imported, &mut self.origin)?;
                let line =
                    json!({"role":"extension","kind":format!("codex.{item_type}"),"data":entry});
                push(imported, &line)?;
                imported.extensions += 1;
            }
        }
        // The response being built is the last line with an id (it is
        // written before any line that has one).
        if let Some(open) = &self.open {
            self.last_id = open.get("id").and_then(Value::as_str).map(str::to_owned);
        }
        Ok(())
    }

    /// Ends the conversion: the message still open is written.
    fn end(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        self.fill_cut(self.last_ts, imported)?;
        close(&mut self.open, imported, &mut self.origin)
    }
}

/// The model and provider the rollout last named, and the assistant message
/// still waiting for the usage of its response.
/// A call an aborted turn cut, with the line of the `turn_aborted`.
struct CutCall {
    call: String,
    line: usize,
}

/// An assistant message written before its usage is known: its line, and
/// where it is in the text written so far.
struct AwaitingUsage {
    line: Map<String, Value>,
    range: std::ops::Range<usize>,
}

struct Origin {
    model: String,
    provider: String,
    /// The last assistant message written and where its line is in the text,
    /// while no `token_count` has given its usage.
    awaiting_usage: Option<AwaitingUsage>,
    /// Whether the open assistant message already has its usage.
    open_has_usage: bool,
}

impl Default for Origin {
    fn default() -> Self {
        Self {
            model: String::new(),
            provider: "openai".to_owned(),
            awaiting_usage: None,
            open_has_usage: false,
        }
    }
}

impl Origin {
    fn assistant(&mut self, ts: u64, id: &str) -> Map<String, Value> {
        self.open_has_usage = false;
        let value = json!({
            "role": "assistant",
            "content": [],
            "api": "openai-responses",
            "provider": self.provider,
            "model": self.model,
            "usage": {"input":0,"output":0,"cacheRead":0,"cacheWrite":0},
            "stopReason": "stop",
            "timestamp": ts,
            "id": id,
        });
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// Gives `usage` to the assistant message of the response it counts: the
    /// open one, else the last one written (its line is rewritten), unless
    /// that one has its usage already.
    fn attach(
        &mut self,
        usage: Value,
        open: &mut Option<Map<String, Value>>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        if let Some(open) = open.as_mut() {
            if !self.open_has_usage {
                open.insert("usage".into(), usage);
                self.open_has_usage = true;
            }
        } else if let Some(AwaitingUsage { mut line, range }) = self.awaiting_usage.take() {
            line.insert("usage".into(), usage);
            let mut text = super::line_text(&Value::Object(line))?.into_bytes();
            text.push(b'\n');
            imported.text.splice(range, text);
        }
        Ok(())
    }
}

/// Codex's token counts of one response as agentmsg usage: `input` without
/// the cached part, reasoning counted within `output` as OpenAI counts it.
fn usage_of(counts: &Value) -> Option<Value> {
    let n = |key: &str| counts.get(key).and_then(Value::as_u64);
    let input = n("input_tokens")?;
    let cached = n("cached_input_tokens").unwrap_or(0);
    let output = n("output_tokens").unwrap_or(0);
    let mut usage = json!({
        "input": input.saturating_sub(cached),
        "output": output,
        "cacheRead": cached,
        "cacheWrite": 0,
    });
    if let Some(reasoning) = n("reasoning_output_tokens").filter(|&r| r > 0) {
        usage["reasoning"] = Value::from(reasoning);
    }
    if let Some(total) = n("total_tokens") {
        usage["totalTokens"] = Value::from(total);
    }
    Some(usage)
}

fn close(
    open: &mut Option<Map<String, Value>>,
    imported: &mut Imported,
    origin: &mut Origin,
) -> Result<(), ImportError> {
    if let Some(line) = open.take() {
        let start = imported.text.len();
        if origin.open_has_usage {
            push(imported, &Value::Object(line))?;
            origin.awaiting_usage = None;
        } else {
            push(imported, &Value::Object(line.clone()))?;
            origin.awaiting_usage = Some(AwaitingUsage {
                line,
                range: start..imported.text.len(),
            });
        }
        imported.messages += 1;
    }
    Ok(())
}

fn push(imported: &mut Imported, line: &Value) -> Result<(), ImportError> {
    imported
        .text
        .extend_from_slice(super::line_text(line)?.as_bytes());
    imported.text.push(b'\n');
    imported.lines += 1;
    Ok(())
}

/// Whether a user `message` item starts a turn as Codex counts turns for a
/// rollback: not the context Codex writes as user messages (AGENTS.md
/// instructions, `<environment_context>` and other tagged blocks).
fn is_user_turn(item: &Map<String, Value>) -> bool {
    let text = item
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| blocks.iter().find_map(|b| text_of(b.get("text"))))
        .unwrap_or("")
        .trim_start();
    let tagged = text.strip_prefix('<').is_some_and(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with('>')
    });
    !tagged && !text.starts_with("# AGENTS.md instructions")
}

/// What a text block's signature keeps of an assistant `message` item for the
/// Responses codec (pi's `{"v":1,"id":…,"phase":…}`): its `phase`
/// (`commentary` or `final_answer`, which Codex sends back) and its id when
/// the rollout has one; `None` when it has neither.
fn message_signature(item: &Map<String, Value>) -> Option<String> {
    let id = text_of(item.get("id")).filter(|id| !id.is_empty());
    let phase = text_of(item.get("phase")).filter(|phase| !phase.is_empty());
    if id.is_none() && phase.is_none() {
        return None;
    }
    // Written by hand to keep pi's key order.
    let mut signature = String::from("{\"v\":1");
    for (key, value) in [("id", id), ("phase", phase)] {
        if let Some(value) = value {
            signature.push_str(&format!(",\"{key}\":{}", Value::from(value)));
        }
    }
    signature.push('}');
    Some(signature)
}

/// The block the Responses codec makes of a `reasoning` item.
fn reasoning_block(item: &Map<String, Value>) -> Value {
    let block = openai_responses::reasoning_block(&Value::Object(item.clone()));
    serde_json::to_value(block).unwrap_or(Value::Null)
}

fn input_block(block: &Value, role: &str) -> Value {
    match text_of(block.get("type")) {
        Some("input_image") if role == "user" => {
            let url = text_of(block.get("image_url")).unwrap_or("");
            match url
                .strip_prefix("data:")
                .and_then(|rest| rest.split_once(";base64,"))
            {
                Some((mime, data)) => json!({"type":"image","data":data,"mimeType":mime}),
                None => json!({"type":"text","text":url}),
            }
        }
        _ => {
            json!({"type":"text","text": text_of(block.get("text")).map_or_else(|| block.to_string(), str::to_owned)})
        }
    }
}

/// The content of a tool's output and whether it failed: Codex writes a
/// string, sometimes a JSON object with `output` and `metadata.exit_code`.
fn output_of(output: Option<&Value>) -> (Value, bool) {
    match output {
        Some(Value::String(text)) => (json!([{"type":"text","text":text}]), false),
        Some(Value::Object(map)) if map.get("content_items").is_some_and(Value::is_array) => {
            let failed = map.get("success").and_then(Value::as_bool) == Some(false);
            (output_of(map.get("content_items")).0, failed)
        }
        Some(Value::Object(map)) => {
            let text = map
                .get("content")
                .or_else(|| map.get("output"))
                .and_then(Value::as_str)
                .map_or_else(|| Value::Object(map.clone()).to_string(), str::to_owned);
            let failed = map.get("success").and_then(Value::as_bool) == Some(false);
            (json!([{"type":"text","text":text}]), failed)
        }
        Some(Value::Array(blocks)) => (
            Value::Array(blocks.iter().map(output_block).collect()),
            false,
        ),
        _ => (json!([]), false),
    }
}

/// A content item of a tool's output (`input_text`, `input_image` with a
/// `data:` URL): text or an image; anything else its JSON as text.
fn output_block(block: &Value) -> Value {
    let data_url = text_of(block.get("image_url"))
        .and_then(|url| url.strip_prefix("data:"))
        .and_then(|rest| rest.split_once(";base64,"));
    match (
        text_of(block.get("type")),
        text_of(block.get("text")),
        data_url,
    ) {
        (Some("input_image"), _, Some((mime, data))) => {
            json!({"type":"image","data":data,"mimeType":mime})
        }
        (Some("input_text" | "output_text") | None, Some(text), _) => {
            json!({"type":"text","text":text})
        }
        _ => json!({"type":"text","text":block.to_string()}),
    }
}
