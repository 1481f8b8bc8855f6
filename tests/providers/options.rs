//! Request options, written once with what each API sends: every body is
//! checked against the API's published schema and written for the SDK-strict
//! check, and every option an API or model cannot take is said in
//! `Encoded::options`, never dropped silently.

use agentmsg::providers::{
    Effort, OptionChangeKind, PromptCache, Reasoning, Request, ResponseFormat, ToolChoice, ToolSpec,
};
use agentmsg::Message;
use serde_json::{json, Value};

use crate::common;
use crate::scenarios::{Api, APIS};

use OptionChangeKind::{Changed, Dropped};

/// A request with these options, and what each API (in the order of [`APIS`])
/// must send and say.
struct Case {
    name: &'static str,
    /// The model each API is asked for.
    models: [&'static str; 4],
    options: fn(Request) -> Request,
    /// JSON pointers into the body and the JSON each must hold (`null`: absent).
    sent: [&'static [(&'static str, &'static str)]; 4],
    /// The option changes, in order.
    said: [&'static [(&'static str, OptionChangeKind)]; 4],
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "read",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}},
                "required": ["path"], "additionalProperties": false}),
        ),
        ToolSpec::new("now", "The time", json!({})),
    ]
}

fn answer() -> ResponseFormat {
    ResponseFormat::json_schema(
        "answer",
        json!({"type": "object", "properties": {"text": {"type": "string"}},
            "required": ["text"], "additionalProperties": false}),
    )
}

/// Every option on.
fn everything(request: Request) -> Request {
    request
        .with_reasoning(Reasoning::Effort(Effort::High))
        .with_temperature(0.5)
        .with_top_p(0.9)
        .with_stop(["END"])
        .with_tool_choice(ToolChoice::Tool("read".into()))
        .with_parallel_tool_calls(false)
        .with_response_format(answer().with_description("The answer"))
        .with_cache(PromptCache::new().with_key("session-1").long())
        .with_user("user-7")
        .with_metadata("run", "42")
}

