//! The logs a report reads: where each agent keeps them, which session each
//! belongs to, and the replies each holds.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;

use crate::providers::anthropic;
use crate::session::SessionFormat;
use crate::{AgentMessage, AssistantMessage, Message, Session, Usage};

/// The agent that wrote a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Agent {
    /// Claude Code (`~/.claude/projects`).
    ClaudeCode,
    /// The Codex CLI (`~/.codex/sessions`).
    Codex,
    /// pi (`~/.pi/agent/sessions`).
    Pi,
    /// An agentmsg transcript (a store's session file, say).
    Agentmsg,
}

impl Agent {
    /// Its short name (`claude`, `codex`, `pi`, `agentmsg`), as ccusage
    /// names the first three.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::Pi => "pi",
            Self::Agentmsg => "agentmsg",
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A log to read, with the session it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// The file.
    pub path: PathBuf,
    /// The session it belongs to, as ccusage names it: the file's name
    /// without `.jsonl`, or for a subagent's log (`<session>/subagents/…`)
    /// its session's.
    pub session: String,
    /// The project (the folder under `projects/` for Claude Code; the
    /// folder holding the file otherwise).
    pub project: String,
}

impl LogFile {
    /// The log at `path`, its session and project told from the path.
    pub fn at(path: PathBuf) -> Self {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parts: Vec<String> = path
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        // `<project>/<session>/subagents/<agent>.jsonl`: the session's.
        let (session, project) = match parts.iter().rposition(|p| p == "subagents") {
            Some(i) if i >= 2 => (parts[i - 1].clone(), parts[i - 2].clone()),
            _ => {
                let project = parts
                    .len()
                    .checked_sub(2)
                    .map(|i| parts[i].clone())
                    .unwrap_or_default();
                (stem, project)
            }
        };
        Self {
            path,
            session,
            project,
        }
    }
}

/// Where the agents keep their logs: `CLAUDE_CONFIG_DIR` (each of its
/// comma-separated folders' `projects`) or `~/.claude/projects` (and
/// `~/.config/claude/projects`), `CODEX_HOME`'s `sessions` or
/// `~/.codex/sessions`, and `~/.pi/agent/sessions`; those that exist.
pub fn default_roots() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = Vec::new();
    match std::env::var("CLAUDE_CONFIG_DIR") {
        Ok(dirs) if !dirs.trim().is_empty() => roots.extend(
            dirs.split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| Path::new(d).join("projects")),
        ),
        _ => {
            if let Some(home) = &home {
                roots.push(home.join(".config/claude/projects"));
                roots.push(home.join(".claude/projects"));
            }
        }
    }
    match std::env::var_os("CODEX_HOME") {
        Some(dir) if !dir.is_empty() => roots.push(PathBuf::from(dir).join("sessions")),
        _ => roots.extend(home.as_ref().map(|h| h.join(".codex/sessions"))),
    }
    roots.extend(home.as_ref().map(|h| h.join(".pi/agent/sessions")));
    roots.retain(|r| r.is_dir());
    roots
}

/// The `.jsonl` files under `root` (itself when it is a file), in path
/// order; links are not followed out of it.
pub fn find_logs(root: &Path) -> std::io::Result<Vec<LogFile>> {
    if std::fs::metadata(root)?.is_file() {
        return Ok(vec![LogFile::at(root.to_owned())]);
    }
    let mut files = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files.into_iter().map(LogFile::at).collect())
}

/// One reply as a report counts it.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// When it was written, Unix milliseconds (0: unknown).
    pub timestamp: i64,
    /// Its model (empty when unknown).
    pub model: String,
    /// Its provider (empty when unknown).
    pub provider: String,
    /// Its usage (with its cost, when the log or the price database knows
    /// it).
    pub usage: Usage,
    /// The tool calls it made.
    pub tool_calls: u64,
}

/// What one log holds for a report: its replies, the tool results that were
/// errors (each with its time), and what could not be read.
#[derive(Debug, Default)]
pub struct LogContents {
    /// Who wrote it.
    pub agent: Option<Agent>,
    /// Its replies, each once.
    pub replies: Vec<Reply>,
    /// The times of its tool results that were errors.
    pub tool_errors: Vec<i64>,
    /// Lines that could not be read as what they claim (counted, never
    /// guessed at).
    pub unread_lines: usize,
}

/// Reads the log `file`: a Claude Code log line by line (each response once,
/// by its `message.id` and `requestId`, with its last piece's usage, as
/// ccusage counts it), any other log agentmsg reads as a session (every
/// reply on every branch). Replies are priced from the log's own cost, else
/// the price database.
pub fn read_log(file: &Path) -> std::io::Result<LogContents> {
    let head = crate::import::file_head(file)?;
    let mut contents = match SessionFormat::detect(&head) {
        SessionFormat::ClaudeCode => read_claude(file)?,
        format => {
            let bytes = std::fs::read(file)?;
            let agent = match format {
                SessionFormat::Codex => Agent::Codex,
                SessionFormat::Pi { .. } => Agent::Pi,
                _ => Agent::Agentmsg,
            };
            let mut contents = session_contents(&bytes);
            contents.agent = Some(agent);
            contents
        }
    };
    for reply in &mut contents.replies {
        price(reply);
    }
    Ok(contents)
}

/// Reads an agentmsg transcript (a store's session, say) as a report
/// counts it: every reply on every branch, priced from its own cost, else
/// the price database.
pub fn read_transcript(bytes: &[u8]) -> LogContents {
    let mut contents = session_contents(bytes);
    contents.agent = Some(Agent::Agentmsg);
    for reply in &mut contents.replies {
        price(reply);
    }
    contents
}

