//! ISO 8601 times as agents write them (`2025-12-08T22:41:05.306Z`, as
//! JavaScript's `Date.toISOString` writes them; an offset such as `+02:00`
//! too), to and from Unix milliseconds: pi's entry timestamps, Claude Code's
//! and Codex's, and the times the stores keep. Also the crate's clock: now in
//! Unix milliseconds, and a deadline that never overflows.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::time;
//! let ms = time::parse_iso8601("2025-12-09T00:41:05.306+02:00").unwrap();
//! assert_eq!(ms, 1_765_233_665_306);
//! assert_eq!(time::format_iso8601(ms), "2025-12-08T22:41:05.306Z");
//! assert_eq!(time::format_iso8601_seconds(ms), "2025-12-08T22:41:05Z");
//! ```

/// Unix milliseconds of an ISO 8601 time such as `2025-12-08T22:41:05.306Z`:
/// a date, `T` (or `t` or a space), a time to the second, a fraction of any
/// length (read to the millisecond), then `Z` or an offset such as `+02:00`.
/// `None` when `text` is not one. A time before 1970 is negative.
///
/// What it accepts, JavaScript's `Date.parse` (V8's, which pi runs on) reads
/// as the same time, and what that rejects, this does too: no leap second
/// (`23:59:60`), no offset past `±23:59`, no year below 100 after a space
/// (read there as two digits); `24:00:00` (with a zero fraction)
/// is the next day's midnight, and a day past the month's end (`02-30`)
/// runs on into the next month, as there.
pub fn parse_iso8601(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    // After a space V8 reads the date by its older parser, where a year
    // below 100 is two digits (`0077` is 1977): not the same time, so none.
    if b[10] == b' ' && year < 100 {
        return None;
    }
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    // Whether a digit of the fraction, read or not, is other than zero.
    let mut fraction = false;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            fraction |= b[i] != b'0';
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    // `24:00:00` is the end of the day, and nothing after it.
    if hour == 24 && (minute, second, fraction) != (0, 0, false) {
        return None;
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let (hours, minutes) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let minutes = hours * 60 + minutes;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// `ms` as `Date.toISOString` writes it: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso8601(ms: i64) -> String {
    format!("{}.{:03}Z", to_the_second(ms), ms.rem_euclid(1000))
}

/// `ms` as an RFC 3339 UTC time to the second: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_iso8601_seconds(ms: i64) -> String {
    format!("{}Z", to_the_second(ms))
}

