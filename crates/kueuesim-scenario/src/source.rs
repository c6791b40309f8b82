//! Splitting input files into Kubernetes objects: `---`-separated documents, and the items of
//! `kind: List` (so `kubectl get … -o yaml` output works as is), each with its place in the file.

use serde::Deserialize;
use serde_saphyr::Spanned;

use std::sync::Arc;

use kueuesim_model::limits;

use crate::error::{Pos, ScenarioError};
use crate::overlay::tree::LineMap;

/// One input file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name used in messages (the path as given).
    pub name: String,
    /// Its whole text.
    pub text: String,
}

/// The text of a file's bytes: a UTF-8 byte order mark is dropped (editors on Windows write
/// one), and bytes that are not UTF-8 are an error at the line and column of the first bad
/// byte (the column counts the characters before it on its line, as every other column).
pub fn decode(name: &str, mut bytes: Vec<u8>) -> Result<String, ScenarioError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let bad = e.utf8_error().valid_up_to();
        // The prefix is valid UTF-8, so it can be counted in characters.
        let before = std::str::from_utf8(&bytes[..bad]).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() as u64 + 1;
        let column = before[line_start..].chars().count() as u64 + 1;
        // A file that is not UTF-8 is not the text it should be: no code frame (its bytes
        // are not shown, `ScenarioError::at_unframed`).
        ScenarioError::at_unframed(
            Pos {
                file: name.to_string(),
                line,
                column,
            },
            format!(
                "byte 0x{:02X} is not UTF-8: expected the file in UTF-8",
                bytes[bad]
            ),
        )
    })
}

/// Reads the file at `path` (named `name` in messages) as text with [`decode`], refusing one
/// larger than `limits::MAX_INPUT_BYTES` before reading it.
pub fn read_text(path: &std::path::Path, name: &str) -> Result<String, ScenarioError> {
    let io = |source| ScenarioError::Io {
        path: name.to_string(),
        source,
    };
    let max = kueuesim_model::limits::MAX_INPUT_BYTES;
    let too_big = |len: String| {
        ScenarioError::at_unframed(
            Pos {
                file: name.to_string(),
                line: 1,
                column: 1,
            },
            format!(
                "the file has {len} bytes: expected at most {max} ({} MiB)",
                max / (1024 * 1024)
            ),
        )
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let len = meta.len();
    if len > max {
        return Err(too_big(len.to_string()));
    }
    // A device or pipe reports no length (`/dev/zero` has none and no end): read at most one
    // byte past the limit, whatever the metadata said.
    use std::io::Read;
    // Room for all of it up front: growing by doubling would ask for twice the limit.
    let room = if meta.is_file() { len } else { max } + 1;
    let mut bytes = Vec::with_capacity(room as usize);
    std::fs::File::open(path)
        .map_err(io)?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big(format!("more than {max}")));
    }
    decode(name, bytes)
}

/// One object's YAML, cut out of its file, with the number of file lines before it so that
/// parse positions can be mapped back to the file.
#[derive(Clone, Debug)]
pub struct ObjectText<'f> {
    /// The file it came from.
    pub file: &'f SourceFile,
    /// The object's YAML; a List item has its `- ` replaced by spaces so columns still match.
    pub text: String,
    /// File lines before `text`'s first line.
    pub line_offset: u64,
    /// For an object that `--patch` or `--set` changed, `text` is written anew: where each of
    /// its lines was written first (in `file`, a patch file or a `--set` argument). Positions
    /// go through `ObjectText::pos`, which reads it.
    pub origins: Option<Arc<LineMap<'f>>>,
    /// `apiVersion` (empty if missing).
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Where `kind` is written (for messages about the whole object).
    pub kind_pos: Pos,
    /// Position among all objects of the input, in document order (set by the loader).
    pub order: usize,
}

impl<'f> ObjectText<'f> {
    /// The input position of (1-based) `line` and `column` of `text`, and the text of the input
    /// it is in (for the code frame).
    pub fn locate(&self, line: u64, column: u64) -> (Pos, &'f str) {
        if let Some(at) = self.origins.as_ref().and_then(|m| m.origin(line, column)) {
            return (at.pos(), at.file.text.as_str());
        }
        let pos = Pos {
            file: self.file.name.clone(),
            line: line + self.line_offset,
            column,
        };
        (pos, self.file.text.as_str())
    }

