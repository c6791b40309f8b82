//! `kubectl get KIND [NAME...]`: the objects of a kind at T (each with its kubectl-like JSON
//! object and its table row: the CRDs' printer columns, kubectl's own for pods, nodes and
//! events), in the API server's order (namespace, then name), narrowed by name or label
//! selector, sorted by `--sort-by`, printed in any of kubectl's output formats.

use kueuesim_model::labels::LabelSelector;
use kueuesim_model::{SchedulerKind, World};
use serde_json::Value;

use super::jsonpath::{JsonPathError, Template, go_sprint};
use super::kinds::Kind;
use super::selector::object_labels;
use super::{Namespaces, age, condition, present, table};
use crate::output::SimulationResult;

/// kubectl's `-o` formats.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// The table (no `-o`).
    Table,
    /// `-o wide`: the table with the priority-1 columns.
    Wide,
    /// `-o name`: `<kind>.<group>/<name>` per object.
    Name,
    /// `-o json`.
    Json,
    /// `-o yaml`.
    Yaml,
    /// `-o jsonpath=TEMPLATE`.
    JsonPath(Template),
    /// `-o custom-columns=HEADER:PATH,…`.
    CustomColumns(Vec<(String, Template)>),
}

impl Output {
    /// Parses `-o`'s value.
    pub fn parse(text: &str) -> Result<Output, String> {
        let bad = |e: JsonPathError| format!("-o {text:?}: {e}");
        Ok(match text {
            "wide" => Output::Wide,
            "name" => Output::Name,
            "json" => Output::Json,
            "yaml" => Output::Yaml,
            _ => {
                if let Some(t) = text.strip_prefix("jsonpath=") {
                    Output::JsonPath(Template::parse(t).map_err(bad)?)
                } else if let Some(spec) = text.strip_prefix("custom-columns=") {
                    if spec.is_empty() {
                        return Err(
                            "-o custom-columns=: custom-columns format specified but no custom columns given"
                                .into(),
                        );
                    }
                    let mut columns = Vec::new();
                    for part in spec.split(',') {
                        let Some((header, path)) = part.split_once(':') else {
                            return Err(format!(
                                "-o custom-columns: unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                            ));
                        };
                        columns.push((header.to_string(), Template::relaxed(path).map_err(bad)?));
                    }
                    Output::CustomColumns(columns)
                } else if text.starts_with("jsonpath")
                    || text.starts_with("custom-columns")
                    || text.starts_with("go-template")
                    || text.starts_with("template")
                {
                    return Err(format!(
                        "-o {text:?}: expected jsonpath=TEMPLATE or custom-columns=HEADER:PATH,… (go-template and the -file forms are not supported)"
                    ));
                } else {
                    return Err(format!(
                        "-o {text:?}: expected wide, name, json, yaml, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,…"
                    ));
                }
            }
        })
    }

    fn wide(&self) -> bool {
        matches!(self, Output::Wide)
    }
}

/// What `get` is asked for.
#[derive(Clone, Debug)]
pub struct GetRequest {
    /// The kinds (`get pod,node`: several).
    pub kinds: Vec<Kind>,
    /// Object names; empty: every object.
    pub names: Vec<String>,
    /// `-n NS` or `-A`.
    pub namespaces: Namespaces,
    /// `-l`.
    pub selector: Option<LabelSelector>,
    /// `--sort-by`: the text and its template.
    pub sort_by: Option<(String, Template)>,
    /// `-o`.
    pub output: Output,
    /// `--no-headers`.
    pub no_headers: bool,
    /// `--show-labels`: a LABELS column.
    pub show_labels: bool,
}

/// An object asked for by name that does not exist at T, with what may have been meant.
#[derive(Clone, Debug, PartialEq)]
pub struct NotFound {
    /// Its kind.
    pub kind: Kind,
    /// The name asked for.
    pub name: String,
    /// The names of that kind where it was looked for (the namespace's, for a namespaced
    /// kind): for "closest" hints.
    pub candidates: Vec<String>,
    /// Other namespaces holding an object of that name.
    pub elsewhere: Vec<String>,
}

impl NotFound {
    /// kubectl's error: `<resource> "<name>" not found`.
    pub fn message(&self) -> String {
        format!("{} \"{}\" not found", self.kind.resource(), self.name)
    }
}

/// Why `get` or `describe` printed nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewError {
    /// Bad arguments (exit 2).
    Usage(String),
    /// A failure while printing (exit 1): a JSONPath that fails on the objects.
    Failed(String),
}

/// What `get` prints.
#[derive(Clone, Debug, Default)]
pub struct GetOutput {
    /// Standard output.
    pub text: String,
    /// Whether `text` is a document for programs (`-o json|yaml`), printed as it is; other
    /// outputs are printed with their control characters made visible.
    pub data: bool,
    /// Lines for standard error that are not failures (kubectl's `No resources found`).
    pub notes: Vec<String>,
    /// Objects asked for by name that do not exist (exit 1 after printing the others).
    pub missing: Vec<NotFound>,
}

/// One object of a listing.
#[derive(Clone, Debug)]
pub(super) struct Item {
    /// Its namespace (None: cluster-scoped).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The object as the API server returns it.
    pub object: Value,
    /// Its table row (the listing's headers), without NAMESPACE.
    pub cells: Vec<String>,
}

/// The objects of one resource type, with its table's headers.
#[derive(Clone, Debug)]
pub(super) struct Listing {
    /// The kind.
    pub kind: Kind,
    /// The table's headers, without NAMESPACE.
    pub headers: Vec<&'static str>,
    /// Its objects, in the API server's order.
    pub items: Vec<Item>,
}

/// Every object of `kind` at `at` in the namespaces shown (podgroups: Volcano's and KAI's as
/// two resource types), sorted by namespace and name.
pub(super) fn listings(
    world: &World,
    doc: &SimulationResult,
    kind: Kind,
    ns: &Namespaces,
    at: f64,
    wide: bool,
) -> Vec<Listing> {
    let specs = super::specs(world);
    let one = |headers: Vec<&'static str>, items: Vec<Item>| {
        vec![Listing {
            kind,
            headers,
            items,
        }]
    };
    let named = |ns: Option<&str>, name: &str, object: Value, cells: Vec<String>| Item {
        namespace: ns.map(str::to_string),
        name: name.to_string(),
        object,
        cells,
    };
    let mut out = match kind {
        Kind::ClusterQueue => {
            let items = world
                .cluster_queues
                .iter()
                .map(|cq| {
                    let u = super::queues::usage(
                        world,
                        present(doc, at).filter(|w| w.cluster_queue.as_deref() == Some(&cq.name)),
                    );
                    let cohort = cq
                        .cohort
                        .map(|c| world.cohorts[c.index()].name.clone())
                        .unwrap_or_default();
                    let mut r = vec![cq.name.clone(), cohort];
                    if wide {
                        r.push(cq.queueing_strategy.as_str().to_string());
                    }
                    r.push(u.pending.to_string());
                    if wide {
                        r.push(u.admitted_count.to_string());
                    }
                    let object = super::objects::cluster_queue_object(world, cq, &u);
                    named(None, &cq.name, object, r)
                })
                .collect();
            let headers = if wide {
                vec![
                    "NAME",
                    "COHORT",
                    "STRATEGY",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ]
            } else {
                vec!["NAME", "COHORT", "PENDING WORKLOADS"]
            };
            one(headers, items)
        }
        Kind::LocalQueue => {
            let items = world
                .local_queues
                .iter()
                .filter(|l| ns.shows(&l.namespace))
                .map(|lq| {
                    let u = super::queues::usage(
                        world,
                        present(doc, at).filter(|w| {
                            w.namespace == lq.namespace
                                && w.local_queue.as_deref() == Some(&lq.name)
                        }),
                    );
                    let r = vec![
                        lq.name.clone(),
                        world.cluster_queue(lq.cluster_queue).name.clone(),
                        u.pending.to_string(),
                        u.admitted_count.to_string(),
                    ];
                    let object = super::objects::local_queue_object(world, lq, &u);
                    named(Some(&lq.namespace), &lq.name, object, r)
                })
                .collect();
            one(
                vec![
                    "NAME",
                    "CLUSTERQUEUE",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ],
                items,
            )
        }
        Kind::Cohort => {
            // Only Cohort objects exist in the API: a cohort a ClusterQueue names without
            // one (Kueue's implicit cohort) is not listed.
            let items = world
                .cohorts
                .iter()
                .filter(|c| c.declared)
                .map(|c| {
                    let object = super::objects::cohort_object(world, c);
                    named(None, &c.name, object, vec![c.name.clone(), age(at, 0.0)])
                })
                .collect();
            one(vec!["NAME", "AGE"], items)
        }
        Kind::ResourceFlavor => {
            let items = world
                .flavors
                .iter()
                .map(|f| {
                    let object = super::objects::resource_flavor_object(world, f);
                    named(None, &f.name, object, vec![f.name.clone(), age(at, 0.0)])
                })
                .collect();
            one(vec!["NAME", "AGE"], items)
        }
        Kind::Workload => {
            let items = present(doc, at)
                .filter(|w| w.kind == "Workload" && ns.shows(&w.namespace))
                .map(|w| {
                    let status =
                        |k: &str| condition(w, k).map_or(String::new(), |c| c.status.to_string());
                    let reserved_in = w
                        .cluster_queue
                        .clone()
                        .filter(|_| {
                            condition(w, "QuotaReserved").is_some_and(|c| c.status == "True")
                        })
                        .unwrap_or_default();
                    let r = vec![
                        w.name.clone(),
                        w.local_queue.clone().unwrap_or_default(),
                        reserved_in,
                        status("Admitted"),
                        status("Finished"),
                        age(at, w.created_at),
                    ];
                    let spec = specs.get(&(w.namespace.as_str(), w.name.as_str())).copied();
                    let object = super::objects::workload_object(world, w, spec);
                    named(Some(&w.namespace), &w.name, object, r)
                })
                .collect();
            one(
                vec![
                    "NAME",
                    "QUEUE",
                    "RESERVED IN",
                    "ADMITTED",
                    "FINISHED",
                    "AGE",
                ],
                items,
            )
        }
        Kind::PodGroup => {
            let groups = super::podgroups::pod_groups(world, doc, at);
            let mut out = Vec::new();
            for scheduler in [SchedulerKind::Volcano, SchedulerKind::Kai] {
                let items: Vec<Item> = groups
                    .iter()
                    .filter(|g| g.scheduler == scheduler && ns.shows(&g.workload.namespace))
                    .map(|g| {
                        let object = super::podgroups::object(world, g, at);
                        let cells = super::podgroups::cells(world, g, at, wide);
                        named(Some(&g.workload.namespace), &g.name, object, cells)
                    })
                    .collect();
                if !items.is_empty() {
                    out.push(Listing {
                        kind,
                        headers: super::podgroups::headers(scheduler, wide),
                        items,
                    });
                }
            }
            if out.is_empty() {
                out = one(
                    super::podgroups::headers(SchedulerKind::Volcano, wide),
                    Vec::new(),
                );
            }
            out
        }
        Kind::Pod => {
            let items = super::pods::pods_at(world, doc, at)
                .iter()
                .filter(|p| ns.shows(&p.workload.namespace))
                .map(|p| {
                    let spec = specs
                        .get(&(p.workload.namespace.as_str(), p.workload.name.as_str()))
                        .copied();
                    let object = super::objects::pod_object(world, p, spec, at);
                    let cells = super::pods::pod_cells(p, at, wide);
                    named(Some(&p.workload.namespace), p.name, object, cells)
                })
                .collect();
            one(super::pods::pod_headers(wide), items)
        }
        Kind::Node => {
            // kueuesim's own columns: the GPUs the node's non-terminated pods request, and
            // its allocatable GPUs (kubectl shows neither; `describe node` has both).
            let pods = super::pods::pods_at(world, doc, at);
            let gpu = world.resources.lookup("nvidia.com/gpu");
            let items = world
                .nodes
                .iter()
                .map(|n| {
                    let (req, alloc) = gpu.map_or((0, 0), |g| {
                        (
                            super::node::requested(world, &pods, &n.name)[g.index()],
                            n.allocatable.get(g.index()).copied().unwrap_or(0),
                        )
                    });
                    let r = vec![
                        n.name.clone(),
                        super::node::status(n),
                        "<none>".into(),
                        age(at, 0.0),
                        "<unknown>".into(),
                        req.to_string(),
                        alloc.to_string(),
                    ];
                    named(None, &n.name, super::objects::node_object(world, n), r)
                })
                .collect();
            one(
                vec![
                    "NAME",
                    "STATUS",
                    "ROLES",
                    "AGE",
                    "VERSION",
                    "GPU REQUESTS",
                    "GPU ALLOCATABLE",
                ],
                items,
            )
        }
        Kind::Event => {
            let items = super::events::event_items(world, doc, at)
                .iter()
                .filter(|e| ns.shows(&e.object.namespace))
                .map(|e| {
                    named(
                        Some(&e.object.namespace),
                        &e.name,
                        super::events::event_object(world, e),
                        super::events::event_cells(e, at, wide),
                    )
                })
                .collect();
            one(super::events::event_headers(wide), items)
        }
    };
    // The API server lists objects in key order: namespace, then name.
    for l in &mut out {
        l.items
            .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    }
    out
}

