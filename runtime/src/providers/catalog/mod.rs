//! The models agentmsg knows, and what their replies cost.
//!
//! - Context windows, output limits and whether a model reasons and reads
//!   images come from `models.json`, generated from pi's maintained model list
//!   (the npm package `@mariozechner/pi-ai`, itself generated from models.dev)
//!   by `scripts/models/update.sh`; [`Catalog::source`] and [`Catalog::date`]
//!   say which release.
//! - Prices come from the [`genai-prices`](https://crates.io/crates/genai-prices)
//!   database (pydantic's, with dated and historical prices) behind the
//!   `prices` feature: a reply is priced at the rates of its own date (its
//!   `timestamp`). A price set on a model of the catalog ([`ModelInfo::with_prices`])
//!   comes first. Without either, a reply's cost is unknown (`None`), never zero.
//!
//! A JSON file of the same shape, or [`ModelInfo`]s built in code, override or
//! extend the list:
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::providers::{Catalog, ModelInfo};
//! use agentmsg::message::ModelPricing;
//! let catalog = Catalog::builtin().clone().with_model(
//!     ModelInfo::new("my-model", "acme", "openai-completions")
//!         .with_limits(32_000, 4_096)
//!         .with_images(true)
//!         .with_prices(ModelPricing::new(1.0, 2.0, 0.0, 0.0), "2025-11-01", "https://acme.example/pricing"),
//! );
//! assert_eq!(catalog.model("my-model").map(|m| m.max_output), Some(4096));
//! // A dated id finds its model.
//! assert_eq!(catalog.model("claude-sonnet-4-5-20250929").map(|m| m.context_window), Some(200_000));
//! ```

#[cfg(feature = "prices")]
mod prices;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::message::ModelPricing;
use crate::{AssistantMessage, Cost};

/// One model: its limits and abilities, and a price of its own when one was
/// set by hand.
///
/// ```json
/// {"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages","contextWindow":200000,"maxOutput":64000,"reasoning":true,"images":true}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model id (`claude-sonnet-4-5`, `gpt-4.1`).
    pub id: String,
    /// The provider (`anthropic`, `openai`, `google`).
    pub provider: String,
    /// The API it is usually called through (`anthropic-messages`…).
    pub api: String,
    /// The context window, in tokens; 0 when unknown.
    #[serde(default)]
    pub context_window: u64,
    /// The most output tokens per response; 0 when unknown.
    #[serde(default)]
    pub max_output: u64,
    /// Whether it reasons (thinking, reasoning effort).
    #[serde(default)]
    pub reasoning: bool,
    /// Whether it reads images.
    #[serde(default)]
    pub images: bool,
    /// Dollars per million tokens, when set by hand; such a price comes
    /// before the price database's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<ModelPricing>,
    /// When a hand-set price was taken (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_date: Option<String>,
    /// Where a hand-set price was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What the entry leaves out (long-prompt tiers…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ModelInfo {
    /// A model of `provider` called through `api`, with unknown limits, no
    /// reasoning, no images and no price of its own; the `with_` methods set
    /// the rest.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::providers::ModelInfo;
    /// let model = ModelInfo::new("llama-3.3-70b", "local", "openai-completions")
    ///     .with_limits(131_072, 8_192)
    ///     .with_reasoning(false);
    /// assert_eq!((model.context_window, model.max_output), (131_072, 8_192));
    /// assert!(model.prices.is_none());
    /// ```
    pub fn new(id: impl Into<String>, provider: impl Into<String>, api: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            provider: provider.into(),
            api: api.into(),
            context_window: 0,
            max_output: 0,
            reasoning: false,
            images: false,
            prices: None,
            price_date: None,
            source: None,
            note: None,
        }
    }

    /// With this context window and output limit, in tokens.
    #[must_use]
    pub fn with_limits(mut self, context_window: u64, max_output: u64) -> Self {
        self.context_window = context_window;
        self.max_output = max_output;
        self
    }

    /// Whether it reasons.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: bool) -> Self {
        self.reasoning = reasoning;
        self
    }

    /// Whether it reads images.
    #[must_use]
    pub fn with_images(mut self, images: bool) -> Self {
        self.images = images;
        self
    }

    /// With a price of its own (dollars per million tokens), the day it was
    /// taken (`YYYY-MM-DD`) and where from. It comes before the price
    /// database's, at every date.
    #[must_use]
    pub fn with_prices(
        mut self,
        prices: ModelPricing,
        date: impl Into<String>,
        source: impl Into<String>,
    ) -> Self {
        self.prices = Some(prices);
        self.price_date = Some(date.into());
        self.source = Some(source.into());
        self
    }

    /// With a note on what the entry leaves out.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// A list of models.
