//! Timeline changes that change objects (`set`, `patch`): each such change's objects worked
//! out at load, as the command line's `--set` and `--patch` would leave them (the same overlay,
//! applied on top of the changes before it), and turned into an *epoch*: the world from that
//! change on. Every epoch keeps the start's ids: a node or Cohort that appears only later is
//! in the world from the start (a node not yet there, `World::late_nodes`; a Cohort with no
//! member and no quota), so the engine only swaps the ClusterQueues' and Cohorts' specs and
//! adds or removes nodes.
//!
//! What a change may touch is checked here, at its place in the file: ClusterQueues (quota,
//! borrowing and lending limits, preemption, flavor fungibility, queueing strategy, namespace
//! selector, fair-sharing weight, cohort), Cohorts (new ones, their quota, parent and weight),
//! NodePools and Nodes (new ones, more or fewer nodes). Everything else stays as it is at the
//! start.

use std::collections::{BTreeMap, BTreeSet};

use kueuesim_model::{Cohort, Node, SimTime, World};

use super::core::{Builder, LoadOptions};
use crate::error::ScenarioError;
use crate::overlay::tree::{self, Node as Tree, Origin, Value};
use crate::overlay::{Overrides, kind_matches, parse_object, set};
use crate::source::{ObjectText, SourceFile};

/// The kinds a Timeline change may set or patch, as (apiVersion group, kind).
const CHANGEABLE: [(&str, &str); 4] = [
    ("kueue.x-k8s.io", "ClusterQueue"),
    ("kueue.x-k8s.io", "Cohort"),
    ("kueuesim.io", "NodePool"),
    ("", "Node"),
];

const CHANGEABLE_TEXT: &str = "a Timeline change sets or patches ClusterQueues, Cohorts, NodePools and Nodes: expected one of these kinds (the other objects stay as they are at the start)";