/// `kubectl get` at time `at` (seconds since the start).
pub fn get(
    world: &World,
    doc: &SimulationResult,
    req: &GetRequest,
    at: f64,
) -> Result<GetOutput, ViewError> {
    if !req.names.is_empty() && req.selector.is_some() {
        return Err(ViewError::Usage(
            "when names are given, -l/--selector cannot be used: give names or a selector".into(),
        ));
    }
    if !req.names.is_empty()
        && matches!(req.namespaces, Namespaces::All)
        && req.kinds.iter().any(|k| k.namespaced())
    {
        return Err(ViewError::Usage(
            "a resource cannot be retrieved by name across all namespaces: use -n NAMESPACE".into(),
        ));
    }
    let wide = req.output.wide();
    let mut out = GetOutput::default();
    let mut selected: Vec<Listing> = Vec::new();
    for &kind in &req.kinds {
        let all = listings(world, doc, kind, &req.namespaces, at, wide);
        if req.names.is_empty() {
            selected.extend(all.into_iter().map(|mut l| {
                if let Some(sel) = &req.selector {
                    l.items.retain(|i| sel.matches(&object_labels(&i.object)));
                }
                l
            }));
            continue;
        }
        // By name, in the order the names were given (as kubectl fetches them).
        let mut picked: Vec<Listing> = all
            .iter()
            .map(|l| Listing {
                kind: l.kind,
                headers: l.headers.clone(),
                items: Vec::new(),
            })
            .collect();
        for name in &req.names {
            let mut found = false;
            for (l, p) in all.iter().zip(&mut picked) {
                for item in l.items.iter().filter(|i| &i.name == name) {
                    p.items.push(item.clone());
                    found = true;
                }
            }
            if !found {
                out.missing
                    .push(not_found(world, doc, kind, &req.namespaces, name, at));
            }
        }
        selected.extend(picked);
    }
    if let Some((text, template)) = &req.sort_by {
        sort_items(&mut selected, text, template)?;
    }
    let objects: Vec<&Item> = selected.iter().flat_map(|l| &l.items).collect();
    // One name of one kind: the object itself rather than a List (kubectl's
    // "single item implied").
    let single = req.names.len() == 1 && req.kinds.len() == 1 && objects.len() == 1;
    let document = || {
        if single {
            objects[0].object.clone()
        } else {
            super::objects::list(objects.iter().map(|i| i.object.clone()).collect())
        }
    };
    match &req.output {
        Output::Table | Output::Wide => {
            let shown: Vec<&Listing> = selected.iter().filter(|l| !l.items.is_empty()).collect();
            let qualify = shown.len() > 1;
            let tables: Vec<String> = shown
                .iter()
                .map(|l| render_table(l, req, qualify))
                .collect();
            out.text = tables.join("\n");
            if objects.is_empty() && out.missing.is_empty() {
                let namespaced = req.kinds.iter().all(|k| k.namespaced());
                out.notes.push(match &req.namespaces {
                    Namespaces::One(n) if namespaced => {
                        format!("No resources found in {n} namespace.")
                    }
                    _ => "No resources found".to_string(),
                });
            }
        }
        Output::Name => {
            for i in &objects {
                out.text.push_str(&resource_name(&i.object, &i.name));
                out.text.push('\n');
            }
        }
        Output::Json => {
            out.text = super::objects::json_text(&document());
            out.data = true;
        }
        Output::Yaml => {
            out.text = super::objects::yaml_text(&document());
            out.data = true;
        }
        Output::JsonPath(t) => {
            out.text = t
                .render(&document())
                .map_err(|e| ViewError::Failed(format!("error executing jsonpath: {e}")))?;
        }
        Output::CustomColumns(columns) => {
            let headers: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
            let mut rows = Vec::new();
            for i in &objects {
                let mut row = Vec::new();
                for (_, t) in columns {
                    let values = t
                        .values(&i.object)
                        .map_err(|e| ViewError::Failed(format!("error executing jsonpath: {e}")))?;
                    row.push(if values.is_empty() {
                        "<none>".to_string()
                    } else {
                        values
                            .iter()
                            .map(|v| go_sprint(v))
                            .collect::<Vec<_>>()
                            .join(",")
                    });
                }
                rows.push(row);
            }
            out.text = table(&headers, &rows);
            if req.no_headers {
                out.text = out
                    .text
                    .split_once('\n')
                    .map(|x| x.1)
                    .unwrap_or_default()
                    .to_string();
            }
        }
    }
    Ok(out)
}

