//! A YAML document as a tree whose every key and value knows the file, line and column it was
//! written at, and its writing back as block-style YAML with a map from each written line to
//! those places (so the loader's errors in an overridden object point into the file, or the
//! `--set` argument, that set the value).

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::error::{Pos, ScenarioError};
use crate::source::SourceFile;

/// Where a key or value was written: 1-based line and column of `file`.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'f> {
    /// The file (or `--set` argument) it was written in.
    pub file: &'f SourceFile,
    /// 1-based line in `file`.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl Origin<'_> {
    /// The position for messages.
    pub fn pos(&self) -> Pos {
        Pos {
            file: self.file.name.clone(),
            line: self.line,
            column: self.column,
        }
    }

    /// An error at this place, with its code frame.
    pub fn error(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.pos(), message, &self.file.text)
    }
}

/// A scalar: the text it was written as when that text can be written again verbatim (one
/// line, no alias or tag: so it resolves to the same type and value as before), otherwise
/// its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// Source text of a one-line scalar, quotes included.
    Verbatim(String),
    /// A string value (of a block, folded or multi-line scalar, or an alias).
    Str(String),
    /// A bool or number, as Rust prints it.
    Plain(String),
    /// `null`, `~` or nothing.
    Null,
}

impl Scalar {
    /// Whether the scalar is YAML's null (a patch's way of deleting a key).
    pub fn is_null(&self) -> bool {
        match self {
            Scalar::Null => true,
            Scalar::Verbatim(t) => matches!(t.as_str(), "null" | "Null" | "NULL" | "~" | ""),
            _ => false,
        }
    }

    /// The scalar as a string, unquoted (for merge keys and `[key=value]` selectors).
    pub fn as_text(&self) -> String {
        match self {
            Scalar::Verbatim(t) => {
                let t = t.as_str();
                if let Some(inner) = t.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                    serde_json::from_str::<String>(t).unwrap_or_else(|_| inner.to_string())
                } else if let Some(inner) = t.strip_prefix('\'').and_then(|x| x.strip_suffix('\''))
                {
                    inner.replace("''", "'")
                } else {
                    t.to_string()
                }
            }
            Scalar::Str(s) | Scalar::Plain(s) => s.clone(),
            Scalar::Null => String::new(),
        }
    }
}

/// A YAML value.
#[derive(Clone, Debug)]
pub enum Value<'f> {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Seq(Vec<Node<'f>>),
    /// A mapping, in written order.
    Map(Vec<Entry<'f>>),
}

/// A value and where it was written.
#[derive(Clone, Debug)]
pub struct Node<'f> {
    /// The value.
    pub value: Value<'f>,
    /// Where it starts.
    pub at: Origin<'f>,
}

/// A mapping entry: key (a string) and value, each with its place.
#[derive(Clone, Debug)]
pub struct Entry<'f> {
    /// The key.
    pub key: String,
    /// Where the key is written.
    pub key_at: Origin<'f>,
    /// Its value.
    pub value: Node<'f>,
}

impl<'f> Node<'f> {
    /// The entry of a mapping under `key`.
    pub fn get(&self, key: &str) -> Option<&Node<'f>> {
        match &self.value {
            Value::Map(m) => m.iter().find(|e| e.key == key).map(|e| &e.value),
            _ => None,
        }
    }

    /// The scalar under `key`, as text.
    pub fn text_of(&self, key: &str) -> Option<String> {
        match &self.get(key)?.value {
            Value::Scalar(s) if !s.is_null() => Some(s.as_text()),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Scalar(s) if s.is_null() => "null",
            Value::Scalar(_) => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Parses `text` (one YAML document, written in `file` after `line_offset` lines) into a tree.
pub fn parse<'f>(
    file: &'f SourceFile,
    text: &str,
    line_offset: u64,
) -> Result<Node<'f>, ScenarioError> {
    parse_mapped(file, text, line_offset, None)
}

/// Parses `text` into a tree; with `origins` (the text was written back from a tree before),
/// each place is where `origins` says that line was written first.
pub fn parse_mapped<'f>(
    file: &'f SourceFile,
    text: &str,
    line_offset: u64,
    origins: Option<&LineMap<'f>>,
) -> Result<Node<'f>, ScenarioError> {
    let raw: Spanned<RawNode> = crate::source::from_yaml(text).map_err(|e| {
        let (line, column) = match e.location() {
            Some(l) if l.line() > 0 => (l.line() + line_offset, l.column()),
            _ => (line_offset + 1, 1),
        };
        // Text that is not YAML (a patch file may be any file): its place and the parser's
        // message, not its line (`ScenarioError::at_unframed`).
        let message = crate::source::yaml_message(&e);
        let at = origins
            .and_then(|m| m.origin(line - line_offset, column))
            .unwrap_or(Origin { file, line, column });
        ScenarioError::at_unframed(at.pos(), message)
    })?;
    let conv = Convert {
        file,
        text,
        line_offset,
        origins,
    };
    Ok(conv.node(raw))
}

