//! kubectl's JSONPath templates (`-o jsonpath=…`, `-o custom-columns=…`, `--sort-by`): a
//! subset of client-go's `util/jsonpath`, parsed and evaluated over the kubectl-like JSON
//! objects of `objects.rs` with the same semantics (results as lists, a missing key yields
//! nothing, `{range}`…`{end}`, filters). What is outside the subset is an error naming the
//! construct, never a guess (docs/kubectl.md lists the subset).

use serde_json::Value;

/// A parsed template: text and actions in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    /// Text outside braces, or a quoted string inside them (`{"\n"}`).
    Text(String),
    /// `{PATH}`: its results, separated by spaces.
    Path(Path),
    /// `{range PATH}` … `{end}`: the inner parts once per result, that result being `@`.
    Range(Path, Vec<Part>),
}

/// A path: steps from the current object (`$` and `@` both name it, as in client-go, where
/// inside a range `$` is the range's item).
#[derive(Clone, Debug, PartialEq)]
struct Path(Vec<Step>);

#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// `.name` or `['name']`.
    Field(String),
    /// `.*` or `[*]`: every element or every value.
    Wildcard,
    /// `..`: the value and everything beneath it (the next step applies to each).
    Recursive,
    /// `[i]`, `[a:b]`, `[a:b:c]` (negative indices count from the end).
    Slice(Option<i64>, Option<i64>, Option<i64>, bool),
    /// `[a,b]`: the results of each alternative.
    Union(Vec<Path>),
    /// `[?(@.x OP y)]` or `[?(@.x)]`.
    Filter(Box<Filter>),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Path,
    /// None: the left side exists.
    op: Option<(Op, Operand)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Literal(Value),
    Path(Path),
}

/// A template that cannot be parsed (exit 2), or one whose evaluation failed (exit 1, as
/// kubectl fails at print time: an index out of range, a filter over a non-list).
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPathError(pub String);

impl std::fmt::Display for JsonPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError(msg.into()))
}

impl Template {
    /// Parses a `-o jsonpath=` template.
    pub fn parse(text: &str) -> Result<Template, JsonPathError> {
        let mut stack: Vec<(Option<Path>, Vec<Part>)> = vec![(None, Vec::new())];
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                push_text(&mut stack, rest);
                break;
            };
            push_text(&mut stack, &rest[..open]);
            let after = &rest[open + 1..];
            let close = action_end(after).ok_or_else(|| {
                JsonPathError(format!("unclosed action in {text:?}: expected '}}'"))
            })?;
            let action = after[..close].trim_matches([' ', '\t']);
            rest = &after[close + 1..];
            if action == "end" {
                if stack.len() == 1 {
                    return err("{end} without {range}: not in range, nothing to end");
                }
                let (path, parts) = stack.pop().expect("a range is open");
                let path = path.expect("a range has its path");
                stack
                    .last_mut()
                    .expect("the template level")
                    .1
                    .push(Part::Range(path, parts));
            } else if let Some(p) = action
                .strip_prefix("range")
                .filter(|p| p.starts_with([' ', '\t']))
            {
                let path = parse_path(p.trim())?;
                stack.push((Some(path), Vec::new()));
            } else if action.starts_with(['"', '\'']) {
                let (s, after) = parse_quoted(action)?;
                if !after.trim().is_empty() {
                    return err(format!(
                        "{{{action}}}: text after a quoted string is not supported: expected one string or one path per {{}}"
                    ));
                }
                stack.last_mut().expect("a level").1.push(Part::Text(s));
            } else {
                let path = parse_path(action)?;
                stack.last_mut().expect("a level").1.push(Part::Path(path));
            }
        }
        if stack.len() > 1 {
            return err("{range} without {end}");
        }
        Ok(Template {
            parts: stack.pop().expect("the template level").1,
        })
    }

    /// kubectl's `RelaxedJSONPathExpression` for `--sort-by` and custom columns: `name.x`,
    /// `.name.x`, `{name.x}` and `{.name.x}` all mean `{.name.x}`.
    pub fn relaxed(text: &str) -> Result<Template, JsonPathError> {
        let inner = match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            Some(t) => t,
            None => text,
        };
        if inner.is_empty() || inner.contains(['{', '}']) {
            return err(format!(
                "{text:?}: unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{{name1.name2}}' or '{{.name1.name2}}'"
            ));
        }
        let inner = inner.strip_prefix('.').unwrap_or(inner);
        Template::parse(&format!("{{.{inner}}}"))
    }

    /// Every result of the template's actions, in order (text parts included), as client-go's
    /// `FindResults` returns them.
    fn results<'v>(
        &self,
        root: &'v Value,
    ) -> Result<Vec<Vec<Result<&'v Value, String>>>, JsonPathError> {
        let mut out = Vec::new();
        collect(&self.parts, root, &mut out)?;
        Ok(out)
    }

    /// The template applied to `root` as `kubectl -o jsonpath` prints it: each action's
    /// results separated by a space, strings as they are, numbers and booleans as text,
    /// objects and lists as compact JSON. No newline is added.
    pub fn render(&self, root: &Value) -> Result<String, JsonPathError> {
        let mut s = String::new();
        for results in self.results(root)? {
            for (i, r) in results.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                match r {
                    Ok(v) => s.push_str(&text_of(v)),
                    Err(t) => s.push_str(t),
                }
            }
        }
        Ok(s)
    }

    /// The values the template's paths find (text parts left out): what `--sort-by` and a
    /// custom column read.
    pub fn values<'v>(&self, root: &'v Value) -> Result<Vec<&'v Value>, JsonPathError> {
        Ok(self
            .results(root)?
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .collect())
    }
}

