//! The `Sweep` object (`kueuesim.io/v1alpha1`): read with positions, checked, and expanded
//! into its variants (a grid of parameters, or an explicit list), each a set of `--set`
//! arguments and patch files made from the templates, plus the seeds, figures and search.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use kueuesim_model::SimDuration;
use kueuesim_report::figures::renamed;
use kueuesim_scenario::source::yaml_error;
use kueuesim_scenario::{Pos, ScenarioError, SourceFile};

use crate::replicates::parse_seeds;

type S = Spanned<String>;

/// A string, or a list of strings each with its position.
#[derive(Debug)]
enum OneOrMany {
    One(String),
    Many(Vec<S>),
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element::<S>()? {
                    items.push(s);
                }
                Ok(OneOrMany::Many(items))
            }
        }
        d.deserialize_any(V)
    }
}

/// A parameter value: a number, a string or a boolean (the text substituted for `{{value}}`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Text(s) => f.write_str(s),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar value (a number, a string, true or false)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                i64::try_from(v)
                    .map(Scalar::Int)
                    .map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `spec.seeds`: `1..10`, `1,5,9`, one integer, or a list of integers.
#[derive(Debug)]
enum SeedsValue {
    Text(String),
    List(Vec<u64>),
}

impl<'de> Deserialize<'de> for SeedsValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SeedsValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("seeds: A..B, a list 1,5,9 or a list of non-negative integers")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SeedsValue, E> {
                Ok(SeedsValue::List(vec![v]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SeedsValue, E> {
                Ok(SeedsValue::Text(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SeedsValue, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element::<u64>()? {
                    items.push(s);
                }
                Ok(SeedsValue::List(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Doc {
    api_version: Option<S>,
    kind: Option<S>,
    #[serde(default)]
    metadata: Meta,
    spec: Option<WireSpec>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Meta {
    name: Option<S>,
    labels: std::collections::BTreeMap<String, String>,
    annotations: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireSpec {
    base: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    parameters: Option<Spanned<Vec<WireParam>>>,
    #[serde(default)]
    variants: Option<Spanned<Vec<WireVariant>>>,
    seeds: Option<Spanned<SeedsValue>>,
    #[serde(default)]
    figures: Vec<S>,
    until: Option<S>,
    search: Option<Spanned<WireSearch>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireParam {
    name: S,
    values: Option<Spanned<Vec<Spanned<Scalar>>>>,
    set: Option<Spanned<OneOrMany>>,
    patch: Option<S>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireVariant {
    name: S,
    set: Option<Spanned<OneOrMany>>,
    patch: Option<S>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireSearch {
    parameter: S,
    min: Spanned<i64>,
    max: Spanned<i64>,
    step: Option<Spanned<i64>>,
    target: WireTarget,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireTarget {
    figure: S,
    at_most: Option<Spanned<f64>>,
    at_least: Option<Spanned<f64>>,
    over: Option<S>,
}

/// Where a template was written in the Sweep file, and what it belongs to.
#[derive(Clone, Debug)]
pub(crate) struct TemplateAt {
    /// 1-based line and column of the template's first character.
    pub(crate) line: u64,
    pub(crate) column: u64,
    /// A block scalar (`|`): its content lines start at `line`, indented by `column - 1`.
    pub(crate) block: bool,
    /// `parameter quota` or `variant big`.
    pub(crate) owner: String,
}

/// A `--set` or patch template.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    pub(crate) text: String,
    pub(crate) at: TemplateAt,
}

/// One parameter of a grid or a search.
#[derive(Clone, Debug)]
pub(crate) struct Parameter {
    pub(crate) name: String,
    pub(crate) values: Vec<Scalar>,
    pub(crate) sets: Vec<Template>,
    pub(crate) patch: Option<Template>,
}

/// One variant to run: its name, its parameter values, and the templates it applies with the
/// value each substitutes.
#[derive(Clone, Debug)]
pub(crate) struct Variant {
    pub(crate) name: String,
    /// One per parameter of the sweep (empty for an explicit variant list).
    pub(crate) values: Vec<Scalar>,
    /// The templates and the value each is filled with (None: no `{{value}}`).
    pub(crate) applies: Vec<(Template, Option<Scalar>, bool)>,
}

/// `spec.search`.
#[derive(Clone, Debug)]
pub(crate) struct Search {
    /// Index into `Sweep::parameters`.
    pub(crate) parameter: usize,
    pub(crate) min: i64,
    pub(crate) max: i64,
    pub(crate) step: i64,
    pub(crate) figure: String,
    pub(crate) figure_pos: Pos,
    /// (bound, true for atMost / false for atLeast)
    pub(crate) bound: f64,
    pub(crate) at_most: bool,
    /// true: the mean across seeds must meet the bound; false: every seed must.
    pub(crate) over_mean: bool,
}

/// A checked Sweep.
#[derive(Debug)]
pub(crate) struct Sweep {
    pub(crate) file: SourceFile,
    pub(crate) name: String,
    pub(crate) base: Vec<PathBuf>,
    pub(crate) parameters: Vec<Parameter>,
    /// Grid or explicit variants (empty with a search: its variants are made as it goes).
    pub(crate) variants: Vec<Variant>,
    pub(crate) seeds: Vec<u64>,
    /// Figures to keep (empty: all); `*` matches any run of characters.
    pub(crate) figures: Vec<String>,
    pub(crate) until: Option<SimDuration>,
    pub(crate) search: Option<Search>,
}

fn pos(file: &SourceFile, line: u64, column: u64) -> Pos {
    Pos {
        file: file.name.clone(),
        line,
        column,
    }
}

fn err<T>(file: &SourceFile, s: &Spanned<T>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::at(
        pos(file, s.referenced.line(), s.referenced.column()),
        message,
        &file.text,
    )
}

/// Reads and checks a Sweep file.
pub(crate) fn read(path: &Path) -> Result<Sweep, ScenarioError> {
    let text = kueuesim_scenario::source::read_text(path, &path.display().to_string())?;
    let file = SourceFile {
        name: path.display().to_string(),
        text,
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = path
        .file_stem()
        .map_or("sweep".to_string(), |s| s.to_string_lossy().into_owned());
    parse(file, &dir, &stem)
}

/// Parses a Sweep document; `dir` is where base paths are relative to.
pub(crate) fn parse(file: SourceFile, dir: &Path, stem: &str) -> Result<Sweep, ScenarioError> {
    let doc: Doc =
        kueuesim_scenario::source::from_yaml(&file.text).map_err(|e| yaml_error(&file, 0, &e))?;
    let at1 = |m: &str| ScenarioError::at(pos(&file, 1, 1), m.to_string(), &file.text);
    match &doc.api_version {
        Some(a) if a.value == "kueuesim.io/v1alpha1" => {}
        Some(a) => {
            return Err(err(
                &file,
                a,
                format!("apiVersion {:?}: expected kueuesim.io/v1alpha1", a.value),
            ));
        }
        None => {
            return Err(at1(
                "no apiVersion: expected apiVersion: kueuesim.io/v1alpha1",
            ));
        }
    }
    match &doc.kind {
        Some(k) if k.value == "Sweep" => {}
        Some(k) => {
            return Err(err(
                &file,
                k,
                format!("kind {:?}: expected kind: Sweep", k.value),
            ));
        }
        None => return Err(at1("no kind: expected kind: Sweep")),
    }
    // The name becomes the default `--out` directory (`sweep-NAME`) and the names of the
    // emitted Job, ConfigMap and claim: a DNS-1123 label short enough for all of them, as
    // the API server would require of those objects (so no '/', "..", newline or quote).
    let name = match &doc.metadata.name {
        Some(n) => {
            if let Some(why) = super::names::label_error(&n.value, super::names::SWEEP_NAME_MAX) {
                return Err(err(&file, n, name_expected(&n.value, &why)));
            }
            n.value.clone()
        }
        None => {
            if let Some(why) = super::names::label_error(stem, super::names::SWEEP_NAME_MAX) {
                return Err(at1(&format!(
                    "no metadata.name, and the file's name {stem:?} cannot stand for it: {}",
                    name_expected(stem, &why)
                )));
            }
            stem.to_string()
        }
    };
    let Some(spec) = doc.spec else {
        return Err(at1(
            "no spec: expected spec.base and spec.parameters or spec.variants",
        ));
    };
    let base = match &spec.base {
        None => return Err(at1("no spec.base: expected the base scenario's paths")),
        Some(b) => match &b.value {
            OneOrMany::One(p) => vec![dir.join(p)],
            OneOrMany::Many(ps) if ps.is_empty() => {
                return Err(err(
                    &file,
                    b,
                    "spec.base is empty: expected the base scenario's paths",
                ));
            }
            OneOrMany::Many(ps) => ps.iter().map(|p| dir.join(&p.value)).collect(),
        },
    };
    let templates = |set: &Option<Spanned<OneOrMany>>,
                     patch: &Option<S>,
                     owner: &str|
     -> (Vec<Template>, Option<Template>) {
        let mut sets = Vec::new();
        if let Some(s) = set {
            match &s.value {
                OneOrMany::One(t) => sets.push(template(&file, t, &s.referenced, owner)),
                OneOrMany::Many(items) => {
                    for t in items {
                        sets.push(template(&file, &t.value, &t.referenced, owner));
                    }
                }
            }
        }
        let patch = patch
            .as_ref()
            .map(|p| template(&file, &p.value, &p.referenced, owner));
        (sets, patch)
    };
    let mut parameters = Vec::new();
    for p in spec.parameters.iter().flat_map(|p| &p.value) {
        if parameters
            .iter()
            .any(|q: &Parameter| q.name == p.name.value)
        {
            return Err(err(
                &file,
                &p.name,
                format!("parameter {:?} is given twice", p.name.value),
            ));
        }
        if p.name.value.is_empty() || p.name.value.contains([',', '=', '@', '/']) {
            return Err(err(
                &file,
                &p.name,
                format!(
                    "parameter name {:?}: expected a non-empty name without , = @ /",
                    p.name.value
                ),
            ));
        }
        let owner = format!("parameter {}", p.name.value);
        let (sets, patch) = templates(&p.set, &p.patch, &owner);
        if sets.is_empty() && patch.is_none() {
            return Err(err(
                &file,
                &p.name,
                format!(
                    "parameter {:?} applies nothing: expected set (one or more --set templates with {{{{value}}}}) or patch",
                    p.name.value
                ),
            ));
        }
        if !sets.iter().chain(&patch).any(|t| has_placeholder(&t.text)) {
            return Err(err(
                &file,
                &p.name,
                format!(
                    "no template of parameter {:?} has {{{{value}}}}: expected the place its values go",
                    p.name.value
                ),
            ));
        }
        let mut values = Vec::new();
        if let Some(vs) = &p.values {
            if vs.value.is_empty() && spec.search.is_none() {
                return Err(err(
                    &file,
                    vs,
                    format!(
                        "parameter {:?} has no values: the grid is empty",
                        p.name.value
                    ),
                ));
            }
            for v in &vs.value {
                if values.contains(&v.value) {
                    return Err(err(&file, v, format!("value {} is given twice", v.value)));
                }
                values.push(v.value.clone());
            }
        }
        parameters.push(Parameter {
            name: p.name.value.clone(),
            values,
            sets,
            patch,
        });
    }
    let mut variants = Vec::new();
    if let Some(vs) = &spec.variants {
        if spec
            .parameters
            .as_ref()
            .is_some_and(|p| !p.value.is_empty())
        {
            return Err(err(
                &file,
                vs,
                "spec.variants with spec.parameters: expected one of them (a grid, or a list of variants)",
            ));
        }
        if vs.value.is_empty() {
            return Err(err(&file, vs, "spec.variants is empty: expected variants"));
        }
        for v in &vs.value {
            if v.name.value.is_empty() || v.name.value.contains('@') {
                return Err(err(
                    &file,
                    &v.name,
                    "variant name: expected a non-empty name without @",
                ));
            }
            if variants.iter().any(|w: &Variant| w.name == v.name.value) {
                return Err(err(
                    &file,
                    &v.name,
                    format!("variant {:?} is given twice", v.name.value),
                ));
            }
            let (sets, patch) = templates(&v.set, &v.patch, &format!("variant {}", v.name.value));
            let applies = sets
                .into_iter()
                .map(|t| (t, None, false))
                .chain(patch.map(|t| (t, None, true)))
                .collect();
            variants.push(Variant {
                name: v.name.value.clone(),
                values: Vec::new(),
                applies,
            });
        }
    }
    let search = match &spec.search {
        None => None,
        Some(s) => Some(search(&file, s, &parameters)?),
    };
    if search.is_none() && spec.variants.is_none() {
        if parameters.is_empty() {
            return Err(match &spec.parameters {
                Some(p) => err(&file, p, "spec.parameters is empty: the grid is empty"),
                None => at1("no spec.parameters, spec.variants or spec.search: nothing to sweep"),
            });
        }
        variants = grid(&parameters);
    }
    let seeds = match &spec.seeds {
        None => vec![42],
        Some(s) => match &s.value {
            SeedsValue::Text(t) => {
                parse_seeds(t).map_err(|e| err(&file, s, e.replacen("--seeds", "seeds", 1)))?
            }
            SeedsValue::List(l) if l.is_empty() => {
                return Err(err(&file, s, "seeds is empty: expected at least one seed"));
            }
            SeedsValue::List(l) => {
                let mut seen = std::collections::BTreeSet::new();
                if let Some(d) = l.iter().find(|x| !seen.insert(**x)) {
                    return Err(err(&file, s, format!("seed {d} is given twice")));
                }
                l.clone()
            }
        },
    };
    let until = match &spec.until {
        None => None,
        Some(u) => {
            Some(crate::parse_offset(&u.value).map_err(|e| err(&file, u, format!("until: {e}")))?)
        }
    };
    // A figure renamed so that its name says which workloads it counts is an error, not a
    // column that every run leaves empty.
    for f in &spec.figures {
        if let Some(instead) = renamed(&f.value) {
            return Err(err(
                &file,
                f,
                format!("figures: {:?} was {instead}", f.value),
            ));
        }
    }
    let figures = spec.figures.iter().map(|f| f.value.clone()).collect();
    Ok(Sweep {
        file,
        name,
        base,
        parameters,
        variants,
        seeds,
        figures,
        until,
        search,
    })
}

/// What a Sweep name must be, for `name` that is not one because of `why`.
fn name_expected(name: &str, why: &str) -> String {
    format!(
        "metadata.name {name:?}: {why}: expected a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit) of at most {} characters, so that {}NAME{} stays within Kubernetes' {}",
        super::names::SWEEP_NAME_MAX,
        super::names::PREFIX,
        super::names::RESULTS_SUFFIX,
        super::names::LABEL_MAX,
    )
}

fn search(
    file: &SourceFile,
    s: &Spanned<WireSearch>,
    parameters: &[Parameter],
) -> Result<Search, ScenarioError> {
    let w = &s.value;
    let Some(index) = parameters.iter().position(|p| p.name == w.parameter.value) else {
        let names: Vec<&str> = parameters.iter().map(|p| p.name.as_str()).collect();
        return Err(err(
            file,
            &w.parameter,
            format!(
                "search.parameter {:?} is not among spec.parameters ({})",
                w.parameter.value,
                names.join(", ")
            ),
        ));
    };
    for (i, p) in parameters.iter().enumerate() {
        if i != index && p.values.len() != 1 {
            return Err(err(
                file,
                &w.parameter,
                format!(
                    "parameter {:?} has {} values: with a search, every other parameter needs exactly one",
                    p.name,
                    p.values.len()
                ),
            ));
        }
    }
    let step = w.step.as_ref().map_or(1, |s| s.value);
    if step <= 0 {
        let at = w.step.as_ref().expect("a non-positive step was written");
        return Err(err(file, at, "search.step must be positive"));
    }
    if w.max.value < w.min.value {
        return Err(err(
            file,
            &w.max,
            format!(
                "search.max {} is below search.min {}",
                w.max.value, w.min.value
            ),
        ));
    }
    let t = &w.target;
    if let Some(instead) = renamed(&t.figure.value) {
        return Err(err(
            file,
            &t.figure,
            format!("search.target.figure {:?} was {instead}", t.figure.value),
        ));
    }
    let (bound, at_most) = match (&t.at_most, &t.at_least) {
        (Some(b), None) => (b.value, true),
        (None, Some(b)) => (b.value, false),
        _ => {
            return Err(err(
                file,
                &t.figure,
                "search.target: expected exactly one of atMost or atLeast",
            ));
        }
    };
    let over_mean = match t.over.as_ref().map(|o| o.value.as_str()) {
        None | Some("mean") => true,
        Some("everySeed") => false,
        Some(o) => {
            return Err(err(
                file,
                t.over.as_ref().expect("written"),
                format!("search.target.over {o:?}: expected mean or everySeed"),
            ));
        }
    };
    Ok(Search {
        parameter: index,
        min: w.min.value,
        max: w.max.value,
        step,
        figure: t.figure.value.clone(),
        figure_pos: pos(
            file,
            t.figure.referenced.line(),
            t.figure.referenced.column(),
        ),
        bound,
        at_most,
        over_mean,
    })
}

fn has_placeholder(t: &str) -> bool {
    t.contains("{{value}}") || t.contains("{{ value }}")
}

/// Where a template scalar's text starts: after a quote, or on the line after a block
/// indicator (`|`, `>`), at the block's indentation.
fn template(file: &SourceFile, text: &str, loc: &serde_saphyr::Location, owner: &str) -> Template {
    let (line, column) = (loc.line(), loc.column());
    let src_line = file.text.lines().nth(line.saturating_sub(1) as usize);
    let rest: String = src_line
        .map(|l| l.chars().skip(column.saturating_sub(1) as usize).collect())
        .unwrap_or_default();
    let at = if rest.starts_with(['|', '>']) {
        let next = file
            .text
            .lines()
            .skip(line as usize)
            .find(|l| !l.trim().is_empty());
        let indent = next.map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
        TemplateAt {
            line: line + 1,
            column: indent as u64 + 1,
            block: true,
            owner: owner.to_string(),
        }
    } else {
        // serde-saphyr places a block scalar at its first content line: its lines all
        // start at that column.
        let quoted = rest.starts_with(['"', '\'']);
        TemplateAt {
            line,
            column: column + u64::from(quoted),
            block: !quoted && text.contains('\n'),
            owner: owner.to_string(),
        }
    };
    Template {
        text: text.to_string(),
        at,
    }
}

/// The cartesian product of the parameters' values, the first parameter varying slowest.
fn grid(parameters: &[Parameter]) -> Vec<Variant> {
    let mut combos: Vec<Vec<Scalar>> = vec![Vec::new()];
    for p in parameters {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(v.clone());
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|values| variant_of(parameters, values))
        .collect()
}

/// The variant of one value per parameter: `quota=192,weight=2`.
pub(crate) fn variant_of(parameters: &[Parameter], values: Vec<Scalar>) -> Variant {
    let name = parameters
        .iter()
        .zip(&values)
        .map(|(p, v)| format!("{}={v}", p.name))
        .collect::<Vec<_>>()
        .join(",");
    let mut applies = Vec::new();
    for (p, v) in parameters.iter().zip(&values) {
        for t in &p.sets {
            applies.push((t.clone(), Some(v.clone()), false));
        }
        if let Some(t) = &p.patch {
            applies.push((t.clone(), Some(v.clone()), true));
        }
    }
    Variant {
        name,
        values,
        applies,
    }
}

/// A template filled with a value, and for each (line, column) of the result, where it was
/// in the template (to point errors back into the Sweep file).
pub(crate) fn fill(template: &str, value: Option<&Scalar>) -> (String, Vec<Vec<(u64, u64)>>) {
    let value = value.map(ToString::to_string).unwrap_or_default();
    let mut out = String::new();
    let mut map: Vec<Vec<(u64, u64)>> = vec![Vec::new()];
    for (li, line) in template.split('\n').enumerate() {
        if li > 0 {
            out.push('\n');
            map.push(Vec::new());
        }
        let cur = map.last_mut().expect("a line");
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let rest: String = chars[i..].iter().take(11).collect();
            let hole = if rest.starts_with("{{value}}") {
                Some(9)
            } else if rest.starts_with("{{ value }}") {
                Some(11)
            } else {
                None
            };
            match hole {
                Some(n) => {
                    for _ in value.chars() {
                        cur.push((li as u64 + 1, i as u64 + 1));
                    }
                    out.push_str(&value);
                    i += n;
                }
                None => {
                    cur.push((li as u64 + 1, i as u64 + 1));
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        // The column just past the line's end.
        cur.push((li as u64 + 1, chars.len() as u64 + 1));
    }
    (out, map)
}

/// The Sweep-file position of (1-based) `line`/`column` of a filled template.
pub(crate) fn origin(
    at: &TemplateAt,
    map: &[Vec<(u64, u64)>],
    line: u64,
    column: u64,
) -> (u64, u64) {
    let row = map
        .get(line.saturating_sub(1) as usize)
        .or(map.last())
        .expect("a line");
    let (tl, tc) = row
        .get(column.saturating_sub(1) as usize)
        .or(row.last())
        .copied()
        .unwrap_or((1, 1));
    if at.block {
        (at.line + tl - 1, at.column + tc - 1)
    } else if tl == 1 {
        (at.line, at.column + tc - 1)
    } else {
        (at.line + tl - 1, tc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Sweep, String> {
        parse(
            SourceFile {
                name: "s.yaml".into(),
                text: text.into(),
            },
            Path::new("dir"),
            "s",
        )
        .map_err(|e| e.to_string())
    }

    const HEAD: &str = "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata: {name: q}\nspec:\n  base: ../platform\n";

    #[test]
    fn grid_is_the_product_in_written_order() {
        let s = parse_text(&format!(
            "{HEAD}  seeds: 1..2\n  parameters:\n  - name: a\n    values: [1, 2]\n    set: 'cq/x:spec.a={{{{value}}}}'\n  - name: b\n    values: [p, q, r]\n    patch: |\n      kind: A\n      b: {{{{value}}}}\n"
        ))
        .unwrap();
        let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a=1,b=p", "a=1,b=q", "a=1,b=r", "a=2,b=p", "a=2,b=q", "a=2,b=r"
            ]
        );
        assert_eq!(s.seeds, [1, 2]);
        assert_eq!(s.base, [Path::new("dir/../platform")]);
        let (t, _, is_patch) = &s.variants[0].applies[1];
        assert!(*is_patch);
        assert_eq!((t.at.line, t.at.column, t.at.block), (14, 7, true));
        let (set, _, _) = &s.variants[0].applies[0];
        assert_eq!((set.at.line, set.at.column), (10, 11));
    }

    #[test]
    fn bad_input_points_at_the_place() {
        for (spec, want) in [
            (
                "  parameters: []\n",
                "s.yaml:6:15: spec.parameters is empty",
            ),
            (
                "  parameters:\n  - name: a\n    values: []\n    set: 'x={{value}}'\n",
                "s.yaml:8:13: parameter \"a\" has no values",
            ),
            (
                "  parameters:\n  - name: a\n    values: [[1]]\n    set: 'x={{value}}'\n",
                "s.yaml:8:14:",
            ),
            (
                "  parameters:\n  - name: a\n    valeus: [1]\n    set: 'x={{value}}'\n",
                "s.yaml:8:5: unknown field `valeus`",
            ),
            (
                "  parameters:\n  - name: a\n    values: [1]\n    set: 'x=1'\n",
                "s.yaml:7:11: no template of parameter \"a\" has {{value}}",
            ),
            ("  variants: []\n", "s.yaml:6:13: spec.variants is empty"),
            (
                "  seeds: 3..1\n  variants: [{name: a}]\n",
                "s.yaml:6:10: seeds \"3..1\"",
            ),
        ] {
            let e = parse_text(&format!("{HEAD}{spec}")).unwrap_err();
            assert!(e.starts_with(want), "{spec}: {e}");
        }
    }

    #[test]
    fn the_name_is_a_dns_label_with_room_for_the_emitted_suffixes() {
        let body = "spec:\n  base: p\n  variants: [{name: a}]\n";
        let with = |name: &str| {
            parse_text(&format!(
                "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: {name}\n{body}"
            ))
        };
        assert_eq!(with("ml-team-1").unwrap().name, "ml-team-1");
        for bad in ["a/b", "..", "\"a\\nb\"", "Q", "-a", &"a".repeat(50)] {
            let e = with(bad).unwrap_err();
            assert!(
                e.starts_with("s.yaml:4:9: metadata.name") && e.contains("DNS-1123 label"),
                "{bad}: {e}"
            );
        }
        // Without a name, the file's name stands for it, and is held to the same rule.
        let text = format!("apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\n{body}");
        let file = |stem: &str| {
            let f = SourceFile {
                name: format!("{stem}.yaml"),
                text: text.clone(),
            };
            parse(f, Path::new("dir"), stem).map_err(|e| e.to_string())
        };
        assert_eq!(file("quota-grid").unwrap().name, "quota-grid");
        let e = file("Quota Grid").unwrap_err();
        assert!(
            e.starts_with("Quota Grid.yaml:1:1: no metadata.name"),
            "{e}"
        );
    }

    #[test]
    fn filled_templates_map_back_to_their_columns() {
        let (t, map) = fill("a={{value}}.b", Some(&Scalar::Int(12345)));
        assert_eq!(t, "a=12345.b");
        let at = TemplateAt {
            line: 10,
            column: 5,
            block: false,
            owner: String::new(),
        };
        // `.b` of the filled text (column 8) is column 12 of the template.
        assert_eq!(origin(&at, &map, 1, 8), (10, 16));
        assert_eq!(origin(&at, &map, 1, 3), (10, 7));
    }
}
