//! Tool-call ids: mapping stored ids to ids the target accepts, and back.

use std::collections::{BTreeMap, BTreeSet};

use hmac_sha256::Hash as Sha256;

use super::target::IdRule;

/// Maps a target-side tool-call id back to the stored one.
///
/// Only ids that had to change are recorded; every other id maps to itself.
/// A changed id is the stored one with every character outside
/// `[A-Za-z0-9_-]` replaced by `_`, cut to fit, and `_` plus 8 hex digits of
/// its SHA-256:
/// `functions.write_todos:0` becomes `functions_write_todos_0_89e48a22` for
/// Anthropic.
/// The mapping is injective: a mapped id never equals another call's id, so
/// [`stored`](Self::stored) is unambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdMap {
    to_stored: BTreeMap<String, String>,
}

impl IdMap {
    /// The stored id behind a target-side id; ids that were not changed map to
    /// themselves.
    pub fn stored<'a>(&'a self, target_id: &'a str) -> &'a str {
        self.to_stored
            .get(target_id)
            .map_or(target_id, String::as_str)
    }

    /// Whether no id was changed.
    pub fn is_empty(&self) -> bool {
        self.to_stored.is_empty()
    }

    /// How many ids were changed.
    pub fn len(&self) -> usize {
        self.to_stored.len()
    }

    /// The changed ids as `(target id, stored id)`, sorted by target id.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.to_stored
            .iter()
            .map(|(target, stored)| (target.as_str(), stored.as_str()))
    }

    pub(super) fn insert(&mut self, target_id: String, stored_id: String) {
        self.to_stored.insert(target_id, stored_id);
    }
}

/// Why an id had to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IdFix {
    /// The id was empty.
    Empty,
    /// An earlier call has the same id.
    Duplicate,
    /// The target does not accept it.
    Rule,
    /// pi's Responses id, `call_id|item id`: the call id goes alone, the
    /// item id as the `function_call` item's own id (as pi sends them).
    Split,
}

/// The call id and item id of pi's joined Responses id (`call_x|fc_y`), for
/// a Responses target; `None` for any other id or target.
pub(super) fn split_pi_id(id: &str, rule: IdRule) -> Option<(&str, &str)> {
    if rule != IdRule::OpenAiResponses {
        return None;
    }
    id.split_once('|').filter(|(call, _)| !call.is_empty())
}

/// One call's id after mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Assigned {
    pub id: String,
    pub fix: Option<IdFix>,
}

/// Assigns an id to every call, in order: ids that fit the rule and are used by
/// no earlier call stay; the others get a readable prefix and a short hash
/// suffix, unique among all ids.
pub(super) fn assign(stored: &[&str], rule: IdRule) -> Vec<Assigned> {
    // What each id is sent as when it can be kept: itself, or the call id of
    // pi's joined Responses id.
    let sent: Vec<&str> = stored
        .iter()
        .map(|id| split_pi_id(id, rule).map_or(*id, |(call, _)| call))
        .collect();
    let mut kept: BTreeSet<&str> = BTreeSet::new();
    let mut keep = vec![false; stored.len()];
    for (slot, id) in keep.iter_mut().zip(&sent) {
        if rule.accepts(id) && kept.insert(id) {
            *slot = true;
        }
    }
    let mut taken: BTreeSet<String> = kept.iter().map(|s| (*s).to_owned()).collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(stored.len());
    for ((id, sent), keep) in stored.iter().zip(&sent).zip(keep) {
        let occurrence = seen.entry(id).or_insert(0);
        let nth = *occurrence;
        *occurrence += 1;
        if keep {
            out.push(Assigned {
                id: (*sent).to_owned(),
                fix: (sent != id).then_some(IdFix::Split),
            });
            continue;
        }
        let fix = if id.is_empty() {
            IdFix::Empty
        } else if rule.accepts(id) {
            IdFix::Duplicate
        } else {
            IdFix::Rule
        };
        let new = fresh_id(id, nth, rule, &taken);
        taken.insert(new.clone());
        out.push(Assigned {
            id: new,
            fix: Some(fix),
        });
    }
    out
}