const CASES: &[Case] = &[
    Case {
        name: "everything",
        models: [
            "claude-sonnet-4-5",
            "gemini-3-pro-preview",
            "gpt-5",
            "gpt-5",
        ],
        options: everything,
        sent: [
            &[
                ("/thinking", r#"{"type":"enabled","budget_tokens":16000}"#),
                ("/max_tokens", "20096"),
                ("/stop_sequences", r#"["END"]"#),
                (
                    "/tool_choice",
                    r#"{"type":"auto","disable_parallel_tool_use":true}"#,
                ),
                ("/output_config/format/type", r#""json_schema""#),
                (
                    "/system/0/cache_control",
                    r#"{"type":"ephemeral","ttl":"1h"}"#,
                ),
                (
                    "/tools/1/cache_control",
                    r#"{"type":"ephemeral","ttl":"1h"}"#,
                ),
                (
                    "/messages/0/content/0/cache_control",
                    r#"{"type":"ephemeral","ttl":"1h"}"#,
                ),
                ("/metadata", r#"{"user_id":"user-7"}"#),
                ("/temperature", "null"),
                ("/top_p", "null"),
            ],
            &[
                (
                    "/generationConfig/thinkingConfig",
                    r#"{"thinkingLevel":"HIGH","includeThoughts":true}"#,
                ),
                ("/generationConfig/temperature", "0.5"),
                ("/generationConfig/topP", "0.9"),
                ("/generationConfig/stopSequences", r#"["END"]"#),
                (
                    "/generationConfig/responseMimeType",
                    r#""application/json""#,
                ),
                (
                    "/generationConfig/responseJsonSchema/required",
                    r#"["text"]"#,
                ),
                (
                    "/toolConfig",
                    r#"{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["read"]}}"#,
                ),
            ],
            &[
                ("/reasoning_effort", r#""high""#),
                ("/temperature", "null"),
                ("/stop", "null"),
                (
                    "/tool_choice",
                    r#"{"type":"function","function":{"name":"read"}}"#,
                ),
                ("/parallel_tool_calls", "false"),
                ("/response_format/type", r#""json_schema""#),
                ("/response_format/json_schema/strict", "true"),
                (
                    "/response_format/json_schema/description",
                    r#""The answer""#,
                ),
                ("/prompt_cache_key", r#""session-1""#),
                ("/prompt_cache_retention", r#""24h""#),
                ("/safety_identifier", r#""user-7""#),
                ("/metadata", r#"{"run":"42"}"#),
            ],
            &[
                ("/reasoning", r#"{"effort":"high","summary":"auto"}"#),
                ("/include", r#"["reasoning.encrypted_content"]"#),
                ("/temperature", "null"),
                ("/tool_choice", r#"{"type":"function","name":"read"}"#),
                ("/parallel_tool_calls", "false"),
                ("/text/format/name", r#""answer""#),
                ("/text/format/strict", "true"),
                ("/prompt_cache_key", r#""session-1""#),
                ("/prompt_cache_retention", r#""24h""#),
                ("/safety_identifier", r#""user-7""#),
                ("/metadata", r#"{"run":"42"}"#),
            ],
        ],
        said: [
            &[
                ("max_tokens", Changed),
                ("temperature", Dropped),
                ("top_p", Dropped),
                ("tool_choice", Changed),
                ("response_format", Dropped),
                ("cache", Dropped),
                ("metadata", Dropped),
            ],
            &[
                ("response_format", Dropped),
                ("parallel_tool_calls", Dropped),
                ("cache", Dropped),
                ("user", Dropped),
                ("metadata", Dropped),
            ],
            &[
                ("temperature", Dropped),
                ("top_p", Dropped),
                ("stop", Dropped),
            ],
            &[
                ("temperature", Dropped),
                ("top_p", Dropped),
                ("stop", Dropped),
            ],
        ],
    },
    Case {
        name: "sampling-on-classic-models",
        models: ["claude-haiku-4-5", "gemini-2.0-flash", "gpt-4.1", "gpt-4.1"],
        options: |r| {
            r.with_temperature(0.2)
                .with_top_p(1.0)
                .with_stop(["a", "b", "c", "d", "e", "f"])
                .with_reasoning(Reasoning::Effort(Effort::Low))
                .with_tool_choice(ToolChoice::Required)
        },
        sent: [
            &[
                ("/stop_sequences", r#"["a","b","c","d","e","f"]"#),
                ("/tool_choice", r#"{"type":"auto"}"#),
                ("/thinking/budget_tokens", "4096"),
                ("/max_tokens", "8192"),
            ],
            &[
                ("/generationConfig/temperature", "0.2"),
                (
                    "/generationConfig/stopSequences",
                    r#"["a","b","c","d","e"]"#,
                ),
                ("/generationConfig/thinkingConfig", "null"),
                ("/toolConfig/functionCallingConfig/mode", r#""ANY""#),
            ],
            &[
                ("/temperature", "0.2"),
                ("/top_p", "1.0"),
                ("/stop", r#"["a","b","c","d"]"#),
                ("/reasoning_effort", "null"),
                ("/tool_choice", r#""required""#),
            ],
            &[
                ("/temperature", "0.2"),
                ("/top_p", "1.0"),
                ("/reasoning", "null"),
                ("/include", "null"),
                ("/tool_choice", r#""required""#),
            ],
        ],
        said: [
            &[
                ("max_tokens", Changed),
                ("temperature", Dropped),
                ("top_p", Dropped),
                ("tool_choice", Changed),
            ],
            &[("reasoning", Dropped), ("stop", Dropped)],
            &[("reasoning", Dropped), ("stop", Dropped)],
            &[("reasoning", Dropped), ("stop", Dropped)],
        ],
    },
    Case {
        name: "budgets",
        models: ["claude-opus-4-7", "gemini-2.5-pro", "o4-mini", "gpt-5.1"],
        options: |r| {
            r.with_reasoning(Reasoning::Budget(50))
                .with_max_tokens(2000)
        },
        sent: [
            &[
                ("/thinking", r#"{"type":"adaptive"}"#),
                ("/output_config", r#"{"effort":"low"}"#),
                ("/max_tokens", "2000"),
            ],
            &[(
                "/generationConfig",
                r#"{"maxOutputTokens":2000,"thinkingConfig":{"thinkingBudget":128,"includeThoughts":true}}"#,
            )],
            &[("/reasoning_effort", r#""minimal""#)],
            &[("/reasoning", r#"{"effort":"minimal","summary":"auto"}"#)],
        ],
        said: [
            &[("reasoning", Changed), ("reasoning", Changed)],
            &[("reasoning", Changed)],
            &[("reasoning", Changed)],
            &[("reasoning", Changed)],
        ],
    },
    Case {
        name: "adaptive-and-off",
        models: ["claude-opus-4-6", "gemini-2.5-flash", "gpt-5.1", "gpt-5.1"],
        options: |r| {
            r.with_reasoning(Reasoning::Off)
                .with_tool_choice(ToolChoice::None)
                .with_parallel_tool_calls(false)
                .with_response_format(answer().with_strict(false))
                .with_cache(PromptCache::new())
        },
        sent: [
            &[
                ("/thinking", r#"{"type":"disabled"}"#),
                ("/tool_choice", r#"{"type":"none"}"#),
                ("/system/0/cache_control", r#"{"type":"ephemeral"}"#),
                ("/output_config/format/schema/required", r#"["text"]"#),
            ],
            &[
                (
                    "/generationConfig/thinkingConfig",
                    r#"{"thinkingBudget":0,"includeThoughts":false}"#,
                ),
                ("/toolConfig/functionCallingConfig", r#"{"mode":"NONE"}"#),
            ],
            &[
                ("/reasoning_effort", r#""none""#),
                ("/tool_choice", r#""none""#),
                ("/response_format/json_schema/strict", "false"),
                ("/prompt_cache_key", "null"),
            ],
            &[
                ("/reasoning", r#"{"effort":"none"}"#),
                ("/include", "null"),
                ("/text/format/strict", "false"),
            ],
        ],
        said: [
            &[
                ("parallel_tool_calls", Dropped),
                ("response_format", Changed),
            ],
            &[("parallel_tool_calls", Dropped), ("cache", Dropped)],
            &[],
            &[],
        ],
    },
    Case {
        name: "no-tools",
        models: [
            "claude-opus-4-6",
            "gemini-3-flash-preview",
            "gpt-5",
            "gpt-5",
        ],
        options: |r| {
            r.with_tools(Vec::new())
                .with_reasoning(Reasoning::Effort(Effort::Minimal))
                .with_tool_choice(ToolChoice::Auto)
                .with_parallel_tool_calls(true)
        },
        sent: [
            &[
                ("/thinking", r#"{"type":"adaptive"}"#),
                ("/output_config/effort", r#""low""#),
                ("/tool_choice", "null"),
            ],
            &[
                (
                    "/generationConfig/thinkingConfig/thinkingLevel",
                    r#""MINIMAL""#,
                ),
                ("/toolConfig", "null"),
            ],
            &[("/tool_choice", "null"), ("/parallel_tool_calls", "null")],
            &[("/tool_choice", "null"), ("/parallel_tool_calls", "null")],
        ],
        said: [
            &[
                ("reasoning", Changed),
                ("tool_choice", Dropped),
                ("parallel_tool_calls", Dropped),
            ],
            &[("tool_choice", Dropped), ("parallel_tool_calls", Dropped)],
            &[("tool_choice", Dropped), ("parallel_tool_calls", Dropped)],
            &[("tool_choice", Dropped), ("parallel_tool_calls", Dropped)],
        ],
    },
];

fn request(api: &Api, model: &str) -> Request<'static> {
    let _ = api;
    Request::new(model, vec![Message::user("What time is it?")])
        .with_system("Answer in JSON.")
        .with_tools(tools())
}

#[test]
fn every_option_is_sent_as_each_api_documents_or_said_why_not() {
    let mut wrong = Vec::new();
    for case in CASES {
        for (i, api) in APIS.iter().enumerate() {
            let request = (case.options)(request(api, case.models[i]));
            let encoded = match (api.encode)(&request) {
                Ok(encoded) => encoded,
                Err(e) => {
                    wrong.push(format!("{} on {}: {e}", case.name, api.name));
                    continue;
                }
            };
            for (pointer, expected) in case.sent[i] {
                let expected: Value = serde_json::from_str(expected).expect("expectation is JSON");
                let got = encoded
                    .body
                    .pointer(pointer)
                    .cloned()
                    .unwrap_or(Value::Null);
                if got != expected {
                    wrong.push(format!(
                        "{} on {}: {pointer} is {got}, expected {expected}",
                        case.name, api.name
                    ));
                }
            }
            let said: Vec<_> = encoded.options.iter().map(|c| (c.option, c.kind)).collect();
            if said != case.said[i] {
                wrong.push(format!(
                    "{} on {}: said {:?}, expected {:?}",
                    case.name,
                    api.name,
                    encoded
                        .options
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>(),
                    case.said[i]
                ));
            }
            for error in common::schema_errors(api.schema, &encoded.body) {
                wrong.push(format!("{} on {}: schema: {error}", case.name, api.name));
            }
            let text = serde_json::to_string_pretty(&encoded.body).expect("serializes");
            std::fs::write(
                common::sdk_dir(api.name).join(format!("options-{}.json", case.name)),
                text,
            )
            .expect("write body");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn options_no_api_takes_are_errors_that_name_them() {
    for api in &APIS {
        let base = || request(api, "m-1").with_model_for(api);
        let cases = [
            (
                base().with_tool_choice(ToolChoice::Tool("write".into())),
                "tool_choice",
            ),
            (base().with_temperature(2.5), "temperature"),
            (base().with_top_p(-0.1), "top_p"),
            (base().with_stop(["ok", ""]), "stop[1]"),
        ];
        for (request, field) in cases {
            let error = (api.encode)(&request).expect_err(field);
            assert!(error.to_string().contains(field), "{}: {error}", api.name);
        }
    }
    for api in &APIS[2..] {
        let request = request(api, "gpt-5")
            .with_response_format(ResponseFormat::json_schema("an answer", json!({})));
        let error = (api.encode)(&request).expect_err("schema name");
        assert!(
            error.to_string().contains("response_format.name"),
            "{error}"
        );
    }
}

/// Sets the model each API is usually asked for (the tests above pass their own).
trait ModelFor {
    fn with_model_for(self, api: &Api) -> Self;
}

impl ModelFor for Request<'_> {
    fn with_model_for(mut self, api: &Api) -> Self {
        self.model = api.model.to_owned();
        self
    }
}

#[test]
fn reasoning_and_tool_choice_parse_from_their_cli_spelling() {
    assert_eq!("xhigh".parse(), Ok(Reasoning::Effort(Effort::Xhigh)));
    assert_eq!("none".parse(), Ok(Reasoning::Off));
    assert_eq!("1024".parse(), Ok(Reasoning::Budget(1024)));
    assert!("lots"
        .parse::<Reasoning>()
        .unwrap_err()
        .to_string()
        .contains("lots"));
    assert_eq!("required".parse(), Ok(ToolChoice::Required));
    assert_eq!("read".parse(), Ok(ToolChoice::Tool("read".into())));
    assert!("".parse::<ToolChoice>().is_err());
    assert_eq!(Effort::from_budget(0), Effort::Minimal);
    assert_eq!(Effort::from_budget(12_000), Effort::Medium);
    assert_eq!(Effort::from_budget(u32::MAX), Effort::Xhigh);
}
