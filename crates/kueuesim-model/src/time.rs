//! Simulated time (integer milliseconds), Go-style durations (`90s`, `2h30m`), and RFC 3339 timestamps.
//!
//! Time is an integer so that every run of a scenario orders its events identically: a float clock
//! would make `a + b + c` depend on the order of additions. Milliseconds are fine-grained enough for
//! Kueue, whose own timestamps are second- or millisecond-precision.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

const MS_PER_SEC: i64 = 1000;
const MS_PER_MIN: i64 = 60 * MS_PER_SEC;
const MS_PER_HOUR: i64 = 60 * MS_PER_MIN;
const MS_PER_DAY: i64 = 24 * MS_PER_HOUR;
const NS_PER_MS: u128 = 1_000_000;

/// A point in simulated time: milliseconds since the simulation start, negative for objects
/// created before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub i64);

/// A span of simulated time in milliseconds.
///
/// [`SimDuration::parse`] only produces non-negative durations, but the difference of two
/// [`SimTime`]s may be negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(pub i64);

impl SimTime {
    /// The simulation start.
    pub const ZERO: SimTime = SimTime(0);
    /// The latest representable time; stands for "never".
    pub const MAX: SimTime = SimTime(i64::MAX);

    /// The time `ms` milliseconds after the simulation start.
    pub const fn from_millis(ms: i64) -> Self {
        SimTime(ms)
    }

    /// The time `secs` seconds after the simulation start, saturating at the ends of `i64`.
    pub const fn from_secs(secs: i64) -> Self {
        SimTime(secs.saturating_mul(MS_PER_SEC))
    }

    /// Milliseconds since the simulation start.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// Seconds since the simulation start, for reports only (never for decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// `self + d`, clamped to the representable range instead of overflowing.
    pub const fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `ms` milliseconds.
    pub const fn from_millis(ms: i64) -> Self {
        SimDuration(ms)
    }

    /// A duration of `secs` seconds, saturating at the ends of `i64`.
    pub const fn from_secs(secs: i64) -> Self {
        SimDuration(secs.saturating_mul(MS_PER_SEC))
    }

    /// The duration in milliseconds.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// The duration in seconds, for reports only (never for decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// Appends the duration in whole seconds, rounded half to even, as Go's `%.0f` of
    /// `Duration.Seconds()` writes it (Kueue's "wait time since queued was 5s"); the same
    /// text as `format!("{:.0}", self.as_secs_f64())`, without the float formatting that
    /// every admission's event would pay for.
    pub fn push_whole_secs(self, out: &mut String) {
        let (secs, rem) = (self.0.unsigned_abs() / 1000, self.0.unsigned_abs() % 1000);
        let rounded = secs + u64::from(rem > 500 || (rem == 500 && secs % 2 == 1));
        // `{:.0}` keeps the sign of a negative value that rounds to zero ("-0").
        if self.0 < 0 {
            out.push('-');
        }
        out.push_str(crate::decimal_digits(rounded, &mut [0; 20]));
    }