    /// The text of the input `pos` is in (for a code frame): the object's file, or a patch
    /// file or `--set` argument that set part of it.
    pub fn frame_for(&self, pos: &Pos) -> &'f str {
        self.origins
            .as_ref()
            .and_then(|m| m.file_named(&pos.file))
            .map_or(self.file.text.as_str(), |f| f.text.as_str())
    }

    /// The input position of (1-based) `line` and `column` of `text`.
    pub fn pos(&self, line: u64, column: u64) -> Pos {
        self.locate(line, column).0
    }

    /// An error at (1-based) `line` and `column` of `text`.
    pub fn error_at(&self, line: u64, column: u64, message: impl Into<String>) -> ScenarioError {
        let (pos, source) = self.locate(line, column);
        ScenarioError::at(pos, message, source)
    }

    /// A parse error of `text`, at its input position. A type error in an object that is
    /// YAML (`replicas: many`) shows its line; a syntax error does not, since a document
    /// that is not YAML may be any file's text (`ScenarioError::at_unframed`). Whether it is
    /// YAML is asked again here, once per failed load, so that loading parses each object once.
    pub fn yaml_error(&self, e: &serde_saphyr::Error) -> ScenarioError {
        let (line, column) = match e.location() {
            Some(l) if l.line() > 0 => (l.line(), l.column()),
            _ => (1, 1),
        };
        if from_yaml::<serde::de::IgnoredAny>(&self.text).is_err() {
            return ScenarioError::at_unframed(self.pos(line, column), yaml_message(e));
        }
        self.error_at(line, column, yaml_message(e))
    }
}

/// A document's head and, for a List, where its items start: one parse of the document.
#[derive(Deserialize)]
struct HeadAndItems {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    kind: Option<Spanned<String>>,
    #[serde(default)]
    items: Vec<Spanned<serde::de::IgnoredAny>>,
}

/// `apiVersion` and `kind` of a block-style object read from its top-level lines (the shape
/// kubectl prints), with the kind's (line, column) in `text`; None when the text is in
/// another style, and the YAML parser reads the head instead.
fn quick_head(text: &str) -> Option<(String, String, u64, u64)> {
    let mut indent: Option<usize> = None;
    let (mut api, mut kind) = (None, None);
    for (i, line) in text.lines().enumerate() {
        if is_blank(line) {
            continue;
        }
        let ind = line.len() - line.trim_start_matches(' ').len();
        let base = *indent.get_or_insert(ind);
        if ind != base {
            continue;
        }
        let t = &line[ind..];
        let value = |rest: &str| -> Option<String> {
            let v = rest.trim();
            let v = v.split(" #").next().unwrap_or(v).trim();
            let v = v
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .unwrap_or(v);
            (!v.is_empty() && !v.starts_with(['{', '[', '&', '*', '!', '|', '>', '\'']))
                .then(|| v.to_string())
        };
        if let Some(rest) = t.strip_prefix("apiVersion:") {
            api = Some(value(rest)?);
        } else if let Some(rest) = t.strip_prefix("kind:") {
            let v = value(rest)?;
            let col = ind + "kind:".len() + (rest.len() - rest.trim_start().len()) + 1;
            kind = Some((v, i as u64 + 1, col as u64));
        } else if t.starts_with(['{', '[', '"', '\'', '?', '-']) {
            return None;
        }
    }
    let (k, line, col) = kind?;
    Some((api.unwrap_or_default(), k, line, col))
}

