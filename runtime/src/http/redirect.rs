//! The redirect policy: a request and its secrets never leave the origin it
//! was sent to.
//!
//! reqwest's default policy follows up to ten redirects anywhere and strips
//! only `Authorization` and cookies when the host changes, so `x-api-key`,
//! `x-goog-api-key`, Azure's `api-key`, a caller's own headers and the prompt
//! would reach any host a server names in `Location` (the class of the curl
//! and python-requests CVEs). And a 301, 302 or 303 turns the POST into a GET
//! whose reply would be decoded as the answer. So the client follows only a
//! 307 or 308 to the same origin (scheme, host and port), which keeps the
//! method and the body; every other redirect is refused with an error that
//! names its `Location` ([`RedirectRefused`]).

use std::fmt;

use reqwest::redirect::{Attempt, Policy};

/// How many same-origin 307/308 redirects one request may follow.
const MAX_REDIRECTS: usize = 5;

/// A redirect the client refused, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RedirectRefused {
    /// The redirect's status.
    pub(crate) status: u16,
    /// Where it pointed (credentials in it redacted).
    pub(crate) location: String,
    /// Why it was refused.
    pub(crate) reason: &'static str,
}

impl fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused a {} redirect to {}: {}",
            self.status, self.location, self.reason
        )
    }
}

impl std::error::Error for RedirectRefused {}

/// The policy of every [`Client`](super::Client).
pub(crate) fn policy() -> Policy {
    Policy::custom(|attempt| match check(&attempt) {
        Ok(()) => attempt.follow(),
        Err(refused) => attempt.error(refused),
    })
}

fn check(attempt: &Attempt<'_>) -> Result<(), RedirectRefused> {
    let status = attempt.status().as_u16();
    let refuse = |reason| RedirectRefused {
        status,
        location: super::redact::url(attempt.url().as_str()),
        reason,
    };
    let Some(first) = attempt.previous().first() else {
        return Err(refuse("no request before it"));
    };
    // Scheme, host and port (the port a scheme implies included).
    if first.origin() != attempt.url().origin() {
        return Err(refuse(
            "another origin would receive the API key, the headers and the body",
        ));
    }
    if !matches!(status, 307 | 308) {
        return Err(refuse(
            "it would resend the request as a GET, whose reply is not the answer",
        ));
    }
    if attempt.previous().len() > MAX_REDIRECTS {
        return Err(refuse("too many redirects"));
    }
    Ok(())
}

/// The refused redirect behind a reqwest error, if that is what it is.
pub(crate) fn refused(error: &reqwest::Error) -> Option<RedirectRefused> {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<RedirectRefused>() {
            return Some(refused.clone());
        }
        source = cause.source();
    }
    None
}
