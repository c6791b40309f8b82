//! `kueuesim get` and `kueuesim describe` as kubectl is typed: the arguments (kinds, names
//! and scenario paths among the positionals, `KIND/NAME`, `-f`, `-n`/`-A`, `-l`,
//! `--sort-by`, `-o`), the run up to `--at`, and kubectl's errors with what may have been
//! meant. The views themselves are `kueuesim_report::kubectl`'s.

use std::path::{Path, PathBuf};

use kueuesim_engine::Simulation;
use kueuesim_model::SimTime;
use kueuesim_report::kubectl::{self, Kind, Namespaces, NotFound, Output, ViewError};
use kueuesim_report::output::{SimulationResult, result};
use kueuesim_scenario::{LoadOptions, Loaded};

use crate::{Failure, OverrideArgs, load_sources, parse_offset, print_data, print_out};

/// Where and when `get` and `describe` look.
#[derive(clap::Args)]
pub(crate) struct ViewArgs {
    /// Object names and scenario files or directories: a positional that is an existing file
    /// or directory is a path (the embedded platform scenario when there is none), any other
    /// is a name; with -f every positional is a name.
    args: Vec<String>,
    /// Scenario files or directories (kubectl's spelling): with -f, the positionals are all
    /// object names.
    #[arg(short = 'f', long = "filename")]
    files: Vec<PathBuf>,
    /// Namespace (namespaced kinds).
    #[arg(short = 'n', long = "namespace", default_value = "default")]
    namespace: String,
    /// All namespaces.
    #[arg(short = 'A', long = "all-namespaces")]
    all_namespaces: bool,
    /// Label selector, as kubectl's: key=value, key!=value, key in (a,b), key notin (a,b),
    /// key, !key, separated by commas.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    selector: Option<String>,
    /// The state at this offset from the start (Go duration, or with days: 1d, 1d12h);
    /// default: the end of the run.
    #[arg(long, allow_hyphen_values = true)]
    at: Option<String>,
    /// Seed of the random streams (overrides Simulation spec.seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Where trace paths are looked for after the scenario file's directory.
    #[arg(long, value_name = "DIR")]
    trace_root: Option<PathBuf>,
    #[command(flatten)]
    overrides: OverrideArgs,
}

