//! Tables handed to Python as columns: numbers as native-endian `bytes` that numpy reads in
//! place (`numpy.frombuffer`), text as lists of `str`, times as nanoseconds that numpy reads
//! as `datetime64[ns]` and `timedelta64[ns]`. No JSON or CSV text in between, so a run's
//! tables cost one copy each (docs/python.md).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use kueuesim_report::export::Cell;

/// One column under construction.
pub(crate) enum Column {
    /// Floats; NaN for a null.
    F64(Vec<f64>),
    /// Integers.
    I64(Vec<i64>),
    /// Text; None for a null.
    Text(Vec<Option<String>>),
    /// Instants: nanoseconds since the Unix epoch (UTC); `NAT` for a null.
    Instant(Vec<i64>),
    /// Durations in nanoseconds; `NAT` for a null.
    Duration(Vec<i64>),
}

/// numpy's "not a time" (`NaT`): the smallest 64-bit integer, in `datetime64` and
/// `timedelta64` alike; pandas shows it as `NaT` and polars as null.
pub(crate) const NAT: i64 = i64::MIN;

const NANOS_PER_MILLI: i64 = 1_000_000;

/// What a time column of the CSV files (seconds) becomes in a DataFrame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TimeKind {
    /// An offset from the simulation's start (`createdAt`): the instant it names, in UTC.
    Instant,
    /// A length of time (`waitSeconds`).
    Duration,
}

/// Simulated time as wall-clock instants: simulated time 0 is the scenario's start
/// (`Simulation.spec.startTime`, the summary's `startTime`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    pub(crate) start_unix_ms: i64,
}

impl Clock {
    /// The instant `offset_ms` after the start, in nanoseconds since the Unix epoch; an
    /// error beyond what `datetime64[ns]` holds (the years 1677 to 2262).
    pub(crate) fn instant(self, offset_ms: i64) -> PyResult<i64> {
        self.start_unix_ms
            .checked_add(offset_ms)
            .and_then(|ms| ms.checked_mul(NANOS_PER_MILLI))
            .filter(|&ns| ns != NAT)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "simulated time {}ms after the start (Unix {}ms) is outside the range of \
                     pandas' datetime64[ns] (the years 1677 to 2262)",
                    offset_ms, self.start_unix_ms
                ))
            })
    }

    /// A cell of seconds (the CSV files' unit) as a time column's value: NaN is `NAT`.
    pub(crate) fn convert(self, kind: TimeKind, seconds: f64) -> PyResult<i64> {
        if seconds.is_nan() {
            return Ok(NAT);
        }
        // Simulated time counts whole milliseconds, and the seconds came from them
        // (`as_secs_f64`): rounding gives those milliseconds back exactly.
        let ms = (seconds * 1000.0).round() as i64;
        match kind {
            TimeKind::Instant => self.instant(ms),
            TimeKind::Duration => Ok(duration(ms)),
        }
    }
}

/// A length of simulated time in milliseconds as nanoseconds (at most the ten years of
/// `limits::MAX_TIME`, far inside `timedelta64[ns]`).
pub(crate) fn duration(ms: i64) -> i64 {
    ms.saturating_mul(NANOS_PER_MILLI)
}

impl Column {
    /// An empty column of the kind `cell` needs.
    pub(crate) fn for_cell(cell: &Cell) -> Column {
        match cell {
            Cell::Text(_) => Column::Text(Vec::new()),
            Cell::Num(_) => Column::F64(Vec::new()),
            Cell::Int(_) => Column::I64(Vec::new()),
        }
    }

