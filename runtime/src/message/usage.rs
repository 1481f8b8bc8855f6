//! Tokens used by a request and what they cost.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Tokens used by one request (or summed over many), with their cost when known.
///
/// `reasoning` is a subset of `output`, never an extra charge. `total_tokens` is
/// what the provider reported (absent in older pi sessions); [`Usage::total`]
/// falls back to the sum.
///
/// ```json
/// {"input":2775,"output":141,"cacheRead":0,"cacheWrite":0,"totalTokens":2916,"cost":{"input":0.0139,"output":0.0035,"cacheRead":0,"cacheWrite":0,"total":0.0174}}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens not served from the cache.
    #[serde(default)]
    pub input: u64,
    /// Output tokens, reasoning included.
    #[serde(default)]
    pub output: u64,
    /// The part of `output` spent on reasoning; written only when not zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: u64,
    /// The part of `cache_write` written to a cache kept one hour
    /// (Anthropic's `cache_creation.ephemeral_1h_input_tokens`), which costs
    /// more than the five-minute writes; written only when not zero.
    #[serde(default, rename = "cacheWrite1h", skip_serializing_if = "is_zero")]
    pub cache_write_1h: u64,
    /// The total the provider reported, if it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// What the tokens cost, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// Writes a whole number as an integer (`0`, not `0.0`), as JavaScript does, so
/// pi's files re-encode to the same text.
fn js_number<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// The cost of a request in dollars, by kind of token.
///
/// ```json
/// {"input":0.0139,"output":0.0035,"cacheRead":0,"cacheWrite":0,"total":0.0174}
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Cost of the input tokens.
    #[serde(default, serialize_with = "js_number")]
    pub input: f64,
    /// Cost of the output tokens (reasoning included).
    #[serde(default, serialize_with = "js_number")]
    pub output: f64,
    /// Cost of the cache reads.
    #[serde(default, serialize_with = "js_number")]
    pub cache_read: f64,
    /// Cost of the cache writes.
    #[serde(default, serialize_with = "js_number")]
    pub cache_write: f64,
    /// The sum.
    #[serde(default, serialize_with = "js_number")]
    pub total: f64,
}

/// Adds two finite amounts; a sum too large for an `f64` stays at the largest
/// finite one (with its sign) instead of becoming infinite.
fn saturating_sum(a: f64, b: f64) -> f64 {
    let sum = a + b;
    if sum.is_infinite() && a.is_finite() && b.is_finite() {
        f64::MAX.copysign(sum)
    } else {
        sum
    }
}

/// Adds kind by kind. Like the token counts, the sum saturates: amounts too
/// large for an `f64` stay at `f64::MAX` rather than becoming infinite (which
/// JSON cannot hold).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::Cost;
/// let huge = Cost { total: 1e308, ..Cost::default() };
/// assert_eq!((huge + huge).total, f64::MAX);
/// ```
impl Add for Cost {
    type Output = Cost;

    fn add(self, rhs: Cost) -> Cost {
        Cost {
            input: saturating_sum(self.input, rhs.input),
            output: saturating_sum(self.output, rhs.output),
            cache_read: saturating_sum(self.cache_read, rhs.cache_read),
            cache_write: saturating_sum(self.cache_write, rhs.cache_write),
            total: saturating_sum(self.total, rhs.total),
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, rhs: Cost) {
        *self = *self + rhs;
    }
}

/// A model's prices in dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPricing {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens (reasoning included).
    pub output: f64,
    /// Per million tokens read from the cache.
    pub cache_read: f64,
    /// Per million tokens written to the cache.
    pub cache_write: f64,
    /// Per million tokens written to the cache kept one hour
    /// ([`Usage::cache_write_1h`]); `None`: at `cache_write`'s rate.
    #[serde(
        default,
        rename = "cacheWrite1h",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<f64>,
}

impl ModelPricing {
    /// Prices per million tokens: input, output, cache read, cache write.
    pub const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
            cache_write_1h: None,
        }
    }

    /// These prices with `rate` per million tokens written to the cache kept
    /// one hour.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{message::ModelPricing, Usage};
    /// // Claude Sonnet 4.5: 1-hour writes at twice the input rate.
    /// let prices = ModelPricing::new(3.0, 15.0, 0.3, 3.75).with_cache_write_1h(6.0);
    /// let usage = Usage { cache_write: 3_000_000, cache_write_1h: 1_000_000, ..Usage::default() };
    /// assert_eq!(usage.estimated_cost(&prices).cache_write, 2.0 * 3.75 + 6.0);
    /// ```
    #[must_use]
    pub const fn with_cache_write_1h(mut self, rate: f64) -> Self {
        self.cache_write_1h = Some(rate);
        self
    }
}

impl Usage {
    /// Usage of `input` and `output` tokens, nothing cached.
    pub fn new(input: u64, output: u64) -> Self {
        Self {
            input,
            output,
            total_tokens: Some(input + output),
            ..Self::default()
        }
    }

    /// The reported total, or the sum of input, output and cache tokens.
    pub fn total(&self) -> u64 {
        self.total_tokens.unwrap_or(
            self.input
                .saturating_add(self.output)
                .saturating_add(self.cache_read)
                .saturating_add(self.cache_write),
        )
    }

    /// What these tokens cost at `pricing`. Reasoning tokens are part of
    /// `output` and are not charged again.
    pub fn estimated_cost(&self, pricing: &ModelPricing) -> Cost {
        let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
        let input = per(self.input, pricing.input);
        let output = per(self.output, pricing.output);
        let cache_read = per(self.cache_read, pricing.cache_read);
        // The one-hour share (never more than the writes) at its own rate.
        let one_hour = self.cache_write_1h.min(self.cache_write);
        let cache_write = per(self.cache_write - one_hour, pricing.cache_write)
            + per(
                one_hour,
                pricing.cache_write_1h.unwrap_or(pricing.cache_write),
            );
        Cost {
            input,
            output,
            cache_read,
            cache_write,
            total: input + output + cache_read + cache_write,
        }
    }

    /// The sum of two usages. Totals add when both are known (else the known
    /// one stands for its side's sum); costs add when either is known.
    #[must_use]
    pub fn combine(&self, other: &Usage) -> Usage {
        let total_tokens = match (self.total_tokens, other.total_tokens) {
            (None, None) => None,
            _ => Some(self.total().saturating_add(other.total())),
        };
        let cost = match (self.cost, other.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
        };
        Usage {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            reasoning: self.reasoning.saturating_add(other.reasoning),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
            cache_write_1h: self.cache_write_1h.saturating_add(other.cache_write_1h),
            total_tokens,
            cost,
        }
    }

    /// The share of prompt tokens served from the cache:
    /// `cache_read / (input + cache_read + cache_write)`, 0.0 when there was no input.
    pub fn cache_hit_rate(&self) -> f64 {
        let prompt = self
            .input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write);
        if prompt == 0 {
            0.0
        } else {
            self.cache_read as f64 / prompt as f64
        }
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, rhs: Usage) -> Usage {
        self.combine(&rhs)
    }
}

impl Add<&Usage> for Usage {
    type Output = Usage;

    fn add(self, rhs: &Usage) -> Usage {
        self.combine(rhs)
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = self.combine(&rhs);
    }
}

impl AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, rhs: &Usage) {
        *self = self.combine(rhs);
    }
}

impl Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |acc, u| acc.combine(&u))
    }
}

impl<'a> Sum<&'a Usage> for Usage {
    fn sum<I: Iterator<Item = &'a Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |acc, u| acc.combine(u))
    }
}