///
/// ```json
/// {"source":"npm:@mariozechner/pi-ai@0.73.1 …","date":"2026-05-08","models":[{"id":"gpt-4.1","provider":"openai","api":"openai-responses","contextWindow":1047576,"maxOutput":32768,"reasoning":false,"images":true}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Where the list was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the source was published (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The models, by id; the first of an id is the one found.
    pub models: Vec<ModelInfo>,
}

const BUILTIN: &str = include_str!("models.json");

impl Catalog {
    /// The built-in catalog.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            // A unit test parses the file, so this cannot fail in a build that passed.
            serde_json::from_str(BUILTIN).unwrap_or(Catalog {
                source: None,
                date: None,
                models: Vec::new(),
            })
        })
    }

    /// A catalog read from JSON (`{"models":[…]}`).
    ///
    /// # Errors
    /// The JSON's error, with line and column.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// This catalog with the models of `json` added; a model of the same id
    /// replaces this one's.
    ///
    /// # Errors
    /// As [`Catalog::from_json`].
    pub fn extended(&self, json: &str) -> Result<Self, serde_json::Error> {
        let more = Self::from_json(json)?;
        Ok(more
            .models
            .into_iter()
            .fold(self.clone(), |catalog, model| catalog.with_model(model)))
    }

    /// This catalog with `model` added, replacing a model of the same id.
    #[must_use]
    pub fn with_model(mut self, model: ModelInfo) -> Self {
        match self.models.iter_mut().find(|m| m.id == model.id) {
            Some(slot) => *slot = model,
            None => self.models.push(model),
        }
        self
    }

    /// The model of `id`: the exact id, or the longest id that `id` starts
    /// with followed by `-` and a digit (a dated or suffixed id such as
    /// `gpt-4o-2024-08-06`). A `provider/` prefix is ignored.
    pub fn model(&self, id: &str) -> Option<&ModelInfo> {
        let id = id.rsplit('/').next().unwrap_or(id);
        self.models.iter().find(|m| m.id == id).or_else(|| {
            self.models
                .iter()
                .filter(|m| {
                    id.strip_prefix(m.id.as_str()).is_some_and(|rest| {
                        rest.starts_with('-') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
                    })
                })
                .max_by_key(|m| m.id.len())
        })
    }

    /// What `message`'s usage cost: at the hand-set price of its model in this
    /// catalog, else (with the `prices` feature) at the price database's rates
    /// on the message's date (its `timestamp`; now when it has none). `None`
    /// when neither knows the model: an unknown cost, not a free one.
    ///
    /// The total is the database's; its split between input and cache tokens
    /// is at the rates of the tokens' own kind.
    pub fn cost_of(&self, message: &AssistantMessage) -> Option<Cost> {
        if let Some(prices) = self.model(&message.model).and_then(|m| m.prices.as_ref()) {
            return Some(message.usage.estimated_cost(prices));
        }
        database_cost(message)
    }

    /// The total of [`Catalog::cost_of`], asking the price database once
    /// (its split between input and cache tokens asks it once more for each
    /// cache kind): what a page that shows only totals needs.
    #[cfg_attr(not(feature = "html"), allow(dead_code))]
    pub(crate) fn total_cost_of(&self, message: &AssistantMessage) -> Option<f64> {
        if let Some(prices) = self.model(&message.model).and_then(|m| m.prices.as_ref()) {
            return Some(message.usage.estimated_cost(prices).total);
        }
        database_total(message)
    }

    /// Sets the cost of a message from its usage when it has none yet
    /// ([`Catalog::cost_of`]). Whether it did.
    pub fn fill_cost(&self, message: &mut AssistantMessage) -> bool {
        if message.usage.cost.is_some_and(|c| c.total != 0.0) {
            return false;
        }
        match self.cost_of(message) {
            Some(cost) => {
                message.usage.cost = Some(cost);
                true
            }
            None => false,
        }
    }
}

