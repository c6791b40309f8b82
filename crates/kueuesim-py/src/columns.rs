//! Tables handed to Python as columns: numbers as native-endian `bytes` that numpy reads in
//! place (`numpy.frombuffer`), text as lists of `str`. No JSON or CSV text in between, so a
//! run's tables cost one copy each (docs/python.md).

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
        }
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

    /// `[(name, kind, data), ...]` for `kueuesim._frames`: kind `"f8"` or `"i8"` with `bytes`,
    /// `"str"` with a list.
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
