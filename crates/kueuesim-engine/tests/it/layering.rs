//! The engine's module layering, read from its sources: placement's scheduler folders depend
//! on the shared bookkeeping below them and never on each other, the shared bookkeeping on no
//! scheduler, and `outcome` and `hooks` only on what lies below them (docs/architecture.md,
//! the Architecture Invariants of `crates/kueuesim-engine`).
//!
//! Every `crate::` and `super::` path of a file's own code (comments and its `mod tests`
//! left out: a unit test may compare a layer with the one above it) is resolved to the module
//! it names, `use` groups expanded; `pub use` and `mod` lines of `placement/mod.rs` are the
//! tree's wiring (re-exports of old paths), not dependencies.

use std::path::{Path, PathBuf};

/// The schedulers with a folder under `placement/`.
const SCHEDULERS: [&str; 3] = ["kube", "volcano", "kai"];

/// The engine's modules above the placement code, which no file of `placement/` may name.
const ABOVE_PLACEMENT: [&str; 7] = [
    "sim",
    "admission",
    "preemption",
    "queues",
    "tas",
    "outcome",
    "admitted",
];

/// One source file: its module path (`["placement", "volcano", "explain"]`) and its code.
struct Source {
    path: PathBuf,
    module: Vec<String>,
    code: String,
}

fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir") {
            let p = entry.expect("dir entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(&root).unwrap().with_extension("");
                let mut module: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                let text = std::fs::read_to_string(&p).expect("source");
                out.push(Source {
                    code: own_code(&text),
                    path: p,
                    module,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// `text` without its comments and its `#[cfg(test)] mod tests` (the last item of a file).
fn own_code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string literal (a URL) cuts the line short: harmless here,
            // no path is written after one.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `use` tree names, groups expanded: `a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d`, `a::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or("").to_string()];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            expand_use(p)
                .into_iter()
                .map(move |q| format!("{prefix}{q}"))
        })
        .collect()
}

/// Every `crate::`/`super::`/`self::` path of `code`, as written.
fn paths(code: &str, wiring_exempt: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    // `use` statements, groups expanded; then the paths written in the code itself.
    let mut body = String::new();
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let stmt_start = before.rfind(['\n', '{', ';']).map_or(0, |k| k + 1);
        let lead = before[stmt_start..].trim();
        let is_use = lead.is_empty() || lead == "pub" || lead.starts_with("pub(");
        let Some(end) = rest[i..].find(';') else {
            break;
        };
        if is_use {
            body.push_str(&rest[..stmt_start]);
            let wiring = lead.starts_with("pub");
            if !(wiring_exempt && wiring) {
                let tree = &rest[i + 4..i + end];
                out.extend(
                    expand_use(tree)
                        .into_iter()
                        .filter(|p| p.starts_with("crate::") || p.starts_with("super::")),
                );
            }
        } else {
            body.push_str(&rest[..i + end + 1]);
        }
        rest = &rest[i + end + 1..];
    }
    body.push_str(rest);
    let bytes = body.as_bytes();
    for prefix in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(k) = body[from..].find(prefix) {
            let at = from + k;
            from = at + prefix.len();
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
            {
                continue;
            }
            let len = body[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(body.len() - at);
            out.push(body[at..at + len].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path written in `module` names, as absolute segments.
fn resolve(module: &[String], path: &str) -> Vec<String> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut abs: Vec<String> = match segs.peek() {
        Some(&"crate") => {
            segs.next();
            Vec::new()
        }
        _ => module.to_vec(),
    };
    for s in segs {
        match s {
            "super" => {
                abs.pop();
            }
            "self" => {}
            s => abs.push(s.to_string()),
        }
    }
    abs
}

/// Where a module sits: a scheduler folder, the shared placement code, or a top-level module.
#[derive(Debug, PartialEq, Eq)]
enum Layer<'a> {
    Scheduler(&'a str),
    Shared,
    Top(&'a str),
}

fn layer(abs: &[String]) -> Layer<'_> {
    match abs {
        [p, s, ..] if p == "placement" && SCHEDULERS.contains(&s.as_str()) => Layer::Scheduler(s),
        [p, ..] if p == "placement" => Layer::Shared,
        [top, ..] => Layer::Top(top),
        [] => Layer::Top(""),
    }
}

/// Every (file, path it names, where that path leads) of the engine.
fn dependencies() -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for src in sources() {
        let wiring_exempt = src.module == ["placement"];
        for p in paths(&src.code, wiring_exempt) {
            let target = resolve(&src.module, &p);
            out.push((src.module.join("::"), p, target));
        }
    }
    out
}

#[test]
fn placement_layers_depend_only_downward() {
    let mut broken = Vec::new();
    let mut seen = 0;
    for (from, path, target) in dependencies() {
        let from_segs: Vec<String> = from.split("::").map(String::from).collect();
        let (here, there) = (layer(&from_segs), layer(&target));
        let rule = match (&here, &there) {
            (Layer::Scheduler(a), Layer::Scheduler(b)) if a != b => {
                Some("a scheduler folder names another scheduler's")
            }
            (Layer::Shared, Layer::Scheduler(_)) => {
                Some("the shared placement code names a scheduler folder")
            }
            (Layer::Shared, Layer::Top(t)) if ABOVE_PLACEMENT.contains(t) || *t == "hooks" => {
                Some("the shared placement code names a module above it")
            }
            (Layer::Scheduler(_), Layer::Top(t)) if ABOVE_PLACEMENT.contains(t) => {
                Some("a scheduler folder names a module above placement")
            }
            (Layer::Top(f), Layer::Scheduler(_)) if *f == "outcome" || *f == "hooks" => {
                Some("outcome/hooks name a scheduler folder")
            }
            (Layer::Top(f), Layer::Top(t))
                if (*f == "outcome" || *f == "hooks")
                    && matches!(*t, "sim" | "admission" | "hooks" | "outcome")
                    && f != t =>
            {
                Some("outcome/hooks name a module above them")
            }
            _ => None,
        };
        if matches!(here, Layer::Scheduler(_) | Layer::Shared) {
            seen += 1;
        }
        if let Some(rule) = rule {
            broken.push(format!("{from}: {path} ({rule})"));
        }
    }
    // The reader found the placement code's paths (a reader that found nothing would pass).
    assert!(seen > 100, "only {seen} paths read under placement/");
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_reader_resolves_use_groups_and_relative_paths() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let code = "use super::{Cluster, kube::{a, b}};\nuse crate::hooks::Hooks;\nfn f() { super::super::outcome::x(); crate::placement::kai::place(); }\n";
    let got: Vec<Vec<String>> = paths(code, false)
        .iter()
        .map(|p| resolve(&m("placement::volcano::explain"), p))
        .collect();
    assert_eq!(
        got,
        vec![
            m("placement::volcano::Cluster"),
            m("placement::volcano::kube::a"),
            m("placement::volcano::kube::b"),
            m("hooks::Hooks"),
            m("placement::kai::place"),
            m("placement::outcome::x"),
        ]
    );
}
