//! Kubernetes resource quantities (`500m`, `16Gi`, `1e3`): exact parsing, Kueue's integer amounts, and their display.
//!
//! A quantity is held exactly as `±mantissa × 10^exp10 × 2^exp2`, never as a float: Kueue compares
//! quotas to the last byte and millicore, and a float would turn `0.1` or `1.0001` into a different
//! amount than the API server computes.

use std::fmt;
use std::str::FromStr;

/// Most significant digits a quantity may have. 30 digits (< 2^100) leave room in a `u128` to
/// multiply by the binary suffixes and by 1000 without a big-integer type; real manifests use a
/// handful of digits.
const MAX_DIGITS: usize = 30;

/// 10^38 is the largest power of ten in a `u128`, and twice it still fits, which the long
/// division in [`floor_div_pow10`] relies on.
const MAX_POW10_STEP: u64 = 38;

/// A parsed Kubernetes resource quantity, such as `500m`, `16Gi`, `1.5` or `1e3`.
///
/// The representation is canonical, so equality is numeric equality: `"1k" == "1000"`,
/// `"1Ki" == "1024"`, `"0.5" == "500m"`, `"-0" == "0"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    /// Sign; always false for zero so that zero has one representation.
    negative: bool,
    /// Odd, or zero. Factors of two live in `exp2`; a factor of five remains only when `exp2` is
    /// zero (otherwise `5 × 2^a × 10^c` is rewritten as `2^(a-1) × 10^(c+1)`). These two rules make
    /// the triple unique for each value, which is what makes the derived `PartialEq` numeric.
    mantissa: u128,
    /// Power of ten. Zero when `mantissa` is zero.
    exp10: i64,
    /// Power of two (binary suffixes and factors of two taken out of the mantissa). Zero when
    /// `mantissa` is zero.
    exp2: u32,
}

/// Why a quantity could not be parsed, or could not be turned into an integer amount.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text is not a quantity.
    #[error(
        "invalid quantity \"{input}\": expected a number with an optional suffix such as 500m, 16Gi or 8"
    )]
    Invalid {
        /// The offending text.
        input: String,
    },
    /// The quantity has more significant digits than can be held exactly.
    #[error(
        "quantity \"{input}\" has too many significant digits: expected at most 30 significant digits"
    )]
    TooPrecise {
        /// The offending text.
        input: String,
    },
    /// The quantity, or its exponent, is too large to be represented.
    #[error(
        "quantity \"{input}\" is out of range: expected an amount that fits in a signed 64-bit integer"
    )]
    Overflow {
        /// The offending text, or the quantity's canonical form when the overflow is found after parsing.
        input: String,
    },
    /// A negative quantity where only non-negative ones make sense.
    #[error(
        "quantity \"{input}\" is negative: expected a non-negative amount because requests and quotas cannot be negative"
    )]
    Negative {
        /// The offending quantity, in canonical form.
        input: String,
    },
}