/// kubectl's `-o name`: `<lower-case kind>.<group>/<name>`, the group left out for core
/// types (`pod/x`, `workload.kueue.x-k8s.io/y`).
fn resource_name(object: &Value, name: &str) -> String {
    let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
    match object["apiVersion"]
        .as_str()
        .and_then(|a| a.split_once('/'))
    {
        Some((group, _)) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

fn render_table(l: &Listing, req: &GetRequest, qualify: bool) -> String {
    let all = matches!(req.namespaces, Namespaces::All) && l.kind.namespaced();
    let mut headers = l.headers.clone();
    if all {
        headers.insert(0, "NAMESPACE");
    }
    if req.show_labels {
        headers.push("LABELS");
    }
    let rows: Vec<Vec<String>> = l
        .items
        .iter()
        .map(|i| {
            let mut r = i.cells.clone();
            if qualify && let Some(first) = r.first_mut() {
                *first = resource_name(&i.object, first);
            }
            if all {
                r.insert(0, i.namespace.clone().unwrap_or_default());
            }
            if req.show_labels {
                let labels: Vec<String> = object_labels(&i.object)
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                r.push(if labels.is_empty() {
                    "<none>".into()
                } else {
                    labels.join(",")
                });
            }
            r
        })
        .collect();
    let text = table(&headers, &rows);
    if req.no_headers {
        text.split_once('\n')
            .map(|x| x.1)
            .unwrap_or_default()
            .to_string()
    } else {
        text
    }
}

/// `--sort-by`: kubectl's `RuntimeSort` over each listing (stable here, so equal keys keep
/// the API server's order): the path's first value per object; an object without it first;
/// numbers by value, strings that are both quantities by amount (`2Gi` after `512Mi`), other
/// strings (timestamps among them) as text. A path found on no object is an error, as in
/// kubectl.
fn sort_items(listings: &mut [Listing], text: &str, t: &Template) -> Result<(), ViewError> {
    let any = listings
        .iter()
        .flat_map(|l| &l.items)
        .any(|i| t.values(&i.object).map(|v| !v.is_empty()).unwrap_or(false));
    if !any && listings.iter().any(|l| !l.items.is_empty()) {
        return Err(ViewError::Usage(format!(
            "--sort-by {text:?}: couldn't find any field with path {text:?} in the list of objects"
        )));
    }
    for l in listings {
        let mut keyed: Vec<(Option<Value>, Item)> = Vec::new();
        for i in l.items.drain(..) {
            let key = t
                .values(&i.object)
                .map_err(|e| ViewError::Failed(format!("--sort-by {text:?}: {e}")))?
                .first()
                .map(|v| (*v).clone());
            keyed.push((key, i));
        }
        let mut error = None;
        keyed.sort_by(|(a, _), (b, _)| match (a, b) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(a), Some(b)) => compare(a, b).unwrap_or_else(|e| {
                error.get_or_insert(e);
                std::cmp::Ordering::Equal
            }),
        });
        if let Some(e) = error {
            return Err(ViewError::Usage(format!("--sort-by {text:?}: {e}")));
        }
        l.items = keyed.into_iter().map(|(_, i)| i).collect();
    }
    Ok(())
}