/// `apiVersion` and `kind` of a flow-style object (`{apiVersion: v1, kind: Node, ...}`, the
/// shape generated scenarios use), with the kind's (line, column) in `text`; None for anything
/// but plain scalars and nesting (quotes, anchors, tags, comments inside), which the YAML parser
/// then reads.
fn quick_flow_head(text: &str) -> Option<(String, String, u64, u64)> {
    let (mut api, mut kind) = (None, None);
    let (mut line, mut col) = (1u64, 0u64);
    let mut depth = 0usize;
    let mut started = false;
    let mut ended = false;
    // At depth 1: the key being read, and the value being read (with where it started).
    let mut key = String::new();
    let mut value: Option<(String, u64, u64)> = None;
    let mut in_comment = false;
    for c in text.chars() {
        if c == '\n' {
            // A plain scalar folded over lines: the parser's business.
            if depth == 1 && value.as_ref().is_some_and(|(v, _, _)| !v.is_empty()) {
                return None;
            }
            line += 1;
            col = 0;
            in_comment = false;
            continue;
        }
        col += 1;
        if in_comment {
            continue;
        }
        if !started || ended {
            match c {
                ' ' | '\t' | '\r' => {}
                '#' => in_comment = true,
                '{' if !started => {
                    started = true;
                    depth = 1;
                }
                _ => return None,
            }
            continue;
        }
        match c {
            '"' | '\'' | '&' | '*' | '!' | '|' | '>' | '?' | '#' | '%' | '@' | '`' => return None,
            '{' | '[' => depth += 1,
            '}' | ']' | ',' if depth == 1 => {
                if let Some((v, l, k)) = value.take() {
                    let v = v.trim_end().to_string();
                    match key.trim() {
                        "apiVersion" => api = Some(v),
                        "kind" => kind = Some((v, l, k)),
                        _ => {}
                    }
                }
                key.clear();
                match c {
                    '}' => {
                        depth = 0;
                        ended = true;
                    }
                    ']' => return None,
                    _ => {}
                }
            }
            '}' | ']' => depth -= 1,
            _ if depth > 1 => {}
            ':' if value.is_none() => value = Some((String::new(), 0, 0)),
            _ => match &mut value {
                None => key.push(c),
                Some((v, l, k)) => {
                    if v.is_empty() && c != ' ' && c != '\t' {
                        (*l, *k) = (line, col);
                    }
                    if !v.is_empty() || (c != ' ' && c != '\t') {
                        v.push(c);
                    }
                }
            },
        }
    }
    if !ended {
        return None;
    }
    let (k, line, col) = kind?;
    (!k.is_empty()).then_some((api.unwrap_or_default(), k, line, col))
}

/// Turns a serde-saphyr error in a text that starts after `line_offset` file lines into ours.
/// It is raised while a file is split into objects, before its document is known to be a
/// YAML object with a `kind`, so it has no code frame: the file may be anything given in
/// place of a manifest (`ScenarioError::at_unframed`).
pub fn yaml_error(file: &SourceFile, line_offset: u64, e: &serde_saphyr::Error) -> ScenarioError {
    let (line, column) = match e.location() {
        Some(l) if l.line() > 0 => (l.line() + line_offset, l.column()),
        _ => (line_offset + 1, 1),
    };
    ScenarioError::at_unframed(
        Pos {
            file: file.name.clone(),
            line,
            column,
        },
        yaml_message(e),
    )
}

/// Parses YAML `text` with the reader's limits set from `limits` (nesting depth, nodes per
/// object), so that the limits live in one place and the messages can state them.
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_saphyr::Error> {
    let mut options = serde_saphyr::Options::default();
    if let Some(b) = options.budget.as_mut() {
        b.max_depth = limits::MAX_DEPTH;
        b.max_nodes = limits::MAX_YAML_NODES;
    }
    serde_saphyr::from_str_with_options(text, options)
}

/// A serde-saphyr error's message in our words: without its own (document-relative)
/// position, which ours replaces, without the library's option and type names, and with
/// what was expected.
pub fn yaml_message(e: &serde_saphyr::Error) -> String {
    use serde_saphyr::budget::BudgetBreach;
    let e = e.without_snippet();
    match e {
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => {
            return match key {
                Some(k) => format!("duplicate key {k:?}: expected each key once in a mapping"),
                None => "duplicate key: expected each key once in a mapping".to_string(),
            };
        }
        serde_saphyr::Error::Budget { breach, .. } => {
            return match breach {
                BudgetBreach::Depth { .. } => format!(
                    "nesting deeper than {} levels: expected at most {} levels of mappings and lists",
                    limits::MAX_DEPTH,
                    limits::MAX_DEPTH
                ),
                BudgetBreach::Nodes { .. } => format!(
                    "more than {} YAML nodes in one object: expected at most {}",
                    limits::MAX_YAML_NODES,
                    limits::MAX_YAML_NODES
                ),
                BudgetBreach::Aliases { .. }
                | BudgetBreach::Anchors { .. }
                | BudgetBreach::AliasAnchorRatio { .. } => {
                    "too many aliases or anchors: expected an object written out, with few aliases"
                        .to_string()
                }
                _ => "the object is too large to read: expected a Kubernetes object of at most some megabytes".to_string(),
            };
        }
        _ => {}
    }
    let bare = e.to_string();
    let message = match bare.rfind(" at line ") {
        Some(i) => bare[..i].to_string(),
        None => bare,
    };
    explain(&message)
}