impl Quantity {
    /// Parses a quantity with the grammar of apimachinery's `resource.ParseQuantity`: an optional
    /// sign, decimal digits with an optional point, then an optional suffix (`Ki Mi Gi Ti Pi Ei`,
    /// `n u m k M G T P E`, or a decimal exponent such as `e3` or `E-1`). No whitespace.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let invalid = || QuantityError::Invalid {
            input: s.to_string(),
        };
        let overflow = || QuantityError::Overflow {
            input: s.to_string(),
        };
        let bytes = s.as_bytes();
        let mut pos = 0;

        let negative = match bytes.first() {
            Some(b'-') => {
                pos += 1;
                true
            }
            Some(b'+') => {
                pos += 1;
                false
            }
            _ => false,
        };

        let int_start = pos;
        while pos < bytes.len() && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        let int_digits = &bytes[int_start..pos];
        let mut frac_digits: &[u8] = &[];
        if pos < bytes.len() && bytes[pos] == b'.' {
            pos += 1;
            let frac_start = pos;
            while pos < bytes.len() && bytes[pos].is_ascii_digit() {
                pos += 1;
            }
            frac_digits = &bytes[frac_start..pos];
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            return Err(invalid());
        }

        // `pos` sits on an ASCII byte or the end, so this slice is on a char boundary.
        let (suffix_exp10, exp2) = parse_suffix(&s[pos..]).ok_or_else(invalid)?;
        let suffix_exp10 = suffix_exp10.map_err(|()| overflow())?;

        // Significant digits: the integer and fraction digits run together, without leading or
        // trailing zeros (trailing zeros move into the exponent so "1000" and "1k" agree).
        let all = || int_digits.iter().chain(frac_digits.iter()).copied();
        let leading = all().take_while(|&d| d == b'0').count();
        let total = int_digits.len() + frac_digits.len();
        let trailing = if leading == total {
            0
        } else {
            all().rev().take_while(|&d| d == b'0').count()
        };
        let significant = total - leading - trailing;
        if significant > MAX_DIGITS {
            return Err(QuantityError::TooPrecise {
                input: s.to_string(),
            });
        }
        let mut mantissa: u128 = 0;
        for d in all().skip(leading).take(significant) {
            mantissa = mantissa * 10 + u128::from(d - b'0');
        }
        let exp10 = i64::try_from(trailing)
            .ok()
            .and_then(|t| t.checked_sub(i64::try_from(frac_digits.len()).ok()?))
            .and_then(|e| e.checked_add(suffix_exp10))
            .ok_or_else(overflow)?;

        Quantity::canonical(negative, mantissa, exp10, exp2).ok_or_else(overflow)
    }

    /// Brings a value into the unique form described on the fields, or `None` if the exponent
    /// leaves `i64`.
    fn canonical(negative: bool, mantissa: u128, exp10: i64, exp2: u32) -> Option<Quantity> {
        if mantissa == 0 {
            return Some(Quantity {
                negative: false,
                mantissa: 0,
                exp10: 0,
                exp2: 0,
            });
        }
        let twos = mantissa.trailing_zeros();
        let mut q = Quantity {
            negative,
            mantissa: mantissa >> twos,
            exp10,
            exp2: exp2 + twos,
        };
        while q.exp2 > 0 && q.mantissa.is_multiple_of(5) {
            q.mantissa /= 5;
            q.exp2 -= 1;
            q.exp10 = q.exp10.checked_add(1)?;
        }
        Some(q)
    }

    /// The value rounded up to an integer, like apimachinery's `Quantity.Value()`.
    ///
    /// As in apimachinery, "up" means away from zero, so `-1.5` gives `-2`. Errs with
    /// [`QuantityError::Overflow`] if the result does not fit `i64`.
    pub fn value(&self) -> Result<i64, QuantityError> {
        self.scaled(0).ok_or_else(|| self.overflow())
    }

    /// The value times 1000, rounded up to an integer, like apimachinery's `Quantity.MilliValue()`
    /// (away from zero for negative quantities). Errs with [`QuantityError::Overflow`] if the
    /// result does not fit `i64`.
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        self.scaled(3).ok_or_else(|| self.overflow())
    }

    /// Whether the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    fn overflow(&self) -> QuantityError {
        QuantityError::Overflow {
            input: self.to_string(),
        }
    }

    /// `value × 10^extra_exp10`, rounded away from zero, if it fits `i64`.
    fn scaled(&self, extra_exp10: i64) -> Option<i64> {
        if self.mantissa == 0 {
            return Some(0);
        }
        let k = self.exp10.checked_add(extra_exp10)?;
        let (floor, inexact) = if k >= 0 {
            let pow = 10u128.checked_pow(u32::try_from(k).ok()?)?;
            let n = shl_checked(self.mantissa.checked_mul(pow)?, self.exp2)?;
            (n, false)
        } else {
            floor_div_pow10(self.mantissa, self.exp2, k.unsigned_abs())?
        };
        let magnitude = i128::try_from(floor.checked_add(u128::from(inexact))?).ok()?;
        let signed = if self.negative { -magnitude } else { magnitude };
        i64::try_from(signed).ok()
    }
}

/// `x << e`, or `None` if bits would be lost.
fn shl_checked(x: u128, e: u32) -> Option<u128> {
    if x == 0 {
        Some(0)
    } else if x.leading_zeros() >= e {
        Some(x << e)
    } else {
        None
    }
}

