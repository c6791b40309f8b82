//! A minimal CSV reader for traces: comma-separated cells, no quoting, one record per line,
//! read line by line. Every cell keeps its line and byte column so an error can point at it.

use std::io::BufRead;

use crate::error::{Pos, ScenarioError};

/// One data line of a CSV file.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    /// 1-based line number in the file.
    pub(crate) line: u64,
    /// The line without its line ending.
    pub(crate) text: String,
    /// Byte range of each cell in `text`.
    pub(crate) cells: Vec<(usize, usize)>,
    /// 0-based index among the data rows of the file (header and blank lines not counted).
    pub(crate) index: u64,
}

impl Row {
    /// The text of cell `i`, trimmed.
    pub(crate) fn cell(&self, i: usize) -> &str {
        let (a, b) = self.cells[i];
        self.text[a..b].trim()
    }

    /// The 1-based byte column where cell `i` starts.
    pub(crate) fn column(&self, i: usize) -> u64 {
        self.cells[i].0 as u64 + 1
    }
}

/// Reads a CSV file's header, then its data rows one at a time.
pub(crate) struct CsvReader<R> {
    reader: R,
    /// The file as named in messages.
    pub(crate) file: String,
    header: Row,
    names: Vec<String>,
    line_no: u64,
    rows: u64,
    buf: Vec<u8>,
}

/// Splits `text` at commas into cell byte ranges.
fn split(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b',' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, text.len()));
    out
}

impl<R: BufRead> CsvReader<R> {
    /// Reads the header (the first non-blank line).
    pub(crate) fn new(reader: R, file: String) -> Result<Self, ScenarioError> {
        let mut r = CsvReader {
            reader,
            file,
            header: Row {
                line: 0,
                text: String::new(),
                cells: Vec::new(),
                index: 0,
            },
            names: Vec::new(),
            line_no: 0,
            rows: 0,
            buf: Vec::new(),
        };
        match r.next_line()? {
            Some((line, text)) => {
                let cells = split(&text);
                r.header = Row {
                    line,
                    text,
                    cells,
                    index: 0,
                };
                r.names = (0..r.header.cells.len())
                    .map(|i| r.header.cell(i).to_string())
                    .collect();
                Ok(r)
            }
            None => Err(ScenarioError::Invalid(format!(
                "{}: the file is empty: expected a CSV header line",
                r.file
            ))),
        }
    }

    /// The header's column names.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The header line.
    pub(crate) fn header(&self) -> &Row {
        &self.header
    }

    /// The next non-blank line and its number, or None at the end.
    fn next_line(&mut self) -> Result<Option<(u64, String)>, ScenarioError> {
        loop {
            self.buf.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|source| ScenarioError::Io {
                    path: self.file.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            // A byte order mark before the header is dropped; bytes that are not UTF-8 are an
            // error at their line and column.
            let bytes = if self.line_no == 1 {
                self.buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&self.buf)
            } else {
                &self.buf[..]
            };
            let line = match std::str::from_utf8(bytes) {
                Ok(l) => l,
                Err(e) => {
                    let good = &bytes[..e.valid_up_to()];
                    let column = String::from_utf8_lossy(good).chars().count() as u64 + 1;
                    // Not text: the place and the byte, never the line (a binary file given
                    // as a trace; `ScenarioError::at_unframed`).
                    return Err(ScenarioError::at_unframed(
                        Pos {
                            file: self.file.clone(),
                            line: self.line_no,
                            column,
                        },
                        format!(
                            "byte 0x{:02X} is not UTF-8: expected the file in UTF-8",
                            bytes[e.valid_up_to()]
                        ),
                    ));
                }
            };
            let text = line.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            return Ok(Some((self.line_no, text.to_string())));
        }
    }

    /// The next data row: as many cells as the header, none quoted.
    pub(crate) fn next_row(&mut self) -> Option<Result<Row, ScenarioError>> {
        let (line, text) = match self.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let cells = split(&text);
        let row = Row {
            line,
            text,
            cells,
            index: self.rows,
        };
        self.rows += 1;
        if let Some(q) = row.text.find('"') {
            return Some(Err(at(
                &self.file,
                &row,
                q as u64 + 1,
                "a quoted CSV cell: expected plain comma-separated values (traces are read without quoting)",
            )));
        }
        if row.cells.len() != self.names.len() {
            let col = if row.cells.len() > self.names.len() {
                row.column(self.names.len())
            } else {
                row.text.len() as u64 + 1
            };
            return Some(Err(at(
                &self.file,
                &row,
                col,
                format!(
                    "{} cells: expected {} as in the header (line {})",
                    row.cells.len(),
                    self.names.len(),
                    self.header.line
                ),
            )));
        }
        Some(Ok(row))
    }
}

/// An error at byte column `column` of `row` in `file`.
pub(crate) fn at(file: &str, row: &Row, column: u64, message: impl Into<String>) -> ScenarioError {
    // Never past the end of the line: a missing cell is pointed at the line's last byte.
    let column = column.clamp(1, (row.text.len() as u64).max(1));
    ScenarioError::at_line(
        Pos {
            file: file.to_string(),
            line: row.line,
            column,
        },
        message,
        &row.text,
    )
}

/// The columns of `expected` that the header (`names`, at `header`) lacks, as an error at the
/// header's line: the first missing one named, with everything `what` (the table) needs. It
/// has no code frame and does not list the header's cells: a file whose header is not the
/// table's may be any file given in place of a trace, and its text is not shown
/// (`ScenarioError::at_unframed`). Every other error of a trace comes after this check, and
/// shows its line.
pub(crate) fn require_columns(
    file: &str,
    header: &Row,
    names: &[String],
    expected: &[&str],
    what: &str,
) -> Result<(), ScenarioError> {
    match expected.iter().find(|e| !names.iter().any(|n| n == *e)) {
        None => Ok(()),
        Some(missing) => Err(ScenarioError::at_unframed(
            Pos {
                file: file.to_string(),
                line: header.line,
                column: 1,
            },
            format!(
                "no column {missing:?}: expected the header of {what}, with columns {}",
                expected.join(", ")
            ),
        )),
    }
}

/// An error at cell `i` of `row` in `file`.
pub(crate) fn cell_error(
    file: &str,
    row: &Row,
    i: usize,
    message: impl Into<String>,
) -> ScenarioError {
    at(file, row, row.column(i), message)
}
