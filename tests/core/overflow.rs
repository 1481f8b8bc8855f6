//! Context-overflow recognition: one test per known wording, with the text the
//! provider sends.

use agentmsg::message::{context_overflow_source, known_overflow_sources};
use agentmsg::{AssistantMessage, StopReason, Usage};

fn failed(error_message: &str) -> AssistantMessage {
    let mut message = AssistantMessage::new(Vec::<&str>::new()).with_stop_reason(StopReason::Error);
    message.error_message = Some(error_message.to_owned());
    message
}

/// The message is recognised, by the pattern of `source`.
#[track_caller]
fn overflow(source: &str, error_message: &str) {
    assert_eq!(
        context_overflow_source(error_message),
        Some(source),
        "{error_message}"
    );
    assert!(
        failed(error_message).is_context_overflow(),
        "{error_message}"
    );
}

#[test]
fn anthropic() {
    overflow(
        "Anthropic",
        r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#,
    );
}

#[test]
fn amazon_bedrock() {
    overflow(
        "Amazon Bedrock",
        "ValidationException: Input is too long for requested model.",
    );
}

#[test]
fn openai_responses_and_chat() {
    overflow(
        "OpenAI",
        "400 Your input exceeds the context window of this model. Please adjust your input and try again.",
    );
}

#[test]
fn google_gemini() {
    overflow(
        "Google Gemini",
        r#"{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}"#,
    );
}

#[test]
fn xai() {
    overflow(
        "xAI",
        "400 This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    );
}

#[test]
fn groq() {
    overflow(
        "Groq",
        "400 Please reduce the length of the messages or completion.",
    );
}

#[test]
fn openrouter() {
    overflow(
        "OpenRouter / OpenAI-compatible",
        "This endpoint's maximum context length is 200000 tokens. However, you requested about 250112 tokens (241920 of text input, 8192 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.",
    );
}

#[test]
fn openai_chat_completions_classic() {
    overflow(
        "OpenRouter / OpenAI-compatible",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 131005 tokens. Please reduce the length of the messages.",
    );
}

#[test]
fn github_copilot() {
    overflow(
        "GitHub Copilot",
        "400 prompt token count of 130412 exceeds the limit of 128000",
    );
}

#[test]
fn llama_cpp() {
    overflow(
        "llama.cpp",
        "400 the request exceeds the available context size, try increasing it",
    );
}

#[test]
fn lm_studio() {
    overflow(
        "LM Studio",
        "The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input",
    );
}

#[test]
fn minimax() {
    overflow(
        "MiniMax",
        "400 invalid params, context window exceeds limit (2013)",
    );
}

#[test]
fn kimi() {
    overflow(
        "Kimi",
        "Your request exceeded model token limit: 262144 (requested: 300000)",
    );
}

#[test]
fn mistral() {
    overflow(
        "Mistral",
        r#"Status 400: {"object":"error","message":"Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length","type":"invalid_request_message_error"}"#,
    );
}

#[test]
fn ollama_prompt_too_long() {
    overflow(
        "Ollama",
        "400 `prompt too long; exceeded max context length by 100918 tokens`",
    );
    overflow(
        "Ollama",
        "prompt too long; exceeded context length by 12 tokens",
    );
}

#[test]
fn ollama_input_length() {
    overflow("Ollama", "the input length exceeds the context length");
}

#[test]
fn together_ai() {
    overflow(
        "Together AI",
        "400 The input (516368 tokens) is longer than the model's context length (262144 tokens).",
    );
}

#[test]
fn zai() {
    overflow("z.ai", "finish_reason: model_context_window_exceeded");
}

#[test]
fn generic_context_length_exceeded_code() {
    overflow(
        "generic",
        r#"Error code: 400 - {'error': {'message': 'Request too big', 'type': 'invalid_request_error', 'code': 'context_length_exceeded'}}"#,
    );
}

#[test]
fn generic_context_length_exceeded_words() {
    overflow("generic", "Context length exceeded: reduce your input");
}

#[test]
fn generic_too_many_tokens() {
    overflow("generic", "Too many tokens in request: 140000 > 131072");
}

#[test]
fn generic_token_limit_exceeded() {
    overflow("generic", "Request failed: token limit exceeded");
}

#[test]
fn cerebras_no_body() {
    overflow("Cerebras", "400 status code (no body)");
    overflow("Cerebras", "413 (no body)");
    assert_eq!(context_overflow_source("429 status code (no body)"), None);
}

#[test]
fn every_pattern_has_a_test_above() {
    // The sources tested above; a new pattern needs a test of its own.
    let tested = [
        "Anthropic",
        "Amazon Bedrock",
        "OpenAI",
        "Google Gemini",
        "xAI",
        "Groq",
        "OpenRouter / OpenAI-compatible",
        "GitHub Copilot",
        "llama.cpp",
        "LM Studio",
        "MiniMax",
        "Kimi",
        "Mistral",
        "Ollama",
        "Together AI",
        "z.ai",
        "generic",
    ];
    for source in known_overflow_sources() {
        assert!(tested.contains(&source), "{source} is untested");
    }
    assert_eq!(known_overflow_sources().count(), 21);
}

#[test]
fn other_errors_are_not_overflow() {
    for text in [
        "429 Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",
        "401 invalid x-api-key",
        r#"413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
        "529 Overloaded",
        "The maximum context length is unknown",
        "fetch failed",
        "",
    ] {
        assert_eq!(context_overflow_source(text), None, "{text}");
        assert!(!failed(text).is_context_overflow(), "{text}");
    }
}

#[test]
fn only_error_messages_count() {
    let text = "prompt is too long: 213462 tokens > 200000 maximum";
    let mut message = failed(text);
    message.stop_reason = StopReason::Stop;
    assert!(
        !message.is_context_overflow(),
        "a finished answer is not an error"
    );
    message.stop_reason = StopReason::Error;
    message.error_message = None;
    assert!(!message.is_context_overflow(), "no text, nothing to match");
}

#[test]
fn matching_ignores_case() {
    overflow(
        "Anthropic",
        "PROMPT IS TOO LONG: 213462 TOKENS > 200000 MAXIMUM",
    );
}

#[test]
fn silent_overflow_compares_the_prompt_with_the_window() {
    let mut message = AssistantMessage::new(["ok"]);
    message.usage = Usage {
        input: 120_000,
        cache_read: 10_000,
        ..Usage::default()
    };
    assert!(message.is_silent_context_overflow(128_000));
    assert!(
        !message.is_silent_context_overflow(130_000),
        "equal is not over"
    );
    message.usage.cache_write = 1;
    assert!(
        message.is_silent_context_overflow(130_000),
        "cache writes are prompt tokens"
    );
    assert!(
        !message.is_silent_context_overflow(0),
        "an unknown window is no limit"
    );
    assert!(!message.is_context_overflow());
    let failed = message.clone().with_stop_reason(StopReason::Error);
    assert!(
        !failed.is_silent_context_overflow(1_000),
        "only successful answers"
    );
}

#[test]
fn a_huge_error_body_is_cheap() {
    let body = "input token count ".repeat(50_000) + "and nothing else";
    assert_eq!(context_overflow_source(&body), None);
}