/// A value as client-go's jsonpath prints it: strings raw, objects and lists as JSON.
pub(super) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(_) | Value::Object(_) => v.to_string(),
    }
}

/// A value as Go's `fmt.Sprint` prints an unstructured value (what custom columns show):
/// `map[k:v …]` with sorted keys, `[a b]`, `<nil>`.
pub(super) fn go_sprint(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(go_sprint).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", go_sprint(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => text_of(other),
    }
}

fn push_text(stack: &mut [(Option<Path>, Vec<Part>)], text: &str) {
    if !text.is_empty() {
        stack
            .last_mut()
            .expect("a level")
            .1
            .push(Part::Text(text.to_string()));
    }
}

/// The offset of the `}` closing an action, skipping quoted strings.
fn action_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '}' => return Some(i),
                _ => {}
            },
        }
    }
    None
}

/// A quoted string at the start of `s` (Go's escapes: `\n`, `\t`, `\\`, `\"`, `\'`, `\uXXXX`),
/// and what follows it.
fn parse_quoted(s: &str) -> Result<(String, &str), JsonPathError> {
    let mut chars = s.char_indices();
    let (_, q) = chars.next().expect("a quote");
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        if c == q {
            return Ok((out, &s[i + c.len_utf8()..]));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else { break };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            '\'' => out.push('\''),
            'u' => {
                let hex: String = (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => return err(format!("{s}: invalid escape \\u{hex}")),
                }
            }
            other => return err(format!("{s}: unsupported escape \\{other}")),
        }
    }
    err(format!("{s}: unterminated quoted string"))
}

/// Whether `c` ends a field name (client-go's `isTerminator`).
fn terminator(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}' | ' ' | '\t' | '\r' | '\n'
    )
}

