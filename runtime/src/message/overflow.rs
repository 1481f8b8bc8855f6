//! Recognising the context-overflow errors of each provider.
//!
//! Providers report a prompt that does not fit the model's context window as an
//! error whose text differs from one provider (and one server) to the next. The
//! patterns below are the wordings they actually send; pi-ai keeps the same list
//! (`packages/ai/src/utils/overflow.ts`). Matching ignores case.

use crate::message::{AssistantMessage, StopReason};

/// One piece of a pattern.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// This text, lowercase.
    Lit(&'static str),
    /// One or more ASCII digits.
    Number,
    /// Anything, possibly nothing (`.*`); always followed by a `Lit`.
    Gap,
}

use Piece::{Gap, Lit, Number};

/// A known wording of a context-overflow error, and who sends it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OverflowPattern {
    /// The provider or server that sends it, such as `"Anthropic"`.
    pub(crate) source: &'static str,
    pieces: &'static [Piece],
}

impl OverflowPattern {
    const fn new(source: &'static str, pieces: &'static [Piece]) -> Self {
        Self { source, pieces }
    }

    fn matches_lowercase(&self, text: &str) -> bool {
        match_here(self.pieces, text, true)
    }
}

/// Whether `pieces` match `text` at its start (or anywhere, when `floating`);
/// the text need not end where the pieces do. Literals are found with
/// `str::match_indices`, so a long error body costs little.
fn match_here(pieces: &[Piece], text: &str, floating: bool) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return true;
    };
    match first {
        Lit(lit) if floating => {
            // When nothing or a gap follows, the first occurrence leaves the most
            // text for the rest, so later ones need not be tried (this keeps a
            // long body linear).
            let first_only = matches!(rest.first(), None | Some(Gap));
            text.match_indices(lit)
                .take(if first_only { 1 } else { usize::MAX })
                .any(|(at, _)| {
                    text.get(at + lit.len()..)
                        .is_some_and(|after| match_here(rest, after, false))
                })
        }
        Lit(lit) => text
            .strip_prefix(lit)
            .is_some_and(|after| match_here(rest, after, false)),
        Number => {
            // Every pattern puts a non-digit after a number, so only the longest
            // run of digits can match.
            let digits = text.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0
                && text
                    .get(digits..)
                    .is_some_and(|after| match_here(rest, after, false))
        }
        Gap => match_here(rest, text, true),
    }
}

/// The known wordings, most specific first.
pub(crate) const OVERFLOW_PATTERNS: &[OverflowPattern] = &[
    // "prompt is too long: 213462 tokens > 200000 maximum"
    OverflowPattern::new("Anthropic", &[Lit("prompt is too long")]),
    // "Input is too long for requested model."
    OverflowPattern::new(
        "Amazon Bedrock",
        &[Lit("input is too long for requested model")],
    ),
    // "Your input exceeds the context window of this model. Please adjust your input and try again."
    OverflowPattern::new("OpenAI", &[Lit("exceeds the context window")]),
    // "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."
    OverflowPattern::new(
        "Google Gemini",
        &[Lit("input token count"), Gap, Lit("exceeds the maximum")],
    ),
    // "This model's maximum prompt length is 131072 but the request contains 537812 tokens."
    OverflowPattern::new("xAI", &[Lit("maximum prompt length is "), Number]),
    // "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens"
    // (OpenRouter); "This model's maximum context length is 8192 tokens. However, your messages
    // resulted in 9000 tokens." (OpenAI Chat Completions, vLLM, DeepSeek)
    OverflowPattern::new(
        "OpenRouter / OpenAI-compatible",
        &[Lit("maximum context length is "), Number, Lit(" tokens")],
    ),
    // "Please reduce the length of the messages or completion."
    OverflowPattern::new("Groq", &[Lit("reduce the length of the messages")]),
    // "prompt token count of 130000 exceeds the limit of 128000"
    OverflowPattern::new("GitHub Copilot", &[Lit("exceeds the limit of "), Number]),
    // "the request exceeds the available context size, try increasing it"
    OverflowPattern::new("llama.cpp", &[Lit("exceeds the available context size")]),
    // "The number of tokens to keep from the initial prompt is greater than the context length."
    OverflowPattern::new("LM Studio", &[Lit("greater than the context length")]),
    // "invalid params, context window exceeds limit"
    OverflowPattern::new("MiniMax", &[Lit("context window exceeds limit")]),
    // "Your request exceeded model token limit: 262144 (requested: 300000)"
    OverflowPattern::new("Kimi", &[Lit("exceeded model token limit")]),
    // "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length"
    OverflowPattern::new(
        "Mistral",
        &[
            Lit("too large for model with "),
            Number,
            Lit(" maximum context length"),
        ],
    ),
    // "prompt too long; exceeded max context length by 1200 tokens"
    OverflowPattern::new(
        "Ollama",
        &[
            Lit("prompt too long; exceeded "),
            Gap,
            Lit("context length"),
        ],
    ),
    // "the input length exceeds the context length"
    OverflowPattern::new("Ollama", &[Lit("input length exceeds the context length")]),
    // "The input (516368 tokens) is longer than the model's context length (262144 tokens)."
    OverflowPattern::new(
        "Together AI",
        &[Lit("is longer than the model's context length")],
    ),
    // "finish_reason: model_context_window_exceeded"
    OverflowPattern::new("z.ai", &[Lit("model_context_window_exceeded")]),
    // "Error code: 400 - {'error': {'code': 'context_length_exceeded', ...}}"
    OverflowPattern::new("generic", &[Lit("context_length_exceeded")]),
    OverflowPattern::new("generic", &[Lit("context length exceeded")]),
    OverflowPattern::new("generic", &[Lit("too many tokens")]),
    OverflowPattern::new("generic", &[Lit("token limit exceeded")]),
];