/// `floor(m × 2^e2 / 10^d)` and whether the division left a remainder, or `None` if the floor
/// does not fit `u128`. Exact for any `d`, without ever forming `10^d` or `m × 2^e2`.
fn floor_div_pow10(m: u128, e2: u32, d: u64) -> Option<(u128, bool)> {
    // First divide by up to 10^38 while multiplying by 2^e2 one bit at a time (long division):
    // the remainder stays below 10^38 < 2^127, so doubling it cannot overflow.
    let first = d.min(MAX_POW10_STEP);
    let divisor = 10u128.pow(u32::try_from(first).ok()?);
    let mut q = m / divisor;
    let mut r = m % divisor;
    for _ in 0..e2 {
        q = q.checked_mul(2)?;
        r *= 2;
        if r >= divisor {
            r -= divisor;
            q += 1;
        }
    }
    let mut inexact = r != 0;
    // Any further powers of ten divide the quotient; floor(floor(x/a)/b) = floor(x/(ab)), and the
    // division is exact only if every step is.
    let mut rest = d - first;
    while rest > 0 && q > 0 {
        let step = rest.min(MAX_POW10_STEP);
        let divisor = 10u128.pow(u32::try_from(step).ok()?);
        inexact |= !q.is_multiple_of(divisor);
        q /= divisor;
        rest -= step;
    }
    Some((q, inexact))
}