fn parse_path(text: &str) -> Result<Path, JsonPathError> {
    let unsupported = |what: &str| {
        JsonPathError(format!(
            "{text:?}: {what} is not supported (docs/kubectl.md lists the JSONPath subset)"
        ))
    };
    let mut steps = Vec::new();
    let s: Vec<char> = text.chars().collect();
    let mut i = 0;
    if matches!(s.first(), Some('$' | '@')) {
        i = 1;
    }
    while i < s.len() {
        match s[i] {
            '.' if s.get(i + 1) == Some(&'.') => {
                if matches!(steps.last(), Some(Step::Recursive)) {
                    return err(format!("{text:?}: invalid multiple recursive descent"));
                }
                steps.push(Step::Recursive);
                i += 2;
                let (name, next) = field_name(&s, i);
                if !name.is_empty() {
                    steps.push(if name == "*" {
                        Step::Wildcard
                    } else {
                        Step::Field(name)
                    });
                }
                i = next;
            }
            '.' => {
                let (name, next) = field_name(&s, i + 1);
                if name.is_empty() {
                    // `{.}`: the current object.
                    i = next;
                    continue;
                }
                steps.push(if name == "*" {
                    Step::Wildcard
                } else {
                    Step::Field(name)
                });
                i = next;
            }
            '[' => {
                let close = bracket_end(&s, i).ok_or_else(|| {
                    JsonPathError(format!("{text:?}: unterminated array: expected ']'"))
                })?;
                let inner: String = s[i + 1..close].iter().collect();
                steps.push(parse_bracket(text, &inner)?);
                i = close + 1;
            }
            ' ' | '\t' => i += 1,
            '(' => return Err(unsupported("a function call or expression")),
            c if c.is_alphanumeric() || c == '_' => {
                let name: String = s[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_')
                    .collect();
                return Err(unsupported(&format!(
                    "the word {name:?} (client-go knows only range and end; a field starts with '.')"
                )));
            }
            c => return Err(unsupported(&format!("the character {c:?}"))),
        }
    }
    Ok(Path(steps))
}

/// A field name from `s[i..]` up to a terminator (`\` escapes the next character, so
/// `labels.app\.kubernetes\.io/name` names one key), and where it ends.
fn field_name(s: &[char], mut i: usize) -> (String, usize) {
    let mut name = String::new();
    while i < s.len() {
        let c = s[i];
        if c == '\\' && i + 1 < s.len() {
            name.push(s[i + 1]);
            i += 2;
            continue;
        }
        if terminator(c) {
            break;
        }
        name.push(c);
        i += 1;
    }
    (name, i)
}

/// The `]` closing the bracket at `s[open]`, skipping quotes and a filter's parentheses.
fn bracket_end(s: &[char], open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let mut i = open + 1;
    while i < s.len() {
        let c = s[i];
        match quote {
            Some(q) => {
                if c == '\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' => depth += 1,
                ')' => depth -= 1,
                ']' if depth <= 0 => return Some(i),
                _ => {}
            },
        }
        i += 1;
    }
    None
}

fn parse_bracket(text: &str, inner: &str) -> Result<Step, JsonPathError> {
    let inner = inner.trim();
    if let Some(f) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        return parse_filter(text, f);
    }
    if inner.starts_with('?') {
        return err(format!(
            "{text:?}: a filter is written [?(@.field==\"value\")]"
        ));
    }
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if inner.starts_with(['\'', '"']) {
        let (key, after) = parse_quoted(inner)?;
        if after.trim().is_empty() {
            return Ok(Step::Field(key));
        }
    }
    if inner.contains(',') {
        let alternatives = split_outside_quotes(inner, ',')
            .into_iter()
            .map(|a| parse_path(&format!("[{}]", a.trim())))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Step::Union(alternatives));
    }
    // [i], [a:b], [a:b:c]
    let parts: Vec<&str> = inner.split(':').collect();
    if parts.len() > 3 {
        return err(format!("{text:?}: invalid array index [{inner}]"));
    }
    let num = |p: &str| -> Result<Option<i64>, JsonPathError> {
        let p = p.trim();
        if p.is_empty() {
            return Ok(None);
        }
        p.parse::<i64>()
            .map(Some)
            .map_err(|_| JsonPathError(format!("{text:?}: invalid array index [{inner}]")))
    };
    let start = num(parts[0])?;
    let end = parts.get(1).map(|p| num(p)).transpose()?.flatten();
    let step = parts.get(2).map(|p| num(p)).transpose()?.flatten();
    Ok(Step::Slice(start, end, step, parts.len() == 1))
}

fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == sep => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            None => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_filter(text: &str, f: &str) -> Result<Step, JsonPathError> {
    if f.contains("&&") || f.contains("||") {
        return err(format!(
            "{text:?}: && and || in a filter are not supported (client-go compares one field per filter)"
        ));
    }
    if f.contains("=~") {
        return err(format!(
            "{text:?}: =~ (regular expressions) in a filter is not supported (client-go has none)"
        ));
    }
    // client-go's split: the left side up to the first operator character.
    let Some(at) = f.find(['!', '<', '>', '=']) else {
        return Ok(Step::Filter(Box::new(Filter {
            left: parse_path(f.trim())?,
            op: None,
        })));
    };
    let left = parse_path(f[..at].trim())?;
    let rest = &f[at..];
    let op_len = rest
        .chars()
        .take_while(|c| matches!(c, '!' | '<' | '>' | '='))
        .count();
    let op = match &rest[..op_len] {
        "==" => Op::Eq,
        "!=" => Op::Ne,
        "<" => Op::Lt,
        ">" => Op::Gt,
        "<=" => Op::Le,
        ">=" => Op::Ge,
        other => {
            return err(format!(
                "{text:?}: unrecognized filter operator {other:?}: expected ==, !=, <, >, <= or >="
            ));
        }
    };
    let right = rest[op_len..].trim();
    let operand = if right.starts_with(['"', '\'']) {
        let (s, after) = parse_quoted(right)?;
        if !after.trim().is_empty() {
            return err(format!("{text:?}: unexpected {after:?} after {right:?}"));
        }
        Operand::Literal(Value::String(s))
    } else if right == "true" || right == "false" {
        Operand::Literal(Value::Bool(right == "true"))
    } else if right.starts_with(['@', '$', '.']) {
        Operand::Path(parse_path(right)?)
    } else if let Ok(n) = right.parse::<i64>() {
        Operand::Literal(Value::from(n))
    } else if let Some(n) = right
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
    {
        Operand::Literal(Value::Number(n))
    } else {
        return err(format!(
            "{text:?}: the filter's right side {right:?}: expected a quoted string, a number, true, false or a path"
        ));
    };
    Ok(Step::Filter(Box::new(Filter {
        left,
        op: Some((op, operand)),
    })))
}

