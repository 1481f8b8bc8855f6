//! Every model of the recorded conformance data is priced when the
//! `genai-prices` database knows it, at the database's rates, and has an
//! unknown cost when it does not (issue 26).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use agentmsg::providers::{anthropic, gemini, openai_chat, openai_responses, Catalog};
use agentmsg::{AssistantMessage, Message, Usage};
use serde_json::Value;

use crate::common;

/// The `model` (or Gemini's `modelVersion`) a response body or stream chunk
/// names, wherever the API puts it.
fn model_of(value: &Value) -> Option<&str> {
    [
        &value["model"],
        &value["modelVersion"],
        &value["message"]["model"],
        &value["response"]["model"],
    ]
    .into_iter()
    .find_map(Value::as_str)
    .filter(|m| !m.is_empty())
}

/// The provider of a vercel fixture directory.
fn provider_of(dir: &str) -> &'static str {
    match dir {
        "anthropic" => "anthropic",
        "google" => "google",
        _ => "openai",
    }
}

/// The JSON values of a recorded file: a body, or one per stream line (SSE
/// `data:` lines included).
fn values(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        return vec![value];
    }
    text.lines()
        .map(|l| l.strip_prefix("data: ").unwrap_or(l))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The database's own answer for `model` of `provider` at `timestamp`.
fn database_total(provider: &str, model: &str, timestamp: u64, usage: &Usage) -> Option<f64> {
    let input = usage.input + usage.cache_read + usage.cache_write;
    let tokens = genai_prices::Usage::from([
        (genai_prices::UsageKey::INPUT_TOKENS, input as f64),
        (
            genai_prices::UsageKey::CACHE_READ_TOKENS,
            usage.cache_read as f64,
        ),
        (
            genai_prices::UsageKey::CACHE_WRITE_TOKENS,
            usage.cache_write as f64,
        ),
        (genai_prices::UsageKey::OUTPUT_TOKENS, usage.output as f64),
    ]);
    let mut request = genai_prices::PriceRequest::new(model, &tokens).with_provider_id(provider);
    if timestamp != 0 {
        request = request
            .with_timestamp(std::time::UNIX_EPOCH + std::time::Duration::from_millis(timestamp));
    }
    genai_prices::calculate(&request)
        .ok()
        .map(|p| p.total_price)
}

