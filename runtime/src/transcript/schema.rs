//! The JSON Schema of one transcript line.

use serde_json::{json, Value};

/// The JSON Schema (draft 2020-12) of one transcript line, as this build reads
/// it.
///
/// - `system`, `user`, `assistant` and `toolResult` lines are checked field by
///   field, with the content blocks each role allows. The names the reader also
///   accepts are allowed (`textSignature`, `thinkingSignature`,
///   `thoughtSignature`, a string as user or system content).
/// - The built-in kinds `compactionSummary`, `branchSummary` and `extension` are
///   checked field by field.
/// - Any other `"role"` is a custom kind: a JSON object whose reserved keys are
///   well typed (`id` and `turnId` strings, `parentId` a string or `null`, `v`
///   an integer of at least 1). Its
///   own fields are the application's business: the schema cannot know them.
///
/// Keys a kind does not define are allowed (pi writes some, such as a tool
/// call's `partialJson`): the reader ignores them, and they are not written back.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// let schema = agentmsg::transcript::transcript_line_schema();
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// assert_eq!(schema["required"][0], "role");
/// ```
pub fn transcript_line_schema() -> Value {
    let reserved_llm = ["system", "user", "assistant", "toolResult"];
    let built_in = ["compactionSummary", "branchSummary", "extension"];
    let kind_rule = |role: &str, def: &str| {
        json!({
            "if": {"properties": {"role": {"const": role}}, "required": ["role"]},
            "then": {"$ref": format!("#/$defs/{def}")}
        })
    };
    let mut rules: Vec<Value> = reserved_llm
        .iter()
        .chain(built_in.iter())
        .map(|role| kind_rule(role, role))
        .collect();
    let named: Vec<&str> = reserved_llm
        .iter()
        .chain(built_in.iter())
        .copied()
        .collect();
    rules.push(json!({
        "if": {"properties": {"role": {"not": {"enum": named}}}, "required": ["role"]},
        "then": {"$ref": "#/$defs/custom"}
    }));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:agentmsg:transcript-line",
        "title": "agentmsg transcript line",
        "description": "One line of an agentmsg transcript (JSON Lines): an LLM message, a built-in kind or an application's custom kind, tagged by \"role\".",
        "type": "object",
        "required": ["role"],
        "properties": {
            "role": {"type": "string", "minLength": 1},
            "id": {"$ref": "#/$defs/id"},
            "turnId": {"$ref": "#/$defs/id"},
            "parentId": {
                "type": ["string", "null"],
                "description": "The entry this line hangs from in the session tree; null for a root. A line without it follows the line before it."
            }
        },
        "allOf": rules,
        "$defs": definitions()
    })
}