/// Turns the parser's spanned tree into ours.
struct Convert<'f, 't> {
    file: &'f SourceFile,
    text: &'t str,
    line_offset: u64,
    origins: Option<&'t LineMap<'f>>,
}

impl<'f> Convert<'f, '_> {
    fn origin(&self, l: &serde_saphyr::Location) -> Origin<'f> {
        if let Some(at) = self
            .origins
            .and_then(|m| m.origin(l.line().max(1), l.column().max(1)))
        {
            return at;
        }
        Origin {
            file: self.file,
            line: l.line().max(1) + self.line_offset,
            column: l.column().max(1),
        }
    }

    /// The source text of a value, when it is one line that can be written again as it is.
    fn verbatim(&self, l: &serde_saphyr::Location) -> Option<String> {
        let span = l.span();
        let start = span.byte_offset()? as usize;
        let len = span.byte_len()? as usize;
        let t = self.text.get(start..start + len)?;
        (!t.is_empty() && !t.contains(['\n', '\r']) && !t.starts_with(['*', '&', '!']))
            .then(|| t.to_string())
    }

    fn node(&self, raw: Spanned<RawNode>) -> Node<'f> {
        let at = self.origin(&raw.referenced);
        let value = match raw.value {
            RawNode::Null => Value::Scalar(Scalar::Null),
            RawNode::Str(s) => Value::Scalar(match self.verbatim(&raw.referenced) {
                Some(t) => Scalar::Verbatim(t),
                None => Scalar::Str(s),
            }),
            RawNode::Plain(p) => Value::Scalar(match self.verbatim(&raw.referenced) {
                Some(t) => Scalar::Verbatim(t),
                None => Scalar::Plain(p),
            }),
            RawNode::Seq(items) => Value::Seq(items.into_iter().map(|i| self.node(i)).collect()),
            RawNode::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| Entry {
                        key: k.value,
                        key_at: self.origin(&k.referenced),
                        value: self.node(v),
                    })
                    .collect(),
            ),
        };
        Node { value, at }
    }
}