#[test]
fn every_recorded_model_the_database_knows_is_priced_and_the_rest_are_unknown() {
    let dir = common::require_conformance!();
    // (provider, model) -> the timestamp to price it at (0: now) and where it was seen.
    let mut models: BTreeMap<(String, String), (u64, String)> = BTreeMap::new();
    let vercel = dir.join("responses/vercel");
    for sub in ["anthropic", "google", "openai/chat", "openai/responses"] {
        for path in common::files_ending(&vercel.join(sub), "") {
            if !path.is_file() {
                continue;
            }
            for value in values(&path) {
                if let Some(model) = model_of(&value) {
                    models
                        .entry((provider_of(sub).to_owned(), model.to_owned()))
                        .or_insert((0, common::file_name(&path)));
                }
            }
        }
    }
    for path in common::files_ending(&dir.join("responses/sse"), ".sse") {
        let provider = if common::file_name(&path).starts_with("anthropic") {
            "anthropic"
        } else {
            "openai"
        };
        for value in values(&path) {
            if let Some(model) = model_of(&value) {
                models
                    .entry((provider.to_owned(), model.to_owned()))
                    .or_insert((0, common::file_name(&path)));
            }
        }
    }
    for path in common::files_ending(&dir.join("transcripts/pi"), ".jsonl") {
        for value in values(&path) {
            let message = &value["message"];
            if message["role"] == "assistant" {
                if let (Some(provider), Some(model)) =
                    (message["provider"].as_str(), model_of(message))
                {
                    models
                        .entry((provider.to_owned(), model.to_owned()))
                        .or_insert((
                            message["timestamp"].as_u64().unwrap_or(0),
                            common::file_name(&path),
                        ));
                }
            }
        }
    }
    assert!(
        models.len() >= 20,
        "found only {} models: {models:?}",
        models.len()
    );

    let usage = Usage {
        input: 1_000,
        output: 500,
        cache_read: 2_000,
        cache_write: 100,
        ..Usage::default()
    };
    let (mut priced, mut unknown, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
    for ((provider, model), (timestamp, file)) in &models {
        let reply = AssistantMessage {
            provider: provider.clone(),
            model: model.clone(),
            timestamp: *timestamp,
            usage: usage.clone(),
            ..AssistantMessage::default()
        };
        let ours = Catalog::builtin().cost_of(&reply).map(|c| c.total);
        let theirs = database_total(provider, model, *timestamp, &usage);
        match (ours, theirs) {
            (Some(a), Some(b)) if (a - b).abs() < 1e-12 => {
                priced.push(format!("{provider}/{model}"))
            }
            (None, None) => unknown.push(format!("{provider}/{model}")),
            _ => wrong.push(format!(
                "{provider}/{model} ({file}): ours {ours:?}, the database's {theirs:?}"
            )),
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "conformance models: {} priced, {} unknown ({})",
        priced.len(),
        unknown.len(),
        unknown.join(", ")
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        priced.len() > unknown.len(),
        "priced {priced:?}, unknown {unknown:?}"
    );
    assert!(
        priced
            .iter()
            .any(|m| m == "anthropic/claude-sonnet-4-20250514"),
        "the recorded stream's model is priced: {priced:?}"
    );
}

#[test]
fn recorded_bodies_decode_priced_exactly_when_their_model_is_known() {
    let dir = common::require_conformance!().join("responses/vercel");
    let (mut priced, mut unknown) = (0, 0);
    for sub in ["anthropic", "google", "openai/chat", "openai/responses"] {
        for path in common::files_ending(&dir.join(sub), ".json") {
            let body = std::fs::read_to_string(&path).unwrap();
            let decoded = match sub {
                "anthropic" => anthropic::decode_response(&body),
                "google" => gemini::decode_response(&body),
                "openai/chat" => openai_chat::decode_response(&body),
                _ => openai_responses::decode_response(&body),
            };
            // Error bodies and the like are other tests' business.
            let Ok(message) = decoded else { continue };
            if message.usage.total() == 0 {
                continue;
            }
            let known = database_total(
                provider_of(sub),
                &message.model,
                message.timestamp,
                &message.usage,
            );
            let name = common::file_name(&path);
            match (message.usage.cost, known) {
                (Some(cost), Some(total)) => {
                    assert!(
                        (cost.total - total).abs() < 1e-12,
                        "{name}: {cost:?} vs {total}"
                    );
                    priced += 1;
                }
                (None, None) => unknown += 1,
                (cost, known) => panic!(
                    "{name} ({}): decoded cost {cost:?}, database {known:?}",
                    message.model
                ),
            }
            // And a summary says so.
            let summary = agentmsg::transcript::MessageQuery::summarize(
                [agentmsg::AgentMessage::from(Message::Assistant(message))].iter(),
            );
            assert_eq!(summary.total_cost().is_some(), known.is_some(), "{name}");
        }
    }
    assert!(priced > unknown, "priced {priced}, unknown {unknown}");
}

#[test]
fn bedrock_and_vertex_model_ids_are_priced_by_the_database() {
    let usage = Usage {
        input: 10_000,
        output: 2_000,
        cache_read: 5_000,
        cache_write: 1_000,
        ..Usage::default()
    };
    let cost = |provider: &str, model: &str| {
        let reply = AssistantMessage {
            provider: provider.into(),
            model: model.into(),
            usage: usage.clone(),
            ..AssistantMessage::default()
        };
        Catalog::builtin().cost_of(&reply).map(|c| c.total)
    };
    // Bedrock's ids as Converse is asked for them (a reply names none; the
    // client stamps the request's): foundation models, cross-region
    // inference profiles, ARNs of either; each at the database's own price
    // of the id under its AWS provider.
    for model in [
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "anthropic.claude-sonnet-4-20250514-v1:0",
        "anthropic.claude-3-5-haiku-20241022-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
        "amazon.nova-pro-v1:0",
        "us.amazon.nova-pro-v1:0",
        "meta.llama3-1-8b-instruct-v1:0",
    ] {
        let ours = cost("amazon-bedrock", model);
        assert!(ours.is_some_and(|c| c > 0.0), "{model}: {ours:?}");
        assert_eq!(ours, database_total("aws", model, 0, &usage), "{model}");
    }
    // A cross-region profile is Bedrock's price (10% over the global one for
    // Sonnet 4.5), not Anthropic's.
    assert_ne!(
        cost(
            "amazon-bedrock",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ),
        cost(
            "amazon-bedrock",
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
        )
    );
    // An application inference profile names no model: unknown, not free.
    assert_eq!(
        cost(
            "amazon-bedrock",
            "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6"
        ),
        None
    );
    // Claude on Vertex AI (a reply says `anthropic`): `@date` ids are the
    // dated model's price.
    for (vertex, dated) in [
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"),
        ("claude-opus-4-1@20250805", "claude-opus-4-1-20250805"),
        ("claude-3-5-haiku@20241022", "claude-3-5-haiku-20241022"),
    ] {
        let ours = cost("anthropic", vertex);
        assert!(ours.is_some(), "{vertex}");
        assert_eq!(ours, cost("anthropic", dated), "{vertex}");
    }
    // Gemini on Vertex: the same model ids as the Gemini API.
    assert_eq!(
        cost("google", "gemini-2.5-pro"),
        database_total("google", "gemini-2.5-pro", 0, &usage)
    );
}