fn collect<'v>(
    parts: &[Part],
    cur: &'v Value,
    out: &mut Vec<Vec<Result<&'v Value, String>>>,
) -> Result<(), JsonPathError> {
    for part in parts {
        match part {
            Part::Text(t) => out.push(vec![Err(t.clone())]),
            Part::Path(p) => out.push(eval(p, cur)?.into_iter().map(Ok).collect()),
            Part::Range(p, inner) => {
                for item in eval(p, cur)? {
                    collect(inner, item, out)?;
                }
            }
        }
    }
    Ok(())
}

fn eval<'v>(path: &Path, root: &'v Value) -> Result<Vec<&'v Value>, JsonPathError> {
    let mut cur = vec![root];
    for step in &path.0 {
        cur = apply(step, cur)?;
    }
    Ok(cur)
}

fn apply<'v>(step: &Step, input: Vec<&'v Value>) -> Result<Vec<&'v Value>, JsonPathError> {
    let mut out = Vec::new();
    match step {
        Step::Field(name) => {
            for v in input {
                if let Some(x) = v.as_object().and_then(|m| m.get(name)) {
                    out.push(x);
                }
            }
        }
        Step::Wildcard => {
            for v in input {
                match v {
                    Value::Array(a) => out.extend(a.iter()),
                    Value::Object(m) => out.extend(m.values()),
                    _ => {}
                }
            }
        }
        Step::Recursive => {
            fn walk<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
                out.push(v);
                match v {
                    Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                    Value::Object(m) => m.values().for_each(|x| walk(x, out)),
                    _ => {}
                }
            }
            for v in input {
                walk(v, &mut out);
            }
        }
        Step::Slice(start, end, step, single) => {
            for v in input {
                let Value::Array(a) = v else {
                    if v.is_null() {
                        continue;
                    }
                    return err(format!("{} is not array or slice", type_name(v)));
                };
                let len = a.len() as i64;
                let mut s = start.unwrap_or(0);
                if s < 0 {
                    s += len;
                }
                let mut e = match (end, single) {
                    (_, true) => s + 1,
                    (Some(e), _) => *e,
                    (None, _) => len,
                };
                if e < 0 {
                    e += len;
                }
                if e == s {
                    continue;
                }
                if s < 0 || s >= len {
                    return err(format!(
                        "array index out of bounds: index {s}, length {len}"
                    ));
                }
                if e < 0 || e > len {
                    return err(format!(
                        "array index out of bounds: index {}, length {len}",
                        e - 1
                    ));
                }
                if s > e {
                    return err(format!(
                        "starting index {s} is greater than ending index {e}"
                    ));
                }
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return err("step must be > 0");
                }
                out.extend(a[s as usize..e as usize].iter().step_by(step as usize));
            }
        }
        Step::Union(alternatives) => {
            for alt in alternatives {
                for v in &input {
                    out.extend(eval(alt, v)?);
                }
            }
        }
        Step::Filter(f) => {
            for v in input {
                let Value::Array(a) = v else {
                    return err(format!(
                        "{} is not array or slice and cannot be filtered",
                        type_name(v)
                    ));
                };
                for item in a {
                    if passes(f, item)? {
                        out.push(item);
                    }
                }
            }
        }
    }
    Ok(out)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

