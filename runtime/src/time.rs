//! ISO 8601 times as agents write them (`2025-12-08T22:41:05.306Z`, as
//! JavaScript's `Date.toISOString` writes them; an offset such as `+02:00`
//! too), to and from Unix milliseconds: pi's entry timestamps, Claude Code's
//! and Codex's, and the times the stores keep. Also the crate's clock: now in
//! Unix milliseconds, and a deadline that never overflows.
//!
//! ```
//! use agentmsg_runtime::time;
//! let ms = time::parse_iso8601("2025-12-09T00:41:05.306+02:00").unwrap();
//! assert_eq!(ms, 1_765_233_665_306);
//! assert_eq!(time::format_iso8601(ms), "2025-12-08T22:41:05.306Z");
//! assert_eq!(time::format_iso8601_seconds(ms), "2025-12-08T22:41:05Z");
//! ```

/// Unix milliseconds of an ISO 8601 time such as `2025-12-08T22:41:05.306Z`:
/// a date, `T` (or `t` or a space), a time to the second, a fraction of any
/// length (read to the millisecond), then `Z` or an offset such as `+02:00`.
/// `None` when `text` is not one. A time before 1970 is negative.
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
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let minutes = num(i + 1, 2)? * 60 + num(i + 4, 2)?;
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
/// it: never a panic.
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
}
