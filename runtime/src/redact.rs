//! Passwords taken out of connection strings before they reach an error
//! message, a `Debug` string or a log line: the store's addresses, and the
//! HTTP client's base URLs that are no URL. Below both, so neither depends on
//! the other; it holds the syntax of a session id too, since an address may
//! end in `#SESSION` and only that much of it is not a password.

/// The longest session id a store takes.
pub(crate) const MAX_SESSION_ID_LEN: usize = 128;

/// What makes `session` no session id, or `None` when it is one: 1 to 128
/// ASCII letters, digits, `-`, `_` and `.`, not starting with `.` or `-`
/// ([`validate_session_id`](crate::store::validate_session_id) says why).
pub(crate) fn session_id_problem(session: &str) -> Option<&'static str> {
    if session.is_empty() {
        return Some("empty");
    }
    if session.len() > MAX_SESSION_ID_LEN {
        return Some("longer than 128 bytes");
    }
    if session.starts_with(['.', '-']) {
        return Some("starts with `.` or `-`");
    }
    if !session
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Some("only ASCII letters, digits, `-`, `_` and `.` are allowed");
    }
    None
}

/// `text` with every password in it replaced by `***`: the password of a
/// URL's user information (`postgres://user:PASSWORD@host/db`, whatever
/// characters it holds, `@`, `#` and `/` included), and the value of every
/// `password=` parameter, in a URL's query (`?password=…`) or a key-value
/// connection string (`host=db password='it''s'`), quoted or not. A
/// `#SESSION` after the address is kept.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::store::redact_passwords;
/// assert_eq!(
///     redact_passwords("postgres://agent:s3#cr@t@db:5432/x#s1"),
///     "postgres://agent:***@db:5432/x#s1"
/// );
/// assert_eq!(
///     redact_passwords("host=db password='a b' user=agent"),
///     "host=db password=*** user=agent"
/// );
/// assert_eq!(
///     redact_passwords("postgres://db/x?user=a&password=pw&sslmode=disable"),
///     "postgres://db/x?user=a&password=***&sslmode=disable"
/// );
/// ```
pub fn redact_passwords(text: &str) -> String {
    let text = redact_userinfo(text);
    redact_parameters(&text)
}

/// The URL's `user:password@` with the password redacted. The user
/// information runs to the last `@`: a raw `@` in a password is taken as part
/// of it (hiding too much is safe, too little is not).
fn redact_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|i| i + 3) else {
        return text.to_owned();
    };
    let Some(at) = text.rfind('@').filter(|&at| at >= scheme_end) else {
        return text.to_owned();
    };
    let userinfo = &text[scheme_end..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &text[..scheme_end],
            &userinfo[..colon],
            &text[at..]
        ),
        None => text.to_owned(),
    }
}

/// Every `password=VALUE` (any case, spaces around `=` allowed) with its value
/// redacted.
fn redact_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let lower = text.to_ascii_lowercase();
    let mut rest = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find("password") {
        let key = from + found;
        let after_key = key + "password".len();
        from = after_key;
        // A parameter's name starts the text or follows a separator.
        let starts = key == 0
            || matches!(
                text[..key].chars().next_back(),
                Some('?' | '&' | ' ' | '\t' | '\n' | '\r')
            );
        let mut at = after_key;
        at += text[at..].len() - text[at..].trim_start().len();
        if !starts || !text[at..].starts_with('=') {
            continue;
        }
        at += 1;
        at += text[at..].len() - text[at..].trim_start().len();
        let end = value_end(text, at);
        out.push_str(&text[rest..key]);
        out.push_str("password=***");
        rest = end;
        from = end.max(from);
    }
    out.push_str(&text[rest..]);
    out
}

/// Where the value starting at `start` ends: after its closing quote when
/// quoted (`\'` and `''` inside), else at whitespace, `&`, or a `#SESSION`
/// that ends the text.
fn value_end(text: &str, start: usize) -> usize {
    let value = &text[start..];
    if let Some(quoted) = value.strip_prefix('\'') {
        let mut chars = quoted.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '\'' if chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                    chars.next();
                }
                '\'' => return start + 1 + i + 1,
                _ => {}
            }
        }
        return text.len();
    }
    let mut end = value
        .find(|c: char| c.is_whitespace() || c == '&')
        .map_or(text.len(), |i| start + i);
    if end == text.len() {
        if let Some((_, session)) = text[start..end].rsplit_once('#') {
            if session_id_problem(session).is_none() {
                end -= session.len() + 1;
            }
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::redact_passwords as r;

    #[test]
    fn every_form_is_redacted() {
        for (text, want) in [
            (
                "postgres://agent:s3cret@db:5432/x",
                "postgres://agent:***@db:5432/x",
            ),
            ("postgresql://a:p#w@h/db#s1", "postgresql://a:***@h/db#s1"),
            ("postgres://a:p@w@h/db", "postgres://a:***@h/db"),
            ("postgres://a:p/w:x@h/db", "postgres://a:***@h/db"),
            ("postgres://agent@db/x", "postgres://agent@db/x"),
            (
                "postgres://db/x?password=pw",
                "postgres://db/x?password=***",
            ),
            (
                "postgres://db/x?password=pw#s1",
                "postgres://db/x?password=***#s1",
            ),
            (
                "postgres://db/x?PASSWORD=pw&a=b",
                "postgres://db/x?password=***&a=b",
            ),
            ("host=db password=pw user=u", "host=db password=*** user=u"),
            ("password = 'a \\' b' user=u", "password=*** user=u"),
            ("password='it''s' host=h", "password=*** host=h"),
            ("password='unterminated", "password=***"),
            ("user=u passwordx=1", "user=u passwordx=1"),
            ("mypassword=1", "mypassword=1"),
            ("dir/with password", "dir/with password"),
            ("sqlite:a.db#s", "sqlite:a.db#s"),
        ] {
            assert_eq!(r(text), want, "{text}");
        }
    }

    #[test]
    fn nothing_panics_on_odd_text() {
        for text in [
            "password=",
            "password",
            "://@",
            "a://:@",
            "password=é#",
            "é password=ü",
        ] {
            let _ = r(text);
        }
    }
}
