//! [`ApiKey`]: a secret that never prints.

use std::fmt;

/// An API key. It is never shown: `Debug` prints `ApiKey(<redacted>)`, it has
/// no `Display`, and the client marks the header that carries it as sensitive.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::http::ApiKey;
/// let key = ApiKey::new("sk-live-0123456789");
/// assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Box<str>);

impl ApiKey {
    /// A key given explicitly.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().into_boxed_str())
    }

    /// The key in the first of `vars` that is set and not empty.
    pub fn from_env(vars: &[&str]) -> Option<Self> {
        vars.iter()
            .filter_map(|var| std::env::var(var).ok())
            .find(|value| !value.trim().is_empty())
            .map(|value| Self::new(value.trim()))
    }

    /// The secret itself, for a header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