/// The parser's view of a value (positions come from the `Spanned` around it).
enum RawNode {
    Null,
    Str(String),
    Plain(String),
    Seq(Vec<Spanned<RawNode>>),
    Map(Vec<(Spanned<String>, Spanned<RawNode>)>),
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_str<E>(self, v: &str) -> Result<RawNode, E> {
        Ok(RawNode::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawNode, E> {
        Ok(RawNode::Str(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawNode, E> {
        Ok(RawNode::Plain(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawNode, E> {
        Ok(RawNode::Plain(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawNode, E> {
        Ok(RawNode::Plain(v.to_string()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<RawNode, E> {
        Ok(RawNode::Plain(v.to_string()))
    }
    fn visit_u128<E>(self, v: u128) -> Result<RawNode, E> {
        Ok(RawNode::Plain(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawNode, E> {
        // `{:?}` keeps a decimal point, so the value reads back as a float.
        Ok(RawNode::Plain(format!("{v:?}")))
    }
    fn visit_unit<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_none<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawNode, D::Error> {
        RawNode::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawNode, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = a.next_element::<Spanned<RawNode>>()? {
            items.push(x);
        }
        Ok(RawNode::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RawNode, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = a.next_key::<Spanned<String>>()? {
            let v = a.next_value::<Spanned<RawNode>>()?;
            entries.push((k, v));
        }
        Ok(RawNode::Map(entries))
    }
}

/// Where each line of a written-back object was written first: per line, the places of the
/// tokens that start on it, by the column they start at in the written text.
#[derive(Debug, Default)]
pub struct LineMap<'f> {
    lines: Vec<Vec<(u64, Origin<'f>)>>,
}

impl<'f> LineMap<'f> {
    /// The input named `name` among those the lines came from.
    pub fn file_named(&self, name: &str) -> Option<&'f SourceFile> {
        self.lines
            .iter()
            .flatten()
            .map(|(_, at)| at.file)
            .find(|f| f.name == name)
    }

    /// Where (1-based `line`, `column` of the written text) was written first: the token
    /// starting at or before `column` on that line, shifted by the distance into it.
    pub fn origin(&self, line: u64, column: u64) -> Option<Origin<'f>> {
        let anchors = self.lines.get(line.checked_sub(1)? as usize)?;
        let (col, at) = anchors
            .iter()
            .rev()
            .find(|(c, _)| *c <= column)
            .or_else(|| anchors.first())?;
        let mut at = *at;
        at.column += column.saturating_sub(*col);
        Some(at)
    }
}

/// `node` written as block-style YAML, and where each of its lines came from.
pub fn emit<'f>(node: &Node<'f>) -> (String, Arc<LineMap<'f>>) {
    let mut w = Writer::default();
    w.value(node, 0);
    if w.text.ends_with('\n') {
        w.text.pop();
    }
    (w.text, Arc::new(w.map))
}

#[derive(Default)]
struct Writer<'f> {
    text: String,
    map: LineMap<'f>,
    /// The column (1-based) the next character goes to.
    column: u64,
}

impl<'f> Writer<'f> {
    fn put(&mut self, s: &str, at: Option<Origin<'f>>) {
        if self.column == 0 {
            self.map.lines.push(Vec::new());
            self.column = 1;
        }
        if let Some(at) = at {
            self.map
                .lines
                .last_mut()
                .expect("a line")
                .push((self.column, at));
        }
        self.text.push_str(s);
        self.column += s.chars().count() as u64;
    }

    fn newline(&mut self) {
        if self.column == 0 {
            self.map.lines.push(Vec::new());
        }
        self.text.push('\n');
        self.column = 0;
    }

    fn indent(&mut self, n: usize) {
        if n > 0 {
            self.put(&" ".repeat(n), None);
        }
    }

    /// A value that starts where the cursor is (after `key: ` or `- `), its nested lines
    /// indented by `indent`.
    fn value(&mut self, node: &Node<'f>, indent: usize) {
        match &node.value {
            Value::Scalar(s) => {
                let t = scalar_text(s);
                self.put(&t, Some(node.at));
                self.newline();
            }
            Value::Seq(items) if items.is_empty() => {
                self.put("[]", Some(node.at));
                self.newline();
            }
            Value::Map(entries) if entries.is_empty() => {
                self.put("{}", Some(node.at));
                self.newline();
            }
            // Only at the top: under a key or an item, `value_at_line_start` and `inline`
            // write sequences.
            Value::Seq(_) => self.value_at_line_start(node, indent),
            // The first entry where the cursor is (line start, after `- `), the others below.
            Value::Map(entries) => {
                for (i, e) in entries.iter().enumerate() {
                    if i > 0 {
                        self.indent(indent);
                    }
                    self.put(&key_text(&e.key), Some(e.key_at));
                    self.put(":", None);
                    match &e.value.value {
                        Value::Scalar(_) => {
                            self.put(" ", None);
                            self.value(&e.value, indent + 2);
                        }
                        Value::Seq(v) if v.is_empty() => {
                            self.put(" ", None);
                            self.value(&e.value, indent + 2);
                        }
                        Value::Map(v) if v.is_empty() => {
                            self.put(" ", None);
                            self.value(&e.value, indent + 2);
                        }
                        Value::Seq(_) => {
                            self.newline();
                            // Block sequences under a key may sit at the key's own indent; a
                            // deeper one is clearer and just as valid.
                            self.value_at_line_start(&e.value, indent + 2);
                        }
                        Value::Map(_) => {
                            self.newline();
                            self.indent(indent + 2);
                            self.value(&e.value, indent + 2);
                        }
                    }
                }
            }
        }
    }

    /// A sequence written from the start of a line.
    fn value_at_line_start(&mut self, node: &Node<'f>, indent: usize) {
        if let Value::Seq(items) = &node.value {
            for item in items {
                self.indent(indent);
                self.put("- ", Some(item.at));
                self.inline(item, indent + 2);
            }
        }
    }

    /// A sequence item's value, after its `- `.
    fn inline(&mut self, item: &Node<'f>, indent: usize) {
        match &item.value {
            Value::Seq(v) if !v.is_empty() => {
                // A sequence in a sequence: its items on the lines below, deeper.
                self.newline();
                self.value_at_line_start(item, indent);
            }
            _ => self.value(item, indent),
        }
    }
}

/// How a scalar is written.
fn scalar_text(s: &Scalar) -> String {
    match s {
        Scalar::Verbatim(t) => t.clone(),
        Scalar::Str(v) => serde_json::to_string(v).expect("a string serializes"),
        Scalar::Plain(v) => v.clone(),
        Scalar::Null => "null".to_string(),
    }
}

/// How a key is written: plain when YAML reads it back as the same string, quoted otherwise.
fn key_text(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$'))
        && !k.starts_with(['-', '.'])
        && !matches!(
            k,
            "true"
                | "false"
                | "True"
                | "False"
                | "TRUE"
                | "FALSE"
                | "null"
                | "Null"
                | "NULL"
                | "yes"
                | "no"
                | "on"
                | "off"
                | "y"
                | "n"
                | "Yes"
                | "No"
                | "On"
                | "Off"
        )
        && k.parse::<f64>().is_err();
    if plain {
        k.to_string()
    } else {
        serde_json::to_string(k).expect("a string serializes")
    }
}
