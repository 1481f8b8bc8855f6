//! The request options as the Responses API takes them: `reasoning`
//! (`effort`, `summary`) with `include: ["reasoning.encrypted_content"]` so the
//! reasoning can be replayed, `temperature`, `top_p`, `tool_choice`,
//! `parallel_tool_calls`, `text.format` (`json_schema`), `prompt_cache_key`,
//! `prompt_cache_retention`, `safety_identifier` and `metadata`. The API takes
//! no stop sequences.

use serde_json::{json, Map, Value};

use crate::providers::options::{check_schema_name, OptionReport};
use crate::providers::shared::openai_options::{effort, tool_choice, write_common};
use crate::providers::{EncodeError, Request};

/// Writes the options of `request` into `body`.
pub(super) fn write_options(
    request: &Request,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) -> Result<(), EncodeError> {
    write_common(request, body, report);
    if let Some(effort) = effort(request, report) {
        if effort == "none" {
            body.insert("reasoning".into(), json!({"effort": effort}));
        } else {
            body.insert(
                "reasoning".into(),
                json!({"effort": effort, "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    if !request.stop.is_empty() {
        report.dropped("stop", "the Responses API takes no stop sequences");
    }
    for (option, set) in [
        ("seed", request.seed.is_some()),
        ("top_k", request.top_k.is_some()),
        ("presence_penalty", request.presence_penalty.is_some()),
        ("frequency_penalty", request.frequency_penalty.is_some()),
    ] {
        if set {
            report.dropped(option, "the Responses API does not take it");
        }
    }
    if let Some(choice) = tool_choice(
        request,
        report,
        |name| json!({"type": "function", "name": name}),
    ) {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(format) = &request.response_format {
        check_schema_name(format)?;
        let mut out = Map::new();
        out.insert("type".into(), "json_schema".into());
        out.insert("name".into(), format.name.clone().into());
        if let Some(description) = &format.description {
            out.insert("description".into(), description.clone().into());
        }
        out.insert("schema".into(), format.schema.clone());
        out.insert("strict".into(), format.strict.into());
        body.insert("text".into(), json!({"format": out}));
    }
    Ok(())
}
