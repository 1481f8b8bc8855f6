//! Reading JSON nested deeper than serde_json's limit of 128 levels, as the
//! JavaScript that writes pi's files and many tools' arguments reads it, up to
//! a limit of its own so that reading cannot exhaust the stack.

use serde_json::Value;

/// The deepest nesting [`read_deep_json`] reads: deeper lines stay unknown
/// (kept byte for byte), so that reading them cannot exhaust the stack.
pub const MAX_DEPTH: usize = 512;

/// Reads a JSON text nested up to [`MAX_DEPTH`] (512) levels deep, where
/// serde_json stops at 128 (JavaScript, which wrote pi's files, reads much
/// deeper); a deeper text is an error, so reading cannot exhaust the stack.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// let deep = "[".repeat(200) + &"]".repeat(200);
/// assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
/// assert!(agentmsg::transcript::read_deep_json(&deep).is_ok());
/// let too_deep = "[".repeat(600) + &"]".repeat(600);
/// assert!(agentmsg::transcript::read_deep_json(&too_deep).is_err());
/// ```
pub fn read_deep_json(text: &str) -> Result<Value, serde_json::Error> {
    from_deep_str(text)
}

/// A `T` from a JSON text nested up to [`MAX_DEPTH`] levels deep (see
/// [`read_deep_json`]).
pub(crate) fn from_deep_str<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, serde_json::Error> {
    let depth = max_depth(text.as_bytes());
    if depth > MAX_DEPTH {
        return Err(serde::de::Error::custom(format_args!(
            "nested {depth} levels deep, past the {MAX_DEPTH} read"
        )));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The deepest nesting of arrays and objects in a JSON text (strings
/// skipped), without recursion.
pub(crate) fn max_depth(text: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_skips_strings() {
        assert_eq!(max_depth(br#"{"a":[1,{"b":"[[[{"}]}"#), 3);
        assert_eq!(max_depth(br#"{"a":"\"{"}"#), 1);
        assert_eq!(max_depth(b"]]]"), 0);
    }
}