/// The `(10-exponent, 2-exponent)` of a suffix, or `None` if it is not a suffix. The 10-exponent
/// is `Err` when a decimal exponent does not fit `i64`.
fn parse_suffix(suffix: &str) -> Option<(Result<i64, ()>, u32)> {
    let fixed = match suffix {
        "" => Some((0, 0)),
        "Ki" => Some((0, 10)),
        "Mi" => Some((0, 20)),
        "Gi" => Some((0, 30)),
        "Ti" => Some((0, 40)),
        "Pi" => Some((0, 50)),
        "Ei" => Some((0, 60)),
        "n" => Some((-9, 0)),
        "u" => Some((-6, 0)),
        "m" => Some((-3, 0)),
        "k" => Some((3, 0)),
        "M" => Some((6, 0)),
        "G" => Some((9, 0)),
        "T" => Some((12, 0)),
        "P" => Some((15, 0)),
        "E" => Some((18, 0)),
        _ => None,
    };
    if let Some((e10, e2)) = fixed {
        return Some((Ok(e10), e2));
    }
    // A decimal exponent: `e` or `E`, an optional sign, then at least one digit. (A lone `E` is
    // exa, matched above; a lone `e` is nothing.)
    let rest = suffix
        .strip_prefix('e')
        .or_else(|| suffix.strip_prefix('E'))?;
    let digits = rest
        .strip_prefix('+')
        .or_else(|| rest.strip_prefix('-'))
        .unwrap_or(rest);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((rest.parse::<i64>().map_err(|_| ()), 0))
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

/// One way of writing a quantity's magnitude: `digits × 10^exp10 × 1024^suffix`.
#[derive(Clone, Copy)]
struct Spelling {
    digits: u128,
    exp10: i64,
    /// Index into [`BINARY_SUFFIXES`]; 0 is no suffix.
    suffix: usize,
}

const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

impl Spelling {
    fn digit_count(&self) -> u32 {
        self.digits.checked_ilog10().map_or(1, |l| l + 1)
    }

    /// Length of `digits × 10^exp10` written without an exponent ("0.5", "1000").
    fn plain_len(&self) -> u128 {
        let d = u128::from(self.digit_count());
        let e = u128::from(self.exp10.unsigned_abs());
        match self.exp10 {
            0.. => d + e,
            _ if e < d => d + 1,
            _ => 2 + e,
        }
    }

    /// Length of `digits e exp10` ("5e-1", "1e30").
    fn exponent_len(&self) -> u128 {
        let d = u128::from(self.digit_count());
        if self.exp10 == 0 {
            d
        } else {
            d + 1 + self.exp10.to_string().len() as u128
        }
    }

    /// Whether to write it with an exponent, and how long the text is. Exponents cannot be
    /// combined with a suffix; without one, plain digits are preferred unless much longer.
    fn layout(&self) -> (bool, u128) {
        let plain = self.plain_len();
        if self.suffix > 0 {
            (false, plain + 2)
        } else {
            let exponent = self.exponent_len();
            if plain <= exponent + 3 {
                (false, plain)
            } else {
                (true, exponent)
            }
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (use_exponent, _) = self.layout();
        let digits = self.digits.to_string();
        let zeros = |n: u64| "0".repeat(usize::try_from(n).unwrap_or(0));
        if use_exponent {
            write!(f, "{digits}e{}", self.exp10)?;
        } else if self.exp10 >= 0 {
            write!(f, "{digits}{}", zeros(self.exp10.unsigned_abs()))?;
        } else {
            let frac_len = self.exp10.unsigned_abs();
            match usize::try_from(frac_len) {
                Ok(n) if n < digits.len() => {
                    let (int, frac) = digits.split_at(digits.len() - n);
                    write!(f, "{int}.{frac}")?;
                }
                _ => write!(f, "0.{}{digits}", zeros(frac_len - digits.len() as u64))?,
            }
        }
        f.write_str(BINARY_SUFFIXES[self.suffix])
    }
}

impl Quantity {
    /// The ways of writing this quantity with each binary suffix (or none), where the digits fit.
    fn spellings(&self) -> impl Iterator<Item = Spelling> + '_ {
        (0..BINARY_SUFFIXES.len()).filter_map(|suffix| {
            // 2^a = 1024^s × 2^(a - 10s); a negative remainder becomes 5^k / 10^k.
            let shift = (10 * suffix) as i64 - i64::from(self.exp2);
            let (digits, exp10) = if shift <= 0 {
                (
                    shl_checked(self.mantissa, u32::try_from(-shift).ok()?)?,
                    self.exp10,
                )
            } else {
                let k = u32::try_from(shift).ok()?;
                (
                    self.mantissa.checked_mul(5u128.checked_pow(k)?)?,
                    self.exp10.checked_sub(shift)?,
                )
            };
            Some(Spelling {
                digits,
                exp10,
                suffix,
            })
        })
    }
}

/// Writes the quantity exactly, in the shortest form [`Quantity::parse`] reads back to an equal
/// quantity: `1Ki`, `1.5Gi`, `0.5`, `1000`, `1e30`.
///
/// A parseable form always exists: the digits of the text the quantity was parsed from are one
/// of the candidates (at most 30 significant digits), and the shortest form is never longer
/// than that text by more than a few characters.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        if self.mantissa == 0 {
            return f.write_str("0");
        }
        // The candidates have no trailing zeros (the mantissa is odd, or free of fives when
        // multiplied by two), so their digit count is their significant-digit count.
        let best = self
            .spellings()
            .filter(|s| s.digit_count() as usize <= MAX_DIGITS)
            .min_by_key(|s| s.layout().1);
        match best {
            Some(spelling) => spelling.write(f),
            // Unreachable for parsed quantities (see above); exact but not parseable.
            None => write!(f, "{}e{}*2^{}", self.mantissa, self.exp10, self.exp2),
        }
    }
}

/// Kueue's `resources.ResourceValue`: the integer amount Kueue does arithmetic with.
///
/// Millicores (`MilliValue()`) for `cpu`, `Value()` (rounded up) for every other resource.
/// Negative quantities are an error ([`QuantityError::Negative`]) because requests and quotas
/// cannot be negative.
pub fn resource_amount(resource: &str, q: &Quantity) -> Result<i64, QuantityError> {
    if q.is_negative() {
        return Err(QuantityError::Negative {
            input: q.to_string(),
        });
    }
    if resource == "cpu" {
        q.milli_value()
    } else {
        q.value()
    }
}

/// The inverse of [`resource_amount`] for display: formats an amount of `resource` as Kubernetes
/// prints a canonical quantity.
///
/// As Kueue's `ResourceFormatter.ResourceQuantity` then `Quantity.String()` word it (the amounts
/// in its messages): `cpu` as a DecimalSI milli-quantity (`500m`, `1500m`, `4`, `2k`);
/// `memory`, `ephemeral-storage` and `hugepages-*` as a canonical BinarySI quantity (at least
/// 1024 and a multiple of 1024: the largest binary suffix that divides it, `16Gi`, `1536Mi`,
/// `1000Ki`; otherwise DecimalSI, as the re-parsed quantity of `newCanonicalQuantity` prints:
/// `8`, `1k`, `100k`); every other resource (GPUs, pods, extended resources) as DecimalSI
/// (`8`, `6144`, `8k`): the largest power of 1000 that divides it. Negative amounts are
/// formatted like their absolute value with a leading `-`.
pub fn format_amount(resource: &str, amount: i64) -> String {
    Amount(resource, amount).to_string()
}

