//! What a request asks of the model beyond its messages and tools: reasoning,
//! sampling, tool choice, output format, prompt caching and metadata. Each
//! encoder writes them the way its API documents; what an API or model cannot
//! take is left out (or changed) and said in [`Encoded::options`](super::Encoded::options).

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

/// How much the model reasons before it answers.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::{Effort, Reasoning};
/// assert_eq!("high".parse::<Reasoning>(), Ok(Reasoning::Effort(Effort::High)));
/// assert_eq!("off".parse::<Reasoning>(), Ok(Reasoning::Off));
/// assert_eq!("8000".parse::<Reasoning>(), Ok(Reasoning::Budget(8000)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reasoning {
    /// No reasoning (or the least the model allows).
    Off,
    /// An effort level.
    Effort(Effort),
    /// At most this many reasoning tokens.
    Budget(u32),
}

/// An effort level, from the least reasoning to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effort {
    /// As little as the model can.
    Minimal,
    /// Little.
    Low,
    /// Some.
    Medium,
    /// Much.
    High,
    /// The most the model offers short of its maximum.
    Xhigh,
}

impl Effort {
    /// Every level, from `minimal` to `xhigh`.
    pub const ALL: [Effort; 5] = [
        Effort::Minimal,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
    ];

    /// Its lowercase name (`minimal` … `xhigh`), as the OpenAI APIs spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }

    /// The token budget this level stands for, where an API takes a budget:
    /// 1024, 4096, 10000, 16000 and 32000 (Anthropic's minimum budget is 1024).
    pub const fn budget(self) -> u32 {
        match self {
            Self::Minimal => 1024,
            Self::Low => 4096,
            Self::Medium => 10_000,
            Self::High => 16_000,
            Self::Xhigh => 32_000,
        }
    }

    /// The level a token budget is closest to (the highest level whose budget
    /// it reaches), for an API that takes levels only.
    pub fn from_budget(budget: u32) -> Self {
        Self::ALL
            .into_iter()
            .rev()
            .find(|e| budget >= e.budget())
            .unwrap_or(Self::Minimal)
    }
}

impl fmt::Display for Effort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Reasoning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => f.write_str("off"),
            Self::Effort(effort) => effort.fmt(f),
            Self::Budget(tokens) => write!(f, "{tokens}"),
        }
    }
}

/// A value that does not name an option's setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a valid {option}: expected {expected}")]
pub struct OptionParseError {
    /// The option, such as `reasoning`.
    pub option: &'static str,
    /// The value given.
    pub value: String,
    /// What it could have been.
    pub expected: &'static str,
}

impl FromStr for Reasoning {
    type Err = OptionParseError;

    /// `off`, `minimal`, `low`, `medium`, `high`, `xhigh`, or a token budget.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let effort = Effort::ALL.into_iter().find(|e| e.as_str() == s);
        match (s, effort) {
            ("off" | "none", _) => Ok(Self::Off),
            (_, Some(effort)) => Ok(Self::Effort(effort)),
            _ => s.parse().map(Self::Budget).map_err(|_| OptionParseError {
                option: "reasoning",
                value: s.to_owned(),
                expected: "off, minimal, low, medium, high, xhigh or a token budget",
            }),
        }
    }
}

/// Which tools the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default of every API).
    Auto,
    /// No tool call.
    None,
    /// At least one tool call.
    Required,
    /// A call of this tool.
    Tool(String),
}

impl FromStr for ToolChoice {
    type Err = OptionParseError;

    /// `auto`, `none`, `required`, or a tool's name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => Self::Auto,
            "none" => Self::None,
            "required" | "any" => Self::Required,
            "" => {
                return Err(OptionParseError {
                    option: "tool choice",
                    value: String::new(),
                    expected: "auto, none, required or a tool's name",
                })
            }
            name => Self::Tool(name.to_owned()),
        })
    }
}

/// Output that must be JSON matching a schema.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::ResponseFormat;
/// use serde_json::json;
/// let format = ResponseFormat::json_schema("answer", json!({"type": "object"}));
/// assert!(format.strict);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResponseFormat {
    /// The schema's name (OpenAI requires one: `^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// The JSON Schema of the output.
    pub schema: Value,
    /// Whether the output must match the schema exactly (OpenAI's `strict`).
    pub strict: bool,
    /// What the output is, for the model.
    pub description: Option<String>,
}

