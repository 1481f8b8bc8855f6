//! `agentmsg context`: the messages the model sees of a session at a leaf.

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::{to_llm, LlmMessage};

use crate::error::CliError;
use crate::Outcome;

/// The arguments of `agentmsg context`.
#[derive(Debug, clap::Args)]
pub struct ContextArgs {
    /// A session: a transcript, a pi session file, a Claude Code log or a
    /// Codex rollout (`-` reads standard input), or a store's session:
    /// `sqlite:PATH#SESSION`, `postgres://USER@HOST/DB#SESSION` or
    /// `DIR#SESSION`.
    pub file: PathBuf,
    /// The entry whose context to print (the session's leaf when absent).
    #[arg(long)]
    pub leaf: Option<String>,
}

/// Runs `agentmsg context`.
pub fn run(args: &ContextArgs) -> Result<Outcome, CliError> {
    // A file is read along the leaf's path only; the rest whole.
    let opened = match crate::input::open_leaf(&args.file, args.leaf.as_deref())? {
        Some(opened) => opened,
        None => crate::input::open(&args.file)?,
    };
    let file = crate::output::shown(&args.file);
    opened.report(&file);
    let context = opened
        .session
        .context(args.leaf.as_deref())
        .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
    for (message, id) in context.messages.iter().zip(&context.entry_ids) {
        let line = id
            .as_ref()
            .and_then(|id| opened.session.entry(id.as_str()))
            .map_or(0, |e| e.line_no());
        if let Some(d) = crate::diag::unsent_diagnostic(message, line) {
            crate::output::note!("{}", d.render(&file));
        }
    }
    let sent = to_llm(&context.messages);
    let mut out = crate::output::stdout();
    for message in &sent {
        serde_json::to_writer(&mut out, &LlmMessage::new(message.clone().into_owned()))?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    let model = context.model.as_ref().map_or_else(
        || "none".to_owned(),
        |m| format!("{}/{}", m.provider, m.model_id),
    );
    crate::output::note!(
        "{file}: {} messages sent (of {} in the context); model {model}, thinking {}",
        sent.len(),
        context.messages.len(),
        context.thinking_level
    );
    Ok(Outcome::Ok)
}
