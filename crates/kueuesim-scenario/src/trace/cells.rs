//! A trace row's cells as typed values: seconds, Go durations, integers, decimals and
//! Philly's timestamps, each with the cell's position in its errors.

use kueuesim_model::SimDuration;
use kueuesim_model::time::parse_rfc3339;

use super::csv::{Row, cell_error};
use crate::error::ScenarioError;

/// A cell's value as seconds (a decimal number) rounded to milliseconds.
pub(super) fn seconds(file: &str, row: &Row, i: usize, what: &str) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    match v.parse::<f64>() {
        Ok(s) if (0.0..9.0e12).contains(&s) => Ok((s * 1000.0).round() as i64),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected a number of seconds ≥ 0"),
        )),
    }
}

/// An optional cell as seconds (empty: None).
pub(super) fn opt_seconds(
    file: &str,
    row: &Row,
    i: Option<usize>,
    what: &str,
) -> Result<Option<i64>, ScenarioError> {
    match i {
        Some(i) if !row.cell(i).is_empty() => Ok(Some(seconds(file, row, i, what)?)),
        _ => Ok(None),
    }
}

/// A native time cell: seconds (a decimal number) or a Go duration (`1h30m`).
pub(super) fn native_time(
    file: &str,
    row: &Row,
    i: usize,
    what: &str,
) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    if v.parse::<f64>().is_ok() {
        return seconds(file, row, i, what);
    }
    SimDuration::parse(v).map(SimDuration::millis).map_err(|e| {
        cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: {e}; expected seconds or a Go duration such as 1h30m"),
        )
    })
}

/// A non-negative integer cell (a decimal point with zeros after it is accepted).
pub(super) fn int_cell(
    file: &str,
    row: &Row,
    i: usize,
    what: &str,
    max: u64,
) -> Result<u64, ScenarioError> {
    let v = row.cell(i);
    let whole = v.strip_suffix(".0").unwrap_or(v);
    match whole.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected an integer from 0 to {max}"),
        )),
    }
}

/// A non-negative decimal cell.
pub(super) fn decimal(file: &str, row: &Row, i: usize, what: &str) -> Result<f64, ScenarioError> {
    let v = row.cell(i);
    match v.parse::<f64>() {
        Ok(x) if (0.0..1.0e15).contains(&x) => Ok(x),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected a number ≥ 0"),
        )),
    }
}

/// Philly's submit time, `YYYY-MM-DD HH:MM:SS` (UTC), as Unix milliseconds.
pub(super) fn philly_time(file: &str, row: &Row, i: usize) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    // The trace's own form, read in place; anything else (a fraction, a `T`, an error) the
    // general way below.
    if let Some(ms) = kueuesim_model::time::parse_utc_space_separated(v) {
        return Ok(ms);
    }
    // `YYYY-MM-DD HH:MM:SS` becomes `YYYY-MM-DDTHH:MM:SSZ` in a stack buffer: this runs four
    // times per row (the trace's time 0, the arrival check, the sort key, the workload), so
    // no `String`.
    let mut buf = [0u8; 40];
    let parsed = (v.len() < buf.len())
        .then(|| {
            let b = &mut buf[..=v.len()];
            b[..v.len()].copy_from_slice(v.as_bytes());
            if let Some(space) = b.iter().position(|&c| c == b' ') {
                b[space] = b'T';
            }
            b[v.len()] = b'Z';
            std::str::from_utf8(b).ok().map(parse_rfc3339)
        })
        .flatten();
    parsed.unwrap_or_else(|| parse_rfc3339("")).map_err(|_| {
        cell_error(
            file,
            row,
            i,
            format!("timestamp {v:?}: expected YYYY-MM-DD HH:MM:SS"),
        )
    })
}