fn passes(f: &Filter, item: &Value) -> Result<bool, JsonPathError> {
    let lefts = eval(&f.left, item)?;
    let Some((op, operand)) = &f.op else {
        return Ok(!lefts.is_empty());
    };
    let left = match lefts.as_slice() {
        [] => return Ok(false),
        [one] => *one,
        _ => return err("can only compare one element at a time"),
    };
    let right_owned;
    let right = match operand {
        Operand::Literal(v) => v,
        Operand::Path(p) => {
            let rights = eval(p, item)?;
            match rights.as_slice() {
                [] => return Ok(false),
                [one] => {
                    right_owned = (*one).clone();
                    &right_owned
                }
                _ => return err("can only compare one element at a time"),
            }
        }
    };
    let ord = match (left, right) {
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(a, b)| a.partial_cmp(&b)),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) if matches!(op, Op::Eq | Op::Ne) => Some(a.cmp(b)),
        _ => None,
    };
    let Some(ord) = ord else {
        return match op {
            // Values of different types are not equal (client-go errs: "incompatible types
            // for comparison"; a kubectl user's filter over a list of mixed objects then
            // fails as a whole, kueuesim's skips the item).
            Op::Eq => Ok(false),
            Op::Ne => Ok(true),
            _ => err(format!(
                "incompatible types for comparison: {} and {}",
                type_name(left),
                type_name(right)
            )),
        };
    };
    use std::cmp::Ordering::*;
    Ok(match op {
        Op::Eq => ord == Equal,
        Op::Ne => ord != Equal,
        Op::Lt => ord == Less,
        Op::Gt => ord == Greater,
        Op::Le => ord != Greater,
        Op::Ge => ord != Less,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> Value {
        json!({"kind": "List", "items": [
            {"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
             "status": {"conditions": [{"type": "Admitted", "status": "True"}, {"type": "Finished", "status": "False"}]},
             "spec": {"count": 2}},
            {"metadata": {"name": "b"},
             "status": {"conditions": [{"type": "QuotaReserved", "status": "False"}]},
             "spec": {"count": 5}}
        ]})
    }

    fn render(t: &str) -> String {
        Template::parse(t)
            .expect("parses")
            .render(&list())
            .expect("renders")
    }

    #[test]
    fn paths_wildcards_and_ranges_as_kubectl_prints_them() {
        assert_eq!(render("{.items[*].metadata.name}"), "a b");
        assert_eq!(render("{.items[0].metadata.name}"), "a");
        assert_eq!(render("{.items[-1:].metadata.name}"), "b");
        assert_eq!(render("{.items[-1].metadata.name}"), "b");
        assert_eq!(
            render("{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.count}{\"\\n\"}{end}"),
            "a\t2\nb\t5\n"
        );
        assert_eq!(render("names: {$.items[*].metadata.name}!"), "names: a b!");
        assert_eq!(render("{.items[0].spec}"), "{\"count\":2}");
        assert_eq!(render("{.items[*].missing}"), "");
        assert_eq!(render("{..name}"), "a b");
        assert_eq!(
            render("{.items[0].metadata.labels.app\\.kubernetes\\.io/name}"),
            "x"
        );
        assert_eq!(
            render("{.items[0].metadata.labels['app.kubernetes.io/name']}"),
            "x"
        );
        assert_eq!(render("{.items[0,1].spec.count}"), "2 5");
    }

    #[test]
    fn filters_compare_one_field() {
        assert_eq!(
            render("{.items[*].status.conditions[?(@.type==\"Admitted\")].status}"),
            "True"
        );
        assert_eq!(
            render("{.items[*].status.conditions[?(@.type=='Admitted')].status}"),
            "True"
        );
        assert_eq!(render("{.items[?(@.spec.count>3)].metadata.name}"), "b");
        assert_eq!(render("{.items[?(@.metadata.labels)].metadata.name}"), "a");
        assert_eq!(render("{.items[?(@.spec.count != 2)].metadata.name}"), "b");
    }

    #[test]
    fn unsupported_constructs_are_named() {
        for (t, says) in [
            ("{.items[?(@.a==1 && @.b==2)]}", "&&"),
            ("{.items[?(@.a=~\"x\")]}", "=~"),
            ("{length(.items)}", "\"length\""),
            ("{.items", "unclosed action"),
            ("{range .items[*]}{.a}", "without {end}"),
            ("{end}", "without {range}"),
            ("{.items[x]}", "invalid array index"),
        ] {
            let e = Template::parse(t).expect_err(t);
            assert!(e.0.contains(says), "{t}: {}", e.0);
        }
        let e = Template::parse("{.items[5]}")
            .expect("parses")
            .render(&list())
            .expect_err("out of range");
        assert_eq!(e.0, "array index out of bounds: index 5, length 2");
    }

    #[test]
    fn relaxed_paths_for_sort_by_and_columns() {
        for t in [
            ".metadata.name",
            "metadata.name",
            "{.metadata.name}",
            "{metadata.name}",
        ] {
            let tpl = Template::relaxed(t).expect(t);
            assert_eq!(
                tpl.render(&list()["items"][0]).expect("renders"),
                "a",
                "{t}"
            );
        }
        assert!(Template::relaxed("{a}{b}").is_err());
    }

    #[test]
    fn go_sprint_prints_maps_and_lists_as_fmt_does() {
        assert_eq!(
            go_sprint(&json!({"b": 1, "a": ["x", "y"]})),
            "map[a:[x y] b:1]"
        );
        assert_eq!(go_sprint(&json!(null)), "<nil>");
    }
}
