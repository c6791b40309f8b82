//! Input errors that name the file, line and column, and what was expected.

use std::fmt;

/// A position in an input file (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pos {
    /// The file as the user named it (or `<embedded>` for the default scenario).
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Why input could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The input is malformed or inconsistent at a known place.
    #[error("{pos}: {message}{snippet}")]
    At {
        /// Where.
        pos: Pos,
        /// What is wrong and what was expected.
        message: String,
        /// The offending source line with a caret, preceded by a newline (may be empty).
        snippet: String,
    },
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Invalid input without a single place (e.g. nothing to simulate).
    #[error("{0}")]
    Invalid(String),
}

impl ScenarioError {
    /// An error at `pos`, with a code frame cut from `source` (the whole file's text).
    pub fn at(pos: Pos, message: impl Into<String>, source: &str) -> Self {
        let snippet = snippet(source, pos.line, pos.column);
        ScenarioError::At {
            pos,
            message: message.into(),
            snippet,
        }
    }
}

impl ScenarioError {
    /// An error at `pos` without a code frame: for a file that is not (or not yet known to be)
    /// what it was given as, e.g. a binary file, a text file that is not YAML objects, or a
    /// CSV file whose header is not a trace's. Its lines may be anything (a `--patch` that is
    /// a symlink to a system file), so only the place and the parser's message are shown,
    /// never its text.
    pub fn at_unframed(pos: Pos, message: impl Into<String>) -> Self {
        ScenarioError::At {
            pos,
            message: message.into(),
            snippet: String::new(),
        }
    }

    /// An error at `pos` in a file read line by line (a CSV trace): `line_text` is the text of
    /// line `pos.line` alone, for the code frame.
    pub fn at_line(pos: Pos, message: impl Into<String>, line_text: &str) -> Self {
        let snippet = frame(line_text, pos.line, pos.column);
        ScenarioError::At {
            pos,
            message: message.into(),
            snippet,
        }
    }
}

/// The source line of `line` and a caret under `column`, as a compiler prints them.
fn snippet(source: &str, line: u64, column: u64) -> String {
    let Some(text) = source.lines().nth(line.saturating_sub(1) as usize) else {
        return String::new();
    };
    frame(text, line, column)
}

/// `text` (line `line` of its file) and a caret under `column`.
fn frame(text: &str, line: u64, column: u64) -> String {
    let gutter = line.to_string().len();
    let caret_pad: String = text
        .chars()
        .take(column.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!(
        "\n{blank:gutter$} |\n{line} | {text}\n{blank:gutter$} | {caret_pad}^",
        blank = ""
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_column_and_caret() {
        let e = ScenarioError::at(
            Pos {
                file: "a.yaml".into(),
                line: 2,
                column: 5,
            },
            "bad",
            "x: 1\ny:  lots\n",
        );
        assert_eq!(
            e.to_string(),
            "a.yaml:2:5: bad\n  |\n2 | y:  lots\n  |     ^"
        );
    }
}
