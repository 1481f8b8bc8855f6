//! The request options as Anthropic Messages takes them: `thinking` (a budget,
//! or adaptive with `output_config.effort` where the model takes it),
//! `stop_sequences`, `tool_choice` (with `disable_parallel_tool_use`),
//! `output_config.format`, `cache_control` breakpoints and
//! `metadata.user_id`. The API no longer takes `temperature` or `top_p` (its
//! schema marks them deprecated and the SDK's request types have neither).

use serde_json::{json, Map, Value};

use super::DEFAULT_MAX_TOKENS;
use crate::providers::options::{tool_choice_without_tools, OptionReport};
use crate::providers::{Effort, Reasoning, Request, ToolChoice};

/// The smallest thinking budget Anthropic takes.
const MIN_BUDGET: u32 = 1024;

/// Whether `model` takes adaptive thinking (Claude 4.6 and later).
fn adaptive(model: &str) -> bool {
    [
        "-4-6", "-4.6", "-4-7", "-4.7", "-4-8", "-4.8", "mythos", "opus-5", "sonnet-5", "haiku-5",
    ]
    .iter()
    .any(|v| model.contains(v))
}

/// Whether `model` takes adaptive thinking only (Claude Opus 4.7 and later):
/// a budget is refused.
fn adaptive_only(model: &str) -> bool {
    [
        "opus-4-7", "opus-4.7", "opus-4-8", "opus-4.8", "mythos", "opus-5", "sonnet-5", "haiku-5",
    ]
    .iter()
    .any(|v| model.contains(v))
}

/// The adaptive effort of a level: `minimal` is sent as `low`, the least
/// Anthropic takes (reported).
fn adaptive_effort(effort: Effort, report: &mut OptionReport) -> &'static str {
    if effort == Effort::Minimal {
        report.changed(
            "reasoning",
            "the effort `minimal` sent as `low`, the least Anthropic takes",
        );
        return "low";
    }
    effort.as_str()
}

/// Writes the options of `request` into `body` (whose `max_tokens`, `system`,
/// `messages` and `tools` are written). `open_loop`: the messages continue a
/// tool loop whose assistant turn has no thinking block (see
/// `tool_loop_without_thinking`), so thinking is off for this request.
pub(super) fn write_options(
    request: &Request,
    open_loop: bool,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) {
    let thinking = if open_loop && thinking_on(request) && !adaptive_only(&request.model) {
        body.insert("thinking".into(), json!({"type": "disabled"}));
        report.changed(
            "reasoning",
            "thinking off for this request: it continues a tool loop whose assistant turn has no thinking block (made by another model, whose thinking is not replayed, or with thinking off), and Anthropic keeps one thinking configuration per assistant turn; it is on again from the next user turn",
        );
        false
    } else {
        write_thinking(request, body, report)
    };
    for (option, value) in [
        ("temperature", request.temperature),
        ("top_p", request.top_p),
    ] {
        if value.is_some() {
            report.dropped(
                option,
                "Anthropic's Messages API no longer takes it (deprecated; not in the SDK's request types)",
            );
        }
    }
    if !request.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(request.stop));
    }
    if let Some(k) = request.top_k {
        body.insert("top_k".into(), k.into());
    }
    if let Some(tier) = &request.service_tier {
        body.insert("service_tier".into(), tier.clone().into());
    }
    for (option, set) in [
        ("seed", request.seed.is_some()),
        ("presence_penalty", request.presence_penalty.is_some()),
        ("frequency_penalty", request.frequency_penalty.is_some()),
    ] {
        if set {
            report.dropped(option, "Anthropic's Messages API does not take it");
        }
    }
    write_tool_choice(request, thinking, body, report);
    let mut output = body
        .remove("output_config")
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    if let Some(format) = &request.response_format {
        output.insert(
            "format".into(),
            json!({"type": "json_schema", "schema": format.schema}),
        );
        if !format.strict {
            report.changed(
                "response_format",
                "sent strict: Anthropic's structured outputs always follow the schema",
            );
        }
        if format.description.is_some() {
            report.dropped(
                "response_format",
                "the description: Anthropic takes the schema only",
            );
        }
    }
    if !output.is_empty() {
        body.insert("output_config".into(), Value::Object(output));
    }
    if let Some(cache) = &request.cache {
        write_cache(cache.long, body);
        if cache.key.is_some() {
            report.dropped("cache", "the key: Anthropic caches by prefix, without keys");
        }
    }
    if let Some(user) = &request.user {
        body.insert("metadata".into(), json!({"user_id": user}));
    }
    if !request.metadata.is_empty() {
        report.dropped("metadata", "Anthropic's metadata takes only the user id");
    }
}