/// kubectl's `isLess` over unstructured values.
fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, String> {
    use kueuesim_model::quantity::Quantity;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Ok(x
            .as_f64()
            .zip(y.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y))
            .unwrap_or(std::cmp::Ordering::Equal)),
        (Value::String(x), Value::String(y)) => match (Quantity::parse(x), Quantity::parse(y)) {
            (Ok(qx), Ok(qy)) => {
                let (mx, my) = (qx.milli_value(), qy.milli_value());
                match (mx, my) {
                    (Ok(mx), Ok(my)) => Ok(mx.cmp(&my)),
                    _ => Ok(x.cmp(y)),
                }
            }
            _ => Ok(x.cmp(y)),
        },
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = compare(p, q)?;
                if o != std::cmp::Ordering::Equal {
                    return Ok(o);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        (x, y) => Err(format!(
            "the field is an unsortable type: {} against {}",
            kind_of(x),
            kind_of(y)
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// The not-found error of `name` with what may have been meant: the kind's names where it was
/// looked for, and the other namespaces holding that name.
pub(super) fn not_found(
    world: &World,
    doc: &SimulationResult,
    kind: Kind,
    ns: &Namespaces,
    name: &str,
    at: f64,
) -> NotFound {
    let everywhere = listings(world, doc, kind, &Namespaces::All, at, false);
    let mut candidates = Vec::new();
    let mut elsewhere = Vec::new();
    for i in everywhere.iter().flat_map(|l| &l.items) {
        let here = i.namespace.as_deref().is_none_or(|n| ns.shows(n));
        if here {
            candidates.push(i.name.clone());
        } else if i.name == name
            && let Some(n) = &i.namespace
            && !elsewhere.contains(n)
        {
            elsewhere.push(n.clone());
        }
    }
    NotFound {
        kind,
        name: name.to_string(),
        candidates,
        elsewhere,
    }
}
