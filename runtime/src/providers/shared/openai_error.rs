//! The error object of the OpenAI APIs (`{"error":{"message","type","code"}}`),
//! which OpenAI-compatible servers send too, and their `null` lists.

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
    /// The error as a [`ProviderError`](crate::providers::ProviderError).
    pub(crate) fn provider_error(&self) -> crate::providers::ProviderError {
        let code = match &self.code {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        crate::providers::ProviderError {
            error_type: self.kind.clone().filter(|k| !k.is_empty()),
            code,
            message: self
                .message
                .clone()
                .unwrap_or_else(|| "unknown error".into()),
            request_id: None,
        }
    }

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

#[cfg(feature = "openai-chat")]
/// A list that OpenAI-compatible servers (Mistral, Azure…) send as `null` when
/// it is empty, such as `tool_calls`: `null` reads as empty.
pub(crate) fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}