impl ResponseFormat {
    /// Strict JSON output matching `schema`.
    pub fn json_schema(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            schema,
            strict: true,
            description: None,
        }
    }

    /// The same format, strict or not.
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The same format, with a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Prompt caching: Anthropic's `cache_control` breakpoints, OpenAI's cache key
/// and retention. Gemini caches implicitly (explicit caches are a separate
/// resource), so it takes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PromptCache {
    /// A key that groups requests sharing a prefix (OpenAI `prompt_cache_key`).
    pub key: Option<String>,
    /// Keep the cache longer: Anthropic's one-hour `ttl`, OpenAI's `24h`
    /// retention.
    pub long: bool,
}

impl PromptCache {
    /// Caching with the API's default lifetime and no key.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same caching, with a key.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The same caching, kept longer.
    #[must_use]
    pub fn long(mut self) -> Self {
        self.long = true;
        self
    }
}

/// What an encoder did with a request option it could not send as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionChange {
    /// The option, as the [`Request`](super::Request) field is named
    /// (`temperature`, `reasoning`, `max_tokens`…).
    pub option: &'static str,
    /// Whether it was left out or sent changed.
    pub kind: OptionChangeKind,
    /// A sentence for a person: what and why.
    pub detail: String,
}

impl fmt::Display for OptionChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            OptionChangeKind::Dropped => "not sent",
            OptionChangeKind::Changed => "changed",
        };
        write!(f, "{}: {kind}: {}", self.option, self.detail)
    }
}

/// How an option was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OptionChangeKind {
    /// Not sent: the API or model does not take it.
    Dropped,
    /// Sent in another form or value (a budget as a level, a limit raised).
    Changed,
}

/// The option changes of one encoding, as it is built.
#[derive(Debug, Default)]
pub(crate) struct OptionReport(pub(crate) Vec<OptionChange>);

impl OptionReport {
    pub(crate) fn dropped(&mut self, option: &'static str, detail: impl Into<String>) {
        self.0.push(OptionChange {
            option,
            kind: OptionChangeKind::Dropped,
            detail: detail.into(),
        });
    }

    pub(crate) fn changed(&mut self, option: &'static str, detail: impl Into<String>) {
        self.0.push(OptionChange {
            option,
            kind: OptionChangeKind::Changed,
            detail: detail.into(),
        });
    }
}

#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
/// Whether `model` is an OpenAI chat model from before the reasoning models
/// (`gpt-4*`, `gpt-3.5*`), which rejects `reasoning_effort`.
pub(crate) fn openai_classic_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    name.starts_with("gpt-4") || name.starts_with("gpt-3.5")
}

#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
/// Whether `model` is an OpenAI reasoning model (o-series, `gpt-5*` but the
/// chat models), which takes `reasoning_effort` and rejects `temperature` and
/// `top_p`.
pub(crate) fn openai_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let o_series = name.starts_with('o') && name[1..].starts_with(|c: char| c.is_ascii_digit());
    (o_series || name.starts_with("gpt-5") || name.starts_with("codex")) && !name.contains("-chat")
}

/// Checks what no API takes: a tool choice naming an undeclared tool, a
/// temperature or `top_p` out of range, an empty stop sequence.
pub(crate) fn check(request: &super::Request) -> Result<(), super::EncodeError> {
    use super::EncodeError;
    if let Some(ToolChoice::Tool(name)) = &request.tool_choice {
        if !request.tools.iter().any(|t| &t.name == name) {
            return Err(EncodeError::invalid(
                "tool_choice",
                format!("names `{name}`, which is not among the request's tools"),
            ));
        }
    }
    if let Some(t) = request.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(EncodeError::invalid(
                "temperature",
                format!("{t} is outside 0 to 2"),
            ));
        }
    }
    if let Some(p) = request.top_p {
        if !(0.0..=1.0).contains(&p) {
            return Err(EncodeError::invalid(
                "top_p",
                format!("{p} is outside 0 to 1"),
            ));
        }
    }
    if let Some(i) = request.stop.iter().position(String::is_empty) {
        return Err(EncodeError::invalid(
            format!("stop[{i}]"),
            "a stop sequence is empty",
        ));
    }
    Ok(())
}

/// A tool choice on a request without tools: left out, and reported.
pub(crate) fn tool_choice_without_tools(
    request: &super::Request,
    report: &mut OptionReport,
) -> bool {
    if request.tools.is_empty() {
        if request.tool_choice.is_some() {
            report.dropped("tool_choice", "the request has no tools");
        }
        if request.parallel_tool_calls.is_some() {
            report.dropped("parallel_tool_calls", "the request has no tools");
        }
        return true;
    }
    false
}

#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
/// The OpenAI APIs' schema name rule, `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn check_schema_name(format: &ResponseFormat) -> Result<(), super::EncodeError> {
    let name = &format.name;
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(super::EncodeError::invalid(
            "response_format.name",
            format!("`{name}` does not match ^[a-zA-Z0-9_-]{{1,64}}$"),
        ))
    }
}
