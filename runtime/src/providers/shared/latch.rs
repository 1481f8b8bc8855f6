//! The stream failure latch of the decoders that stop at the first bad event
//! (Anthropic, Gemini): it counts the events, parses each one, and once one
//! failed, every later event and `finish` fail, naming that first event.

use serde::de::DeserializeOwned;

use crate::providers::ResponseError;

/// Counts a stream's events and remembers its first failure.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    events: usize,
    failed: Option<(usize, String)>,
}

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
