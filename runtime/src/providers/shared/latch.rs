//! What a stream decoder remembers of a bad event. [`Latch`], for the
//! decoders that stop at the first bad event (Anthropic, Gemini): it counts
//! the events, parses each one, and once one failed, every later event and
//! `finish` fail, naming that first event. [`FirstBad`], for those that read
//! on past it (the OpenAI APIs): only `finish` fails, naming it.

use serde::de::DeserializeOwned;

use crate::providers::ResponseError;

/// Counts a stream's events and remembers its first failure.
#[cfg(any(feature = "anthropic", feature = "gemini", feature = "bedrock"))]
#[derive(Debug, Default)]
pub(crate) struct Latch {
    events: usize,
    failed: Option<(usize, String)>,
}

#[cfg(any(feature = "anthropic", feature = "gemini", feature = "bedrock"))]
impl Latch {
    /// How many events were pushed.
    pub(crate) fn events(&self) -> usize {
        self.events
    }

    /// Counts one event and parses it as `T`: its index and value. Fails when
    /// the stream already failed, or when the event is not JSON of that shape
    /// (which latches).
    pub(crate) fn next<T: DeserializeOwned>(
        &mut self,
        event: &str,
    ) -> Result<(usize, T), ResponseError> {
        let index = self.events;
        self.events += 1;
        if let Some((at, why)) = &self.failed {
            return Err(ResponseError::Invalid {
                event: Some(index),
                path: "stream".to_owned(),
                message: format!("the stream already failed at event {at}: {why}"),
            });
        }
        match serde_json::from_str(event) {
            Ok(value) => Ok((index, value)),
            Err(source) => {
                self.failed = Some((index, format!("invalid JSON: {source}")));
                Err(ResponseError::Json {
                    event: Some(index),
                    source,
                })
            }
        }
    }

    /// Latches a failure at event `index`: `why` is what `finish` and later
    /// events repeat.
    pub(crate) fn fail(&mut self, index: usize, why: String) {
        self.failed = Some((index, why));
    }

    /// Latches a failure at event `index`, at `path` for `message`, and
    /// returns it as the error of that event.
    #[cfg(any(feature = "anthropic", feature = "bedrock"))]
    pub(crate) fn invalid(
        &mut self,
        index: usize,
        path: &str,
        message: impl Into<String>,
    ) -> ResponseError {
        let message = message.into();
        self.fail(index, format!("{path}: {message}"));
        ResponseError::Invalid {
            event: Some(index),
            path: path.to_owned(),
            message,
        }
    }

    /// The latched failure, for `finish`.
    pub(crate) fn check(&self) -> Result<(), ResponseError> {
        match &self.failed {
            Some((event, why)) => Err(ResponseError::Invalid {
                event: Some(*event),
                path: "stream".to_owned(),
                message: why.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// The first bad event of a stream whose decoder reads on past it: each bad
/// event is an error of its own `push`, and `finish` fails naming the first.
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
#[derive(Debug, Default)]
pub(crate) struct FirstBad(Option<(usize, String)>);

#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
impl FirstBad {
    /// Notes that event `index` was bad, for `why`, unless one before it was.
    pub(crate) fn note(&mut self, index: usize, why: String) {
        if self.0.is_none() {
            self.0 = Some((index, why));
        }
    }

    /// Parses event `index` as `T`; one that is not JSON of that shape is
    /// noted and returned as the error.
    pub(crate) fn parse<T: DeserializeOwned>(
        &mut self,
        index: usize,
        event: &str,
    ) -> Result<T, ResponseError> {
        serde_json::from_str(event).map_err(|source| {
            self.note(index, source.to_string());
            ResponseError::Json {
                event: Some(index),
                source,
            }
        })
    }

    /// For `finish`: the first bad event as an error at `what` (the API's
    /// name for an event: "the stream had a malformed `what`: …"), if there
    /// was one.
    pub(crate) fn check(&self, what: &str) -> Result<(), ResponseError> {
        match &self.0 {
            Some((event, why)) => Err(ResponseError::Invalid {
                event: Some(*event),
                path: what.to_owned(),
                message: format!("the stream had a malformed {what}: {why}"),
            }),
            None => Ok(()),
        }
    }
}