/// `format_amount` as a `Display` value, for messages that embed amounts without a `String`
/// of their own (the flavor assigner writes one per failed attempt).
#[derive(Clone, Copy, Debug)]
pub struct Amount<'a>(pub &'a str, pub i64);

impl Amount<'_> {
    /// `format_amount`'s form: whether negative, the number and its suffix.
    fn parts(self) -> (bool, u64, &'static str) {
        let Amount(resource, amount) = self;
        let abs = amount.unsigned_abs();
        let negative = amount < 0;
        if resource == "cpu" {
            // NewMilliQuantity(v, DecimalSI): millicores unless whole cores.
            if !abs.is_multiple_of(1000) {
                return (negative, abs, "m");
            }
            let (value, suffix) = decimal_si(abs / 1000);
            return (negative, value, suffix);
        }
        let binary = matches!(resource, "memory" | "ephemeral-storage")
            || resource.starts_with("hugepages-");
        if binary && abs >= 1024 {
            const BINARY: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
            // Largest suffix first, so 1536Mi is chosen over 1572864Ki.
            for (i, suffix) in BINARY.iter().enumerate().rev() {
                let unit = 1u64 << (10 * (i + 1));
                if abs.is_multiple_of(unit) {
                    return (negative, abs / unit, suffix);
                }
            }
        }
        // DecimalSI: every other resource, and a binary one below 1024 or not a multiple of
        // it (BinarySI prints those as DecimalSI, or as a plain integer that
        // `newCanonicalQuantity` re-parses as DecimalSI).
        let (value, suffix) = decimal_si(abs);
        (negative, value, suffix)
    }

    /// Appends the amount as `Display` writes it, without the formatting machinery: the
    /// flavor assigner writes one amount per failed attempt, millions under overload.
    pub fn push_to(self, out: &mut String) {
        let (negative, value, suffix) = self.parts();
        if negative {
            out.push('-');
        }
        out.push_str(decimal_digits(value, &mut [0; 20]));
        out.push_str(suffix);
    }
}

/// `v` as a canonical DecimalSI quantity prints it: the largest power of 1000 that divides it
/// as its suffix (`8k` for 8000, `1500` for 1500, `0` for 0).
fn decimal_si(mut v: u64) -> (u64, &'static str) {
    const DECIMAL: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let mut i = 0;
    while v != 0 && v.is_multiple_of(1000) && i + 1 < DECIMAL.len() {
        v /= 1000;
        i += 1;
    }
    (v, DECIMAL[i])
}

/// The decimal digits of `v`, as `Display` writes them, in `buf` (a stack buffer: the hot
/// paths that word numbers, name workloads or hash their text use this instead of the
/// formatting machinery).
pub fn decimal_digits(mut v: u64, buf: &mut [u8; 20]) -> &str {
    // Two digits a step, from a table of the hundred pairs (half the divisions of a digit a
    // step: a million workload names and the words of every message count).
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut at = buf.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    std::str::from_utf8(&buf[at..]).expect("ASCII digits")
}