    /// Parses Go's `time.ParseDuration` syntax: a sequence of decimal numbers, each with an
    /// optional fraction and a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`), such as `90s`,
    /// `2h30m`, `1.5h`, `.5h`, `1.h` or `300us`; a bare `0` needs no unit.
    ///
    /// The sum is computed exactly and sub-millisecond remainders are rounded up to the next
    /// millisecond, so a non-zero duration never becomes zero. Negative durations (`-1m`) are
    /// rejected because nothing in a scenario can take negative time; `-0` is zero, as in Go.
    /// Errs with [`DurationError::Overflow`] if the number of milliseconds does not fit `i64`.
    pub fn parse(s: &str) -> Result<SimDuration, DurationError> {
        let input = || s.to_string();
        let mut rest = s;
        let negative = match rest.as_bytes().first() {
            Some(b'-') => {
                rest = &rest[1..];
                true
            }
            Some(b'+') => {
                rest = &rest[1..];
                false
            }
            _ => false,
        };
        if rest == "0" {
            return Ok(SimDuration::ZERO);
        }
        if rest.is_empty() {
            return Err(DurationError::Invalid { input: input() });
        }

        // The exact total is `total_ns` plus a positive amount below 1 ns when `sub_ns` is set.
        let mut total_ns: u128 = 0;
        let mut sub_ns = false;
        while !rest.is_empty() {
            let bytes = rest.as_bytes();
            if !(bytes[0] == b'.' || bytes[0].is_ascii_digit()) {
                return Err(DurationError::Invalid { input: input() });
            }
            let int_end = bytes
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(bytes.len());
            let mut frac: &[u8] = &[];
            let mut number_end = int_end;
            if bytes.get(int_end) == Some(&b'.') {
                let frac_len = bytes[int_end + 1..]
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .unwrap_or(bytes.len() - int_end - 1);
                frac = &bytes[int_end + 1..int_end + 1 + frac_len];
                number_end = int_end + 1 + frac_len;
            }
            // Go accepts "1.h" and ".5h" but not ".h".
            if int_end == 0 && frac.is_empty() {
                return Err(DurationError::Invalid { input: input() });
            }
            // As in Go, the unit is everything up to the next number.
            let unit_len = bytes[number_end..]
                .iter()
                .position(|&b| b == b'.' || b.is_ascii_digit())
                .unwrap_or(bytes.len() - number_end);
            if unit_len == 0 {
                return Err(DurationError::MissingUnit { input: input() });
            }
            // Both ends are at ASCII bytes (or the end), hence on char boundaries.
            let unit = &rest[number_end..number_end + unit_len];
            let unit_ns = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
                input: input(),
                unit: unit.to_string(),
            })?;

            let overflow = || DurationError::Overflow { input: input() };
            let mut whole: u128 = 0;
            for &d in &bytes[..int_end] {
                whole = whole
                    .checked_mul(10)
                    .and_then(|w| w.checked_add(u128::from(d - b'0')))
                    .ok_or_else(overflow)?;
            }
            let (frac_ns, frac_inexact) = fraction_nanos(frac, unit_ns);
            sub_ns |= frac_inexact;
            total_ns = whole
                .checked_mul(unit_ns)
                .and_then(|w| w.checked_add(frac_ns))
                .and_then(|w| w.checked_add(total_ns))
                .ok_or_else(overflow)?;
            rest = &rest[number_end + unit_len..];
        }

        if negative && (total_ns > 0 || sub_ns) {
            return Err(DurationError::Negative { input: input() });
        }
        let rounds_up = !total_ns.is_multiple_of(NS_PER_MS) || sub_ns;
        let ms = total_ns / NS_PER_MS + u128::from(rounds_up);
        i64::try_from(ms)
            .map(SimDuration)
            .map_err(|_| DurationError::Overflow { input: input() })
    }
}

/// Nanoseconds in one `unit`, or `None` for an unknown unit. Both micro signs are accepted, as Go
/// does: U+00B5 (micro sign) and U+03BC (Greek small letter mu).
fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// `0.<digits> × unit_ns`, floored to whole nanoseconds, and whether anything was floored away.
fn fraction_nanos(digits: &[u8], unit_ns: u128) -> (u128, bool) {
    // 24 digits times the largest unit (3.6e12 ns) stays below 2^128; digits past that are worth
    // less than a nanosecond and only matter for whether the value rounds up.
    const KEPT: usize = 24;
    let (kept, dropped) = digits.split_at(digits.len().min(KEPT));
    let mut numerator: u128 = 0;
    for &d in kept {
        numerator = numerator * 10 + u128::from(d - b'0');
    }
    let scale = 10u128.pow(kept.len() as u32);
    let scaled = numerator * unit_ns;
    let inexact = !scaled.is_multiple_of(scale) || dropped.iter().any(|&d| d != b'0');
    (scaled / scale, inexact)
}