/// The kinds that make up the cluster (not the workloads): what an epoch is built from.
const CLUSTER_KINDS: [(&str, &str); 19] = [
    ("kueue.x-k8s.io", "ResourceFlavor"),
    ("kueue.x-k8s.io", "AdmissionCheck"),
    ("kueue.x-k8s.io", "ProvisioningRequestConfig"),
    ("kueue.x-k8s.io", "ClusterQueue"),
    ("kueue.x-k8s.io", "Cohort"),
    ("kueue.x-k8s.io", "LocalQueue"),
    ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    ("kueue.x-k8s.io", "Topology"),
    ("", "Node"),
    ("", "Namespace"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("kueuesim.io", "Simulation"),
    ("kueuesim.io", "NodePool"),
    ("kai.scheduler", "Topology"),
    ("topology.volcano.sh", "HyperNode"),
    ("scheduling.volcano.sh", "Queue"),
    ("scheduling.run.ai", "Queue"),
    ("config.kueue.x-k8s.io", "Configuration"),
    ("kueuesim.io", "WorkloadTrace"),
];

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// What the Timeline changes with `set` or `patch` do, worked out before the build.
#[derive(Debug, Default)]
pub(crate) struct EpochPlan {
    /// The nodes some change adds that the start lacks, in the order they first appear, each
    /// with its allocatable by resource name.
    pub(super) late_nodes: Vec<(Node, Vec<(String, i64)>)>,
    /// The Cohorts some change names that the start lacks.
    pub(super) late_cohorts: Vec<String>,
    /// Per change, by (the Timeline's place among the objects, the change's index): its plan.
    pub(super) changes: BTreeMap<(usize, usize), ChangePlan>,
    /// Each epoch's cluster, built alone (no workloads), in the order the changes apply.
    worlds: Vec<World>,
}

/// One change's part.
#[derive(Debug)]
pub(super) struct ChangePlan {
    /// Its epoch (an index into `World::epochs`).
    pub(super) epoch: usize,
    /// The ClusterQueues whose spec, or a Cohort above them, it changed, by name.
    pub(super) updated: Vec<String>,
    /// The nodes it adds and takes away, by name.
    pub(super) added: Vec<String>,
    pub(super) removed: Vec<String>,
}

/// A change with `set` or `patch`, as found in its Timeline.
struct Found<'t, 'f> {
    at: SimTime,
    key: (usize, usize),
    node: &'t Tree<'f>,
}

/// Works out every Timeline change with `set` or `patch` (None: there is none). `objects` are
/// the scenario's after the command line's overrides, numbered.
pub(crate) fn plan(
    objects: &[ObjectText<'_>],
    opts: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<Option<EpochPlan>, ScenarioError> {
    let mut trees = Vec::new();
    for o in objects {
        if o.kind == "Timeline" && group_of(&o.api_version) == "kueuesim.io" {
            trees.push((o.order, parse_object(o)?));
        }
    }
    let mut found: Vec<Found<'_, '_>> = Vec::new();
    for (order, t) in &trees {
        let Some(Value::Seq(changes)) = t
            .get("spec")
            .and_then(|s| s.get("changes"))
            .map(|c| &c.value)
        else {
            continue;
        };
        for (ci, ch) in changes.iter().enumerate() {
            let has = |k: &str| {
                ch.get(k)
                    .is_some_and(|n| !matches!(&n.value, Value::Scalar(s) if s.is_null()))
            };
            if !has("set") && !has("patch") {
                continue;
            }
            // A change without a readable `at` is the build's to report.
            let Some(at) = ch
                .text_of("at")
                .and_then(|a| kueuesim_model::limits::parse_offset_days(a.trim()).ok())
            else {
                continue;
            };
            found.push(Found {
                at: SimTime::ZERO + at,
                key: (*order, ci),
                node: ch,
            });
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    // In the order they apply: time, then the order written (a stable sort).
    found.sort_by_key(|f| f.at);
    // Every `set` as an input of its own, placed where it is written: kept for the whole
    // plan, since the objects the overrides change point into them.
    let mut set_files: Vec<Vec<(SourceFile, u64)>> = Vec::with_capacity(found.len());
    for f in &found {
        let mut files = Vec::new();
        if let Some(s) = f.node.get("set") {
            let Value::Seq(items) = &s.value else {
                return Err(s
                    .at
                    .error("set: expected a list of KIND/NAME:PATH=VALUE, as --set takes them"));
            };
            for item in items {
                let Value::Scalar(v) = &item.value else {
                    return Err(item.at.error(
                        "a set entry: expected one KIND/NAME:PATH=VALUE string, as --set takes it",
                    ));
                };
                files.push((placed(&item.at, &v.as_text()), item.at.line));
            }
        }
        set_files.push(files);
    }
    let mut cur: Vec<ObjectText<'_>> = objects
        .iter()
        .filter(|o| {
            let g = group_of(&o.api_version);
            CLUSTER_KINDS
                .iter()
                .any(|&(cg, ck)| cg == g && ck == o.kind)
        })
        .cloned()
        .collect();
    let base = build_cluster(&cur, opts)?;
    let mut plan = EpochPlan::default();
    // Every node seen, by name: its spec and whether it is a late one.
    let mut nodes: BTreeMap<String, (String, bool)> = BTreeMap::new();
    for n in &base.nodes {
        nodes.insert(n.name.clone(), (node_spec(&base, n), false));
    }
    let mut cohorts: BTreeSet<String> = base.cohorts.iter().map(|c| c.name.clone()).collect();
    let mut prev_present: BTreeSet<String> = nodes.keys().cloned().collect();
    let mut prev = 0usize; // the epoch before: 0 is the start (`base`), k is worlds[k - 1]
    for (f, files) in found.iter().zip(&set_files) {
        let origin = f.node.at;
        let mut patches = Vec::new();
        if let Some(p) = f.node.get("patch") {
            let Value::Seq(items) = &p.value else {
                return Err(p
                    .at
                    .error("patch: expected a list of objects, each merged as --patch merges it"));
            };
            for item in items {
                patches.push(patch_doc(item)?);
            }
        }
        let mut sets = Vec::new();
        for (file, line) in files {
            let s = set::parse_on_line(file, *line)?;
            if !CHANGEABLE.iter().any(|&(_, k)| kind_matches(&s.kind, k)) {
                return Err(s
                    .target_at
                    .error(format!("{:?}: {CHANGEABLE_TEXT}", s.kind)));
            }
            sets.push(s);
        }
        // A patch that adds an object (a NodePool, a Cohort) warns as `--patch` does, with
        // the closest existing name: a misspelt name must not pass as a new object unseen.
        Overrides::of_change(patches, sets)?.apply(&mut cur, |_| true, warnings)?;
        let world = build_cluster(&cur, opts)?;
        let before = if prev == 0 {
            &base
        } else {
            &plan.worlds[prev - 1]
        };
        check_same_frame(&base, &world, &origin)?;
        let updated = updated_queues(before, &world);
        let mut present = BTreeSet::new();
        for n in &world.nodes {
            let spec = node_spec(&world, n);
            match nodes.get(&n.name) {
                Some((known, _)) if *known != spec => {
                    return Err(origin.error(format!(
                        "the change alters node {} in place (its labels, taints or capacity): expected new nodes, or nodes taken away",
                        kueuesim_model::names::shown(&n.name)
                    )));
                }
                Some(_) => {}
                None => {
                    nodes.insert(n.name.clone(), (spec, true));
                    let alloc = n
                        .allocatable
                        .iter()
                        .enumerate()
                        .filter(|&(_, &v)| v != 0)
                        .map(|(r, &v)| {
                            let id = kueuesim_model::ResourceId::from_index(r);
                            (world.resources.name(id).to_string(), v)
                        })
                        .collect();
                    plan.late_nodes.push((n.clone(), alloc));
                }
            }
            present.insert(n.name.clone());
        }
        for c in &world.cohorts {
            if cohorts.insert(c.name.clone()) {
                plan.late_cohorts.push(c.name.clone());
            }
        }
        // Nodes in the order of the world's node list: the added ones as the change lists
        // them, the removed ones as the start (or their NodePool) did.
        let added: Vec<String> = world
            .nodes
            .iter()
            .filter(|n| !prev_present.contains(&n.name))
            .map(|n| n.name.clone())
            .collect();
        let removed: Vec<String> = before
            .nodes
            .iter()
            .chain(plan.late_nodes.iter().map(|(n, _)| n))
            .filter(|n| prev_present.contains(&n.name) && !present.contains(&n.name))
            .map(|n| n.name.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        plan.worlds.push(world);
        prev = plan.worlds.len();
        plan.changes.insert(
            f.key,
            ChangePlan {
                epoch: prev - 1,
                updated,
                added,
                removed,
            },
        );
        prev_present = present;
    }
    Ok(Some(plan))
}

/// A `set` written at `at` in a file, as an input of its own that keeps the file's name and
/// places the expression at its line and column (blank lines and spaces before it).
fn placed(at: &Origin<'_>, expr: &str) -> SourceFile {
    // A quoted scalar starts at its quote; the expression one column later.
    let line_text = at
        .file
        .text
        .lines()
        .nth(at.line.saturating_sub(1) as usize)
        .unwrap_or("");
    let quoted = line_text
        .chars()
        .nth(at.column.saturating_sub(1) as usize)
        .is_some_and(|c| c == '"' || c == '\'');
    let column = at.column + u64::from(quoted);
    let mut text = "\n".repeat(at.line.saturating_sub(1) as usize);
    text.push_str(&" ".repeat(column.saturating_sub(1) as usize));
    text.push_str(expr);
    SourceFile {
        name: at.file.name.clone(),
        text,
    }
}

/// One object of a change's `patch`, as a patch document placed in the Timeline's file.
fn patch_doc<'f>(item: &Tree<'f>) -> Result<(ObjectText<'f>, Tree<'f>), ScenarioError> {
    if !matches!(item.value, Value::Map(_)) {
        return Err(item
            .at
            .error("a patch entry: expected an object (apiVersion, kind, metadata, spec)"));
    }
    let kind = item.text_of("kind").unwrap_or_default();
    let api_version = item.text_of("apiVersion").unwrap_or_default();
    let kind_at = match &item.value {
        Value::Map(m) => m.iter().find(|e| e.key == "kind").map(|e| e.value.at),
        _ => None,
    }
    .unwrap_or(item.at);
    if kind.is_empty() {
        return Err(item
            .at
            .error("a patch entry without kind: expected the kind of the object to change"));
    }
    let group = group_of(&api_version);
    if !CHANGEABLE.iter().any(|&(g, k)| g == group && k == kind) {
        return Err(kind_at.error(format!(
            "{} ({}): {CHANGEABLE_TEXT}",
            kueuesim_model::names::escaped(&kind),
            kueuesim_model::names::escaped(&api_version)
        )));
    }
    let (text, origins) = tree::emit(item);
    let doc = ObjectText {
        file: item.at.file,
        text,
        line_offset: 0,
        origins: Some(origins),
        api_version,
        kind,
        kind_pos: kind_at.pos(),
        order: 0,
    };
    Ok((doc, item.clone()))
}

/// The cluster `objects` make, alone: no workloads, no warnings kept.
fn build_cluster(objects: &[ObjectText<'_>], opts: &LoadOptions) -> Result<World, ScenarioError> {
    let opts = LoadOptions {
        strict: opts.strict,
        trace_root: opts.trace_root.clone(),
        seed: opts.seed,
        stream: true,
        patches: Vec::new(),
        sets: Vec::new(),
    };
    Ok(Builder::default().build(objects, opts)?.loaded.world)
}

/// What a node is, for telling a node changed in place from the same node again.
fn node_spec(world: &World, n: &Node) -> String {
    let alloc: Vec<(&str, i64)> = n
        .allocatable
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v != 0)
        .map(|(r, &v)| {
            (
                world
                    .resources
                    .name(kueuesim_model::ResourceId::from_index(r)),
                v,
            )
        })
        .collect();
    format!(
        "{:?} {alloc:?} {:?} {}",
        n.labels, n.taints, n.unschedulable
    )
}

/// The things an epoch keeps from the start, checked at the change: the resources, the
/// ResourceFlavors, the ClusterQueues (none created or deleted), their stop policies and
/// Admission Fair Sharing, the LocalQueues.
fn check_same_frame(base: &World, world: &World, at: &Origin<'_>) -> Result<(), ScenarioError> {
    let names = |w: &World| -> Vec<String> {
        (0..w.resources.len())
            .map(|r| {
                w.resources
                    .name(kueuesim_model::ResourceId::from_index(r))
                    .to_string()
            })
            .collect()
    };
    let (was, now) = (names(base), names(world));
    if let Some(r) = now.iter().find(|r| !was.contains(r)) {
        return Err(at.error(format!(
            "the change brings in resource {r}, which the cluster does not have at the start: expected the resources of the start"
        )));
    }
    let cqs = |w: &World| -> BTreeSet<String> {
        w.cluster_queues.iter().map(|c| c.name.clone()).collect()
    };
    let (was, now) = (cqs(base), cqs(world));
    if let Some(c) = now.difference(&was).next() {
        return Err(at.error(format!(
            "the change creates ClusterQueue {}: a Timeline change alters the ClusterQueues of the start, it does not create one",
            kueuesim_model::names::shown(c)
        )));
    }
    if let Some(c) = was.difference(&now).next() {
        return Err(at.error(format!(
            "the change deletes ClusterQueue {}: a Timeline change alters the ClusterQueues of the start, it does not delete one",
            kueuesim_model::names::shown(c)
        )));
    }
    for cq in &world.cluster_queues {
        let start = base
            .cluster_queues
            .iter()
            .find(|c| c.name == cq.name)
            .expect("the same names");
        if cq.stop_policy != start.stop_policy {
            return Err(at.error(format!(
                "the change sets ClusterQueue {}'s spec.stopPolicy: stopping a ClusterQueue at an offset is not simulated yet (expected its stopPolicy of the start)",
                kueuesim_model::names::shown(&cq.name)
            )));
        }
        if cq.admission_fair_sharing != start.admission_fair_sharing {
            return Err(at.error(format!(
                "the change turns Admission Fair Sharing of ClusterQueue {} on or off: not simulated yet (expected its admissionScope of the start)",
                kueuesim_model::names::shown(&cq.name)
            )));
        }
    }
    // Autoscaled pools and admission checks as the start has them (their nodes aside: a
    // change may add nodes elsewhere): the autoscaler and Kueue's checks are set up once.
    let frame = |w: &World| {
        w.autoscaling.as_ref().map(|a| {
            let pools: Vec<_> = a
                .pools
                .iter()
                .map(|p| {
                    let kueuesim_model::autoscale::AutoscaledPool {
                        name,
                        nodes,
                        laid_out,
                        min,
                        provisioning_delay,
                        scale_down_unneeded,
                    } = p;
                    let max = nodes.len();
                    (
                        name.clone(),
                        max,
                        *laid_out,
                        *min,
                        *provisioning_delay,
                        *scale_down_unneeded,
                    )
                })
                .collect();
            (pools, a.checks.clone())
        })
    };
    if frame(world) != frame(base) {
        return Err(at.error(
            "the change alters a NodePool's spec.autoscaling or a ClusterQueue's admissionChecks: not simulated yet (expected those of the start)",
        ));
    }
    if world.local_queues.len() != base.local_queues.len()
        || world.flavors.len() != base.flavors.len()
    {
        return Err(at.error(
            "the change alters LocalQueues or ResourceFlavors: expected ClusterQueues, Cohorts, NodePools, Nodes",
        ));
    }
    Ok(())
}

/// The ClusterQueues whose spec `world` changes from `before`, or whose cohort tree it changes
/// above them (a Cohort's quota, parent or weight), by name, in `world`'s order.
fn updated_queues(before: &World, world: &World) -> Vec<String> {
    let cohort_name = |w: &World, c: Option<kueuesim_model::CohortId>| {
        c.map(|c| w.cohorts[c.index()].name.clone())
    };
    let cohort_spec = |w: &World, c: &Cohort| {
        format!(
            "{:?} {} {}",
            cohort_name(w, c.parent),
            groups_text(w, &c.resource_groups),
            c.fair_sharing_weight_milli
        )
    };
    let changed_cohorts: BTreeSet<&str> = world
        .cohorts
        .iter()
        .filter(|c| {
            before
                .cohorts
                .iter()
                .find(|b| b.name == c.name)
                .is_none_or(|b| cohort_spec(before, b) != cohort_spec(world, c))
        })
        .map(|c| c.name.as_str())
        .collect();
    let cq_spec = |w: &World, c: &kueuesim_model::ClusterQueue| {
        format!(
            "{:?} {} {:?} {:?} {} {:?} {:?}",
            cohort_name(w, c.cohort),
            groups_text(w, &c.resource_groups),
            c.preemption,
            c.flavor_fungibility,
            c.fair_sharing_weight_milli,
            c.queueing_strategy,
            c.namespace_selector
        )
    };
    world
        .cluster_queues
        .iter()
        .filter(|cq| {
            let own = before
                .cluster_queues
                .iter()
                .find(|b| b.name == cq.name)
                .is_none_or(|b| cq_spec(before, b) != cq_spec(world, cq));
            // A Cohort on the way to the root changed.
            let mut up = cq.cohort;
            let mut above = false;
            let mut steps = 0;
            while let Some(c) = up {
                if changed_cohorts.contains(world.cohorts[c.index()].name.as_str()) {
                    above = true;
                    break;
                }
                up = world.cohorts[c.index()].parent;
                steps += 1;
                if steps > world.cohorts.len() {
                    break; // a cycle
                }
            }
            own || above
        })
        .map(|cq| cq.name.clone())
        .collect()
}

/// Resource groups written with resource names (epochs number resources in their own order).
fn groups_text(w: &World, groups: &[kueuesim_model::ResourceGroup]) -> String {
    let name = |r: kueuesim_model::ResourceId| w.resources.name(r);
    let mut out = String::new();
    for g in groups {
        let covered: Vec<&str> = g.covered.iter().map(|&r| name(r)).collect();
        out.push_str(&format!("{covered:?}"));
        for f in &g.flavors {
            out.push_str(&format!(" {}:", f.flavor.index()));
            for q in &f.resources {
                out.push_str(&format!(
                    " {}={}/{:?}/{:?}",
                    name(q.resource),
                    q.nominal,
                    q.borrowing_limit,
                    q.lending_limit
                ));
            }
        }
        out.push(';');
    }
    out
}

/// `groups` of epoch `from` with their resources numbered as in `to`.
fn remap_groups(
    groups: &[kueuesim_model::ResourceGroup],
    from: &World,
    to: &World,
) -> Vec<kueuesim_model::ResourceGroup> {
    let id = |r: kueuesim_model::ResourceId| {
        to.resources
            .lookup(from.resources.name(r))
            .expect("an epoch's resources are the start's")
    };
    groups
        .iter()
        .map(|g| kueuesim_model::ResourceGroup {
            covered: g.covered.iter().map(|&r| id(r)).collect(),
            flavors: g
                .flavors
                .iter()
                .map(|f| kueuesim_model::FlavorQuotas {
                    flavor: f.flavor,
                    resources: f
                        .resources
                        .iter()
                        .map(|q| kueuesim_model::ResourceQuota {
                            resource: id(q.resource),
                            ..q.clone()
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// The epochs of `world` (built with the plan's late nodes and Cohorts): each a copy of its
/// cluster with the ClusterQueues and Cohorts of that epoch, their ids the start's.
pub(crate) fn epoch_worlds(world: &World, plan: &EpochPlan) -> Vec<World> {
    plan.worlds
        .iter()
        .map(|w| {
            let cohort_id = |name: &str| {
                kueuesim_model::CohortId::from_index(
                    world
                        .cohorts
                        .iter()
                        .position(|c| c.name == name)
                        .expect("every Cohort of an epoch is in the world"),
                )
            };
            let remap = |c: Option<kueuesim_model::CohortId>| {
                c.map(|c| cohort_id(&w.cohorts[c.index()].name))
            };
            let cohorts = world
                .cohorts
                .iter()
                .map(
                    |start| match w.cohorts.iter().find(|c| c.name == start.name) {
                        Some(c) => Cohort {
                            parent: remap(c.parent),
                            resource_groups: remap_groups(&c.resource_groups, w, world),
                            ..c.clone()
                        },
                        None => empty_cohort(&start.name),
                    },
                )
                .collect();
            let cluster_queues = world
                .cluster_queues
                .iter()
                .map(|start| {
                    let c = w
                        .cluster_queues
                        .iter()
                        .find(|c| c.name == start.name)
                        .expect("the same ClusterQueues");
                    kueuesim_model::ClusterQueue {
                        cohort: remap(c.cohort),
                        resource_groups: remap_groups(&c.resource_groups, w, world),
                        ..c.clone()
                    }
                })
                .collect();
            World {
                resources: world.resources.clone(),
                flavors: world.flavors.clone(),
                cluster_queues,
                cohorts,
                local_queues: world.local_queues.clone(),
                priority_classes: world.priority_classes.clone(),
                namespaces: world.namespaces.clone(),
                nodes: world.nodes.clone(),
                topologies: world.topologies.clone(),
                hypernodes: world.hypernodes.clone(),
                kai_queues: world.kai_queues.clone(),
                volcano_queues: world.volcano_queues.clone(),
                workloads: Vec::new(),
                config: world.config.clone(),
                timeline: Vec::new(),
                serving: Vec::new(),
                epochs: Vec::new(),
                late_nodes: world.late_nodes.clone(),
                autoscaling: world.autoscaling.clone(),
            }
        })
        .collect()
}

/// A Cohort no ClusterQueue names and no object declares: nothing in it, nothing above it.
pub(super) fn empty_cohort(name: &str) -> Cohort {
    Cohort {
        name: name.to_string(),
        parent: None,
        resource_groups: Vec::new(),
        fair_sharing_weight_milli: 1000,
        declared: false,
    }
}