/// What a session's file holds, unpriced.
fn session_contents(bytes: &[u8]) -> LogContents {
    let mut contents = LogContents::default();
    match Session::read(bytes) {
        Ok(session) => {
            for entry in session.entries() {
                if let Some(message) = entry.message() {
                    session_message(message, &mut contents);
                }
            }
        }
        // No session (a file of another kind): nothing to count, and said.
        Err(_) => contents.unread_lines += 1,
    }
    contents
}

/// A message of a session as a report counts it.
fn session_message(message: &AgentMessage, contents: &mut LogContents) {
    match message.as_llm() {
        Some(Message::Assistant(reply)) => contents.replies.push(Reply {
            timestamp: i64::try_from(reply.timestamp).unwrap_or(0),
            model: reply.model.clone(),
            provider: reply.provider.clone(),
            usage: reply.usage.clone(),
            tool_calls: reply.tool_calls().count() as u64,
        }),
        Some(Message::ToolResult(result)) if result.is_error => contents
            .tool_errors
            .push(i64::try_from(result.timestamp).unwrap_or(0)),
        _ => {}
    }
}

/// Sets the reply's cost from the price database when the log gave none.
fn price(reply: &mut Reply) {
    if reply.usage.cost.is_some_and(|c| c.total != 0.0) || reply.usage.total() == 0 {
        return;
    }
    let message = AssistantMessage {
        model: reply.model.clone(),
        provider: reply.provider.clone(),
        usage: reply.usage.clone(),
        timestamp: u64::try_from(reply.timestamp).unwrap_or(0),
        ..AssistantMessage::default()
    };
    reply.usage.cost = crate::providers::Catalog::builtin().cost_of(&message);
}

// ---------------------------------------------------------------------------
// Claude Code logs, read for their usage only (the importer reads them
// whole): each line's few fields, borrowed.
// ---------------------------------------------------------------------------

/// The fields of a Claude Code line a report reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<ClaudeMessage<'a>>,
}

#[derive(Deserialize)]
struct ClaudeMessage<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<anthropic::WireUsage>,
    #[serde(borrow, default)]
    content: Option<Blocks<'a>>,
}

/// A content block's type, and whether it is an error (a tool result's).
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// A message's content: its blocks, none for a string.
#[derive(Default)]
struct Blocks<'a>(Vec<Block<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Blocks<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Of<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Of<'a> {
            type Value = Blocks<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or content blocks")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Blocks::default())
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Block<'a>>()? {
                    blocks.push(block);
                }
                Ok(Blocks(blocks))
            }
            fn visit_map<M: de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Blocks::default())
            }
        }
        d.deserialize_any(Of(std::marker::PhantomData))
    }
}

/// Reads a Claude Code log one line at a time: each response once (by its
/// `message.id` and `requestId`; a line without both is a response of its
/// own), with the usage of its last piece and the calls of all its pieces.
fn read_claude(path: &Path) -> std::io::Result<LogContents> {
    let mut contents = LogContents {
        agent: Some(Agent::ClaudeCode),
        ..LogContents::default()
    };
    // Response key → its reply's index.
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut reader = BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
    let mut line = Vec::new();
    while crate::lines::read_line(&mut reader, &mut line)?.is_some() {
        // Only replies (with a usage) and tool results count.
        let has_usage = memchr::memmem::find(&line, b"\"usage\"").is_some();
        let has_result = memchr::memmem::find(&line, b"\"tool_result\"").is_some();
        if !has_usage && !has_result {
            continue;
        }
        let entry: ClaudeLine<'_> = match serde_json::from_slice(&line) {
            Ok(entry) => entry,
            Err(_) => {
                contents.unread_lines += 1;
                continue;
            }
        };
        let Some(message) = entry.message else {
            continue;
        };
        let timestamp = entry
            .timestamp
            .as_deref()
            .and_then(crate::time::parse_iso8601)
            .unwrap_or(0);
        let blocks = message.content.unwrap_or_default().0;
        match entry.kind.as_deref() {
            Some("assistant") => {
                let Some(usage) = message.usage else {
                    continue;
                };
                let tool_calls = blocks
                    .iter()
                    .filter(|b| b.kind.as_deref() == Some("tool_use"))
                    .count() as u64;
                let reply = Reply {
                    timestamp,
                    model: message.model.as_deref().unwrap_or("").to_owned(),
                    provider: "anthropic".to_owned(),
                    usage: anthropic::usage_from(&usage),
                    tool_calls,
                };
                let key = match (message.id, entry.request_id) {
                    (Some(id), Some(request)) => Some((id.into_owned(), request.into_owned())),
                    _ => None,
                };
                match key.as_ref().and_then(|k| index.get(k)) {
                    Some(&at) => {
                        let earlier = &mut contents.replies[at];
                        let calls = earlier.tool_calls + reply.tool_calls;
                        *earlier = Reply {
                            tool_calls: calls,
                            ..reply
                        };
                    }
                    None => {
                        if let Some(key) = key {
                            index.insert(key, contents.replies.len());
                        }
                        contents.replies.push(reply);
                    }
                }
            }
            Some("user") => {
                let errors = blocks
                    .iter()
                    .filter(|b| {
                        b.kind.as_deref() == Some("tool_result") && b.is_error == Some(true)
                    })
                    .count();
                contents
                    .tool_errors
                    .extend(std::iter::repeat_n(timestamp, errors));
            }
            _ => {}
        }
    }
    Ok(contents)
}
