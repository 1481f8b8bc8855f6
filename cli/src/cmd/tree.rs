//! `agentmsg tree`: a session's tree, its branch points, labels, leaf and
//! compactions.

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::session::{Entry, EntryKind};
use agentmsg_runtime::time::format_iso8601_seconds;
use agentmsg_runtime::Session;
use serde_json::{json, Value};

use crate::error::CliError;
use crate::output::escape_controls;
use crate::Outcome;

/// The arguments of `agentmsg tree`.
#[derive(Debug, clap::Args)]
pub struct TreeArgs {
    /// A session: a transcript, a pi session file, a Claude Code log or a
    /// Codex rollout (`-` reads standard input).
    pub file: PathBuf,
    /// Print JSON (one object with the nodes) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn summary_of(session: &Session, entry: &Entry) -> String {
    let text = match entry.kind() {
        EntryKind::Message(m) => match m.as_llm() {
            Some(agentmsg_runtime::Message::User(u)) => u.text(),
            Some(agentmsg_runtime::Message::Assistant(a)) => {
                let calls: Vec<&str> = a.tool_calls().map(|c| c.name.as_str()).collect();
                if calls.is_empty() {
                    a.text_content()
                } else {
                    format!("{} [calls {}]", a.text_content(), calls.join(", "))
                }
            }
            Some(agentmsg_runtime::Message::ToolResult(r)) => {
                format!("{}: {}", r.tool_name, r.text())
            }
            Some(agentmsg_runtime::Message::System(s)) => s.text(),
            // A custom message: a summary's text, else what the model sees
            // of it (nothing for a UI-only one).
            None => match m {
                agentmsg_runtime::AgentMessage::Custom(c) => {
                    if let Some(s) = c.downcast_ref::<agentmsg_runtime::custom::CompactionSummary>()
                    {
                        s.summary.clone()
                    } else if let Some(s) =
                        c.downcast_ref::<agentmsg_runtime::custom::BranchSummary>()
                    {
                        s.summary.clone()
                    } else {
                        let projected: Vec<String> = c
                            .project()
                            .iter()
                            .map(agentmsg_runtime::Message::text)
                            .collect();
                        projected.join(" ")
                    }
                }
                _ => String::new(),
            },
        },
        EntryKind::Compaction(c) => c.summary.clone(),
        EntryKind::BranchSummary(b) => b.summary.clone(),
        EntryKind::ModelChange { provider, model_id } => format!("{provider}/{model_id}"),
        EntryKind::ThinkingLevelChange { level } => level.clone(),
        EntryKind::Label { target, label } => {
            format!("{target} = {}", label.as_deref().unwrap_or("(cleared)"))
        }
        _ => String::new(),
    };
    let _ = session;
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        format!("{}…", one_line.chars().take(60).collect::<String>())
    } else {
        one_line
    }
}

/// The deepest indentation `tree` draws: past it a line says its depth
/// instead, so a session with many nested branch points prints in time and
/// space linear in its entries (each level would add two spaces to every line
/// below it).
const MAX_INDENT: usize = 32;

/// The indentation of a line at `depth`.
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT {
        "  ".repeat(depth)
    } else {
        format!("{}[depth {depth}] ", "  ".repeat(MAX_INDENT))
    }
}

/// Runs `agentmsg tree`.
pub fn run(args: &TreeArgs) -> Result<Outcome, CliError> {
    let opened = crate::input::open(&args.file)?;
    let session = &opened.session;
    let entries = session.entries();
    let children = session.child_indexes();
    let leaf = session.leaf().map(|l| l as *const Entry);
    // Every label, read once (looking each entry's up would read the whole
    // session per entry).
    let labels = session.labels();
    let label_of = |id: &str| labels.get(id).copied();
    let id_of = |i: usize| {
        entries[i].id().map_or_else(
            || format!("line {}", entries[i].line_no()),
            |id| id.to_string(),
        )
    };
    let mut out = crate::output::stdout();
    if args.json {
        let nodes: Vec<Value> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.in_tree())
            .map(|(i, e)| {
                let mut node = json!({
                    "id": e.id().map(|id| id.as_str()),
                    "line": e.line_no(),
                    "parentId": e.parent_index().map(id_of),
                    "kind": e.kind().name(),
                    "timestamp": Some(e.timestamp()).filter(|&t| t != 0),
                    "children": children[i].iter().map(|&c| id_of(c)).collect::<Vec<_>>(),
                });
                if let Some(id) = e.id() {
                    if let Some(label) = label_of(id.as_str()) {
                        node["label"] = Value::from(label);
                    }
                }
                if let Some(c) = e.as_compaction() {
                    node["compaction"] = json!({
                        "firstKeptId": c.first_kept_id.as_ref().map(|f| f.as_str()),
                        "tokensBefore": c.tokens_before,
                    });
                }
                if leaf == Some(e as *const Entry) {
                    node["leaf"] = Value::from(true);
                }
                node
            })
            .collect();
        let doc = json!({
            "format": match session.format() {
                agentmsg_runtime::session::SessionFormat::Agentmsg => "Agentmsg",
                agentmsg_runtime::session::SessionFormat::Pi { .. } => "Pi",
                agentmsg_runtime::session::SessionFormat::ClaudeCode => "ClaudeCode",
                agentmsg_runtime::session::SessionFormat::Codex => "Codex",
            },
            "leaf": session.leaf_id().map(|l| l.as_str()),
            "leaves": session.leaves().iter().map(|e| e.id().map(|i| i.as_str())).collect::<Vec<_>>(),
            "nodes": nodes,
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(Outcome::Ok);
    }
    // Text: runs of single-child entries are folded; branch points indent.
    let roots: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.in_tree() && e.parent_index().is_none())
        .map(|(i, _)| i)
        .collect();
    let mut stack: Vec<(usize, usize)> = roots.into_iter().rev().map(|r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let e = &entries[i];
        let mut marks = Vec::new();
        if children[i].len() > 1 {
            marks.push(format!("branches: {}", children[i].len()));
        }
        if let Some(label) = e.id().and_then(|id| label_of(id.as_str())) {
            marks.push(format!("label: {}", escape_controls(label)));
        }
        if let Some(c) = e.as_compaction() {
            marks.push(format!(
                "compaction: keeps from {}, {} tokens before",
                escape_controls(c.first_kept_id.as_ref().map_or("nothing", |f| f.as_str())),
                c.tokens_before
            ));
        }
        if leaf == Some(e as *const Entry) {
            marks.push("leaf".to_owned());
        }
        let marks = if marks.is_empty() {
            String::new()
        } else {
            format!("  [{}]", marks.join("; "))
        };
        // Ids, kinds, summaries and labels come from the file: what a
        // terminal acts on (ESC, OSC…) is escaped.
        let time = match e.timestamp() {
            0 => String::new(),
            ms => i64::try_from(ms).map_or_else(|_| String::new(), format_iso8601_seconds),
        };
        writeln!(
            out,
            "{}{} {:<14} {:<20} {}{}",
            indent(depth),
            escape_controls(&id_of(i)),
            escape_controls(e.kind().name()),
            time,
            escape_controls(&summary_of(session, e)),
            marks
        )?;
        let kids = &children[i];
        let next_depth = if kids.len() > 1 { depth + 1 } else { depth };
        for &c in kids.iter().rev() {
            stack.push((c, next_depth));
        }
    }
    Ok(Outcome::Ok)
}