/// The options of `get` beyond the view's.
#[derive(clap::Args)]
pub(crate) struct GetArgs {
    /// Output format: wide, name, json, yaml, jsonpath=TEMPLATE or
    /// custom-columns=HEADER:PATH,… (kubectl's; docs/kubectl.md has the JSONPath subset).
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    output: Option<String>,
    /// Sort by the value of a JSONPath, e.g. .metadata.creationTimestamp or
    /// .status.conditions[0].lastTransitionTime (kubectl's --sort-by).
    #[arg(long = "sort-by", value_name = "JSONPATH")]
    sort_by: Option<String>,
    /// Print the table without its header line.
    #[arg(long = "no-headers")]
    no_headers: bool,
    /// Add a LABELS column: the object's labels (docs/kubectl.md says which kueuesim knows).
    #[arg(long = "show-labels")]
    show_labels: bool,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

/// The kinds of `KIND`, `KIND,KIND` or `KIND/NAME` (then with its name).
fn kinds_of(word: &str, verb: &str) -> Result<(Vec<Kind>, Option<String>), Failure> {
    let expected = if verb == "get" {
        Kind::GET_KINDS
    } else {
        Kind::DESCRIBE_KINDS
    };
    let unknown = |k: &str| {
        usage(format!(
            "the server doesn't have a resource type \"{k}\": expected {expected}"
        ))
    };
    if let Some((kind, name)) = word.split_once('/') {
        let k = Kind::parse(kind).ok_or_else(|| unknown(kind))?;
        if name.is_empty() || name.contains('/') {
            return Err(usage(format!("{word:?}: expected KIND/NAME with one name")));
        }
        return Ok((vec![k], Some(name.to_string())));
    }
    let kinds = word
        .split(',')
        .map(|k| Kind::parse(k).ok_or_else(|| unknown(k)))
        .collect::<Result<Vec<_>, _>>()?;
    if verb == "describe" && kinds.len() > 1 {
        return Err(usage(format!(
            "describe {word:?}: expected one kind ({expected})"
        )));
    }
    Ok((kinds, None))
}

/// The positionals split into object names and scenario paths.
struct Positionals {
    names: Vec<String>,
    /// Positionals taken as paths because they exist (checked against the object names
    /// once the scenario is loaded).
    paths: Vec<PathBuf>,
}

/// A positional that is an existing file or directory is a path (unless -f gives the paths:
/// then every positional is a name); one that looks like a path (a `/`, or a YAML or JSON
/// file name) but does not exist is an error; any other is an object name. `KIND/NAME`
/// after the first `KIND/NAME` is a name of that kind.
fn split_positionals(
    view: &ViewArgs,
    kinds: &[Kind],
    slash_form: bool,
) -> Result<Positionals, Failure> {
    let mut p = Positionals {
        names: Vec::new(),
        paths: Vec::new(),
    };
    for a in &view.args {
        if !view.files.is_empty() {
            p.names.push(a.clone());
            continue;
        }
        let path = Path::new(a);
        if path.exists() {
            p.paths.push(path.to_path_buf());
            continue;
        }
        if slash_form
            && let Some((k, n)) = a.split_once('/')
            && Kind::parse(k).is_some_and(|k| kinds.contains(&k))
            && !n.is_empty()
        {
            p.names.push(n.to_string());
            continue;
        }
        let looks_like_path = a.contains(['/', '\\'])
            || [".yaml", ".yml", ".json", ".csv"]
                .iter()
                .any(|x| a.ends_with(x));
        if looks_like_path {
            return Err(usage(format!(
                "{a}: no such file or directory (an object name has no '/'; scenario paths are files or directories that exist)"
            )));
        }
        p.names.push(a.clone());
    }
    Ok(p)
}

/// Runs the scenario of `paths` up to `view`'s `--at` time; returns the world, the result
/// document and the time (seconds) it describes.
fn view_state(
    view: &ViewArgs,
    paths: &[PathBuf],
) -> Result<(Loaded, SimulationResult, f64), Failure> {
    let mut loaded = load_sources(
        paths,
        view.overrides.apply_to(LoadOptions {
            strict: false,
            trace_root: view.trace_root.clone(),
            seed: view.seed,
            stream: false,
            ..LoadOptions::default()
        })?,
    )?;
    if let Some(a) = &view.at {
        let d = parse_offset(a).map_err(|e| usage(format!("--at: {e}")))?;
        loaded.world.config.until = Some(SimTime::ZERO + d);
    }
    let outcome = Simulation::new(&loaded.world).run();
    let doc = result(&loaded.world, &outcome);
    let at = doc.summary.end_time;
    Ok((loaded, doc, at))
}

fn namespaces(view: &ViewArgs) -> Namespaces {
    if view.all_namespaces {
        Namespaces::All
    } else {
        Namespaces::One(view.namespace.clone())
    }
}

/// What `get` and `describe` share before the view: kinds, names, the loaded run.
struct Request {
    kinds: Vec<Kind>,
    names: Vec<String>,
    selector: Option<kueuesim_model::labels::LabelSelector>,
    loaded: Loaded,
    doc: SimulationResult,
    at: f64,
}

fn prepare(verb: &str, kind: &str, view: &ViewArgs) -> Result<Request, Failure> {
    let (kinds, slash_name) = kinds_of(kind, verb)?;
    let selector = view
        .selector
        .as_deref()
        .map(kubectl::parse_selector)
        .transpose()
        .map_err(usage)?;
    let positionals = split_positionals(view, &kinds, slash_name.is_some())?;
    let mut names: Vec<String> = slash_name.into_iter().collect();
    names.extend(positionals.names);
    let paths: Vec<PathBuf> = positionals
        .paths
        .iter()
        .chain(&view.files)
        .cloned()
        .collect();
    let (loaded, doc, at) = view_state(view, &paths).map_err(|mut f| {
        // A positional taken for a path because it exists may have been meant as a name.
        if let Some(p) = positionals.paths.first() {
            f.message.push_str(&format!(
                " (if {:?} is an object's name rather than a scenario path, give the scenario with -f)",
                p.to_string_lossy()
            ));
        }
        f
    })?;
    // A positional taken as a path that is also the name of an object of the kind: the
    // command line is ambiguous, and kueuesim does not guess.
    for p in &positionals.paths {
        let word = p.to_string_lossy();
        let clash = kinds.iter().find(|&&k| {
            let listed = kubectl::get(
                &loaded.world,
                &doc,
                &kubectl::GetRequest {
                    kinds: vec![k],
                    names: Vec::new(),
                    namespaces: namespaces(view),
                    selector: None,
                    sort_by: None,
                    output: Output::Name,
                    no_headers: false,
                    show_labels: false,
                },
                at,
            );
            listed.is_ok_and(|o| {
                o.text
                    .lines()
                    .any(|l| l.rsplit_once('/').is_some_and(|(_, n)| n == word))
            })
        });
        if let Some(k) = clash {
            return Err(usage(format!(
                "{word:?} is both a file or directory here and the name of a {}: give the scenario with -f (kueuesim {verb} {} {word} -f PATH)",
                k.singular(),
                k.singular(),
            )));
        }
    }
    Ok(Request {
        kinds,
        names,
        selector,
        loaded,
        doc,
        at,
    })
}

/// Prints what was found, then fails with kubectl's `not found` for each missing name.
fn report_missing(missing: &[NotFound]) -> Result<(), Failure> {
    let Some((last, rest)) = missing.split_last() else {
        return Ok(());
    };
    for m in rest {
        eprintln_visible!("error: {}", not_found_message(m));
    }
    Err(Failure {
        code: 1,
        message: not_found_message(last),
    })
}

/// kubectl's `not found`, with what may have been meant: another namespace holding the name,
/// the names that start with it (a Kueue Workload is `<kind>-<job>-<hash>`, so a job's name
/// is a prefix of it), the Workload Kueue made for a job of that name, or the closest name.
pub(crate) fn not_found_message(m: &NotFound) -> String {
    let mut s = m.message();
    if !m.elsewhere.is_empty() {
        s.push_str(&format!(
            "; a {} of that name is in namespace {} (-n {})",
            m.kind.singular(),
            m.elsewhere.join(", "),
            m.elsewhere[0]
        ));
        return s;
    }
    let mut prefixed: Vec<&str> = m
        .candidates
        .iter()
        .filter(|c| c.starts_with(m.name.as_str()))
        .map(String::as_str)
        .collect();
    prefixed.sort_unstable();
    prefixed.dedup();
    match prefixed.as_slice() {
        [] => {}
        [one] => {
            s.push_str(&format!(
                "; did you mean {one:?}? (the only {} whose name starts with {:?})",
                m.kind.singular(),
                m.name
            ));
            return s;
        }
        many => {
            let shown: Vec<String> = many.iter().take(5).map(|c| format!("{c:?}")).collect();
            let more = if many.len() > 5 { ", …" } else { "" };
            s.push_str(&format!(
                "; {} names start with {:?}: {}{more}",
                many.len(),
                m.name,
                shown.join(", ")
            ));
            return s;
        }
    }
    if m.kind == Kind::Workload {
        // Kueue's `GetWorkloadNameForOwnerWithGVK`: `<lower(kind)>-<job>-<5 hex>`.
        let made_for: Vec<&str> = m
            .candidates
            .iter()
            .filter(|c| {
                c.split_once('-').is_some_and(|(_, rest)| {
                    rest.strip_prefix(m.name.as_str())
                        .and_then(|r| r.strip_prefix('-'))
                        .is_some_and(|h| h.len() == 5 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                })
            })
            .map(String::as_str)
            .collect();
        if let [one, ..] = made_for.as_slice() {
            s.push_str(&format!(
                "; {one:?} is the Workload Kueue made for the job {:?} (<kind>-<job>-<hash>)",
                m.name
            ));
            return s;
        }
    }
    s.push_str(&kueuesim_scenario::overlay::closest_hint(
        &m.name,
        m.candidates.iter().map(String::as_str),
    ));
    s
}

pub(crate) fn get(kind: &str, view: &ViewArgs, opts: &GetArgs) -> Result<(), Failure> {
    let output = match &opts.output {
        None => Output::Table,
        Some(o) => Output::parse(o).map_err(usage)?,
    };
    let sort_by = opts
        .sort_by
        .as_deref()
        .map(|s| {
            kubectl::Template::relaxed(s)
                .map(|t| (s.to_string(), t))
                .map_err(|e| usage(format!("--sort-by {s:?}: {e}")))
        })
        .transpose()?;
    let r = prepare("get", kind, view)?;
    let req = kubectl::GetRequest {
        kinds: r.kinds,
        names: r.names,
        namespaces: namespaces(view),
        selector: r.selector,
        sort_by,
        output,
        no_headers: opts.no_headers,
        show_labels: opts.show_labels,
    };
    let out = kubectl::get(&r.loaded.world, &r.doc, &req, r.at).map_err(view_failure)?;
    if out.data {
        print_data(&out.text)?;
    } else {
        print_out(&out.text)?;
    }
    for n in &out.notes {
        eprintln_visible!("{n}");
    }
    report_missing(&out.missing)
}

pub(crate) fn describe(kind: &str, view: &ViewArgs) -> Result<(), Failure> {
    let r = prepare("describe", kind, view)?;
    let out = kubectl::describe(
        &r.loaded.world,
        &r.doc,
        r.kinds[0],
        &namespaces(view),
        &r.names,
        r.selector.as_ref(),
        r.at,
    )
    .map_err(view_failure)?;
    print_out(&out.text)?;
    for n in &out.notes {
        eprintln_visible!("{n}");
    }
    report_missing(&out.missing)
}

fn view_failure(e: ViewError) -> Failure {
    match e {
        ViewError::Usage(message) => Failure { code: 2, message },
        ViewError::Failed(message) => Failure { code: 1, message },
    }
}
