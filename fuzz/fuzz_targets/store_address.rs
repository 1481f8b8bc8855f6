//! Store addresses: `StoreAddress::from_str` and `redact_passwords` on any
//! text. Never a panic; a password written after `:` in a URL's user
//! information, or as a `password=` value, never reaches an error message or
//! the `Debug` of an address; a session, when one is parsed, is a valid id.
#![no_main]

use agentmsg::store::{redact_passwords, StoreAddress};
use libfuzzer_sys::fuzz_target;

/// A password planted in the text, which nothing may show.
const SECRET: &str = "Zq7secretQx";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = redact_passwords(&text);
    let _ = text.parse::<StoreAddress>();
    // The same text with a password put in each place one can be.
    for address in [
        format!("postgres://user:{SECRET}{text}@host/db"),
        format!("postgres://user:{text}{SECRET}@host/db#{text}"),
        format!("postgresql://host/db?password={SECRET}&{text}"),
        format!("host=h password={SECRET} {text}"),
        format!("host=h password='{SECRET}' {text}"),
    ] {
        let redacted = redact_passwords(&address);
        assert!(!redacted.contains(SECRET), "{address:?} -> {redacted:?}");
        match address.parse::<StoreAddress>() {
            Ok(parsed) => {
                let shown = format!("{parsed:?} {}", parsed.backend);
                assert!(!shown.contains(SECRET), "{shown}");
                if let Some(session) = &parsed.session {
                    agentmsg::store::validate_session_id(session).unwrap();
                }
            }
            Err(e) => {
                let shown = format!("{e} {e:?}");
                assert!(!shown.contains(SECRET), "{shown}");
            }
        }
    }
});