/// Adds what was expected to serde's terse type errors, and says the reader's own phrases
/// in ours.
fn explain(message: &str) -> String {
    let ours = match message {
        "expected mapping start" => Some("expected a mapping (key: value pairs)"),
        "expected string scalar" => Some("expected a single value, not a list or a mapping"),
        m if m.starts_with("cannot deserialize null") => Some("a null value: expected a value"),
        m if m.starts_with("recursive references") => {
            Some("an alias inside its own anchor: expected no recursive aliases")
        }
        m if m.starts_with("non-finite float") => {
            Some("a number that is not finite: expected a finite number")
        }
        _ => None,
    };
    if let Some(o) = ours {
        return o.to_string();
    }
    // serde's `deny_unknown_fields` (kueuesim's own kinds) lists every field: name the
    // closest first, as the unknown-field lint and `--set` do.
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((field, expected)) = rest.split_once("`, expected one of ")
    {
        let names = expected.split(", ").map(|n| n.trim_matches('`'));
        let hint = crate::overlay::closest_hint(field, names);
        if !hint.is_empty() {
            return format!("{message}{hint}");
        }
    }
    let expected = match message {
        m if m.starts_with("invalid u32") || m.starts_with("invalid u64") => {
            Some("expected a non-negative integer")
        }
        m if m.starts_with("invalid i32") || m.starts_with("invalid i64") => {
            Some("expected an integer")
        }
        m if m.starts_with("invalid bool") => Some("expected true or false"),
        _ => None,
    };
    match expected {
        Some(x) => format!("{message}: {x}"),
        None => message.to_string(),
    }
}

fn is_blank(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

fn is_document_marker(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Every object in `file`, in document order, with List items flattened.
pub fn split_objects(file: &SourceFile) -> Result<Vec<ObjectText<'_>>, ScenarioError> {
    let lines: Vec<&str> = file.text.lines().collect();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut i = 0usize;
    while i <= lines.len() {
        let boundary = i == lines.len() || is_document_marker(lines[i]) || lines[i] == "...";
        if boundary {
            if lines[start..i].iter().any(|l| !is_blank(l)) {
                let text = lines[start..i].join("\n");
                push_document(file, text, start as u64, &lines, &mut out)?;
            }
            start = i + 1;
        }
        i += 1;
    }
    Ok(out)
}

fn push_document<'f>(
    file: &'f SourceFile,
    text: String,
    line_offset: u64,
    lines: &[&str],
    out: &mut Vec<ObjectText<'f>>,
) -> Result<(), ScenarioError> {
    // The head of an object in kubectl's block style or in plain flow style is read from its
    // text: the YAML parser reads every object of a kind the loader knows in full later (and
    // checks the syntax of the others, `convert::Builder`), so parsing it here too would only
    // double the cost of loading. A List, or anything else, goes through the parser (which
    // also reports syntax errors).
    let quick = quick_head(&text)
        .or_else(|| quick_flow_head(&text))
        .filter(|(_, k, _, _)| !k.ends_with("List"));
    let (api_version, kind_value, kind_pos, items) = match quick {
        Some((api, k, line, col)) => (
            api,
            k,
            Pos {
                file: file.name.clone(),
                line: line + line_offset,
                column: col,
            },
            Vec::new(),
        ),
        None => {
            let head: HeadAndItems =
                from_yaml(&text).map_err(|e| yaml_error(file, line_offset, &e))?;
            let Some(kind) = head.kind else {
                // Not a Kubernetes object: the document's text is not shown.
                return Err(ScenarioError::at_unframed(
                    Pos {
                        file: file.name.clone(),
                        line: line_offset + 1,
                        column: 1,
                    },
                    "object has no `kind`: expected a Kubernetes object with apiVersion and kind",
                ));
            };
            let pos = Pos {
                file: file.name.clone(),
                line: kind.referenced.line() + line_offset,
                column: kind.referenced.column(),
            };
            (
                head.api_version.unwrap_or_default(),
                kind.value,
                pos,
                head.items,
            )
        }
    };
    if kind_value == "List" || kind_value.ends_with("List") && api_version == "v1" {
        for item in &items {
            let first = item.referenced.line() + line_offset; // 1-based file line
            let col = item.referenced.column() as usize; // 1-based column of the item's content
            let indent = col.saturating_sub(1);
            let first_idx = (first - 1) as usize;
            let mut end = first_idx + 1;
            while end < lines.len() {
                let l = lines[end];
                if is_document_marker(l) || l == "..." {
                    break;
                }
                let l_indent = l.len() - l.trim_start_matches(' ').len();
                if !is_blank(l) && l_indent < indent {
                    break;
                }
                end += 1;
            }
            let mut item_lines: Vec<String> = lines[first_idx..end]
                .iter()
                .map(|s| s.to_string())
                .collect();
            // Blank the `- ` (and anything before the item's column) so columns stay exact.
            let head_line: String = item_lines[0]
                .chars()
                .enumerate()
                .map(|(i, c)| if i < indent { ' ' } else { c })
                .collect();
            item_lines[0] = head_line;
            push_document(file, item_lines.join("\n"), first - 1, lines, out)?;
        }
        return Ok(());
    }
    out.push(ObjectText {
        file,
        text,
        line_offset,
        origins: None,
        api_version,
        kind: kind_value,
        kind_pos,
        order: 0,
    });
    Ok(())
}

