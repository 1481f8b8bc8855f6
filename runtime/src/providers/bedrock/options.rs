//! The request options as Converse takes them: `inferenceConfig` (`maxTokens`,
//! `temperature` and `topP` from 0 to 1, `stopSequences`), `toolConfig` with
//! its `toolChoice`, `outputConfig.textFormat` for JSON output, `cachePoint`
//! blocks, `requestMetadata`, and for Claude models the Anthropic `thinking`
//! field in `additionalModelRequestFields`.

use serde_json::{json, Map, Value};

use super::{is_claude, DEFAULT_MAX_TOKENS};
use crate::providers::options::{tool_choice_without_tools, OptionReport};
use crate::providers::{Reasoning, Request, ToolChoice};

/// The smallest thinking budget Claude takes.
const MIN_BUDGET: u32 = 1024;

/// Writes the options of `request` and its `tools` (encoded) into `body`
/// (whose `messages` and `system` are written).
pub(super) fn write_options(
    request: &Request,
    mut tools: Vec<Value>,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) {
    let mut config = Map::new();
    let mut max = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    let thinking = write_reasoning(request, &mut max, body, report);
    config.insert("maxTokens".into(), max.into());
    for (option, key, value) in [
        ("temperature", "temperature", request.temperature),
        ("top_p", "topP", request.top_p),
    ] {
        let Some(value) = value else { continue };
        if thinking {
            report.dropped(
                option,
                "Claude takes no sampling settings while thinking is on",
            );
        } else if value > 1.0 {
            report.changed(
                option,
                format!("{value} sent as 1, the most Converse takes"),
            );
            config.insert(key.into(), json!(1.0));
        } else {
            config.insert(key.into(), json!(value));
        }
    }
    if !request.stop.is_empty() {
        config.insert("stopSequences".into(), json!(request.stop));
    }
    body.insert("inferenceConfig".into(), Value::Object(config));

    let cache = request.cache.as_ref();
    let point = cache.map(|c| {
        if c.long {
            json!({"cachePoint": {"type": "default", "ttl": "1h"}})
        } else {
            json!({"cachePoint": {"type": "default"}})
        }
    });
    if let Some(cache) = cache {
        if cache.key.is_some() {
            report.dropped("cache", "the key: Bedrock caches by prefix, without keys");
        }
    }
    if !tool_choice_without_tools(request, report) {
        let choice = match &request.tool_choice {
            None | Some(ToolChoice::Auto) => None,
            Some(ToolChoice::None) => {
                report.changed(
                    "tool_choice",
                    "`none` sent as no tools: Converse has no tool choice `none`",
                );
                tools.clear();
                None
            }
            Some(ToolChoice::Required | ToolChoice::Tool(_)) if thinking => {
                report.changed(
                    "tool_choice",
                    "sent as `auto`: with thinking on, Claude takes only `auto`",
                );
                None
            }
            Some(ToolChoice::Required) => Some(json!({"any": {}})),
            Some(ToolChoice::Tool(name)) => Some(json!({"tool": {"name": name}})),
        };
        if request.parallel_tool_calls.is_some() {
            report.dropped(
                "parallel_tool_calls",
                "Converse has no setting for parallel tool calls",
            );
        }
        if !tools.is_empty() {
            if let Some(point) = &point {
                tools.push(point.clone());
            }
            let mut config = Map::new();
            config.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = choice {
                config.insert("toolChoice".into(), choice);
            }
            body.insert("toolConfig".into(), Value::Object(config));
        }
    }
    if let Some(point) = point {
        if let Some(Value::Array(system)) = body.get_mut("system") {
            system.push(point.clone());
        }
        let last_user = body
            .get_mut("messages")
            .and_then(Value::as_array_mut)
            .and_then(|m| m.iter_mut().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m.get_mut("content"))
            .and_then(Value::as_array_mut);
        if let Some(content) = last_user {
            content.push(point);
        }
    }
    if let Some(format) = &request.response_format {
        let mut schema = Map::new();
        schema.insert("schema".into(), format.schema.to_string().into());
        schema.insert("name".into(), format.name.clone().into());
        if let Some(description) = &format.description {
            schema.insert("description".into(), description.clone().into());
        }
        body.insert(
            "outputConfig".into(),
            json!({"textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}}),
        );
        if !format.strict {
            report.changed(
                "response_format",
                "sent strict: Converse's structured output always follows the schema",
            );
        }
    }
    if request.user.is_some() {
        report.dropped("user", "Converse takes no end-user id");
    }
    let metadata: Map<String, Value> = request
        .metadata
        .iter()
        .filter(|(k, v)| metadata_fits(k) && metadata_fits(v))
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    if metadata.len() < request.metadata.len() {
        report.dropped(
            "metadata",
            "pairs with characters or lengths `requestMetadata` does not take (at most 256 of letters, digits, spaces and :_@$#=/+,-.)",
        );
    }
    if !metadata.is_empty() {
        body.insert("requestMetadata".into(), Value::Object(metadata));
    }
}

/// Whether `text` fits `requestMetadata`'s pattern
/// `[a-zA-Z0-9\s:_@$#=/+,-.]{0,256}` (keys need at least one character).
fn metadata_fits(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 256
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || c.is_ascii_whitespace() || ":_@$#=/+,-.".contains(c)
        })
}

/// Claude's `thinking` in `additionalModelRequestFields`, raising `max` above
/// the budget when needed. Whether thinking is on. Other models' reasoning
/// switches differ by vendor and are not sent (reported).
fn write_reasoning(
    request: &Request,
    max: &mut u32,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) -> bool {
    let Some(reasoning) = request.reasoning else {
        return false;
    };
    if !is_claude(&request.model) {
        report.dropped(
            "reasoning",
            format!(
                "`{}` is not a Claude model: its reasoning setting is its vendor's own",
                request.model
            ),
        );
        return false;
    }
    let budget = match reasoning {
        Reasoning::Off => return false,
        Reasoning::Effort(effort) => effort.budget(),
        Reasoning::Budget(tokens) if tokens < MIN_BUDGET => {
            report.changed(
                "reasoning",
                format!(
                    "a budget of {tokens} tokens raised to {MIN_BUDGET}, the least Claude takes"
                ),
            );
            MIN_BUDGET
        }
        Reasoning::Budget(tokens) => tokens,
    };
    body.insert(
        "additionalModelRequestFields".into(),
        json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
    );
    if *max <= budget {
        let raised = budget.saturating_add(*max);
        report.changed(
            "max_tokens",
            format!("{max} raised to {raised}: Claude needs maxTokens above the thinking budget ({budget})"),
        );
        *max = raised;
    }
    true
}
