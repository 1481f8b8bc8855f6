//! `agentmsg decode`: a provider's response body or recorded stream, decoded
//! into one transcript line (or, with `--events`, the stream's events).

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::providers::{Api, JsonArrayParser, SseParser, StreamDecode};
use agentmsg_runtime::Message;

use crate::error::CliError;
use crate::input::{parse_api, API_HELP};
use crate::Outcome;

/// Arguments of `agentmsg decode`.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// The API that wrote the response.
    #[arg(long, value_parser = parse_api, help = API_HELP)]
    api: Api,
    /// The file is a stream: server-sent events (`data:` lines), a streamed
    /// JSON array (Gemini without `alt=sse`), or one event JSON per line.
    #[arg(long)]
    stream: bool,
    /// Print the stream's events as JSON Lines instead of the message.
    #[arg(long, requires = "stream")]
    events: bool,
    /// The response body or recorded stream.
    file: PathBuf,
}

/// How a stream file is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Sse,
    JsonArray,
    Lines,
}

fn framing(bytes: &[u8]) -> Framing {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &bytes[i..]);
    if start.starts_with(b"[") {
        Framing::JsonArray
    } else if start.starts_with(b"{") {
        Framing::Lines
    } else {
        Framing::Sse
    }
}

/// Every event of the stream in `bytes`, in order, each with its text.
fn stream_events(bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    match framing(bytes) {
        Framing::Sse => {
            let mut parser = SseParser::new();
            let mut take = |e: agentmsg_runtime::providers::SseEvent<'_>| {
                out.push(e.data.to_owned());
            };
            parser.push(bytes, &mut take).map_err(|e| e.to_string())?;
            parser.finish(&mut take).map_err(|e| e.to_string())?;
        }
        Framing::JsonArray => {
            let mut parser = JsonArrayParser::new();
            parser
                .push(bytes, |_, e| out.push(e.to_owned()))
                .map_err(|e| e.to_string())?;
            parser.finish().map_err(|e| e.to_string())?;
        }
        Framing::Lines => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))?;
            out.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned),
            );
        }
    }
    Ok(out)
}

/// Runs `agentmsg decode`.
pub fn run(args: &DecodeArgs) -> Result<Outcome, CliError> {
    let bytes = std::fs::read(&args.file).map_err(|source| CliError::Read {
        path: args.file.clone(),
        source,
    })?;
    let name = crate::output::shown(&args.file);
    let decoded = if args.stream {
        let events = match stream_events(&bytes) {
            Ok(events) => events,
            Err(e) => {
                crate::output::note!("{name}: {e}");
                return Ok(Outcome::Problems);
            }
        };
        let mut decoder = args.api.stream_decoder();
        let mut out = crate::output::stdout();
        for event in &events {
            // `[DONE]` ends OpenAI-style streams; only Chat's decoder reads it.
            if event.trim() == "[DONE]" && decoder.api() != Api::OpenaiChat {
                continue;
            }
            match decoder.push(event) {
                Ok(told) if args.events => {
                    for event in told {
                        serde_json::to_writer(&mut out, &event)?;
                        writeln!(out)?;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    crate::output::note!("{name}: {e}");
                    return Ok(Outcome::Problems);
                }
            }
        }
        decoder.finish_with_warnings()
    } else {
        match std::str::from_utf8(&bytes) {
            Ok(body) => args.api.decode_response(body),
            Err(e) => {
                crate::output::note!("{name}: not UTF-8 at byte {}", e.valid_up_to());
                return Ok(Outcome::Problems);
            }
        }
    };
    let (message, warnings) = match decoded {
        Ok(decoded) => decoded,
        Err(e) => {
            crate::output::note!("{name}: {e}");
            return Ok(Outcome::Problems);
        }
    };
    for warning in &warnings {
        crate::output::note!("{name}: warning: {warning}");
    }
    if !args.events {
        let mut out = crate::output::stdout();
        serde_json::to_writer(&mut out, &Message::Assistant(message))?;
        writeln!(out)?;
    }
    Ok(Outcome::Ok)
}