#[cfg(feature = "prices")]
fn database_cost(message: &AssistantMessage) -> Option<Cost> {
    prices::cost(message)
}

#[cfg(not(feature = "prices"))]
fn database_cost(_: &AssistantMessage) -> Option<Cost> {
    None
}

#[cfg(feature = "prices")]
#[cfg_attr(not(feature = "html"), allow(dead_code))]
fn database_total(message: &AssistantMessage) -> Option<f64> {
    prices::total(message)
}

#[cfg(not(feature = "prices"))]
#[cfg_attr(not(feature = "html"), allow(dead_code))]
fn database_total(_: &AssistantMessage) -> Option<f64> {
    None
}

/// `message` priced with the built-in catalog (the decoders call this).
pub(crate) fn priced(mut message: AssistantMessage) -> AssistantMessage {
    Catalog::builtin().fill_cost(&mut message);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_list_parses_and_is_dated_and_sourced() {
        let catalog: Catalog = serde_json::from_str(BUILTIN).expect("models.json parses");
        assert!(catalog.models.len() > 100, "{}", catalog.models.len());
        assert!(catalog
            .source
            .as_deref()
            .is_some_and(|s| s.contains("@mariozechner/pi-ai@")));
        let date = catalog.date.as_deref().unwrap_or_default().as_bytes();
        assert!(date.len() == 10 && date[4] == b'-' && date[7] == b'-');
    }

    /// `total_cost_of` asks the price database once where `cost_of` asks it
    /// for each cache kind too: the totals are the same, from the catalog's
    /// own prices and (an empty catalog) from the database, at two dates.
    #[test]
    fn the_total_alone_is_the_whole_cost_s_total() {
        let usage = crate::Usage {
            input: 1_000,
            output: 500,
            cache_read: 2_000,
            cache_write: 100,
            cache_write_1h: 40,
            ..crate::Usage::default()
        };
        let builtin = Catalog::builtin();
        // Each model with a price of its own, and none (the database's).
        let own = Catalog {
            source: None,
            date: None,
            models: (builtin.models.iter().cloned())
                .map(|m| {
                    let prices = ModelPricing::new(3.0, 15.0, 0.3, 3.75).with_cache_write_1h(6.0);
                    m.with_prices(prices, "2026-01-01", "a test")
                })
                .collect(),
        };
        let empty = Catalog {
            source: None,
            date: None,
            models: Vec::new(),
        };
        let mut models: Vec<(&str, &str)> = builtin
            .models
            .iter()
            .map(|m| (m.provider.as_str(), m.id.as_str()))
            .collect();
        models.push(("nobody", "no-such-model"));
        let (mut from_catalog, mut from_database) = (0, 0);
        for (provider, model) in models {
            for timestamp in [0, 1_769_904_000_000] {
                let reply = AssistantMessage {
                    provider: provider.to_owned(),
                    model: model.to_owned(),
                    timestamp,
                    usage: usage.clone(),
                    ..AssistantMessage::default()
                };
                for (catalog, count) in [(&own, &mut from_catalog), (&empty, &mut from_database)] {
                    let whole = catalog.cost_of(&reply).map(|c| c.total);
                    assert_eq!(catalog.total_cost_of(&reply), whole, "{provider}/{model}");
                    *count += usize::from(whole.is_some());
                }
            }
        }
        assert!(from_catalog > 100, "{from_catalog}");
        if cfg!(feature = "prices") {
            assert!(from_database > 100, "{from_database}");
        }
    }
}