/// Go's `Duration.String()`, truncated to milliseconds: `0s`, `500ms`, `1.5s`, `1m30s`, `2h30m0s`,
/// `1h0m0.5s`. [`SimDuration::parse`] reads every output back to the same duration.
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("0s");
        }
        if self.0 < 0 {
            f.write_str("-")?;
        }
        let ms = self.0.unsigned_abs();
        if ms < 1000 {
            return write!(f, "{ms}ms");
        }
        let hours = ms / MS_PER_HOUR as u64;
        let minutes = ms / MS_PER_MIN as u64 % 60;
        let seconds = ms / MS_PER_SEC as u64 % 60;
        let millis = ms % MS_PER_SEC as u64;
        // Like Go, larger units are shown once a larger unit is non-zero, even when they are zero.
        if hours > 0 {
            write!(f, "{hours}h{minutes}m")?;
        } else if minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        write!(f, "{seconds}")?;
        if millis > 0 {
            let frac = format!("{millis:03}");
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        f.write_str("s")
    }
}

// Arithmetic saturates at the ends of `i64` instead of panicking. That is safe because
// nothing reaching it is unbounded: the loader refuses every time and duration beyond
// `crate::limits` (ten years), so the sums a run forms stay orders of magnitude inside
// `i64` milliseconds, and `SimTime::MAX` ("never") plus anything stays "never". Saturation
// only decides what a broken invariant would do, and then it does not bring the run down.

impl Add<SimDuration> for SimTime {
    type Output = SimTime;

    /// `self + rhs`, saturating (see above).
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, rhs: SimDuration) {
        *self = *self + rhs;
    }
}

impl Sub<SimDuration> for SimTime {
    type Output = SimTime;

    /// `self - rhs`, saturating.
    fn sub(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;

    /// The (possibly negative) time from `rhs` to `self`, saturating.
    fn sub(self, rhs: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;

    /// `self + rhs`, saturating.
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, rhs: SimDuration) {
        *self = *self + rhs;
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;

    /// `self - rhs`, saturating.
    fn sub(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl SubAssign for SimDuration {
    fn sub_assign(&mut self, rhs: SimDuration) {
        *self = *self - rhs;
    }
}

/// Why a duration could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The text is not a sequence of numbers with units.
    #[error(
        "invalid duration \"{input}\": expected a sequence of decimal numbers each with a unit, such as 90s, 2h30m or 500ms"
    )]
    Invalid {
        /// The offending text.
        input: String,
    },
    /// A number without a unit (other than a bare `0`).
    #[error(
        "missing unit in duration \"{input}\": expected each number to be followed by one of ns, us, µs, ms, s, m, h"
    )]
    MissingUnit {
        /// The offending text.
        input: String,
    },
    /// A unit that Go does not know.
    #[error(
        "unknown unit \"{unit}\" in duration \"{input}\": expected one of ns, us, µs, ms, s, m, h"
    )]
    UnknownUnit {
        /// The offending text.
        input: String,
        /// The unit as written.
        unit: String,
    },
    /// A duration below zero.
    #[error("negative duration \"{input}\": expected a duration of zero or more")]
    Negative {
        /// The offending text.
        input: String,
    },
    /// More milliseconds than fit `i64`.
    #[error(
        "duration \"{input}\" is out of range: expected at most 9223372036854775807 milliseconds"
    )]
    Overflow {
        /// The offending text.
        input: String,
    },
}

/// Why a timestamp could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimestampError {
    /// The text does not have the shape of an RFC 3339 timestamp.
    #[error(
        "invalid timestamp \"{input}\": expected RFC 3339 such as 2024-05-01T12:00:00Z or 2024-05-01T12:00:00.5+02:00"
    )]
    Syntax {
        /// The offending text.
        input: String,
    },
    /// A field has the right shape but an impossible value, such as month 13 or February 30.
    #[error("invalid timestamp \"{input}\": {field} is out of range: expected {expected}")]
    OutOfRange {
        /// The offending text.
        input: String,
        /// Which field: `month`, `day`, `hour`, `minute`, `second` or `offset`.
        field: &'static str,
        /// The values the field may take.
        expected: &'static str,
    },
}

