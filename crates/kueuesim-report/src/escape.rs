//! Text kueuesim writes for people and spreadsheets cannot act on them: the rule of a CSV cell
//! (no cell a spreadsheet would run as a formula, none holding a control character) and of
//! text printed to a terminal (no escape sequence, carriage return or bidi override reaches
//! it raw). Names are checked at load, but trace-derived and Python-given values and free text
//! (messages, reasons, file names) still reach the outputs: this is the defence behind that.
//!
//! One rendering serves both: a character that must not pass raw is written as kubectl's
//! `printers.EscapeTerminal` writes it (ESC as `^[`, CR as `\r`), and any other as Go's
//! `strconv.Quote` (`%q`) does (`\t`, `\n`, `\b`, `\x07`, `\x7f`, `\u009b`, `\u202e`).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal or a CSV cell raw: a control character (C0, DEL,
/// C1: Unicode's `Cc`), or a bidirectional formatting character or line separator that
/// reorders or breaks what is shown (the "Trojan Source" characters, CVE-2021-42574).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Appends the visible form of the unsafe character `c` to `out`.
fn push_visible(out: &mut String, c: char) {
    match c {
        '\u{1b}' => out.push_str("^["),
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\u{07}' => out.push_str("\\a"),
        '\u{08}' => out.push_str("\\b"),
        '\u{0b}' => out.push_str("\\v"),
        '\u{0c}' => out.push_str("\\f"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{:04x}", c as u32)),
    }
}

/// `s` with every unsafe character made visible, except those `keep` lets through.
fn visible(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let needs = |c: char| is_unsafe(c) && !keep(c);
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal (the summary, `get`/`describe`, warnings, errors): every control
/// character made visible but line feeds and tabs, which lay the text out.
pub fn terminal_text(s: &str) -> Cow<'_, str> {
    visible(s, |c| c == '\n' || c == '\t')
}

/// One field of a line printed to a terminal (a table cell): as `terminal_text`, and line
/// feeds and tabs made visible too, so a value cannot break the table's lines or columns.
pub fn terminal_field(s: &str) -> Cow<'_, str> {
    visible(s, |_| false)
}

/// What a column of a CSV file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvColumn {
    /// Text: names, states, messages.
    Text,
    /// Numbers (an empty cell is a null): a cell that is a number is written as is, a
    /// negative one too; anything else in it is text.
    Number,
}

/// The first characters with which a spreadsheet takes a cell for a formula (OWASP "CSV
/// Injection"); tab and carriage return, also on OWASP's list, are made visible before.
const FORMULA_START: [char; 4] = ['=', '+', '-', '@'];

/// Whether `s` starts a formula once the leading quotes are skipped: the guard is added to
/// such a cell, one quote more, so that reading it back (`csv_unguard`) is exact.
fn guarded(s: &str) -> bool {
    s.trim_start_matches('\'').starts_with(FORMULA_START)
}

/// Whether `s` is a number as kueuesim prints one: decimal digits with an optional leading
/// minus, fraction and exponent, or `NaN`, `inf`, `-inf` (Rust's non-finite floats).
fn is_number(s: &str) -> bool {
    if matches!(s, "NaN" | "inf" | "-inf") {
        return true;
    }
    let digits = |t: &str| -> usize { t.bytes().take_while(u8::is_ascii_digit).count() };
    let t = s.strip_prefix('-').unwrap_or(s);
    let int = digits(t);
    if int == 0 {
        return false;
    }
    let mut rest = &t[int..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = digits(frac);
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        let n = digits(exp);
        if n == 0 {
            return false;
        }
        rest = &exp[n..];
    }
    rest.is_empty()
}

