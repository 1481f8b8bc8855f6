//! URLs with their credentials taken out, before they reach an error, a
//! `Debug` string or a log line.

use reqwest::Url;

/// Query parameters whose value is a credential (`?key=` is how Gemini once
/// took its key; gateways take `api_key`, `token`, signed URLs `sig`).
const SECRET_PARAMETERS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_token",
    "password",
    "secret",
    "sig",
    "signature",
];

/// `text` as a URL with its user information and the values of credential
/// query parameters replaced by `***` (a user name alone may be a token, so
/// it goes too). Not a URL: the text with any password in it redacted as the
/// store does.
pub(crate) fn url(text: &str) -> String {
    let Ok(mut url) = Url::parse(text) else {
        return crate::redact::redact_passwords(text);
    };
    if !url.username().is_empty() || url.password().is_some() {
        let user = if url.password().is_some() {
            url.username().to_owned()
        } else {
            "***".to_owned()
        };
        let _ = url.set_username(&user);
        if url.password().is_some() {
            let _ = url.set_password(Some("***"));
        }
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let secret = SECRET_PARAMETERS
                    .iter()
                    .any(|s| name.eq_ignore_ascii_case(s));
                let value = if secret { "***".into() } else { value };
                (name.into_owned(), value.into_owned())
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    // `***` is kept readable rather than percent-encoded.
    url.as_str().replace("%2A%2A%2A", "***")
}

#[cfg(test)]
mod tests {
    use super::url;

    #[test]
    fn credentials_are_taken_out() {
        assert_eq!(
            url("https://user:pw@gw.example/v1"),
            "https://user:***@gw.example/v1"
        );
        assert_eq!(
            url("https://tok3n@gw.example/v1"),
            "https://***@gw.example/v1"
        );
        assert_eq!(
            url("https://g.example/m:gen?alt=sse&key=AIza123"),
            "https://g.example/m:gen?alt=sse&key=***"
        );
        assert_eq!(
            url("http://127.0.0.1:8080/v1/messages"),
            "http://127.0.0.1:8080/v1/messages"
        );
    }
}