/// `prefix_hash`: the id with every character outside `[A-Za-z0-9_-]`
/// replaced by `_` (a made-up id is portable to every provider, and carries no
/// `|`, pi's separator between a Responses call id and item id, so no encoder
/// splits a made-up item id out of it), cut so the whole fits, then `_` and
/// the first hex digits of the SHA-256 of the stored id (and of its occurrence
/// number, for a repeated id). Longer hashes, then a counter, settle the
/// (astronomically rare) collisions.
fn fresh_id(stored: &str, nth: usize, rule: IdRule, taken: &BTreeSet<String>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(stored.as_bytes());
    if nth > 0 {
        hasher.update(format!("#{nth}").as_bytes());
    }
    let hash = hasher.finalize();
    if rule == IdRule::Mistral {
        return mistral_id(&hash, taken);
    }
    let digest = hex(&hash);
    let sanitized: String = stored
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if sanitized.is_empty() {
        "call".to_owned()
    } else {
        sanitized
    };
    let max = rule.max_len().unwrap_or(usize::MAX);
    for hash_len in [8usize, 12, 16, 24, 32] {
        let candidate = join(&base, &digest[..hash_len], max);
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
    let mut counter = 1u64;
    loop {
        let suffix = format!("{}{counter}", &digest[..8]);
        let candidate = join(&base, &suffix, max);
        if !taken.contains(&candidate) {
            return candidate;
        }
        counter += 1;
    }
}

/// `base` cut to fit `max` characters together with `_` and `suffix`.
fn join(base: &str, suffix: &str, max: usize) -> String {
    let room = max.saturating_sub(suffix.chars().count() + 1);
    let prefix: String = base.chars().take(room).collect();
    format!("{prefix}_{suffix}")
}

/// Nine base-62 digits of `hash` (Mistral takes only `[a-zA-Z0-9]{9}`, so
/// nothing of the stored id can be kept readable); a collision takes the
/// next nine bytes, then a rehash with a counter.
fn mistral_id(hash: &[u8; 32], taken: &BTreeSet<String>) -> String {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let encode = |bytes: &[u8]| -> String {
        bytes
            .iter()
            .take(9)
            .map(|b| char::from(DIGITS[usize::from(*b) % 62]))
            .collect()
    };
    for start in [0, 9, 18] {
        let candidate = encode(&hash[start..]);
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
    let mut counter = 1u64;
    loop {
        let mut hasher = Sha256::new();
        hasher.update(hash);
        hasher.update(counter.to_le_bytes());
        let candidate = encode(&hasher.finalize());
        if !taken.contains(&candidate) {
            return candidate;
        }
        counter += 1;
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_ids_stay_and_others_get_a_hash() {
        let ids = [
            "toolu_01",
            "functions.write_todos:0",
            "functions.write_todos_0",
        ];
        let out = assign(&ids, IdRule::Anthropic);
        assert_eq!(out[0].id, "toolu_01");
        assert_eq!(out[0].fix, None);
        assert!(out[1].id.starts_with("functions_write_todos_0_"));
        assert_eq!(out[1].id.len(), "functions_write_todos_0_".len() + 8);
        assert_eq!(out[1].fix, Some(IdFix::Rule));
        assert!(out[2].id.starts_with("functions_write_todos_0_"));
        assert_ne!(
            out[1].id, out[2].id,
            "`.` vs `:` must not collide once sanitized"
        );
    }

    #[test]
    fn duplicates_and_empty_ids_become_unique() {
        let ids = ["a", "a", "", ""];
        let out = assign(&ids, IdRule::Any);
        let set: BTreeSet<&str> = out.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(set.len(), 4);
        assert_eq!(out[0].id, "a");
        assert_eq!(out[1].fix, Some(IdFix::Duplicate));
        assert_eq!(out[2].fix, Some(IdFix::Empty));
        assert!(out[2].id.starts_with("call_"));
    }

    #[test]
    fn the_mapping_is_pinned() {
        // Prompt caches depend on these bytes: a change here is a breaking change.
        let out = assign(&["functions.write_todos:0"], IdRule::Anthropic);
        assert_eq!(out[0].id, "functions_write_todos_0_89e48a22");
        let accented = assign(&["é".repeat(41).as_str()], IdRule::OpenAiChat);
        assert!(accented[0].id.is_ascii(), "{}", accented[0].id);
        let pipe = format!("call_abc|fc_{}", "a".repeat(40));
        let out = assign(&[pipe.as_str()], IdRule::OpenAiChat);
        assert!(!out[0].id.contains('|'), "{}", out[0].id);
        assert!(out[0].id.starts_with("call_abc_fc_"), "{}", out[0].id);
    }

    /// pi's Responses ids (issue 23, finding 6): to Responses, the call id
    /// alone (the item id goes on the item); to any other API, one id.
    #[test]
    fn pi_joined_ids_split_for_responses() {
        let long = format!("call_x|fc_{}", "y".repeat(400));
        let ids = ["call_a|fc_1", long.as_str(), "call_a|fc_2", "|fc_3"];
        let out = assign(&ids, IdRule::OpenAiResponses);
        assert_eq!(out[0].id, "call_a");
        assert_eq!(out[0].fix, Some(IdFix::Split));
        assert_eq!(out[1].id, "call_x");
        assert_eq!(out[1].fix, Some(IdFix::Split));
        // Two items of one call id: the second gets an id of its own.
        assert_eq!(out[2].fix, Some(IdFix::Duplicate));
        assert_ne!(out[2].id, "call_a");
        assert!(!out[2].id.contains('|'), "{}", out[2].id);
        assert_eq!(out[3].id, "|fc_3");
        assert_eq!(out[3].fix, None);
        let anthropic = assign(&["call_a|fc_1"], IdRule::Anthropic);
        assert_eq!(anthropic[0].fix, Some(IdFix::Rule));
    }

    #[test]
    fn long_ids_fit_the_limit() {
        let long = "x".repeat(446);
        for rule in [
            IdRule::OpenAiChat,
            IdRule::OpenAiResponses,
            IdRule::Anthropic,
        ] {
            let out = assign(&[long.as_str()], rule);
            assert!(rule.accepts(&out[0].id), "{rule:?}: {}", out[0].id);
        }
    }

    #[test]
    fn mistral_ids_are_nine_alphanumerics_paired_and_stable() {
        let ids = [
            "toolu_01AbCdEf",
            "call_abc",
            "a1B2c3D4e",
            "toolu_01AbCdEf",
            "",
        ];
        let out = assign(&ids, IdRule::Mistral);
        for a in &out {
            assert!(IdRule::Mistral.accepts(&a.id), "{}", a.id);
        }
        assert_eq!(out[2].id, "a1B2c3D4e");
        assert_eq!(out[2].fix, None);
        let set: BTreeSet<&str> = out.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(set.len(), ids.len());
        // The same stored id maps the same way in every request.
        assert_eq!(assign(&ids, IdRule::Mistral), out);
    }

    #[test]
    fn a_mapped_id_never_takes_a_kept_one() {
        let long = format!("{}.", "y".repeat(70));
        let first = assign(&[long.as_str()], IdRule::Anthropic);
        let ids = [first[0].id.as_str(), long.as_str()];
        let out = assign(&ids, IdRule::Anthropic);
        assert_eq!(out[0].id, first[0].id);
        assert_ne!(out[1].id, out[0].id);
        assert!(IdRule::Anthropic.accepts(&out[1].id));
    }
}