/// Whether `request` asks for thinking.
fn thinking_on(request: &Request) -> bool {
    request.reasoning.is_some_and(|r| r != Reasoning::Off)
}

/// `thinking` (and `output_config.effort` for adaptive thinking), raising
/// `max_tokens` above a budget when needed. Whether thinking is on.
fn write_thinking(
    request: &Request,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) -> bool {
    let Some(reasoning) = request.reasoning else {
        return false;
    };
    let model = request.model.as_str();
    let budget = match reasoning {
        Reasoning::Off => {
            body.insert("thinking".into(), json!({"type": "disabled"}));
            return false;
        }
        Reasoning::Effort(effort) if adaptive(model) => {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert(
                "output_config".into(),
                json!({"effort": adaptive_effort(effort, report)}),
            );
            return true;
        }
        Reasoning::Budget(tokens) if adaptive_only(model) => {
            let effort = Effort::from_budget(tokens);
            report.changed(
                "reasoning",
                format!("a budget of {tokens} tokens sent as adaptive thinking with the effort `{effort}`: `{model}` takes no budget"),
            );
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert(
                "output_config".into(),
                json!({"effort": adaptive_effort(effort, report)}),
            );
            return true;
        }
        Reasoning::Effort(effort) => effort.budget(),
        Reasoning::Budget(tokens) if tokens < MIN_BUDGET => {
            report.changed(
                "reasoning",
                format!(
                    "a budget of {tokens} tokens raised to {MIN_BUDGET}, the least Anthropic takes"
                ),
            );
            MIN_BUDGET
        }
        Reasoning::Budget(tokens) => tokens,
    };
    body.insert(
        "thinking".into(),
        json!({"type": "enabled", "budget_tokens": budget}),
    );
    let max = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if max <= budget {
        let raised = budget.saturating_add(max);
        report.changed(
            "max_tokens",
            format!("{max} raised to {raised}: Anthropic needs max_tokens above the thinking budget ({budget}), which it counts in"),
        );
        body.insert("max_tokens".into(), raised.into());
    }
    true
}

/// `tool_choice`, with `disable_parallel_tool_use` for no parallel calls. With
/// thinking on, Anthropic takes only `auto` and `none`.
fn write_tool_choice(
    request: &Request,
    thinking: bool,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) {
    if tool_choice_without_tools(request, report) {
        return;
    }
    let mut choice = match &request.tool_choice {
        None | Some(ToolChoice::Auto) => json!({"type": "auto"}),
        Some(ToolChoice::None) => json!({"type": "none"}),
        Some(ToolChoice::Required | ToolChoice::Tool(_)) if thinking => {
            report.changed(
                "tool_choice",
                "sent as `auto`: with thinking on, Anthropic takes only `auto` and `none`",
            );
            json!({"type": "auto"})
        }
        Some(ToolChoice::Required) => json!({"type": "any"}),
        Some(ToolChoice::Tool(name)) => json!({"type": "tool", "name": name}),
    };
    if request.parallel_tool_calls == Some(false) {
        if choice["type"] == "none" {
            report.dropped(
                "parallel_tool_calls",
                "with the tool choice `none` no tool is called",
            );
        } else {
            choice["disable_parallel_tool_use"] = true.into();
        }
    }
    if request.tool_choice.is_some() || request.parallel_tool_calls == Some(false) {
        body.insert("tool_choice".into(), choice);
    }
}

/// `cache_control` breakpoints on the last system block, the last tool and the
/// last block of the last user turn.
fn write_cache(long: bool, body: &mut Map<String, Value>) {
    let control = if long {
        json!({"type": "ephemeral", "ttl": "1h"})
    } else {
        json!({"type": "ephemeral"})
    };
    let mark = |block: Option<&mut Value>| {
        if let Some(Value::Object(block)) = block {
            block.insert("cache_control".into(), control.clone());
        }
    };
    mark(
        body.get_mut("system")
            .and_then(Value::as_array_mut)
            .and_then(|s| s.last_mut()),
    );
    mark(
        body.get_mut("tools")
            .and_then(Value::as_array_mut)
            .and_then(|t| t.last_mut()),
    );
    let last_user = body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.iter_mut().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|c| c.last_mut());
    mark(last_user);
}
