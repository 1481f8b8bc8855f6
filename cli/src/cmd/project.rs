//! `agentmsg project`: the request body a provider would get for a transcript.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::project::Report;
use agentmsg_runtime::providers::{
    Api, PromptCache, Reasoning, Request, ResponseFormat, ToolChoice, ToolSpec,
};
use agentmsg_runtime::{prepare, to_llm, AgentMessage, Message, Target};

use crate::error::CliError;
use crate::input::{parse_api, API_HELP};
use crate::Outcome;

/// The arguments of `agentmsg project`.
#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    /// A transcript file (JSON Lines, or one JSON array; `-` reads standard input).
    pub file: PathBuf,
    /// The provider API to encode for.
    #[arg(long, value_parser = parse_api, help = API_HELP)]
    pub api: Api,
    /// The model id.
    #[arg(long)]
    pub model: String,
    /// The provider id, when it is not the API's own (an OpenAI-compatible
    /// server such as `openrouter`): reasoning is replayed only to the provider,
    /// api and model that wrote it. Defaults to `anthropic`, `openai` or `google`.
    #[arg(long)]
    pub provider: Option<String>,
    /// A system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// A JSON file with the tools the model may call: an array of
    /// `{"name", "description", "parameters"}` (parameters: the JSON Schema of
    /// the arguments).
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// The output token limit.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Reasoning: `off`, `minimal`, `low`, `medium`, `high`, `xhigh`, or a
    /// token budget.
    #[arg(long, value_name = "LEVEL")]
    pub reasoning: Option<Reasoning>,
    /// The sampling temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Which tool the model must call: `auto`, `none`, `required`, or a
    /// tool's name.
    #[arg(long, value_name = "CHOICE")]
    pub tool_choice: Option<ToolChoice>,
    /// A JSON Schema file the reply must match (strict structured output,
    /// named after the file).
    #[arg(long, value_name = "FILE")]
    pub json_schema: Option<PathBuf>,
    /// Mark the prompt for caching (Anthropic cache breakpoints, OpenAI's
    /// cache key with `--cache-key`).
    #[arg(long)]
    pub cache: bool,
    /// The prompt cache key (OpenAI `prompt_cache_key`); implies `--cache`.
    #[arg(long, value_name = "KEY")]
    pub cache_key: Option<String>,
    /// Print the body on one line.
    #[arg(long)]
    pub compact: bool,
    /// For a session file: the entry whose context to project (the session's
    /// leaf when absent).
    #[arg(long)]
    pub leaf: Option<String>,
}

/// Reads the `--tools` file.
fn read_tools(path: &std::path::Path) -> Result<Vec<ToolSpec>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!(
            "{}: not a JSON array of tools ({{\"name\", \"description\", \"parameters\"}}): {e}",
            crate::output::shown(path)
        ))
    })
}

/// Reads the `--json-schema` file: the schema, named after the file's stem.
fn read_schema(path: &std::path::Path) -> Result<ResponseFormat, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    let schema: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: not JSON: {e}", crate::output::shown(path))))?;
    if !schema.is_object() {
        return Err(CliError::Usage(format!(
            "{}: not a JSON Schema: a schema is a JSON object",
            crate::output::shown(path),
        )));
    }
    // The name the APIs take: letters, digits, `_` and `-`, at most 64.
    let name: String = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let name = if name.is_empty() {
        "response".to_owned()
    } else {
        name
    };
    Ok(ResponseFormat::json_schema(name, schema))
}

/// The request options of the command line.
fn with_options<'a>(mut request: Request<'a>, args: &ProjectArgs) -> Result<Request<'a>, CliError> {
    if let Some(max_tokens) = args.max_tokens {
        request = request.with_max_tokens(max_tokens);
    }
    if let Some(system) = &args.system {
        request = request.with_system(system.clone());
    }
    if let Some(reasoning) = args.reasoning {
        request = request.with_reasoning(reasoning);
    }
    if let Some(temperature) = args.temperature {
        request = request.with_temperature(temperature);
    }
    if let Some(choice) = &args.tool_choice {
        request = request.with_tool_choice(choice.clone());
    }
    if let Some(path) = &args.json_schema {
        request = request.with_response_format(read_schema(path)?);
    }
    match &args.cache_key {
        Some(key) => request = request.with_cache(PromptCache::new().with_key(key.clone())),
        None if args.cache => request = request.with_cache(PromptCache::new()),
        None => {}
    }
    Ok(request)
}

/// What the model sees of one transcript line: the default projection
/// ([`to_llm`]) of that line alone, so each projected message keeps its line.
fn project_one(message: &AgentMessage) -> Vec<Message> {
    to_llm(std::slice::from_ref(message))
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect()
}