/// The definitions the line schema refers to.
fn definitions() -> Value {
    let mut defs = serde_json::Map::new();
    defs.insert("id".into(), json!({"type": "string"}));
    defs.insert(
        "timestamp".into(),
        json!({"type": "integer", "minimum": 0, "description": "Unix milliseconds"}),
    );
    defs.insert("count".into(), json!({"type": "integer", "minimum": 0}));
    defs.insert(
        "noVersion".into(),
        json!({"not": {}, "description": "`v` is for custom kinds only"}),
    );
    defs.insert(
        "text".into(),
        json!({
            "type": "object",
            "required": ["type", "text"],
            "properties": {
                "type": {"const": "text"},
                "text": {"type": "string"},
                "signature": {"type": "string"},
                "textSignature": {"type": "string"},
                "citations": {
                    "description": "the provider's citations of this text, verbatim (Anthropic `citations`, OpenAI Responses `annotations`)"
                }
            }
        }),
    );
    defs.insert("media".into(), json!({
                "description": "base64 `data` with its `mimeType`, or a `url`",
                "oneOf": [
                    {"required": ["data", "mimeType"], "not": {"required": ["url"]}},
                    {"required": ["url"], "not": {"anyOf": [{"required": ["data"]}, {"required": ["mimeType"]}]}}
                ]
            }));
    defs.insert(
        "image".into(),
        json!({
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"const": "image"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
                "url": {"type": "string"}
            },
            "allOf": [{"$ref": "#/$defs/media"}]
        }),
    );
    defs.insert(
        "audio".into(),
        json!({
            "type": "object",
            "required": ["type", "data", "mimeType"],
            "properties": {
                "type": {"const": "audio"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"}
            }
        }),
    );
    defs.insert(
        "document".into(),
        json!({
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"const": "document"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
                "url": {"type": "string"},
                "title": {"type": "string"}
            },
            "allOf": [{"$ref": "#/$defs/media"}]
        }),
    );
    defs.insert(
        "thinking".into(),
        json!({
            "type": "object",
            "required": ["type", "thinking"],
            "properties": {
                "type": {"const": "thinking"},
                "thinking": {"type": "string"},
                "signature": {"type": "string"},
                "thinkingSignature": {"type": "string"}
            }
        }),
    );
    defs.insert(
        "redactedThinking".into(),
        json!({
            "type": "object",
            "required": ["type", "data"],
            "properties": {"type": {"const": "redactedThinking"}, "data": {"type": "string"}}
        }),
    );
    defs.insert(
        "providerBlock".into(),
        json!({
            "type": "object",
            "description": "a block of the provider's own (a server-side tool call or result…), kept verbatim and replayed only to the api that wrote it",
            "required": ["type", "api", "block"],
            "properties": {
                "type": {"const": "providerBlock"},
                "api": {"type": "string"},
                "block": {"type": "object"}
            }
        }),
    );
    defs.insert(
        "toolCall".into(),
        json!({
            "type": "object",
            "required": ["type", "id", "name", "arguments"],
            "properties": {
                "type": {"const": "toolCall"},
                "id": {"type": "string"},
                "name": {"type": "string"},
                "arguments": {"type": "object"},
                "signature": {"type": "string"},
                "thoughtSignature": {"type": "string"}
            }
        }),
    );
    defs.insert(
        "system".into(),
        json!({
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "role": {"const": "system"},
                "content": {"oneOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"$ref": "#/$defs/text"}}
                ]},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "v": {"$ref": "#/$defs/noVersion"}
            }
        }),
    );
    defs.insert(
        "user".into(),
        json!({
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "role": {"const": "user"},
                "content": {"oneOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"oneOf": [
                        {"$ref": "#/$defs/text"},
                        {"$ref": "#/$defs/image"},
                        {"$ref": "#/$defs/audio"},
                        {"$ref": "#/$defs/document"}
                    ]}}
                ]},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "v": {"$ref": "#/$defs/noVersion"}
            }
        }),
    );
    defs.insert(
        "usage".into(),
        json!({
            "type": "object",
            "properties": {
                "input": {"$ref": "#/$defs/count"},
                "output": {"$ref": "#/$defs/count"},
                "reasoning": {"$ref": "#/$defs/count"},
                "cacheRead": {"$ref": "#/$defs/count"},
                "cacheWrite": {"$ref": "#/$defs/count"},
                "totalTokens": {"$ref": "#/$defs/count"},
                "cost": {
                    "type": "object",
                    "properties": {
                        "input": {"type": "number"},
                        "output": {"type": "number"},
                        "cacheRead": {"type": "number"},
                        "cacheWrite": {"type": "number"},
                        "total": {"type": "number"}
                    }
                }
            }
        }),
    );
    defs.insert(
        "assistant".into(),
        json!({
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "role": {"const": "assistant"},
                "content": {"type": "array", "items": {"oneOf": [
                    {"$ref": "#/$defs/text"},
                    {"$ref": "#/$defs/image"},
                    {"$ref": "#/$defs/thinking"},
                    {"$ref": "#/$defs/redactedThinking"},
                    {"$ref": "#/$defs/toolCall"},
                    {"$ref": "#/$defs/providerBlock"}
                ]}},
                "api": {"type": "string"},
                "provider": {"type": "string"},
                "model": {"type": "string"},
                "responseId": {"type": "string"},
                "usage": {"$ref": "#/$defs/usage"},
                "stopReason": {"enum": [
                    "stop", "length", "toolUse", "error", "aborted", "maxTurns",
                    "userStop", "handoff", "guardRail", "contextCompacted", "paused"
                ]},
                "errorMessage": {"type": "string"},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "v": {"$ref": "#/$defs/noVersion"}
            }
        }),
    );
    defs.insert(
        "toolResult".into(),
        json!({
            "type": "object",
            "required": ["role", "toolCallId", "toolName", "content"],
            "properties": {
                "role": {"const": "toolResult"},
                "toolCallId": {"type": "string"},
                "toolName": {"type": "string"},
                "content": {"oneOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"oneOf": [
                        {"$ref": "#/$defs/text"},
                        {"$ref": "#/$defs/image"}
                    ]}}
                ]},
                "isError": {"type": "boolean"},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "details": true,
                "v": {"$ref": "#/$defs/noVersion"}
            }
        }),
    );
    defs.insert(
        "custom".into(),
        json!({
            "type": "object",
            "properties": {
                "v": {"type": "integer", "minimum": 1}
            }
        }),
    );
    defs.insert(
        "compactionSummary".into(),
        json!({
            "type": "object",
            "required": ["role", "summary"],
            "properties": {
                "role": {"const": "compactionSummary"},
                "summary": {"type": "string"},
                "tokensBefore": {"$ref": "#/$defs/count"},
                "firstKeptId": {"$ref": "#/$defs/id"},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "v": {"type": "integer", "minimum": 1, "maximum": 1}
            }
        }),
    );
    defs.insert(
        "branchSummary".into(),
        json!({
            "type": "object",
            "required": ["role", "summary"],
            "properties": {
                "role": {"const": "branchSummary"},
                "summary": {"type": "string"},
                "fromId": {"$ref": "#/$defs/id"},
                "timestamp": {"$ref": "#/$defs/timestamp"},
                "v": {"type": "integer", "minimum": 1, "maximum": 1}
            }
        }),
    );
    defs.insert(
        "extension".into(),
        json!({
            "type": "object",
            "required": ["role", "kind"],
            "properties": {
                "role": {"const": "extension"},
                "kind": {"type": "string"},
                "data": true,
                "v": {"type": "integer", "minimum": 1, "maximum": 1}
            }
        }),
    );
    Value::Object(defs)
}
