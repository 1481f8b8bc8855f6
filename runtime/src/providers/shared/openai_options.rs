//! The request options the two OpenAI APIs write alike (sampling, parallel
//! tool calls, prompt caching, user and metadata), and the reasoning effort
//! each places in its own field.

use serde_json::{json, Map, Value};

use crate::providers::options::{
    openai_classic_model, openai_reasoning_model, tool_choice_without_tools, OptionReport,
};
use crate::providers::{Effort, Reasoning, Request, ToolChoice};

/// The most metadata pairs OpenAI stores, and the longest key and value.
const MAX_METADATA: usize = 16;
const MAX_METADATA_KEY: usize = 64;
const MAX_METADATA_VALUE: usize = 512;

/// Writes the fields both APIs name alike into `body`.
pub(crate) fn write_common(
    request: &Request,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) {
    let reasoning_model = openai_reasoning_model(&request.model);
    for (option, value, field) in [
        ("temperature", request.temperature, "temperature"),
        ("top_p", request.top_p, "top_p"),
    ] {
        let Some(value) = value else { continue };
        if reasoning_model {
            report.dropped(
                option,
                format!("`{}` is a reasoning model, which rejects it", request.model),
            );
        } else {
            body.insert(field.into(), json!(value));
        }
    }
    if let Some(tier) = &request.service_tier {
        body.insert("service_tier".into(), tier.clone().into());
    }
    if !request.tools.is_empty() {
        if let Some(parallel) = request.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), parallel.into());
        }
    }
    if let Some(cache) = &request.cache {
        if let Some(key) = &cache.key {
            body.insert("prompt_cache_key".into(), key.clone().into());
        }
        if cache.long {
            body.insert("prompt_cache_retention".into(), "24h".into());
        }
    }
    if let Some(user) = &request.user {
        // `user` is deprecated for `safety_identifier` (and `prompt_cache_key`).
        body.insert("safety_identifier".into(), user.clone().into());
    }
    let mut metadata = Map::new();
    for (key, value) in &request.metadata {
        if metadata.len() == MAX_METADATA {
            report.dropped(
                "metadata",
                format!("`{key}`: OpenAI stores at most {MAX_METADATA} pairs"),
            );
        } else if key.chars().count() > MAX_METADATA_KEY
            || value.chars().count() > MAX_METADATA_VALUE
        {
            report.dropped(
                "metadata",
                format!("`{key}`: keys hold at most {MAX_METADATA_KEY} characters, values {MAX_METADATA_VALUE}"),
            );
        } else {
            metadata.insert(key.clone(), value.clone().into());
        }
    }
    if !metadata.is_empty() {
        body.insert("metadata".into(), Value::Object(metadata));
    }
}

/// The reasoning effort to send, if any: `none` for off, the level, or the
/// level a budget is closest to (reported). A model from before the reasoning
/// models takes none (reported).
pub(crate) fn effort(request: &Request, report: &mut OptionReport) -> Option<&'static str> {
    let reasoning = request.reasoning?;
    if openai_classic_model(&request.model) {
        report.dropped(
            "reasoning",
            format!("`{}` is not a reasoning model", request.model),
        );
        return None;
    }
    Some(match reasoning {
        Reasoning::Off => "none",
        Reasoning::Effort(effort) => effort.as_str(),
        Reasoning::Budget(tokens) => {
            let effort = Effort::from_budget(tokens);
            report.changed(
                "reasoning",
                format!("a budget of {tokens} tokens sent as the effort `{effort}`: OpenAI takes levels only"),
            );
            effort.as_str()
        }
    })
}

/// The tool choice: `auto`, `none`, `required`, or `named` (the API's object
/// for a named tool). `None` when there is none to send (reported when the
/// request has no tools).
pub(crate) fn tool_choice(
    request: &Request,
    report: &mut OptionReport,
    named: impl FnOnce(&str) -> Value,
) -> Option<Value> {
    if tool_choice_without_tools(request, report) {
        return None;
    }
    Some(match request.tool_choice.as_ref()? {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Tool(name) => named(name),
    })
}