    /// Appends `cell` (a column is of one kind: the table's first row decided it).
    pub(crate) fn push(&mut self, cell: Cell) {
        match (self, cell) {
            (Column::F64(v), Cell::Num(x)) => v.push(x.unwrap_or(f64::NAN)),
            (Column::Text(v), Cell::Text(s)) => v.push(Some(s)),
            (Column::Text(v), Cell::Num(x)) => v.push(x.map(|x| x.to_string())),
            (Column::F64(v), Cell::Text(_)) => v.push(f64::NAN),
            (Column::I64(v), Cell::Num(x)) => v.push(x.map_or(0, |x| x as i64)),
            (Column::I64(v), Cell::Text(_)) => v.push(0),
            (Column::I64(v), Cell::Int(x)) => v.push(x),
            (Column::F64(v), Cell::Int(x)) => v.push(x as f64),
            (Column::Text(v), Cell::Int(x)) => v.push(Some(x.to_string())),
            // Time columns are made from finished ones (`Table::retime`), never from cells.
            (Column::Instant(v) | Column::Duration(v), _) => v.push(NAT),
        }
    }

    /// The column's values as a time column of `kind`: numbers are seconds (the CSV files'
    /// unit); an empty text column (a table without rows) is an empty time column.
    fn into_time(self, clock: Clock, kind: TimeKind) -> PyResult<Column> {
        let nanos: Vec<i64> = match self {
            Column::F64(v) => v
                .into_iter()
                .map(|x| clock.convert(kind, x))
                .collect::<PyResult<_>>()?,
            Column::I64(v) => v
                .into_iter()
                .map(|x| clock.convert(kind, x as f64))
                .collect::<PyResult<_>>()?,
            Column::Text(v) if v.is_empty() => Vec::new(),
            other @ (Column::Text(_) | Column::Instant(_) | Column::Duration(_)) => {
                return Ok(other);
            }
        };
        Ok(match kind {
            TimeKind::Instant => Column::Instant(nanos),
            TimeKind::Duration => Column::Duration(nanos),
        })
    }
}

/// A table: named columns of equal length.
#[derive(Default)]
pub(crate) struct Table {
    pub(crate) names: Vec<String>,
    pub(crate) columns: Vec<Column>,
}

impl Table {
    /// A table of `names`, its columns made by `make`.
    pub(crate) fn new(names: &[String], make: impl Fn(usize) -> Column) -> Table {
        Table {
            names: names.to_vec(),
            columns: (0..names.len()).map(make).collect(),
        }
    }

    /// Turns the columns named in `times` into time columns, each under its new name:
    /// `(name, new name, kind)`. A name the table lacks is left alone.
    pub(crate) fn retime(
        &mut self,
        clock: Clock,
        times: &[(&str, &str, TimeKind)],
    ) -> PyResult<()> {
        for &(name, new_name, kind) in times {
            let Some(i) = self.names.iter().position(|n| n == name) else {
                continue;
            };
            let col = std::mem::replace(&mut self.columns[i], Column::I64(Vec::new()));
            self.columns[i] = col.into_time(clock, kind)?;
            self.names[i] = new_name.to_string();
        }
        Ok(())
    }

    /// `[(name, kind, data), ...]` for `kueuesim._frame`: kind `"f8"`, `"i8"`, `"M8[ns]"`
    /// (instants, UTC) or `"m8[ns]"` (durations) with `bytes`, `"str"` with a list.
    pub(crate) fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
        let out = PyList::empty(py);
        for (name, col) in self.names.into_iter().zip(self.columns) {
            let (kind, data): (&str, Bound<'_, PyAny>) = match col {
                Column::F64(v) => {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
                    ("f8", PyBytes::new(py, &bytes).into_any())
                }
                Column::I64(v) => {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
                    ("i8", PyBytes::new(py, &bytes).into_any())
                }
                Column::Instant(v) => {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
                    ("M8[ns]", PyBytes::new(py, &bytes).into_any())
                }
                Column::Duration(v) => {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
                    ("m8[ns]", PyBytes::new(py, &bytes).into_any())
                }
                Column::Text(v) => ("str", PyList::new(py, v)?.into_any()),
            };
            out.append(PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    kind.into_pyobject(py)?.into_any(),
                    data,
                ],
            )?)?;
        }
        Ok(out)
    }
}

/// A JSON value as Python objects (the summary: small, so its serde form is converted
/// directly rather than printed and parsed).
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    v: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(m) => {
            let d = pyo3::types::PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}