impl std::fmt::Display for Amount<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (negative, value, suffix) = self.parts();
        let sign = if negative { "-" } else { "" };
        write!(f, "{sign}{value}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn amount(resource: &str, s: &str) -> i64 {
        resource_amount(resource, &q(s)).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    proptest! {
        /// `push_to` writes exactly what `Display` writes, for every resource kind.
        #[test]
        fn amount_push_to_equals_display(
            amount in prop_oneof![
                any::<i64>(),
                -5000i64..5000,
                (0i64..4096).prop_map(|k| k * 1024),
                (0i64..64).prop_map(|k| k << 30),
            ],
            resource in prop_oneof![Just("cpu"), Just("memory"), Just("nvidia.com/gpu")],
        ) {
            let mut pushed = String::from("x");
            Amount(resource, amount).push_to(&mut pushed);
            prop_assert_eq!(pushed, format!("x{}", Amount(resource, amount)));
        }
    }

    #[test]
    fn cpu_amounts_are_millicores_rounded_up() {
        assert_eq!(amount("cpu", "500m"), 500);
        assert_eq!(amount("cpu", "2"), 2000);
        assert_eq!(amount("cpu", "0.5"), 500);
        assert_eq!(amount("cpu", ".5"), 500);
        assert_eq!(amount("cpu", "5."), 5000);
        assert_eq!(amount("cpu", "1.0001"), 1001);
        assert_eq!(amount("cpu", "100n"), 1);
        assert_eq!(amount("cpu", "1u"), 1);
        assert_eq!(amount("cpu", "0"), 0);
        assert_eq!(amount("cpu", "+250m"), 250);
    }

    #[test]
    fn other_amounts_are_values_rounded_up() {
        assert_eq!(amount("memory", "16Gi"), 17_179_869_184);
        assert_eq!(amount("memory", "1.5Gi"), 1_610_612_736);
        assert_eq!(amount("memory", "1e3"), 1000);
        assert_eq!(amount("memory", "12E-1"), 2);
        assert_eq!(amount("memory", "1e+3"), 1000);
        assert_eq!(amount("memory", "1k"), 1000);
        assert_eq!(amount("memory", "1M"), 1_000_000);
        assert_eq!(amount("memory", "1m"), 1);
        assert_eq!(amount("memory", "1Ei"), 1 << 60);
        assert_eq!(amount("memory", "1E"), 1_000_000_000_000_000_000);
        assert_eq!(amount("nvidia.com/gpu", "8"), 8);
        assert_eq!(amount("memory", "0.1Gi"), 107_374_183);
        assert_eq!(amount("memory", "1e-99999"), 1);
        assert_eq!(amount("memory", "0e99999"), 0);
        assert_ne!(q("1M"), q("1m"));
    }

    #[test]
    fn equality_is_numeric() {
        assert_eq!(q("1k"), q("1000"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("0.5"), q("500m"));
        assert_eq!(q("1.5Gi"), q("1536Mi"));
        assert_eq!(q("0.25Ki"), q("256"));
        assert_eq!(q("-0"), q("0"));
        assert_eq!(q("2000"), q("2e3"));
        assert_ne!(q("1"), q("-1"));
    }

    #[test]
    fn negative_values_round_away_from_zero_like_apimachinery() {
        assert!(q("-1.5").is_negative());
        assert_eq!(q("-1.5").value(), Ok(-2));
        assert_eq!(q("-100n").milli_value(), Ok(-1));
        assert!(!q("-0").is_negative());
    }

    #[test]
    fn negative_resource_amounts_are_rejected() {
        let err = resource_amount("cpu", &q("-1")).unwrap_err();
        assert!(matches!(err, QuantityError::Negative { .. }), "{err}");
        assert!(err.to_string().contains("expected a non-negative amount"));
    }

    #[test]
    fn malformed_quantities_are_rejected() {
        for s in [
            "lots", "", "1.2.3", "Gi", "5 Gi", " 5", "5 ", "1Xi", "--1", "+-1", ".", "-", "1e",
            "1e+", "1e3.5", "1K", "1gi", "1Gi5", "1µ", "e3", "1ee3", "1Kii",
        ] {
            match Quantity::parse(s) {
                Err(QuantityError::Invalid { input }) => assert_eq!(input, s),
                other => panic!("{s:?}: expected Invalid, got {other:?}"),
            }
        }
        let err = Quantity::parse("lots").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid quantity \"lots\": expected a number with an optional suffix such as 500m, 16Gi or 8"
        );
        assert_eq!("lots".parse::<Quantity>(), Err(err));
    }

    #[test]
    fn out_of_range_quantities_are_reported() {
        let huge = q("9999999999E");
        assert!(matches!(huge.value(), Err(QuantityError::Overflow { .. })));
        assert!(matches!(
            q("9300000000000000").milli_value(),
            Err(QuantityError::Overflow { .. })
        ));
        assert!(matches!(
            q("8Ei").value(),
            Err(QuantityError::Overflow { .. })
        ));
        assert_eq!(q("-8Ei").value(), Ok(i64::MIN));
        assert_eq!(q("7Ei").value(), Ok(7 << 60));
        assert!(matches!(
            Quantity::parse("1e99999999999999999999"),
            Err(QuantityError::Overflow { .. })
        ));
        assert!(matches!(
            Quantity::parse("1234567890123456789012345678901"),
            Err(QuantityError::TooPrecise { .. })
        ));
        // Zeros around the significant digits do not count towards the limit.
        assert_eq!(
            q("0000000000000000000000000000001.000000000000000000000000000000").value(),
            Ok(1)
        );
        assert_eq!(q(&format!("1{}e-40", "0".repeat(43))).value(), Ok(1000));
    }

    #[test]
    fn display_is_exact_and_parses_back() {
        for (s, shown) in [
            ("1.5Gi", "1.5Gi"),
            ("1536Mi", "1.5Gi"),
            ("0.5", "0.5"),
            ("500m", "0.5"),
            ("1k", "1000"),
            ("1M", "1e6"),
            ("100n", "1e-7"),
            ("1024", "1Ki"),
            ("16Gi", "16Gi"),
            ("-1Mi", "-1Mi"),
            ("0.1Gi", "0.1Gi"),
            ("1024Ei", "1024Ei"),
            ("1000Ki", "1000Ki"),
            ("2e100", "2e100"),
            (
                "633825300114114700748351602688e-99999",
                "633825300114114700748351602688e-99999",
            ),
            (
                "99999999999999999999999999999.5Ki",
                "99999999999999999999999999999.5Ki",
            ),
            (
                "123456789012345678901234567.1Ei",
                "123456789012345678901234567.1Ei",
            ),
            (
                "12345678901234567890123456789000Ei",
                "12345678901234567890123456789000Ei",
            ),
            ("0", "0"),
            ("-0.0", "0"),
            ("12", "12"),
        ] {
            assert_eq!(q(s).to_string(), shown, "{s}");
            assert_eq!(q(shown), q(s), "{s}");
        }
    }

    #[test]
    fn amounts_format_like_canonical_quantities() {
        assert_eq!(format_amount("cpu", 4000), "4");
        assert_eq!(format_amount("cpu", 500), "500m");
        assert_eq!(format_amount("cpu", 1500), "1500m");
        assert_eq!(format_amount("cpu", 0), "0");
        assert_eq!(format_amount("memory", 17_179_869_184), "16Gi");
        assert_eq!(format_amount("memory", 1_610_612_736), "1536Mi");
        assert_eq!(format_amount("memory", 1024), "1Ki");
        assert_eq!(format_amount("memory", 8), "8");
        // BinarySI below 1024, or not a multiple of it: DecimalSI (`newCanonicalQuantity`).
        assert_eq!(format_amount("memory", 1000), "1k");
        assert_eq!(format_amount("memory", 100_000), "100k");
        assert_eq!(format_amount("memory", 1_024_000), "1000Ki");
        assert_eq!(format_amount("hugepages-2Mi", 4_194_304), "4Mi");
        assert_eq!(format_amount("ephemeral-storage", 1500), "1500");
        // Every other resource is DecimalSI: 6144 GPUs are not "6Ki".
        assert_eq!(format_amount("nvidia.com/gpu", 6144), "6144");
        assert_eq!(format_amount("nvidia.com/gpu", 8000), "8k");
        assert_eq!(format_amount("nvidia.com/gpu", 8), "8");
        assert_eq!(format_amount("pods", 1024), "1024");
        assert_eq!(format_amount("cpu", 2_000_000), "2k");
        assert_eq!(format_amount("cpu", 1_792_000), "1792");
        assert_eq!(format_amount("memory", 0), "0");
        assert_eq!(format_amount("memory", -2048), "-2Ki");
        assert_eq!(format_amount("memory", i64::MIN), "-8Ei");
    }

    proptest! {
        /// Two digits a step write what `Display` writes, at every length.
        #[test]
        fn decimal_digits_are_display(v: u64, shift in 0u32..64) {
            let v = v >> shift;
            let mut buf = [0; 20];
            prop_assert_eq!(decimal_digits(v, &mut buf), v.to_string());
        }

        #[test]
        fn binary_amounts_round_trip(n: u32, suffix in prop::sample::select(vec!["Ki", "Mi", "Gi"])) {
            let value = q(&format!("{n}{suffix}")).value().unwrap();
            let shown = format_amount("memory", value);
            prop_assert_eq!(q(&shown).value().unwrap(), value);
        }

        #[test]
        fn cpu_amounts_round_trip(m in 0i64..1_000_000_000_000_000) {
            let shown = format_amount("cpu", m);
            prop_assert_eq!(resource_amount("cpu", &q(&shown)).unwrap(), m);
        }

        #[test]
        fn any_amount_round_trips(m: i64, resource in prop::sample::select(vec!["cpu", "memory", "nvidia.com/gpu"])) {
            let shown = format_amount(resource, m);
            let parsed = q(&shown);
            let back = if resource == "cpu" { parsed.milli_value() } else { parsed.value() };
            prop_assert_eq!(back.unwrap(), m);
        }

        #[test]
        fn display_round_trips(mantissa in 0u64..1_000_000_000_000, frac in 0u32..7, exp in -30i32..30,
                               suffix in prop::sample::select(vec!["", "Ki", "Gi", "Ei", "m", "k", "n"])) {
            let digits = mantissa.to_string();
            let split = digits.len().saturating_sub(frac as usize);
            let text = format!("{}.{}{}", &digits[..split], &digits[split..], suffix);
            let parsed = q(&text);
            prop_assert_eq!(q(&parsed.to_string()), parsed);
            if suffix.is_empty() {
                let with_exp = q(&format!("{text}e{exp}"));
                prop_assert_eq!(q(&with_exp.to_string()), with_exp);
            }
        }

        #[test]
        fn parsing_never_panics_and_display_parses_back(
            s in "[+-]?[0-9]{0,34}(\\.[0-9]{0,34})?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|e[+-]?[0-9]{1,5})?",
        ) {
            if let Ok(parsed) = Quantity::parse(&s) {
                let _ = parsed.value();
                let _ = parsed.milli_value();
                let shown = parsed.to_string();
                prop_assert_eq!(Quantity::parse(&shown), Ok(parsed), "{} shown as {}", s, shown);
            }
        }

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,12}") {
            let _ = Quantity::parse(&s).map(|q| (q.value(), q.milli_value(), q.to_string()));
        }

        #[test]
        fn milli_value_matches_a_reference(int in 0i128..1_000_000_000, frac in "[0-9]{0,6}",
                                           suffix in prop::sample::select(vec![
                                               ("", 1i128, 1i128), ("Ki", 1 << 10, 1), ("Mi", 1 << 20, 1),
                                               ("Gi", 1 << 30, 1), ("n", 1, 1_000_000_000), ("u", 1, 1_000_000),
                                               ("m", 1, 1000), ("k", 1000, 1), ("M", 1_000_000, 1), ("G", 1_000_000_000, 1)])) {
            let (name, num, den) = suffix;
            let text = format!("{int}.{frac}{name}");
            // value × 1000 = int.frac × num / den × 1000, as one fraction, rounded up.
            let scale = 10i128.pow(frac.len() as u32);
            let digits = int * scale + frac.parse::<i128>().unwrap_or(0);
            let numerator = digits * num * 1000;
            let denominator = scale * den;
            let expected = (numerator + denominator - 1) / denominator;
            match i64::try_from(expected) {
                Ok(expected) => prop_assert_eq!(q(&text).milli_value(), Ok(expected), "{}", text),
                Err(_) => {
                    let overflowed = matches!(q(&text).milli_value(), Err(QuantityError::Overflow { .. }));
                    prop_assert!(overflowed, "{}", text);
                }
            }
        }

        #[test]
        fn value_is_the_ceiling_of_milli_value(n in 0i64..1_000_000_000_000, suffix in prop::sample::select(vec!["m", "u", "n", ""])) {
            let parsed = q(&format!("{n}{suffix}"));
            let milli = parsed.milli_value().unwrap();
            let value = parsed.value().unwrap();
            // ceil(ceil(1000x) / 1000) == ceil(x) for non-negative x.
            prop_assert_eq!(value, (milli + 999) / 1000);
        }
    }
}