/// The date and time of `ms`, to the second: `YYYY-MM-DDTHH:MM:SS`.
fn to_the_second(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a count of days since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Now, in Unix milliseconds (0 for a clock set before 1970).
pub(crate) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `by` after `now`; for a `by` too long to add to the clock (a timeout of
/// `Duration::MAX`), thirty years after it, as `tokio::time::sleep` takes
/// it: never a panic. (The HTTP stream's idle timeout is its one user.)
#[cfg(all(feature = "http", any_provider))]
pub(crate) fn deadline(now: std::time::Instant, by: std::time::Duration) -> std::time::Instant {
    const FAR: std::time::Duration = std::time::Duration::from_secs(30 * 365 * 24 * 3600);
    now.checked_add(by)
        .or_else(|| now.checked_add(FAR))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_round_trip() {
        for text in [
            "2025-12-08T22:41:05.306Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            let ms = parse_iso8601(text).unwrap();
            assert_eq!(format_iso8601(ms), text);
        }
        assert_eq!(
            parse_iso8601("2025-12-08T22:41:05.306Z"),
            Some(1_765_233_665_306)
        );
        assert_eq!(
            parse_iso8601("2025-12-09T00:41:05.306+02:00"),
            parse_iso8601("2025-12-08T22:41:05.306Z")
        );
        assert_eq!(
            parse_iso8601("2025-01-01T00:00:00Z"),
            Some(1_735_689_600_000)
        );
        assert_eq!(parse_iso8601("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            parse_iso8601("2000-03-01T00:00:00.5Z"),
            Some(951_868_800_500)
        );
        assert_eq!(parse_iso8601("1969-12-31T23:59:59Z"), Some(-1000));
        assert_eq!(parse_iso8601("not a time"), None);
        assert_eq!(parse_iso8601("2000-03-01"), None);
        assert_eq!(parse_iso8601("2024-01-01T00:00:00"), None);
        assert_eq!(parse_iso8601("2025-13-01T00:00:00Z"), None);
        // What V8's `Date.parse` rejects.
        assert_eq!(parse_iso8601("2016-12-31T23:59:60Z"), None);
        assert_eq!(parse_iso8601("2025-12-08T22:41:05+24:00"), None);
        assert_eq!(parse_iso8601("2025-12-08T22:41:05+05:99"), None);
        assert_eq!(parse_iso8601("2025-12-08T24:00:00.001Z"), None);
        assert_eq!(parse_iso8601("2025-12-08T24:00:00.0001Z"), None);
        // And what it reads: the day's end, a day past the month's end.
        assert_eq!(
            parse_iso8601("2025-12-31T24:00:00.000Z"),
            parse_iso8601("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_iso8601("2025-02-30T00:00:00Z"),
            parse_iso8601("2025-03-02T00:00:00Z")
        );
        assert_eq!(format_iso8601_seconds(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_iso8601_seconds(1_765_233_665_292),
            "2025-12-08T22:41:05Z"
        );
        assert_eq!(
            format_iso8601_seconds(951_782_400_000),
            "2000-02-29T00:00:00Z"
        );
    }

    /// A small seeded generator (xorshift), so the cases are the same on
    /// every run.
    struct Cases(u64);

    impl Cases {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len() as u64) as usize]
        }

        /// A time in the grammar `parse_iso8601` reads, its fields drawn
        /// around their limits.
        fn time(&mut self) -> String {
            let year = match self.below(4) {
                0 => self.below(10_000),
                _ => 1960 + self.below(80),
            };
            let field = |cases: &mut Cases, max: u64| {
                // Mostly in range, often at or just past the edge.
                match cases.below(8) {
                    0 => max - 1 + cases.below(3),
                    1 => cases.below(2),
                    _ => cases.below(max),
                }
            };
            let (month, day) = (field(self, 13), field(self, 32));
            let (hour, minute, second) = (field(self, 25), field(self, 60), field(self, 60));
            let hour = if self.below(6) == 0 { 24 } else { hour };
            let (minute, second) = if hour == 24 && self.below(2) == 0 {
                (0, 0)
            } else {
                (minute, second)
            };
            let separator = self.pick(&["T", "T", "t", " "]);
            let fraction = match self.below(5) {
                0 => String::new(),
                1 => ".".to_owned() + &"0".repeat(1 + self.below(8) as usize),
                _ => {
                    let digits = 1 + self.below(8) as usize;
                    let mut f = ".".to_owned();
                    for _ in 0..digits {
                        f.push(char::from(b'0' + self.below(10) as u8));
                    }
                    f
                }
            };
            let zone = match self.below(4) {
                0 => self.pick(&["Z", "z"]).to_owned(),
                _ => format!(
                    "{}{:02}:{:02}",
                    self.pick(&["+", "-"]),
                    field(self, 24),
                    field(self, 60)
                ),
            };
            format!(
                "{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}{fraction}{zone}"
            )
        }
    }

    /// What node's `Date.parse` makes of each of `texts` (`None` for `NaN`),
    /// or `None` when there is no `node` to ask (and `CI` is not set).
    fn node_date_parse(texts: &[String]) -> Option<Vec<Option<i64>>> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let script = "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>\
            console.log(JSON.stringify(JSON.parse(s).map(t=>{const v=Date.parse(t);\
            return Number.isNaN(v)?null:v;}))))";
        let child = Command::new("node")
            .args(["-e", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) if std::env::var_os("CI").is_some() => panic!("node: {e} (CI is set)"),
            Err(e) => {
                // Straight to stderr: libtest shows what `eprintln!` writes
                // only for a failed test.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED time::tests::date_parse_agrees_with_v8: node not found ({e})"
                );
                return None;
            }
        };
        let input = serde_json::to_vec(texts).unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "node failed: {:?}", out.status);
        Some(serde_json::from_slice(&out.stdout).unwrap())
    }

    #[test]
    fn date_parse_agrees_with_v8() {
        let mut cases = Cases(0x9E37_79B9_7F4A_7C15);
        let mut texts: Vec<String> = (0..4000).map(|_| cases.time()).collect();
        // Outside the grammar: V8 may read some of them, `parse_iso8601`
        // reads none.
        texts.extend(
            [
                "2025-12-08T22:41Z",
                "2025-12-08T22:41:05+0200",
                "2025-12-08T22:41:05.Z",
                "2025-12-08T22:41:05 Z",
                "2025-12-08T22:41:05+5:30",
                "2025-12-08",
                "+002025-12-08T22:41:05Z",
            ]
            .map(String::from),
        );
        let Some(v8) = node_date_parse(&texts) else {
            return;
        };
        let (mut read, mut refused) = (0, 0);
        for (text, v8) in texts.iter().zip(v8) {
            let ours = parse_iso8601(text);
            match ours {
                Some(_) => read += 1,
                None => refused += 1,
            }
            // Ours is V8's, except that V8 reads forms outside the grammar
            // (and, after a space, by its older parser, offsets to ±99:59).
            if ours.is_some() || cases_in_grammar(text) {
                assert_eq!(ours, v8, "{text:?}");
            }
        }
        // The generator reaches both sides.
        assert!(
            read > 1000 && refused > 1000,
            "{read} read, {refused} refused"
        );
    }

    /// Whether `text` has the generated shape of ECMAScript's own format
    /// (date, `T`, time to the second, fraction, zone with a colon), where
    /// `parse_iso8601` and V8 must agree on everything.
    fn cases_in_grammar(text: &str) -> bool {
        let b = text.as_bytes();
        b.len() >= 20
            && b[4] == b'-'
            && matches!(b[10], b'T' | b't')
            && b[13] == b':'
            && b[16] == b':'
            && (b.ends_with(b"Z") || b.ends_with(b"z") || b[b.len() - 3] == b':')
            && b[0].is_ascii_digit()
    }
}