/// The objects in the order the loader reads them: by API group and kind, then namespace and
/// name (in natural order, `natural_cmp`), whatever the order of the files and documents. A scenario is a state, not a sequence: the same objects
/// in any order give the same world and the same run. Objects equal in all four keep their
/// text's order, then their input order (a duplicate is reported at its second place).
pub fn sort_canonically(objects: &mut Vec<ObjectText<'_>>) {
    let keys: Vec<(&str, &str, String, String)> = objects
        .iter()
        .map(|o| {
            let (namespace, name) = object_names(&o.text);
            let group = o.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            (group, o.kind.as_str(), namespace, name)
        })
        .collect();
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&keys[a], &keys[b]);
        (ka.0, ka.1)
            .cmp(&(kb.0, kb.1))
            .then_with(|| natural_cmp(&ka.2, &kb.2))
            .then_with(|| natural_cmp(&ka.3, &kb.3))
            .then_with(|| objects[a].text.cmp(&objects[b].text))
    });
    drop(keys);
    let mut slots: Vec<Option<ObjectText<'_>>> = objects.drain(..).map(Some).collect();
    objects.extend(
        order
            .into_iter()
            .map(|i| slots[i].take().expect("each index once")),
    );
}

/// Names in natural order: runs of digits compare as numbers (`node-2` before `node-10`),
/// the rest by character; names equal so (`n01`, `n1`) by character.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn runs(s: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digit = first.is_ascii_digit();
            let end = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(end);
            rest = tail;
            Some((digit, run))
        })
    }
    let (mut x, mut y) = (runs(a), runs(b));
    loop {
        let ord = match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some((true, p)), Some((true, q))) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            (Some((_, p)), Some((_, q))) => p.cmp(q),
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
}

/// `metadata.namespace` (default `default`) and `metadata.name` (default empty) of an
/// object, for its place in the canonical order: read from the text of kubectl's block style
/// (or a flow-style `metadata: {…}` line), else by the YAML parser. Only the order depends on
/// it; the loader reads and checks the names when it parses the object.
fn object_names(text: &str) -> (String, String) {
    #[derive(Deserialize, Default)]
    struct Names {
        namespace: Option<String>,
        name: Option<String>,
    }
    #[derive(Deserialize)]
    struct MetaOnly {
        metadata: Option<Names>,
    }
    let done = |n: Names| {
        (
            n.namespace.unwrap_or_else(|| "default".into()),
            n.name.unwrap_or_default(),
        )
    };
    let quick = || -> Option<Names> {
        let lines = text.lines().filter(|l| !is_blank(l));
        let first = lines.clone().next()?;
        let base = first.len() - first.trim_start_matches(' ').len();
        let mut lines = lines.skip_while(|l| {
            let ind = l.len() - l.trim_start_matches(' ').len();
            !(ind == base && l[ind..].starts_with("metadata:"))
        });
        let head = lines.next()?;
        let rest = head.trim_start()["metadata:".len()..].trim();
        if !rest.is_empty() && !rest.starts_with('#') {
            return from_yaml::<Names>(rest).ok();
        }
        let mut names = Names::default();
        let mut child: Option<usize> = None;
        for l in lines {
            let ind = l.len() - l.trim_start_matches(' ').len();
            if ind <= base {
                break;
            }
            if *child.get_or_insert(ind) != ind {
                continue;
            }
            let t = &l[ind..];
            let plain = |v: &str| -> Option<String> {
                let v = v.split(" #").next().unwrap_or(v).trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|x| x.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
                    .unwrap_or(v);
                (!v.starts_with(['{', '[', '&', '*', '!', '|', '>'])).then(|| v.to_string())
            };
            if let Some(v) = t.strip_prefix("name:") {
                names.name = Some(plain(v)?);
            } else if let Some(v) = t.strip_prefix("namespace:") {
                names.namespace = Some(plain(v)?);
            }
        }
        Some(names)
    };
    let flow = || from_yaml::<Names>(quick_flow_metadata(text)?).ok();
    match quick().or_else(flow) {
        Some(n) => done(n),
        None => done(
            from_yaml::<MetaOnly>(text)
                .ok()
                .and_then(|m| m.metadata)
                .unwrap_or_default(),
        ),
    }
}

