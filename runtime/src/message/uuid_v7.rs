//! UUIDv7 (RFC 9562 §5.7): the ids [`MessageId::new`] and [`TurnId::new`] make.
//!
//! 48 bits of Unix time in milliseconds, the version (7), 12 random bits, the
//! variant (`10`) and 62 random bits, written as 36 lowercase hexadecimal
//! characters with hyphens. The 74 random bits come from the operating system
//! through `getrandom`. Ids made in one process sort by when they were made:
//! an id that would not sort after the one before it (the same millisecond, or
//! a clock that went back) is the one before it plus one in its 74 counting
//! bits, the "monotonic random" of RFC 9562 §6.2, method 2.
//!
//! Written here rather than taken from the `uuid` crate: see "Build cost of
//! a dependency" in `benches/README.md`.
//!
//! [`MessageId::new`]: super::MessageId::new
//! [`TurnId::new`]: super::TurnId::new

use std::fmt;
use std::sync::{Mutex, PoisonError};

use super::now_ms;

/// The 74 bits that are random in a fresh id and count within a millisecond.
const COUNTING_BITS: u32 = 74;

/// A UUID, written (`Display`) as 36 characters in groups of 8-4-4-4-12
/// lowercase hexadecimal digits, e.g. `019ab5c2-7e31-7d4a-9f3e-2c5b8e1a0d47`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Uuid(u128);

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            id >> 96,
            (id >> 80) & 0xFFFF,
            (id >> 64) & 0xFFFF,
            (id >> 48) & 0xFFFF,
            id & 0xFFFF_FFFF_FFFF
        )
    }
}

/// A fresh UUIDv7.
pub(crate) fn new() -> Uuid {
    Uuid(next(&LAST, now_ms(), random_bits()))
}

/// The last id made in this process, which the next one must sort after.
static LAST: Mutex<u128> = Mutex::new(0);

/// The id for `ms` and `random`, or the `last` one plus one when that would
/// not sort after it; it becomes the last.
fn next(last: &Mutex<u128>, ms: u64, random: u128) -> u128 {
    let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
    let fresh = compose(ms, random);
    let id = if fresh > *last {
        fresh
    } else {
        successor(*last)
    };
    *last = id;
    id
}

/// The id of `ms` (its low 48 bits) and the low 74 bits of `count`.
fn compose(ms: u64, count: u128) -> u128 {
    let ms = u128::from(ms & 0xFFFF_FFFF_FFFF);
    let rand_a = (count >> 62) & 0xFFF;
    let rand_b = count & ((1 << 62) - 1);
    ms << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
}

/// The id after `id`: its counting bits plus one, carrying into the time.
fn successor(id: u128) -> u128 {
    let ms = (id >> 80) as u64;
    let count = ((id >> 64) & 0xFFF) << 62 | (id & ((1 << 62) - 1));
    let count = count + 1;
    if count >> COUNTING_BITS == 0 {
        compose(ms, count)
    } else {
        compose(ms + 1, 0)
    }
}

/// 74 bits from the operating system's random source.
fn random_bits() -> u128 {
    let mut bytes = [0u8; 16];
    // As `uuid::Uuid::now_v7` did: an id cannot be made without randomness,
    // and an operating system whose random source fails has no fallback
    // that would keep ids from colliding.
    if let Err(err) = getrandom::fill(&mut bytes[..10]) {
        panic!("the operating system's random source failed: {err}");
    }
    u128::from_le_bytes(bytes) & ((1 << COUNTING_BITS) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: u128) -> String {
        Uuid(id).to_string()
    }

    #[test]
    fn an_id_has_the_time_version_and_variant_where_rfc_9562_puts_them() {
        // RFC 9562 appendix A.6's example: 2022-02-22 19:22:22 UTC.
        let id = compose(0x017F_22E2_79B0, 0xCC3 << 62 | 0x18C4_DC0C_0C07_398F);
        assert_eq!(text(id), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    }

    #[test]
    fn a_fresh_id_reads_back_as_a_version_7_uuid() {
        let id = new().to_string();
        let groups: Vec<&str> = id.split('-').collect();
        assert_eq!(
            groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(id
            .bytes()
            .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_eq!(&groups[2][..1], "7");
        assert!(matches!(&groups[3][..1], "8" | "9" | "a" | "b"));
        let ms = u64::from_str_radix(&format!("{}{}", groups[0], groups[1]), 16).unwrap();
        assert!(ms.abs_diff(now_ms()) < 60_000, "{ms} is not now");
    }

    #[test]
    fn ids_sort_by_creation_within_a_millisecond_and_when_the_clock_goes_back() {
        let last = Mutex::new(0);
        let base = now_ms();
        let mut ids = vec![next(&last, base, u128::MAX >> 54)];
        // The same millisecond with smaller random bits, then a clock 5 ms
        // behind: each still follows the one before.
        ids.push(next(&last, base, 0));
        ids.push(next(&last, base - 5, 12345));
        ids.push(next(&last, base + 1, 7));
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:x?}");
        assert_eq!(ids[1], successor(ids[0]));
        assert_eq!(
            ids[1] >> 80,
            u128::from(base) + 1,
            "the count carried into the time"
        );
        let texts: Vec<String> = ids.iter().map(|&id| text(id)).collect();
        let mut sorted = texts.clone();
        sorted.sort();
        assert_eq!(texts, sorted, "the text sorts as the number does");
    }

    #[test]
    fn the_successor_keeps_the_version_and_variant() {
        let id = compose(42, 0xFFF << 62 | ((1 << 62) - 2));
        let next = successor(id);
        assert_eq!(next, compose(42, (1 << COUNTING_BITS) - 1));
        assert_eq!(successor(next), compose(43, 0));
        for id in [id, next, successor(next)] {
            assert_eq!((id >> 76) & 0xF, 7);
            assert_eq!((id >> 62) & 0b11, 0b10);
        }
    }

    #[test]
    fn many_ids_from_many_threads_are_distinct() {
        let ids: Vec<Uuid> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..2_000).map(|_| new()).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
