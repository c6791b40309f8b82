//! `--set KIND/[NAMESPACE/]NAME:PATH=VALUE`: one field of one object, set from the command
//! line; a NAME or NAMESPACE with `*` (any run of characters) sets it in every object it
//! matches. PATH is dotted field names, each optionally followed by `[N]` (a list index) or
//! `[key=value]` (the list item whose `key` is `value`); `\.` is a literal dot in a field name
//! (`metadata.labels.kueue\.x-k8s\.io/queue-name`). VALUE is YAML (`192`, `"192"`, `[a, b]`,
//! `{weight: 2}`); `null` removes the field or item.

use crate::error::ScenarioError;
use crate::source::SourceFile;

use super::tree::{self, Entry, Node, Origin, Value};

/// One `--set` argument, parsed.
#[derive(Clone, Debug)]
pub struct SetArg<'f> {
    /// The kind as written (`clusterqueue`, `ClusterQueue`, `cq`).
    pub kind: String,
    /// The namespace, when given.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// Where the target (`kind/name`) is written.
    pub target_at: Origin<'f>,
    /// The path below the object.
    pub path: Vec<Step<'f>>,
    /// The value to set.
    pub value: Node<'f>,
}

/// One step of a path.
#[derive(Clone, Debug)]
pub enum Step<'f> {
    /// A mapping's key.
    Field(String, Origin<'f>),
    /// A list's item by position.
    Index(usize, Origin<'f>),
    /// A list's item by the value of one of its fields.
    Select(String, String, Origin<'f>),
}

impl<'f> Step<'f> {
    fn at(&self) -> Origin<'f> {
        match self {
            Step::Field(_, at) | Step::Index(_, at) | Step::Select(_, _, at) => *at,
        }
    }
}

/// The path up to and including `steps`, as the user would write it.
fn path_text(steps: &[Step<'_>]) -> String {
    let mut s = String::new();
    for st in steps {
        match st {
            Step::Field(f, _) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(&f.replace('.', "\\."));
            }
            Step::Index(i, _) => s.push_str(&format!("[{i}]")),
            Step::Select(k, v, _) => s.push_str(&format!("[{k}={v}]")),
        }
    }
    s
}

const FORM: &str = "expected KIND/NAME:PATH=VALUE or KIND/NAMESPACE/NAME:PATH=VALUE \
     (e.g. clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192)";

/// Parses one `--set` argument; `arg` is a source of its own (its name says which argument it
/// is, its text is the argument), so errors point at a column of it.
pub fn parse(arg: &SourceFile) -> Result<SetArg<'_>, ScenarioError> {
    parse_on_line(arg, 1)
}