/// Cerebras answers an overflow with a bare `400 status code (no body)` or
/// `413 (no body)`; a 429 is a rate limit, not an overflow.
fn is_cerebras_no_body(text: &str) -> bool {
    let text = text.trim_start();
    let Some(rest) = text
        .strip_prefix("400")
        .or_else(|| text.strip_prefix("413"))
    else {
        return false;
    };
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix("status code")
        .unwrap_or(rest)
        .trim_start();
    rest.starts_with("(no body)")
}

/// Every provider or server whose context-overflow wording is known, in the
/// order they are tried (most specific first; a name may repeat when a source
/// has several wordings). Cerebras's bare `400 status code (no body)` is
/// recognised besides these.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::message::known_overflow_sources;
/// assert!(known_overflow_sources().any(|s| s == "Anthropic"));
/// ```
pub fn known_overflow_sources() -> impl Iterator<Item = &'static str> {
    OVERFLOW_PATTERNS.iter().map(|p| p.source)
}

/// The provider whose context-overflow wording `error_message` contains, if any.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::message::context_overflow_source;
/// let text = "prompt is too long: 213462 tokens > 200000 maximum";
/// assert_eq!(context_overflow_source(text), Some("Anthropic"));
/// assert_eq!(context_overflow_source("rate limit exceeded"), None);
/// ```
pub fn context_overflow_source(error_message: &str) -> Option<&'static str> {
    let text = error_message.to_lowercase();
    if let Some(pattern) = OVERFLOW_PATTERNS
        .iter()
        .find(|p| p.matches_lowercase(&text))
    {
        return Some(pattern.source);
    }
    is_cerebras_no_body(&text).then_some("Cerebras")
}

impl AssistantMessage {
    /// Whether this message is a provider's error saying the prompt did not fit
    /// the model's context window: `stop_reason` is `error` and `error_message`
    /// is one of the known wordings ([`known_overflow_sources`], and Cerebras's
    /// `400 status code (no body)`).
    ///
    /// Some servers do not fail but truncate (Ollama) or answer anyway (z.ai);
    /// see [`AssistantMessage::is_silent_context_overflow`] for the latter.
    pub fn is_context_overflow(&self) -> bool {
        self.stop_reason == StopReason::Error
            && self
                .error_message
                .as_deref()
                .is_some_and(|text| context_overflow_source(text).is_some())
    }

    /// Whether a successful answer (`stop_reason` is `stop`) used more prompt
    /// tokens than `context_window`, as some servers (z.ai) accept an oversized
    /// prompt instead of failing.
    ///
    /// The prompt is `input + cache_read + cache_write`: pi-ai counts
    /// `input + cache_read`, but tokens written to the cache are part of the
    /// prompt too (Anthropic reports them apart from `input`).
    pub fn is_silent_context_overflow(&self, context_window: u64) -> bool {
        let prompt = self
            .usage
            .input
            .saturating_add(self.usage.cache_read)
            .saturating_add(self.usage.cache_write);
        context_window > 0 && self.stop_reason == StopReason::Stop && prompt > context_window
    }
}
