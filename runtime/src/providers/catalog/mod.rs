//! The models agentmsg knows: context window, output limit, whether they
//! reason and read images, and their prices per million tokens, each with the
//! date and source of the price. The built-in list (`models.json`) covers the
//! current models of the four providers; a JSON file of the same shape
//! overrides or extends it.
//!
//! ```
//! use agentmsg_runtime::providers::Catalog;
//! let catalog = Catalog::builtin()
//!     .extended(r#"{"models":[{"id":"my-model","provider":"acme","api":"openai-completions",
//!         "contextWindow":32000,"maxOutput":4096,"reasoning":false,"images":false,
//!         "prices":{"input":1.0,"output":2.0,"cacheRead":0.0,"cacheWrite":0.0},
//!         "priceDate":"2025-11-01","source":"https://acme.example/pricing"}]}"#)?;
//! assert_eq!(catalog.model("my-model").map(|m| m.max_output), Some(4096));
//! // A dated id finds its model.
//! assert_eq!(catalog.model("claude-sonnet-4-5-20250929").map(|m| m.id.as_str()), Some("claude-sonnet-4-5"));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::{AssistantMessage, ModelPricing};

/// One model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model id, without a date suffix (`claude-sonnet-4-5`, `gpt-4.1`).
    pub id: String,
    /// The provider (`anthropic`, `openai`, `google`).
    pub provider: String,
    /// The API it is usually called through.
    pub api: String,
    /// The context window, in tokens.
    pub context_window: u64,
    /// The most output tokens per response.
    pub max_output: u64,
    /// Whether it reasons (thinking, reasoning effort).
    pub reasoning: bool,
    /// Whether it reads images.
    pub images: bool,
    /// Dollars per million tokens.
    pub prices: ModelPricing,
    /// When the prices were taken (`YYYY-MM-DD`).
    pub price_date: String,
    /// Where the prices were taken from.
    pub source: String,
    /// What the prices leave out (long-prompt tiers…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A list of models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// The models, by id.
    pub models: Vec<ModelInfo>,
}

const BUILTIN: &str = include_str!("models.json");

impl Catalog {
    /// The built-in catalog.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            // A unit test parses the file, so this cannot fail in a build that passed.
            serde_json::from_str(BUILTIN).unwrap_or(Catalog { models: Vec::new() })
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
        let mut models: Vec<ModelInfo> = self
            .models
            .iter()
            .filter(|m| !more.models.iter().any(|n| n.id == m.id))
            .cloned()
            .collect();
        models.extend(more.models);
        Ok(Self { models })
    }

    /// The model of `id`: the exact id, or the longest id that `id` starts
    /// with followed by `-` (a dated or suffixed id such as
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

    /// Sets the cost of a message from its usage when the model is known and
    /// the message has no cost yet. Whether it did.
    pub fn fill_cost(&self, message: &mut AssistantMessage) -> bool {
        if message.usage.cost.is_some_and(|c| c.total != 0.0) {
            return false;
        }
        let Some(model) = self.model(&message.model) else {
            return false;
        };
        message.usage.cost = Some(message.usage.estimated_cost(&model.prices));
        true
    }
}

/// `message` priced with the built-in catalog (the decoders call this).
pub(crate) fn priced(mut message: AssistantMessage) -> AssistantMessage {
    Catalog::builtin().fill_cost(&mut message);
    message
}