/// Parses a `set` written inside a file (a Timeline change's `set`): `arg`'s text is blank up
/// to line `line`, where the expression starts (after spaces up to its column), so errors
/// and code frames point into that file.
pub fn parse_on_line(arg: &SourceFile, line: u64) -> Result<SetArg<'_>, ScenarioError> {
    let mut start = 0;
    for _ in 1..line {
        start += arg.text[start..].find('\n').map_or(0, |i| i + 1);
    }
    let line_text = &arg.text[start..];
    // The spaces that place the expression at its column.
    let indent = line_text.len() - line_text.trim_start_matches(' ').len();
    let text = &line_text[indent..];
    // Byte offsets into the argument; columns count characters, as an editor's do (a
    // namespace or value with `é` before the error must not shift the caret).
    let at = |byte: usize| Origin {
        file: arg,
        line,
        column: (indent + text[..byte.min(text.len())].chars().count()) as u64 + 1,
    };
    let Some(colon) = text.find(':') else {
        return Err(at(0).error(format!("no `:` after the object: {FORM}")));
    };
    let target = &text[..colon];
    let parts: Vec<&str> = target.split('/').collect();
    let (kind, namespace, name) = match parts.as_slice() {
        [k, n] if !k.is_empty() && !n.is_empty() => (*k, None, *n),
        [k, ns, n] if !k.is_empty() && !ns.is_empty() && !n.is_empty() => {
            (*k, Some(ns.to_string()), *n)
        }
        _ => return Err(at(0).error(format!("{target:?} names no object: {FORM}"))),
    };
    // The path runs to the first `=` outside brackets.
    let rest = &text[colon + 1..];
    let mut depth = 0usize;
    let mut eq = None;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => {
                eq = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(eq) = eq else {
        return Err(at(text.len()).error(format!("no `=VALUE` after the path: {FORM}")));
    };
    let path = parse_path(&rest[..eq], colon + 1, &at)?;
    if path.is_empty() {
        return Err(at(colon + 1).error(format!("an empty path: {FORM}")));
    }
    let value_start = colon + 1 + eq + 1;
    // The value is parsed where it stands in the argument, so its columns are the argument's.
    let padded = format!(
        "{}{}",
        " ".repeat(indent + text[..value_start].chars().count()),
        &text[value_start..]
    );
    let value = if text[value_start..].trim().is_empty() {
        // `path=` sets the empty string, as Helm's --set does.
        Node {
            value: Value::Scalar(tree::Scalar::Str(String::new())),
            at: at(value_start),
        }
    } else {
        tree::parse(arg, &padded, line - 1).map_err(|e| multi_line_hint(e, &text[value_start..]))?
    };
    Ok(SetArg {
        kind: kind.to_string(),
        namespace,
        name: name.to_string(),
        target_at: at(0),
        path,
        value,
    })
}

/// A value over several lines (a whole volcano-scheduler.conf, say) is parsed as YAML like any
/// other, so its second line reads as a new document and fails; the error then says how to
/// pass such a value.
fn multi_line_hint(e: ScenarioError, value: &str) -> ScenarioError {
    match e {
        ScenarioError::At {
            pos,
            message,
            snippet,
        } if value.contains('\n') => ScenarioError::At {
            pos,
            message: format!(
                "{message} (a value over several lines is YAML too: write it as one \
                 double-quoted string with \\n between the lines, or put the change in a \
                 file for --patch)"
            ),
            snippet,
        },
        e => e,
    }
}

fn parse_path<'f>(
    s: &str,
    offset: usize,
    at: &impl Fn(usize) -> Origin<'f>,
) -> Result<Vec<Step<'f>>, ScenarioError> {
    let mut steps = Vec::new();
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    let mut field = String::new();
    let mut field_start = 0usize;
    let flush = |field: &mut String, start: usize, steps: &mut Vec<Step<'f>>| {
        if !field.is_empty() {
            steps.push(Step::Field(std::mem::take(field), at(offset + start)));
        }
    };
    while i < chars.len() {
        let (pos, c) = chars[i];
        match c {
            '\\' if i + 1 < chars.len() && chars[i + 1].1 == '.' => {
                if field.is_empty() {
                    field_start = pos;
                }
                field.push('.');
                i += 2;
                continue;
            }
            '.' => {
                if field.is_empty()
                    && !matches!(steps.last(), Some(Step::Index(..) | Step::Select(..)))
                {
                    return Err(
                        at(offset + pos).error(format!("an empty field name in the path: {FORM}"))
                    );
                }
                flush(&mut field, field_start, &mut steps);
            }
            '[' => {
                flush(&mut field, field_start, &mut steps);
                let Some(close) = chars[i..].iter().position(|(_, c)| *c == ']') else {
                    return Err(at(offset + pos).error("a `[` without its `]` in the path"));
                };
                let inner: String = chars[i + 1..i + close].iter().map(|(_, c)| c).collect();
                let step_at = at(offset + pos);
                if let Some((k, v)) = inner.split_once('=') {
                    if k.is_empty() {
                        return Err(
                            step_at.error(format!("[{inner}]: expected [N] or [key=value]"))
                        );
                    }
                    steps.push(Step::Select(k.to_string(), v.to_string(), step_at));
                } else {
                    let n: usize = inner.trim().parse().map_err(|_| {
                        step_at.error(format!(
                            "[{inner}]: expected [N] (a list index) or [key=value]"
                        ))
                    })?;
                    steps.push(Step::Index(n, step_at));
                }
                i += close + 1;
                continue;
            }
            _ => {
                if field.is_empty() {
                    field_start = pos;
                }
                field.push(c);
            }
        }
        i += 1;
    }
    flush(&mut field, field_start, &mut steps);
    Ok(steps)
}