/// One cell of every CSV file kueuesim writes (`workloads.csv`, `queues.csv`,
/// `timeseries.csv`'s header, `sweep.csv`, `sweep-summary.csv`, a sweep index's row).
/// A number of a `Number` column is written as is. Any other cell has its control characters
/// made visible (as `terminal_field`: a cell is one line), then, when it starts with `=`,
/// `+`, `-` or `@`, a single quote before it (OWASP's rule: the spreadsheet shows text, not
/// the result of a formula), then RFC 4180 quoting when it holds a comma or a double quote.
pub fn csv_cell(s: &str, column: CsvColumn) -> Cow<'_, str> {
    if column == CsvColumn::Number && is_number(s) {
        return Cow::Borrowed(s);
    }
    let shown = terminal_field(s);
    let guard = guarded(&shown);
    let quote = shown.contains([',', '"']);
    if !guard && !quote {
        return shown;
    }
    let mut out = String::with_capacity(shown.len() + 3);
    if quote {
        out.push('"');
    }
    if guard {
        out.push('\'');
    }
    if quote {
        out.push_str(&shown.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(&shown);
    }
    Cow::Owned(out)
}

/// A cell's value read back from a CSV file kueuesim wrote (after RFC 4180 unquoting): the
/// formula guard `csv_cell` added taken off. Control characters stay as they were shown.
pub fn csv_unguard(s: &str) -> &str {
    match s.strip_prefix('\'') {
        Some(rest) if guarded(rest) => rest,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CsvColumn::{Number, Text};

    #[test]
    fn text_cells_never_start_a_formula() {
        for (raw, written) in [
            (
                "=HYPERLINK(\"http://x\")",
                "\"'=HYPERLINK(\"\"http://x\"\")\"",
            ),
            ("+1+2", "'+1+2"),
            ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "\\t=1"),
            ("\r=1", "\\r=1"),
            ("plain", "plain"),
            ("a,b", "\"a,b\""),
            ("a=b", "a=b"),
        ] {
            assert_eq!(csv_cell(raw, Text), written, "{raw:?}");
        }
        // A number is text in a text column: a name "-1" cannot become a formula either.
        assert_eq!(csv_cell("-1", Text), "'-1");
    }

    #[test]
    fn numbers_stay_numbers_and_anything_else_in_a_number_column_is_text() {
        for n in [
            "0", "-3", "1860", "0.5", "-0.375", "1e21", "-2.5E-3", "NaN", "inf", "-inf",
        ] {
            assert_eq!(csv_cell(n, Number), n);
        }
        assert_eq!(csv_cell("", Number), "");
        for (raw, written) in [
            ("-1+2", "'-1+2"),
            ("-", "'-"),
            ("+3", "'+3"),
            ("=1", "'=1"),
            ("1.", "1."),
            ("-.5", "'-.5"),
            ("x", "x"),
        ] {
            assert_eq!(csv_cell(raw, Number), written, "{raw:?}");
        }
    }

    #[test]
    fn no_cell_holds_a_control_character() {
        let raw = "a\u{1b}[31mred\u{7}\nnext\u{0}\u{7f}\u{9b}\u{202e}";
        let cell = csv_cell(raw, Text);
        assert_eq!(cell, "a^[[31mred\\a\\nnext\\x00\\x7f\\u009b\\u202e");
        assert!(!cell.chars().any(is_unsafe), "{cell:?}");
        // A line break is shown, not quoted: every record is one line.
        assert_eq!(
            csv_cell("two\nlines, \"quoted\"", Text),
            "\"two\\nlines, \"\"quoted\"\"\""
        );
    }

    #[test]
    fn the_guard_comes_off_exactly_when_read_back() {
        for raw in ["=1", "'=1", "''-x", "'plain", "plain", "-", "@", "'"] {
            let cell = csv_cell(raw, Text);
            // These cells need no RFC 4180 quoting: the cell is the value as written.
            assert_eq!(csv_unguard(&cell), raw, "{raw:?} written as {cell:?}");
        }
        assert_eq!(csv_cell("'=1", Text), "''=1");
        assert_eq!(csv_unguard("'abc"), "'abc");
    }

    #[test]
    fn terminal_text_keeps_the_layout_and_shows_the_rest() {
        let raw = "title\u{1b}]0;pwned\u{7}\n\tcol\rover\u{8}\u{85}\u{202e}evil";
        assert_eq!(
            terminal_text(raw),
            "title^[]0;pwned\\a\n\tcol\\rover\\b\\u0085\\u202eevil"
        );
        assert_eq!(terminal_field("a\tb\nc"), "a\\tb\\nc");
        assert!(matches!(terminal_text("plain ünïcode ✓"), Cow::Borrowed(_)));
    }
}