/// The projected messages with the line each comes from, and how many kept
/// (`Unknown`) lines were left out.
pub fn project_lines<'a>(
    messages: impl Iterator<Item = (usize, &'a AgentMessage)>,
) -> (Vec<Message>, Vec<usize>, usize) {
    let mut projected = Vec::new();
    let mut lines = Vec::new();
    let mut unknown = 0;
    for (line, message) in messages {
        if message.is_unknown() {
            unknown += 1;
            continue;
        }
        for m in project_one(message) {
            projected.push(m);
            lines.push(line);
        }
    }
    (projected, lines, unknown)
}

/// A report line per change, at the transcript line it comes from.
fn report_lines(report: &Report, line_of: impl Fn(usize) -> Option<usize>) -> Vec<String> {
    report
        .iter()
        .map(|c| match line_of(c.index) {
            Some(line) => format!("line {line}: {}: {}", c.kind, c.detail),
            None => format!("message {}: {}: {}", c.index, c.kind, c.detail),
        })
        .collect()
}

/// Runs `agentmsg project`.
pub fn run(args: &ProjectArgs) -> Result<Outcome, CliError> {
    if args.model.trim().is_empty() {
        return Err(CliError::Usage("--model must not be empty".into()));
    }
    let tools = match &args.tools {
        Some(path) => read_tools(path)?,
        None => Vec::new(),
    };
    let loaded = crate::input::load_file_at(
        &args.file,
        args.leaf.as_deref(),
        crate::input::Purpose::Project,
    )?;
    let file = crate::output::shown(&args.file);
    for d in &loaded.diagnostics {
        crate::output::note!("{}", d.render(&file));
    }
    let (messages, lines, unknown) = project_lines(loaded.messages());
    let api = args.api;
    let provider = args.provider.as_deref().unwrap_or(api.provider());
    let mut notes = Vec::new();
    if unknown > 0 {
        notes.push(format!(
            "{unknown} kept (unknown) lines are never sent to a model"
        ));
    }
    // The encoders prepare for their own provider id. For another provider,
    // prepare for it first, then mark what it let through as the encoder's own
    // provider so the encoder's second, idempotent pass keeps it.
    let (request_messages, pre_report, origins) = if provider == api.provider() {
        (messages, Report::default(), None)
    } else {
        let target = Target::new(provider, api.id(), &args.model);
        let mut prepared = prepare(&messages, &target);
        for m in &mut prepared.messages {
            if let Message::Assistant(a) = m {
                if a.provider == provider && a.api == api.id() && a.model == args.model {
                    a.provider = api.provider().to_owned();
                }
            }
        }
        let origins: Vec<usize> = prepared.provenance.iter().map(|o| o.index()).collect();
        (prepared.messages, prepared.report, Some(origins))
    };
    let calls: usize = request_messages
        .iter()
        .filter_map(Message::as_assistant)
        .map(|a| a.tool_calls().count())
        .sum();
    if calls > 0 && tools.is_empty() {
        let consequence = match api {
            Api::Anthropic => "Anthropic refuses tool_use blocks without tools",
            _ => "the model can make no new call",
        };
        notes.push(format!(
            "{calls} tool calls in the history but no tools declared (--tools FILE); {consequence}"
        ));
    }
    let request = with_options(
        Request::new(args.model.clone(), request_messages).with_tools(tools),
        args,
    )?;
    let encoded = match api.encode(&request) {
        Ok(encoded) => encoded,
        Err(e) => {
            crate::output::note!("agentmsg: error: {file}: {e}");
            return Ok(Outcome::Problems);
        }
    };
    let line_of_projected = |i: usize| lines.get(i).copied();
    let mut changes = report_lines(&pre_report, line_of_projected);
    changes.extend(report_lines(&encoded.report, |i| match &origins {
        None => line_of_projected(i),
        Some(origins) => origins.get(i).and_then(|&p| line_of_projected(p)),
    }));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for c in pre_report.iter().chain(encoded.report.iter()) {
        *counts.entry(c.kind.to_string()).or_default() += 1;
    }
    // Through `note!`: a change names a tool, a model, an id of the transcript.
    for c in &changes {
        crate::output::note!("{file}: {c}");
    }
    for option in &encoded.options {
        crate::output::note!("{file}: option {option}");
    }
    for n in &notes {
        crate::output::note!("{file}: note: {n}");
    }
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    crate::output::note!(
        "{file}: {} messages projected for {provider}/{}/{}: {} changes{}{}",
        lines.len(),
        api.id(),
        args.model,
        changes.len(),
        if summary.is_empty() { "" } else { ": " },
        summary.join(", ")
    );
    let mut out = crate::output::stdout();
    if args.compact {
        serde_json::to_writer(&mut out, &encoded.body)?;
    } else {
        serde_json::to_writer_pretty(&mut out, &encoded.body)?;
    }
    writeln!(out)?;
    Ok(Outcome::Ok)
}