impl<'f> SetArg<'f> {
    /// Sets the value in `object` (a whole object's tree).
    pub fn apply(&self, object: &mut Node<'f>) -> Result<(), ScenarioError> {
        set(object, &self.path, 0, self.value.clone())
    }
}

fn set<'f>(
    node: &mut Node<'f>,
    path: &[Step<'f>],
    i: usize,
    value: Node<'f>,
) -> Result<(), ScenarioError> {
    let step = &path[i];
    let last = i + 1 == path.len();
    let null = matches!(&value.value, Value::Scalar(s) if s.is_null());
    let nothing = |what: String| {
        step.at().error(format!(
            "{} matches nothing: {what}",
            path_text(&path[..=i])
        ))
    };
    match step {
        Step::Field(key, at) => {
            let Value::Map(entries) = &mut node.value else {
                return Err(nothing(format!(
                    "{} is {}, not a mapping with fields",
                    parent_text(path, i),
                    node.kind_name()
                )));
            };
            match entries.iter().position(|e| &e.key == key) {
                Some(k) if last && null => {
                    entries.remove(k);
                    Ok(())
                }
                Some(k) if last => {
                    entries[k].value = value;
                    Ok(())
                }
                Some(k) => set(&mut entries[k].value, path, i + 1, value),
                None if last && null => Ok(()),
                None if last || matches!(path[i + 1], Step::Field(..)) => {
                    // A new field (or a new mapping on the way to one): the loader checks it
                    // is one it knows, at this argument's position.
                    let mut child = Node {
                        value: Value::Map(Vec::new()),
                        at: *at,
                    };
                    if last {
                        child = value;
                    } else {
                        set(&mut child, path, i + 1, value)?;
                    }
                    entries.push(Entry {
                        key: key.clone(),
                        key_at: *at,
                        value: child,
                    });
                    Ok(())
                }
                None => {
                    let hint = super::closest_hint(key, entries.iter().map(|e| e.key.as_str()));
                    Err(nothing(format!("no field {key:?} here{hint}")))
                }
            }
        }
        Step::Index(n, _) => {
            let Value::Seq(items) = &mut node.value else {
                return Err(nothing(format!(
                    "{} is {}, not a list",
                    parent_text(path, i),
                    node.kind_name()
                )));
            };
            let len = items.len();
            if *n >= len {
                return Err(nothing(format!(
                    "the list has {len} item{} (indexes from 0)",
                    if len == 1 { "" } else { "s" }
                )));
            }
            if last && null {
                items.remove(*n);
                Ok(())
            } else if last {
                items[*n] = value;
                Ok(())
            } else {
                set(&mut items[*n], path, i + 1, value)
            }
        }
        Step::Select(key, want, _) => {
            let Value::Seq(items) = &mut node.value else {
                return Err(nothing(format!(
                    "{} is {}, not a list",
                    parent_text(path, i),
                    node.kind_name()
                )));
            };
            let found = items
                .iter()
                .position(|it| it.text_of(key).as_deref() == Some(want.as_str()));
            let Some(k) = found else {
                let values: Vec<String> = items.iter().filter_map(|it| it.text_of(key)).collect();
                let hint = super::closest_hint(want, values.iter().map(String::as_str));
                return Err(nothing(format!("no item with {key}={want}{hint}")));
            };
            if last && null {
                items.remove(k);
                Ok(())
            } else if last {
                items[k] = value;
                Ok(())
            } else {
                set(&mut items[k], path, i + 1, value)
            }
        }
    }
}

/// How messages name the value a step applies to.
fn parent_text(path: &[Step<'_>], i: usize) -> String {
    if i == 0 {
        "the object".to_string()
    } else {
        path_text(&path[..i])
    }
}
