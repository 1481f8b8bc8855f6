//! The request options as Chat Completions takes them: `reasoning_effort`,
//! `temperature`, `top_p`, `stop`, `tool_choice`, `parallel_tool_calls`,
//! `response_format` (`json_schema`), `prompt_cache_key`,
//! `prompt_cache_retention`, `safety_identifier` and `metadata`.

use serde_json::{json, Map, Value};

use crate::providers::options::{check_schema_name, openai_reasoning_model, OptionReport};
use crate::providers::shared::openai_options::{effort, tool_choice, write_common};
use crate::providers::{EncodeError, Request};

/// The most stop sequences Chat Completions takes.
const MAX_STOP: usize = 4;

/// Writes the options of `request` into `body`.
pub(super) fn write_options(
    request: &Request,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) -> Result<(), EncodeError> {
    write_common(request, body, report);
    if let Some(effort) = effort(request, report) {
        body.insert("reasoning_effort".into(), effort.into());
    }
    if let Some(seed) = request.seed {
        body.insert("seed".into(), seed.into());
    }
    for (field, value) in [
        ("presence_penalty", request.presence_penalty),
        ("frequency_penalty", request.frequency_penalty),
    ] {
        if let Some(value) = value {
            body.insert(field.into(), json!(value));
        }
    }
    if request.top_k.is_some() {
        report.dropped(
            "top_k",
            "Chat Completions takes no top_k (for a server that does, set it with extra_body)",
        );
    }
    if !request.stop.is_empty() {
        if openai_reasoning_model(&request.model) {
            report.dropped(
                "stop",
                format!(
                    "`{}` is a reasoning model, which takes no stop sequences",
                    request.model
                ),
            );
        } else {
            if request.stop.len() > MAX_STOP {
                report.dropped(
                    "stop",
                    format!(
                        "{} stop sequences after the first {MAX_STOP}: the API takes at most {MAX_STOP}",
                        request.stop.len() - MAX_STOP
                    ),
                );
            }
            let stop: Vec<&String> = request.stop.iter().take(MAX_STOP).collect();
            body.insert("stop".into(), json!(stop));
        }
    }
    if let Some(choice) = tool_choice(
        request,
        report,
        |name| json!({"type": "function", "function": {"name": name}}),
    ) {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(format) = &request.response_format {
        check_schema_name(format)?;
        let mut schema = Map::new();
        schema.insert("name".into(), format.name.clone().into());
        if let Some(description) = &format.description {
            schema.insert("description".into(), description.clone().into());
        }
        schema.insert("schema".into(), format.schema.clone());
        schema.insert("strict".into(), format.strict.into());
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": schema}),
        );
    }
    Ok(())
}