/// Parses an RFC 3339 timestamp as Kubernetes writes them (`2024-05-01T12:00:00Z`, also with
/// fractional seconds and numeric offsets such as `+02:00`) into Unix milliseconds. Fractions
/// below 1 ms are truncated. `t` and `z` may be lower-case, as RFC 3339 allows; leap seconds
/// (second 60) are rejected, as Go rejects them.
pub fn parse_rfc3339(s: &str) -> Result<i64, TimestampError> {
    let syntax = || TimestampError::Syntax {
        input: s.to_string(),
    };
    let out_of_range = |field, expected| TimestampError::OutOfRange {
        input: s.to_string(),
        field,
        expected,
    };
    let b = s.as_bytes();
    // A fixed-width run of ASCII digits at `at`.
    let num = |at: usize, len: usize| -> Result<i64, TimestampError> {
        let digits = b.get(at..at + len).ok_or_else(syntax)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(syntax());
        }
        Ok(digits
            .iter()
            .fold(0, |acc, &d| acc * 10 + i64::from(d - b'0')))
    };
    let expect = |at: usize, allowed: &[u8]| -> Result<(), TimestampError> {
        match b.get(at) {
            Some(c) if allowed.contains(c) => Ok(()),
            _ => Err(syntax()),
        }
    };

    let year = num(0, 4)?;
    expect(4, b"-")?;
    let month = num(5, 2)?;
    expect(7, b"-")?;
    let day = num(8, 2)?;
    expect(10, b"Tt")?;
    let hour = num(11, 2)?;
    expect(13, b":")?;
    let minute = num(14, 2)?;
    expect(16, b":")?;
    let second = num(17, 2)?;
    let mut pos = 19;

    let mut millis = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let len = b[pos..].iter().take_while(|d| d.is_ascii_digit()).count();
        if len == 0 {
            return Err(syntax());
        }
        // Only the first three digits matter: finer fractions are truncated.
        for i in 0..3 {
            let digit = if i < len {
                i64::from(b[pos + i] - b'0')
            } else {
                0
            };
            millis = millis * 10 + digit;
        }
        pos += len;
    }

    let offset_ms = match b.get(pos) {
        Some(b'Z' | b'z') => {
            pos += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            let off_hour = num(pos + 1, 2)?;
            expect(pos + 3, b":")?;
            let off_minute = num(pos + 4, 2)?;
            pos += 6;
            if off_hour > 23 || off_minute > 59 {
                return Err(out_of_range("offset", "-23:59 to +23:59"));
            }
            let ms = off_hour * MS_PER_HOUR + off_minute * MS_PER_MIN;
            if sign == b'-' { -ms } else { ms }
        }
        _ => return Err(syntax()),
    };
    if pos != b.len() {
        return Err(syntax());
    }

    if !(1..=12).contains(&month) {
        return Err(out_of_range("month", "01 to 12"));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(out_of_range("day", "a day that exists in that month"));
    }
    if hour > 23 {
        return Err(out_of_range("hour", "00 to 23"));
    }
    if minute > 59 {
        return Err(out_of_range("minute", "00 to 59"));
    }
    if second > 59 {
        return Err(out_of_range(
            "second",
            "00 to 59 (leap seconds are not accepted)",
        ));
    }

    // No overflow: four-digit years keep every term below 2^49.
    let local_ms = days_from_civil(year, month, day) * MS_PER_DAY
        + hour * MS_PER_HOUR
        + minute * MS_PER_MIN
        + second * MS_PER_SEC
        + millis;
    // The wall clock is `offset` ahead of UTC, so UTC is the wall clock minus the offset.
    Ok(local_ms - offset_ms)
}

