//! The request options as Gemini takes them: `generationConfig` (`thinkingConfig`,
//! `temperature`, `topP`, `stopSequences`, `responseMimeType` with
//! `responseJsonSchema`) and `toolConfig.functionCallingConfig`. Gemini takes
//! no parallel-call switch, no cache settings in a request (its implicit cache
//! needs none; explicit caches are a separate resource), and no user id or
//! metadata (labels are Vertex AI's only).

use serde_json::{json, Map, Value};

use crate::providers::options::{tool_choice_without_tools, OptionReport};
use crate::providers::{Effort, Reasoning, Request, ToolChoice};

/// The most stop sequences Gemini takes.
const MAX_STOP: usize = 5;

/// The thinking a model family takes.
enum Thinking {
    /// Gemini 3: levels, of which these (`MINIMAL`…`HIGH`) from the least.
    Levels(&'static [&'static str]),
    /// Gemini 2.5: a token budget from `min` (0: thinking can be off) to `max`.
    Budget { min: u32, max: u32 },
    /// No thinking.
    None,
}

fn thinking(model: &str) -> Thinking {
    let name = model.rsplit('/').next().unwrap_or(model);
    if name.starts_with("gemini-3") && name.contains("pro") {
        Thinking::Levels(&["LOW", "HIGH"])
    } else if name.starts_with("gemini-3") {
        Thinking::Levels(&["MINIMAL", "LOW", "MEDIUM", "HIGH"])
    } else if name.starts_with("gemini-2.5-pro") {
        Thinking::Budget {
            min: 128,
            max: 32_768,
        }
    } else if name.starts_with("gemini-2.5") {
        Thinking::Budget {
            min: 0,
            max: 24_576,
        }
    } else {
        Thinking::None
    }
}

/// The level of `wanted` (0 minimal … 4 xhigh) among `levels`: the closest one
/// at or below it, or the least.
fn level(levels: &[&'static str], wanted: &str) -> &'static str {
    const ORDER: [&str; 5] = ["MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH"];
    let rank = |l: &str| ORDER.iter().position(|o| *o == l).unwrap_or(0);
    let want = rank(wanted);
    levels
        .iter()
        .rev()
        .find(|l| rank(l) <= want)
        .or(levels.first())
        .copied()
        .unwrap_or("LOW")
}

/// `thinkingConfig`, if any.
fn thinking_config(request: &Request, report: &mut OptionReport) -> Option<Value> {
    let reasoning = request.reasoning?;
    let model = request.model.as_str();
    match thinking(model) {
        Thinking::None => {
            report.dropped("reasoning", format!("`{model}` does not think"));
            None
        }
        Thinking::Levels(levels) => {
            let wanted = match reasoning {
                Reasoning::Off => "MINIMAL",
                Reasoning::Effort(effort) => effort_level(effort),
                Reasoning::Budget(tokens) => effort_level(Effort::from_budget(tokens)),
            };
            let sent = level(levels, wanted);
            let asked = reasoning.to_string();
            if sent != wanted || matches!(reasoning, Reasoning::Off | Reasoning::Budget(_)) {
                report.changed(
                    "reasoning",
                    format!("`{asked}` sent as the thinking level {sent}: `{model}` takes the levels {}", levels.join(", ")),
                );
            }
            let on = !matches!(reasoning, Reasoning::Off);
            Some(json!({"thinkingLevel": sent, "includeThoughts": on}))
        }
        Thinking::Budget { min, max } => {
            let wanted = match reasoning {
                Reasoning::Off => 0,
                Reasoning::Effort(effort) => effort.budget(),
                Reasoning::Budget(tokens) => tokens,
            };
            let sent = wanted.clamp(min, max);
            if sent != wanted {
                report.changed(
                    "reasoning",
                    format!("a thinking budget of {wanted} tokens sent as {sent}: `{model}` takes {min} to {max}"),
                );
            }
            Some(json!({"thinkingBudget": sent, "includeThoughts": sent > 0}))
        }
    }
}

fn effort_level(effort: Effort) -> &'static str {
    match effort {
        Effort::Minimal => "MINIMAL",
        Effort::Low => "LOW",
        Effort::Medium => "MEDIUM",
        Effort::High => "HIGH",
        Effort::Xhigh => "XHIGH",
    }
}

/// Writes the options of `request` into `body` (whose `contents` and `tools`
/// are written), with `generationConfig.maxOutputTokens`.
pub(super) fn write_options(
    request: &Request,
    body: &mut Map<String, Value>,
    report: &mut OptionReport,
) {
    let mut config = Map::new();
    if let Some(max) = request.max_tokens {
        config.insert("maxOutputTokens".into(), max.min(i32::MAX as u32).into());
    }
    if let Some(thinking) = thinking_config(request, report) {
        config.insert("thinkingConfig".into(), thinking);
    }
    if let Some(t) = request.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        config.insert("topP".into(), json!(p));
    }
    if let Some(k) = request.top_k {
        config.insert("topK".into(), k.into());
    }
    if let Some(seed) = request.seed {
        config.insert("seed".into(), seed.into());
    }
    if let Some(p) = request.presence_penalty {
        config.insert("presencePenalty".into(), json!(p));
    }
    if let Some(p) = request.frequency_penalty {
        config.insert("frequencyPenalty".into(), json!(p));
    }
    if request.service_tier.is_some() {
        report.dropped("service_tier", "Gemini has no service tiers");
    }
    if !request.stop.is_empty() {
        if request.stop.len() > MAX_STOP {
            report.dropped(
                "stop",
                format!(
                    "{} stop sequences after the first {MAX_STOP}: Gemini takes at most {MAX_STOP}",
                    request.stop.len() - MAX_STOP
                ),
            );
        }
        let stop: Vec<&String> = request.stop.iter().take(MAX_STOP).collect();
        config.insert("stopSequences".into(), json!(stop));
    }
    if let Some(format) = &request.response_format {
        config.insert("responseMimeType".into(), "application/json".into());
        config.insert("responseJsonSchema".into(), format.schema.clone());
        if format.description.is_some() {
            report.dropped(
                "response_format",
                "the description: Gemini takes the schema only",
            );
        }
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    if !tool_choice_without_tools(request, report) {
        if let Some(choice) = &request.tool_choice {
            let config = match choice {
                ToolChoice::Auto => json!({"mode": "AUTO"}),
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
            };
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": config}),
            );
        }
        if request.parallel_tool_calls == Some(false) {
            report.dropped(
                "parallel_tool_calls",
                "Gemini takes no switch for parallel calls",
            );
        }
    }
    if request.cache.is_some() {
        report.dropped(
            "cache",
            "Gemini caches implicitly; an explicit cache is a separate resource (cachedContent)",
        );
    }
    if request.user.is_some() {
        report.dropped("user", "Gemini takes no user id");
    }
    if !request.metadata.is_empty() {
        report.dropped(
            "metadata",
            "Gemini takes no metadata (labels are Vertex AI's only)",
        );
    }
}