/// The `metadata: {…}` mapping of a whole flow-style object (`{apiVersion: v1, kind: Node,
/// metadata: {name: n1}, …}`, the shape generated scenarios use), as text for the YAML parser:
/// parsing that snippet instead of the whole object keeps the canonical order's cost per
/// object small (a 2,000-object scenario spent a fifth of its run parsing every object twice).
/// None for anything the scan does not follow (quotes, anchors, tags, comments inside the
/// object, a metadata that is not a flow mapping); the caller then parses the whole object.
fn quick_flow_metadata(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut started = false;
    let mut in_comment = false;
    // At depth 1: the key being read, and whether its `:` was seen.
    let mut key = String::new();
    let mut after_colon = false;
    let mut meta_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if in_comment {
            in_comment = c != '\n';
            continue;
        }
        if !started {
            match c {
                ' ' | '\t' | '\r' | '\n' => {}
                '#' => in_comment = true,
                '{' => {
                    started = true;
                    depth = 1;
                }
                _ => return None,
            }
            continue;
        }
        match c {
            '"' | '\'' | '&' | '*' | '!' | '|' | '>' | '?' | '#' | '%' | '@' | '`' => return None,
            '{' | '[' => {
                if depth == 1 && after_colon && c == '{' && key.trim() == "metadata" {
                    meta_start = Some(i);
                }
                depth += 1;
            }
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 1
                    && let Some(start) = meta_start
                {
                    return (c == '}').then(|| &text[start..=i]);
                }
                if depth == 0 {
                    return None;
                }
            }
            ',' if depth == 1 => {
                key.clear();
                after_colon = false;
            }
            ':' if depth == 1 && !after_colon => after_colon = true,
            _ if depth == 1 && !after_colon => key.push(c),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile {
            name: "t.yaml".into(),
            text: text.into(),
        }
    }

    #[test]
    fn splits_documents_and_flattens_lists_keeping_positions() {
        let f = file(
            "# comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n2}\nkind: List\n",
        );
        let objs = split_objects(&f).unwrap();
        let kinds: Vec<_> = objs
            .iter()
            .map(|o| (o.kind.as_str(), o.kind_pos.line, o.kind_pos.column))
            .collect();
        assert_eq!(
            kinds,
            [("Namespace", 4, 7), ("Node", 11, 9), ("Node", 15, 9)]
        );
    }

    /// The canonical order reads names from block style, a flow-style metadata line and a
    /// whole flow-style object alike, and does not depend on the input order.
    #[test]
    fn objects_sort_by_group_kind_namespace_and_name_whatever_their_order() {
        let f = file(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  namespace: x\n---\n{apiVersion: v1, kind: Pod, metadata: {namespace: x, name: a}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\napiVersion: v1\nkind: Node\nmetadata:\n  labels: {a: b}\n  name: \"n1\" # first\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: z}\n",
        );
        let names = |objs: &[ObjectText<'_>]| -> Vec<(String, String, String)> {
            objs.iter()
                .map(|o| {
                    let (ns, n) = object_names(&o.text);
                    (o.kind.clone(), ns, n)
                })
                .collect()
        };
        let mut objs = split_objects(&f).unwrap();
        sort_canonically(&mut objs);
        let want = [
            ("Node", "default", "n1"),
            ("Node", "default", "n2"),
            ("Pod", "x", "a"),
            ("Pod", "x", "b"),
            ("Job", "default", "z"),
        ]
        .map(|(k, ns, n)| (k.to_string(), ns.to_string(), n.to_string()));
        assert_eq!(names(&objs), want);
        assert!(natural_cmp("node-2", "node-10").is_lt());
        assert!(natural_cmp("a-01", "a-1").is_lt());
        assert!(natural_cmp("cq-0-9-cohort-0", "cq-0-10-cohort-0").is_lt());
        assert!(natural_cmp("b", "a1").is_gt());
        objs.reverse();
        sort_canonically(&mut objs);
        assert_eq!(names(&objs), want);
    }

    /// The flow-style object's metadata is found at the top level only (not a template's),
    /// and anything the scan does not follow is left to the parser.
    #[test]
    fn flow_metadata_is_read_from_the_top_level_mapping() {
        let t = "# c\n{apiVersion: batch/v1, kind: Job, spec: {template: {metadata: {name: t}}},\n  metadata: {namespace: ns, name: j, labels: {a: b}}}";
        assert_eq!(
            quick_flow_metadata(t),
            Some("{namespace: ns, name: j, labels: {a: b}}")
        );
        assert_eq!(object_names(t), ("ns".to_string(), "j".to_string()));
        for other in [
            "{kind: Job, metadata: {name: \"j\"}}",
            "{kind: Job, metadata: &m {name: j}}",
            "{kind: Job, metadata: [a]}",
            "{kind: Job}",
            "kind: Job\nmetadata: {name: j}",
        ] {
            assert_eq!(quick_flow_metadata(other), None, "{other}");
        }
        assert_eq!(
            object_names("{kind: Job, metadata: {name: \"j\"}}"),
            ("default".to_string(), "j".to_string())
        );
    }

    #[test]
    fn missing_kind_is_an_error_with_position() {
        let f = file("apiVersion: v1\n---\nmetadata: {}\n");
        let e = split_objects(&f).unwrap_err().to_string();
        assert!(e.starts_with("t.yaml:1:1: object has no `kind`"), "{e}");
    }

    #[test]
    fn syntax_error_in_second_document_names_the_file_line() {
        // Block and flow style, a kind the loader reads and one it skips: the splitter reads
        // only the head, and the load still reports the syntax error where it is.
        for (text, at) in [
            ("kind: A\n---\nkind: B\nspec: [1\n", "t.yaml:4:"),
            ("kind: A\n---\n{kind: B, spec: [1}\n", "t.yaml:3:"),
            (
                "kind: A\n---\napiVersion: v1\nkind: Node\nmetadata: {name: [a}\n",
                "t.yaml:5:",
            ),
            (
                "kind: A\n---\n{apiVersion: v1, kind: Node,\n metadata: {name: [a}}\n",
                "t.yaml:4:",
            ),
        ] {
            let e = crate::convert::load(&[file(text)], Default::default())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(at), "{text:?}: {e}");
        }
    }

    /// The flow-style head reader agrees with the YAML parser where it answers at all.
    #[test]
    fn flow_heads_match_the_parser() {
        let parsed = |text: &str| {
            let h: HeadAndItems = serde_saphyr::from_str(text).unwrap();
            let k = h.kind.unwrap();
            (
                h.api_version.unwrap_or_default(),
                k.value,
                k.referenced.line(),
                k.referenced.column(),
            )
        };
        for text in [
            "{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: a}, spec: {x: [1, {y: 2}]}}",
            "# lead\n\n{kind: Node,\n  apiVersion: v1, metadata: {labels: {a: b}}}  # trailing\n",
            "{metadata: {kind: Wrong}, kind:   LocalQueue , apiVersion: v1}",
            "{ apiVersion: v1,\n  kind:\n    Namespace }",
        ] {
            assert_eq!(quick_flow_head(text), Some(parsed(text)), "{text:?}");
        }
        for text in [
            "{kind: \"Node\"}",
            "{kind: Node, metadata: {name: &a x}}",
            "{kind: Node} extra",
            "{kind: Node",
            "{kind: Name\n  space}",
            "kind: Node",
            "{apiVersion: v1}",
        ] {
            assert_eq!(quick_flow_head(text), None, "{text:?}");
        }
    }
}