/// `YYYY-MM-DD HH:MM:SS` read as UTC (the Philly trace's timestamps) to Unix milliseconds:
/// the value [`parse_rfc3339`] gives for `YYYY-MM-DDTHH:MM:SSZ`, or None for any other text and
/// for a field out of range, where the caller goes the general way (which words the error).
/// A trace reader calls this for every row, several times, so it reads the 19 bytes in place.
pub fn parse_utc_space_separated(s: &str) -> Option<i64> {
    let b: &[u8; 19] = s.as_bytes().try_into().ok()?;
    if b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let digit = |i: usize| b[i].is_ascii_digit().then(|| i64::from(b[i] - b'0'));
    let two = |i: usize| Some(digit(i)? * 10 + digit(i + 1)?);
    let year = two(0)? * 100 + two(2)?;
    let (month, day) = (two(5)?, two(8)?);
    let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
    let valid = (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour <= 23
        && minute <= 59
        && second <= 59;
    valid.then(|| {
        days_from_civil(year, month, day) * MS_PER_DAY
            + hour * MS_PER_HOUR
            + minute * MS_PER_MIN
            + second * MS_PER_SEC
    })
}

/// Formats Unix milliseconds as an RFC 3339 UTC timestamp, `2024-05-01T12:00:00Z`, with a
/// three-digit fraction (`.500Z`) only when the milliseconds are non-zero. Inverse of
/// [`parse_rfc3339`] for years 0000 to 9999; other years are written with more digits or a
/// sign, which is not RFC 3339.
pub fn format_rfc3339(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(MS_PER_DAY);
    let in_day = unix_ms.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let hour = in_day / MS_PER_HOUR;
    let minute = in_day / MS_PER_MIN % 60;
    let second = in_day / MS_PER_SEC % 60;
    let millis = in_day % MS_PER_SEC;
    let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if millis != 0 {
        out.push_str(&format!(".{millis:03}"));
    }
    out.push('Z');
    out
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
/// Years are counted from March so that the leap day falls at the end of the year.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719468 days separate 0000-03-01 from 1970-01-01.
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian `(year, month, day)` of a day number since 1970-01-01 (Hinnant's
/// `civil_from_days`), the inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Cheap cases, and each out-of-range edge is one value in sixty or so.
        #![proptest_config(ProptestConfig::with_cases(8192))]

        /// The Philly form reads as `parse_rfc3339` reads its RFC 3339 spelling, and is
        /// refused (None) exactly where that fails: fields out of range (day 31 in a 30-day
        /// month, 29 February off leap years, hour 24, second 60), a non-digit, a wrong
        /// separator.
        #[test]
        fn space_separated_utc_is_rfc3339(
            year in 0i64..10_000,
            // Mostly in range, with the edges just past it.
            fields in (0i64..14, 0i64..33, 0i64..25, 0i64..61, 0i64..61),
            separator in proptest::sample::select(vec![' ', ' ', ' ', 'T', '_']),
            junk in proptest::option::weighted(
                0.2,
                (0usize..19, proptest::sample::select(vec!['x', '/', '9'])),
            ),
        ) {
            let (month, day, hour, minute, second) = fields;
            let mut text =
                format!("{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}");
            if let Some((at, c)) = junk {
                text.replace_range(at..=at, &c.to_string());
            }
            let rfc = text.replacen(' ', "T", 1) + "Z";
            let fast = parse_utc_space_separated(&text);
            match parse_rfc3339(&rfc) {
                Ok(ms) if text.as_bytes().get(10) == Some(&b' ') => prop_assert_eq!(fast, Some(ms)),
                _ => prop_assert_eq!(fast, None),
            }
        }
    }

    #[test]
    fn space_separated_utc_reads_philly_times() {
        assert_eq!(
            parse_utc_space_separated("2017-09-04 10:30:41"),
            parse_rfc3339("2017-09-04T10:30:41Z").ok()
        );
        assert_eq!(
            parse_utc_space_separated("2016-02-29 00:00:00"),
            Some(1_456_704_000_000)
        );
        assert_eq!(parse_utc_space_separated("2017-02-29 00:00:00"), None);
        assert_eq!(parse_utc_space_separated("2017-09-04 10:30:41.5"), None);
        assert_eq!(parse_utc_space_separated("None"), None);
    }

    fn ms(s: &str) -> i64 {
        SimDuration::parse(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .millis()
    }

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(ms("0"), 0);
        assert_eq!(ms("+0"), 0);
        assert_eq!(ms("-0"), 0);
        assert_eq!(ms("0s"), 0);
        assert_eq!(ms("90s"), 90_000);
        assert_eq!(ms("2h30m"), 9_000_000);
        assert_eq!(ms("1.5h"), 5_400_000);
        assert_eq!(ms(".5h"), 1_800_000);
        assert_eq!(ms("1.h"), 3_600_000);
        assert_eq!(ms("500ms"), 500);
        assert_eq!(ms("+5s"), 5000);
        assert_eq!(ms("1h1m1s1ms"), 3_661_001);
        assert_eq!(ms("1s1s"), 2000);
        assert_eq!(ms("0.001s"), 1);
        assert_eq!(ms("1.0000000000000000000000000000001h"), 3_600_001);
    }

    #[test]
    fn sub_millisecond_remainders_round_up() {
        assert_eq!(ms("300us"), 1);
        assert_eq!(ms("1µs"), 1);
        assert_eq!(ms("1μs"), 1);
        assert_eq!(ms("1ns"), 1);
        assert_eq!(ms("0.5ns"), 1);
        assert_eq!(ms("1000us"), 1);
        assert_eq!(ms("1001us"), 2);
        assert_eq!(ms("1.0001ms"), 2);
        assert_eq!(ms("999999ns"), 1);
        assert_eq!(ms("1000000ns"), 1);
        assert_eq!(ms("0.0000001s"), 1);
    }

    #[test]
    fn malformed_durations_are_rejected() {
        for s in ["", "+", "-", "h", ".h", "1h.", " 1h", "-.s", "s1"] {
            assert!(
                matches!(SimDuration::parse(s), Err(DurationError::Invalid { .. })),
                "{s:?}: {:?}",
                SimDuration::parse(s)
            );
        }
        for s in ["5", "1.5", "1h5", "00"] {
            assert!(
                matches!(
                    SimDuration::parse(s),
                    Err(DurationError::MissingUnit { .. })
                ),
                "{s:?}"
            );
        }
        assert_eq!(
            SimDuration::parse("1x"),
            Err(DurationError::UnknownUnit {
                input: "1x".into(),
                unit: "x".into()
            })
        );
        assert!(matches!(
            SimDuration::parse("1H"),
            Err(DurationError::UnknownUnit { .. })
        ));
        assert!(matches!(
            SimDuration::parse("1h 2m"),
            Err(DurationError::UnknownUnit { .. })
        ));
        assert!(matches!(
            SimDuration::parse("1h "),
            Err(DurationError::UnknownUnit { .. })
        ));
        assert!(matches!(
            SimDuration::parse("-1m"),
            Err(DurationError::Negative { .. })
        ));
        assert!(matches!(
            SimDuration::parse("-1ns"),
            Err(DurationError::Negative { .. })
        ));
        assert!(matches!(
            SimDuration::parse("9223372036854775808ms"),
            Err(DurationError::Overflow { .. })
        ));
        assert!(matches!(
            SimDuration::parse("9999999999999999999999999999999999999999h"),
            Err(DurationError::Overflow { .. })
        ));
        assert_eq!(ms("9223372036854775807ms"), i64::MAX);
        assert_eq!(
            SimDuration::parse("1x").unwrap_err().to_string(),
            "unknown unit \"x\" in duration \"1x\": expected one of ns, us, µs, ms, s, m, h"
        );
    }

    #[test]
    fn durations_display_like_go() {
        for (ms, shown) in [
            (0, "0s"),
            (1, "1ms"),
            (500, "500ms"),
            (1000, "1s"),
            (1500, "1.5s"),
            (1050, "1.05s"),
            (1001, "1.001s"),
            (60_000, "1m0s"),
            (90_000, "1m30s"),
            (9_000_000, "2h30m0s"),
            (3_600_500, "1h0m0.5s"),
            (-90_000, "-1m30s"),
            (-1, "-1ms"),
        ] {
            assert_eq!(SimDuration(ms).to_string(), shown, "{ms}");
        }
        assert_eq!(
            SimDuration(i64::MIN).to_string(),
            "-2562047788015h12m55.808s"
        );
    }

    #[test]
    fn arithmetic() {
        let t = SimTime::from_secs(10);
        assert_eq!(t + SimDuration::from_millis(5), SimTime(10_005));
        assert_eq!(t - SimTime::from_millis(10_500), SimDuration(-500));
        assert_eq!(t - SimDuration::from_secs(1), SimTime(9000));
        assert_eq!(SimTime::MAX.saturating_add(SimDuration(1)), SimTime::MAX);
        let mut d = SimDuration::from_secs(1);
        d += SimDuration(250);
        assert_eq!(d, SimDuration(1250));
        d -= SimDuration(1000);
        assert_eq!(d, SimDuration(250));
        let mut u = SimTime::ZERO;
        u += d;
        assert_eq!(u.millis(), 250);
        assert_eq!(u.as_secs_f64(), 0.25);
        assert_eq!(d.as_secs_f64(), 0.25);
        assert_eq!(SimTime::from_secs(i64::MAX), SimTime::MAX);
    }

    #[test]
    fn arithmetic_saturates_instead_of_panicking() {
        assert_eq!(SimTime::MAX + SimDuration(1), SimTime::MAX);
        assert_eq!(SimTime(i64::MIN) - SimDuration(1), SimTime(i64::MIN));
        assert_eq!(SimTime::MAX - SimTime(-1), SimDuration(i64::MAX));
        assert_eq!(
            SimDuration(i64::MAX) + SimDuration(1),
            SimDuration(i64::MAX)
        );
        assert_eq!(
            SimDuration(i64::MIN) - SimDuration(1),
            SimDuration(i64::MIN)
        );
    }

    #[test]
    fn timestamps_parse_to_unix_millis() {
        for (s, expected) in [
            ("1970-01-01T00:00:00Z", 0),
            ("2000-03-01T00:00:00Z", 951_868_800_000),
            ("2000-02-29T00:00:00Z", 951_782_400_000),
            ("2024-02-29T23:59:59Z", 1_709_251_199_000),
            ("2024-05-01T12:00:00Z", 1_714_564_800_000),
            ("2024-05-01T12:00:00.5Z", 1_714_564_800_500),
            ("2024-05-01T12:00:00.123999Z", 1_714_564_800_123),
            ("2024-05-01T14:00:00+02:00", 1_714_564_800_000),
            ("2024-05-01T06:30:00-05:30", 1_714_564_800_000),
            ("2024-05-01t12:00:00z", 1_714_564_800_000),
            ("1969-12-31T23:59:59.999Z", -1),
            ("1900-01-01T00:00:00Z", -2_208_988_800_000),
            ("0000-01-01T00:00:00Z", -62_167_219_200_000),
            ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
        ] {
            assert_eq!(parse_rfc3339(s), Ok(expected), "{s}");
        }
    }

    #[test]
    fn timestamps_format_as_utc() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(951_868_800_000), "2000-03-01T00:00:00Z");
        assert_eq!(
            format_rfc3339(1_714_564_800_500),
            "2024-05-01T12:00:00.500Z"
        );
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339(1_709_251_199_000), "2024-02-29T23:59:59Z");
    }

    #[test]
    fn malformed_timestamps_are_rejected() {
        for s in [
            "",
            "2024-05-01",
            "2024-05-01T12:00:00",
            "2024-05-01 12:00:00Z",
            "2024-05-01T12:00Z",
            "2024-5-01T12:00:00Z",
            "2024-05-01T12:00:00.Z",
            "2024-05-01T12:00:00+0200",
            "2024-05-01T12:00:00+02",
            "2024-05-01T12:00:00ZZ",
            "+2024-05-01T12:00:00Z",
            "2024-05-01T12:00:00Z ",
        ] {
            assert!(
                matches!(parse_rfc3339(s), Err(TimestampError::Syntax { .. })),
                "{s:?}"
            );
        }
        for (s, field) in [
            ("2024-13-01T00:00:00Z", "month"),
            ("2024-00-01T00:00:00Z", "month"),
            ("2023-02-29T00:00:00Z", "day"),
            ("1900-02-29T00:00:00Z", "day"),
            ("2024-04-31T00:00:00Z", "day"),
            ("2024-05-00T00:00:00Z", "day"),
            ("2024-05-01T24:00:00Z", "hour"),
            ("2024-05-01T12:60:00Z", "minute"),
            ("2024-05-01T12:00:60Z", "second"),
            ("2024-05-01T12:00:00+24:00", "offset"),
        ] {
            match parse_rfc3339(s) {
                Err(TimestampError::OutOfRange { field: f, .. }) => assert_eq!(f, field, "{s}"),
                other => panic!("{s}: expected {field} out of range, got {other:?}"),
            }
        }
        assert_eq!(
            parse_rfc3339("2024-13-01T00:00:00Z")
                .unwrap_err()
                .to_string(),
            "invalid timestamp \"2024-13-01T00:00:00Z\": month is out of range: expected 01 to 12"
        );
    }

    #[test]
    fn civil_conversion_matches_a_day_by_day_walk() {
        // Walk forward one day at a time from 1970-01-01 across several leap cycles, including 2000
        // (a leap year divisible by 400) and 2100 (not a leap year).
        let (mut y, mut m, mut d) = (1970, 1, 1);
        for days in 0..(365 * 140) {
            assert_eq!(days_from_civil(y, m, d), days);
            assert_eq!(civil_from_days(days), (y, m, d));
            d += 1;
            if d > days_in_month(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    proptest! {
        #[test]
        fn whole_secs_are_the_float_formatting(ms in -10_000_000i64..10_000_000_000) {
            let mut out = String::new();
            SimDuration(ms).push_whole_secs(&mut out);
            prop_assert_eq!(out, format!("{:.0}", SimDuration(ms).as_secs_f64()));
        }

        #[test]
        fn duration_display_round_trips(ms in 0i64..1_000_000_000_000) {
            let d = SimDuration(ms);
            prop_assert_eq!(SimDuration::parse(&d.to_string()), Ok(d));
        }

        #[test]
        fn timestamp_format_round_trips(ms in -62_167_219_200_000i64..=253_402_300_799_999) {
            prop_assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Ok(ms));
        }

        #[test]
        fn offsets_shift_by_exactly_the_offset(ms in 0i64..4_000_000_000_000, hh in 0i64..24, mm in 0i64..60) {
            // Write the same instant as a wall clock `hh:mm` ahead of UTC.
            let offset = hh * MS_PER_HOUR + mm * MS_PER_MIN;
            let local = format_rfc3339(ms + offset);
            let with_offset = format!("{}+{hh:02}:{mm:02}", local.trim_end_matches('Z'));
            prop_assert_eq!(parse_rfc3339(&with_offset), Ok(ms));
        }

        #[test]
        fn duration_parsing_never_panics(s in "[+-]?([0-9]{0,25}(\\.[0-9]{0,25})?(ns|us|µs|μs|ms|s|m|h|x|)){0,4}") {
            if let Ok(d) = SimDuration::parse(&s) {
                prop_assert!(d.millis() >= 0);
                prop_assert_eq!(SimDuration::parse(&d.to_string()), Ok(d));
            }
        }

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,30}") {
            let _ = SimDuration::parse(&s);
            let _ = parse_rfc3339(&s);
        }

        #[test]
        fn format_never_panics(ms: i64) {
            let _ = format_rfc3339(ms);
        }

        #[test]
        fn nonzero_durations_never_round_to_zero(ns in 1u64..u64::MAX) {
            let d = SimDuration::parse(&format!("{ns}ns")).unwrap();
            prop_assert!(d.millis() >= 1);
            prop_assert_eq!(d.millis() as u128, u128::from(ns).div_ceil(1_000_000));
        }
    }
}
