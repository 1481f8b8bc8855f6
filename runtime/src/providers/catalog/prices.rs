//! Prices from the `genai-prices` database (the `prices` feature).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use genai_prices::{Calculator, ErrorKind, PriceRequest, Usage, UsageKey};

use crate::{AssistantMessage, Cost};

/// The database's provider id for ours, where they differ.
fn provider_id(provider: &str) -> &str {
    match provider {
        "xai" => "x-ai",
        "google-generative-ai" | "gemini" | "google-vertex" => "google",
        other => other,
    }
}

/// What `message` cost at the database's rates on its date; `None` when the
/// database does not know its model.
pub(super) fn cost(message: &AssistantMessage) -> Option<Cost> {
    let Asked {
        provider,
        when,
        total,
    } = asked_total(message)?;
    let usage = &message.usage;
    // The cache's share, each kind alone at its own rate.
    let cache_share = |n: u64, key| match n {
        0 => 0.0,
        n => price(
            &message.model,
            provider,
            when,
            &[(UsageKey::INPUT_TOKENS, n), (key, n)],
        )
        .map_or(0.0, |p| p.input_price),
    };
    let cache_read = cache_share(usage.cache_read, UsageKey::CACHE_READ_TOKENS);
    let one_hour = usage.cache_write_1h.min(usage.cache_write);
    let cache_write = cache_share(usage.cache_write - one_hour, UsageKey::CACHE_WRITE_TOKENS)
        + match one_hour {
            0 => 0.0,
            n => price(
                &message.model,
                provider,
                when,
                &[
                    (UsageKey::INPUT_TOKENS, n),
                    (UsageKey::CACHE_WRITE_TOKENS, n),
                    (UsageKey::CACHE_WRITE_1H_TOKENS, n),
                ],
            )
            .map_or(0.0, |p| p.input_price),
        };
    Some(Cost {
        input: (total.input_price - cache_read - cache_write).max(0.0),
        output: total.output_price,
        cache_read,
        cache_write,
        total: total.total_price,
    })
}

/// The total of what `message` cost at the database's rates on its date (as
/// [`cost`] says it), asking the database once: what a page that shows only
/// the total needs (the split between input and cache tokens asks it once for
/// each cache kind more).
#[cfg_attr(not(feature = "html"), allow(dead_code))]
pub(super) fn total(message: &AssistantMessage) -> Option<f64> {
    asked_total(message).map(|asked| asked.total.total_price)
}

/// The database's price of a message's whole usage, and what it was asked
/// with.
struct Asked<'m> {
    provider: &'m str,
    when: Option<SystemTime>,
    total: genai_prices::PriceCalculation,
}

fn asked_total(message: &AssistantMessage) -> Option<Asked<'_>> {
    if message.model.is_empty() {
        return None;
    }
    let usage = &message.usage;
    // A time past what the system's clock type holds (a bad timestamp, on a
    // system whose `SystemTime` is narrower than Linux's) prices as of now.
    let when = (message.timestamp != 0)
        .then(|| UNIX_EPOCH.checked_add(Duration::from_millis(message.timestamp)))
        .flatten();
    let provider = provider_id(&message.provider);
    // Input tokens as the database counts them: every token read, cached or not.
    let input = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    let total = price(
        &message.model,
        provider,
        when,
        &[
            (UsageKey::INPUT_TOKENS, input),
            (UsageKey::CACHE_READ_TOKENS, usage.cache_read),
            (UsageKey::CACHE_WRITE_TOKENS, usage.cache_write),
            // The one-hour share of the writes, at its own rate.
            (
                UsageKey::CACHE_WRITE_1H_TOKENS,
                usage.cache_write_1h.min(usage.cache_write),
            ),
            (UsageKey::OUTPUT_TOKENS, usage.output),
        ],
    )?;
    Some(Asked {
        provider,
        when,
        total,
    })
}

/// The database's price of `usage` for `model`, asked of `provider` first and
/// of any provider when the database has no such provider.
fn price(
    model: &str,
    provider: &str,
    when: Option<SystemTime>,
    usage: &[(UsageKey, u64)],
) -> Option<genai_prices::PriceCalculation> {
    let usage: Usage = usage
        .iter()
        .map(|(key, n)| (key.clone(), *n as f64))
        .collect();
    let ask = |provider: Option<&str>| {
        let mut request = PriceRequest::new(model, &usage);
        if let Some(provider) = provider {
            request = request.with_provider_id(provider);
        }
        if let Some(when) = when {
            request = request.with_timestamp(when);
        }
        Calculator::bundled().calculate(&request)
    };
    let asked = if provider.is_empty() {
        ask(None)
    } else {
        ask(Some(provider))
    };
    match asked {
        Ok(price) => Some(price),
        Err(e) if e.kind() == ErrorKind::ProviderNotFound => ask(None).ok(),
        Err(_) => None,
    }
}
