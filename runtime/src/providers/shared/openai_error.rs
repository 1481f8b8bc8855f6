//! The error object of the OpenAI APIs (`{"error":{"message","type","code"}}`),
//! which OpenAI-compatible servers send too.

use serde::Deserialize;
use serde_json::Value;

/// An `error` object.
#[derive(Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub(crate) message: Option<String>,
    #[serde(default, rename = "type")]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) code: Option<Value>,
}

impl WireError {
    /// `code: message` (or `type: message`), for the message's `errorMessage`.
    pub(crate) fn describe(&self) -> String {
        let mut text = self
            .message
            .clone()
            .unwrap_or_else(|| "unknown error".into());
        let code = match &self.code {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        if let Some(label) = code.or_else(|| self.kind.clone()) {
            text = format!("{label}: {text}");
        }
        text
    }
}
