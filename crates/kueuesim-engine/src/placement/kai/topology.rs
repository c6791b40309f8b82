//! KAI's topology plugin for one job: the lowest common domain, the sorted tree (domains
//! fullest-first), candidate domains level by level from the required or preferred level up,
//! `checkJobDomainFit` (copies of the largest task, from the kept per-domain counts), and
//! the preferred-subdomain node scores.

use std::collections::BTreeMap;

use kueuesim_model::{DomainId, ResourceId, Topology, World};

use super::KaiConstraint;
use super::messages::{display_name, job_message, level_label};
use super::nodeplacement::{fill_one_per_node, scored_resource, scorer};
use crate::placement::{Binding, Cluster, GangPods, PodNeeds, fill, undo};

/// The requests of the next `need` pending pods.
fn request_of(pods: &GangPods, need: usize) -> Vec<(usize, i64)> {
    let mut left = need;
    let mut total: BTreeMap<usize, i64> = BTreeMap::new();
    for (needs, slots) in pods {
        let k = slots.iter().filter(|s| s.is_none()).count().min(left);
        left -= k;
        for (r, a) in needs.requests.iter() {
            *total.entry(r.index()).or_default() += a * k as i64;
        }
    }
    total.into_iter().collect()
}

/// Request ÷ free, the max over resources (ignoring `pods`): how full the domain would be.
fn ratio(
    cluster: &Cluster,
    t: usize,
    d: DomainId,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> f64 {
    let mut worst: f64 = 0.0;
    for &(r, q) in request {
        if q == 0 || Some(r) == pods_res {
            continue;
        }
        let free = cluster.domain_free(t, d, r);
        let x = if cluster.domain_alloc(t, d, r) == 0 {
            1000.0
        } else if free <= 0 {
            f64::INFINITY
        } else {
            q as f64 / free as f64
        };
        worst = worst.max(x);
    }
    worst
}

/// The largest task of the pending pods (`maxPodResources`): per kind of resource they ask
/// for, the largest amount; None when the pending tasks ask for different kinds of resources
/// (then `checkJobDomainFit` uses the ratio test) or none is pending.
fn largest_task(pods: &GangPods) -> Option<Vec<(usize, i64)>> {
    let pending: Vec<&PodNeeds> = pods
        .iter()
        .filter(|(_, s)| s.iter().any(Option::is_none))
        .map(|(n, _)| n)
        .collect();
    let kinds = |p: &PodNeeds| -> Vec<ResourceId> {
        p.requests
            .iter()
            .filter(|&(_, a)| a > 0)
            .map(|(r, _)| r)
            .collect()
    };
    let first = kinds(pending.first()?);
    if pending.iter().any(|p| kinds(p) != first) {
        return None;
    }
    Some(
        first
            .iter()
            .map(|&r| {
                (
                    r.index(),
                    pending.iter().map(|p| p.requests.get(r)).max().unwrap_or(0),
                )
            })
            .collect(),
    )
}

/// How many copies of `largest` (the largest pending task) domain `d` of topology `ti` can
/// hold (`AllocatablePods`, KAI's `calcSubTreeAllocatable`), from the cluster's kept
/// per-domain counts rather than a pass over the domain's nodes.
fn allocatable_pods(
    world: &World,
    cluster: &mut Cluster,
    ti: usize,
    d: DomainId,
    largest: &[(usize, i64)],
) -> usize {
    let t = &world.topologies[ti - 1];
    if largest.is_empty() {
        // A task asking for nothing fits any number of times on any node.
        return if t.nodes_of(d).is_empty() {
            0
        } else {
            usize::MAX
        };
    }
    let k = cluster.kai_fit_count(world, largest, ti - 1, d).copies;
    usize::try_from(k).unwrap_or(usize::MAX)
}

/// The pending pods' one kind of pod, when they are all alike and every node passes the
/// static filters for it: then `fill` binds exactly min(need, Σ over a domain's nodes of the
/// copies each can take within its free pod slots) in a domain, whatever the order, so the
/// kept count tells a domain that cannot take them all, and how many it takes, without the
/// dry run.
fn uniform_pod(cluster: &Cluster, pods: &GangPods) -> Option<Vec<(usize, i64)>> {
    let mut pending = pods
        .iter()
        .filter(|(_, s)| s.iter().any(Option::is_none))
        .map(|(n, _)| n);
    let first = pending.next()?;
    if !cluster.statically_plain(first)
        || pending.any(|p| p != first)
        || first.requests.iter().any(|(_, a)| a < 0)
    {
        return None;
    }
    Some(
        first
            .requests
            .iter()
            .filter(|&(_, a)| a > 0)
            .map(|(r, a)| (r.index(), a))
            .collect(),
    )
}

/// The sorted tree: every domain's children ordered fullest-first for `request` (ratio
/// descending, ties by domain name). Each child's ratio is worked out once, not per
/// comparison.
fn sorted_children(
    cluster: &Cluster,
    ti: usize,
    t: &Topology,
    d: DomainId,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> Vec<DomainId> {
    let mut c: Vec<(f64, DomainId)> = t
        .domain(d)
        .children
        .iter()
        .map(|&x| (ratio(cluster, ti, x, request, pods_res), x))
        .collect();
    c.sort_by(|&(ra, a), &(rb, b)| {
        rb.total_cmp(&ra)
            .then_with(|| t.domain(a).name.cmp(&t.domain(b).name))
    });
    c.into_iter().map(|(_, x)| x).collect()
}

/// Domains of the sorted tree below `from` at `depth`, left to right.
fn sorted_level(
    cluster: &Cluster,
    ti: usize,
    t: &Topology,
    from: DomainId,
    depth: u32,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> Vec<DomainId> {
    let mut out = Vec::new();
    let mut stack = vec![from];
    while let Some(d) = stack.pop() {
        if t.domain(d).depth == depth {
            out.push(d);
            continue;
        }
        let mut c = sorted_children(cluster, ti, t, d, request, pods_res);
        c.reverse();
        stack.extend(c);
    }
    out
}

/// The lowest common domain of the input node set (from `within` down while a domain has one
/// child), not below the stop level (`lowestCommonDomainID`).
fn lowest_common_domain(t: &Topology, within: DomainId, stop_depth: u32) -> DomainId {
    let mut lcd = within;
    while t.domain(lcd).children.len() == 1 {
        let child = t.domain(lcd).children[0];
        if t.domain(child).depth > stop_depth {
            break;
        }
        lcd = child;
    }
    lcd
}

/// With a required level and pods already placed: the required-level domain holding the
/// first of them, to which the candidates are limited (`getRelevantDomainsWithAllocatedPods`).
fn anchor_domain(t: &Topology, pods: &GangPods, c: KaiConstraint) -> Option<DomainId> {
    c.required.and_then(|req| {
        pods.iter()
            .flat_map(|(_, s)| s.iter().flatten())
            .filter_map(|&n| t.domain_of(n))
            .map(|d| {
                t.ancestors(d)
                    .find(|&a| t.domain(a).depth == req)
                    .unwrap_or(d)
            })
            .next()
    })
}

/// Node scores by preferred-level subdomain under the LCD (`calculateNodeScores`: roomiest
/// last, highest): per node a group, per group a score.
#[allow(clippy::too_many_arguments)]
fn preferred_scores(
    cluster: &Cluster,
    world: &World,
    ti: usize,
    t: &Topology,
    lcd: DomainId,
    preferred: u32,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> (Vec<u32>, Vec<f64>) {
    let mut group_of = vec![0u32; world.nodes.len()];
    let mut group_scores = vec![0.0];
    let subs = sorted_level(cluster, ti, t, lcd, preferred, request, pods_res);
    let n = subs.len();
    for (i, &d) in subs.iter().enumerate() {
        let g = group_scores.len() as u32;
        group_scores.push(((10 * (i + 1) / n) * 10_000) as f64);
        for &node in t.nodes_of(d) {
            group_of[node.index()] = g;
        }
    }
    (group_of, group_scores)
}

/// The topology plugin's answer for one subgroup set (`subSetNodesFn`): the candidate domains
/// in the order allocation tries them (each still to pass `checkJobDomainFit`, checked lazily
/// by the caller so a hit early in the list costs nothing more), the node scores of the
/// preferred level (per node, a group; per group, a score), and the closing message.
pub(super) struct Candidates {
    pub(super) domains: Vec<DomainId>,
    pub(super) group_of: Vec<u32>,
    pub(super) group_scores: Vec<f64>,
    pub(super) unsatisfied: String,
}

/// Candidate domains for the pending pods of `pods` (`need` of them) under constraint `c`,
/// inside domain `within` (the parent subgroup's domain, or the root).
#[allow(clippy::too_many_arguments)]
pub(super) fn candidates(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    within: DomainId,
    job_name: &str,
    subgroup: Option<&str>,
) -> Result<Candidates, String> {
    let t = &world.topologies[c.topology];
    let ti = 1 + c.topology;
    let pods_res = world.resources.lookup("pods").map(|r| r.index());
    let request = request_of(pods, need);
    let stop_depth = c.preferred.or(c.required).unwrap_or(0);
    let lcd = lowest_common_domain(t, within, stop_depth);
    let requirement = c.required.map(|d| level_label(t, d)).unwrap_or_default();
    let who = subgroup.map_or(String::new(), |s| format!(", subgroup {s}"));
    let unsatisfied = format!(
        "topology {}, requirement {requirement} couldn't be satisfied for job <{job_name}>{who}",
        t.name
    );
    if let Err(e) = domain_fit(world, cluster, ti, lcd, pods, need, &request, pods_res) {
        return Err(job_message(vec![e, unsatisfied]));
    }
    // Node scores by preferred-level subdomain under the LCD (roomiest last, highest). Without
    // a preferred level every node is in group 0 (the scorer reads a missing entry as 0), so
    // nothing the size of the cluster is made.
    let (group_of, group_scores) = match c.preferred {
        Some(p) => preferred_scores(cluster, world, ti, t, lcd, p, &request, pods_res),
        None => (Vec::new(), vec![0.0]),
    };
    let anchor = anchor_domain(t, pods, c);
    let top = c.required.unwrap_or(0);
    let mut domains = Vec::new();
    for depth in (top..=stop_depth.max(top)).rev() {
        let level: Vec<DomainId> = if depth == t.domain(lcd).depth {
            vec![lcd]
        } else if depth < t.domain(lcd).depth {
            continue;
        } else {
            sorted_level(cluster, ti, t, lcd, depth, &request, pods_res)
        };
        domains.extend(level.into_iter().filter(|&d| {
            anchor.is_none_or(|a| t.ancestors(d).any(|x| x == a) || t.ancestors(a).any(|x| x == d))
        }));
    }
    Ok(Candidates {
        domains,
        group_of,
        group_scores,
        unsatisfied,
    })
}

/// `checkJobDomainFit` for candidate `d` of constraint `c` and the pending pods of `pods`.
pub(super) fn candidate_fits(
    world: &World,
    cluster: &mut Cluster,
    c: KaiConstraint,
    d: DomainId,
    pods: &GangPods,
    need: usize,
) -> Result<(), String> {
    let pods_res = world.resources.lookup("pods").map(|r| r.index());
    let request = request_of(pods, need);
    domain_fit(
        world,
        cluster,
        1 + c.topology,
        d,
        pods,
        need,
        &request,
        pods_res,
    )
}

/// The winning domain's bindings when the pending pods are all alike (`uniform_pod`), found
/// without listing every candidate domain; None when no candidate takes them all (the general
/// path then words the failure) or the lowest common domain itself fails `checkJobDomainFit`.
///
/// With alike pods `fill` places all `need` in a domain exactly when the domain's kept count
/// within pod slots reaches `need`, so the winner of the general path (the first domain of
/// the candidate list, in sorted-tree order, that places them all) is the first domain in
/// that order whose count reaches `need`. A domain's count is at most its parent's (its nodes
/// are a subset), so a subtree whose root falls short holds no winner and is neither sorted
/// nor given ratios: only the children that may hold one are ordered, by the same ratio and
/// name as `sortTree`, and the walk stops at the first hit. The decision is the general
/// path's; only the domains that cannot win are skipped.
fn first_fitting(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    shape: &[(usize, i64)],
) -> Option<Vec<Binding>> {
    if shape.is_empty() {
        // A task asking for nothing: `allocatable_pods` words its own counts.
        return None;
    }
    let t = &world.topologies[c.topology];
    let ti = 1 + c.topology;
    let stop_depth = c.preferred.or(c.required).unwrap_or(0);
    let lcd = lowest_common_domain(t, DomainId::ROOT, stop_depth);
    let slot = cluster.kai_keep(world, shape);
    let need64 = need as u64;
    // `checkJobDomainFit` on the lowest common domain: its failure has its own message.
    if cluster.kai_counts_of(slot, c.topology)[lcd.index()].copies < need64 {
        return None;
    }
    let anchor = anchor_domain(t, pods, c);
    let pods_res = world.resources.lookup("pods").map(|r| r.index());
    // `request_of` for alike pods: `need` times the one pod's requests. (The amounts it adds
    // beyond the shape are zero, which `ratio` skips.)
    let request: Vec<(usize, i64)> = shape.iter().map(|&(r, a)| (r, a * need as i64)).collect();
    let top = c.required.unwrap_or(0);
    let lcd_depth = t.domain(lcd).depth;
    let walk = Walk {
        cluster,
        t,
        ti,
        slot,
        topology: c.topology,
        need: need64,
        anchor,
        request: &request,
        pods_res,
    };
    let winner = (top..=stop_depth.max(top)).rev().find_map(|depth| {
        if depth < lcd_depth {
            None
        } else {
            walk.first_at(lcd, depth)
        }
    })?;
    let (group_of, group_scores) = match c.preferred {
        Some(p) => preferred_scores(cluster, world, ti, t, lcd, p, &request, pods_res),
        None => (Vec::new(), vec![0.0]),
    };
    let placed = dry_run(
        world,
        cluster,
        (c.topology, winner),
        pods,
        need,
        true,
        &group_of,
        &group_scores,
    );
    // Failing cannot happen for alike pods (see above); the general path decides then.
    debug_assert!(
        placed.is_ok(),
        "a domain whose count reaches need failed to place them"
    );
    placed.ok()
}

/// The dry run in one domain (`within`: a `world.topologies` index and a domain of it):
/// `need` pods placed on its nodes by KAI's node scoring. Ok: the bindings, left on the node
/// capacity for the caller to commit (`Cluster::commit_bound`) as upstream commits a
/// successful allocation's statement instead of redoing it; Err: how many pods it bound
/// before running out, all taken off again (`Statement.Discard`). `alike`: the pending pods
/// are all alike and pass the static filters everywhere (`uniform_pod`), so that with one
/// score group the kept bin-pack order (`Cluster::kai_binpack_in`), or else
/// `fill_one_per_node`, may stand in for `fill`.
#[allow(clippy::too_many_arguments)]
fn dry_run(
    world: &World,
    cluster: &mut Cluster,
    within: (usize, DomainId),
    pods: &GangPods,
    need: usize,
    alike: bool,
    group_of: &[u32],
    group_scores: &[f64],
) -> Result<Vec<Binding>, usize> {
    let (ti, d) = within;
    if alike
        && group_of.is_empty()
        && let Some(placed) = cluster.kai_binpack_in(world, ti, d, pods, need)
    {
        return placed;
    }
    let nodes = world.topologies[ti].nodes_of(d);
    let resource = scored_resource(cluster, pods);
    let mut s = scorer(
        world,
        &cluster.nodes,
        resource,
        &cluster.name_rank,
        nodes,
        group_of,
        group_scores,
    )
    .with_plain_nodes(cluster.plain_nodes);
    if alike && let Some(placed) = fill_one_per_node(&mut cluster.nodes, nodes, pods, need, &s) {
        return placed;
    }
    fill(world, &mut cluster.nodes, nodes, pods, need, &mut s).map_err(|(b, _)| {
        undo(&mut cluster.nodes, pods, &b);
        b.len()
    })
}

/// The sorted-tree walk of `first_fitting`.
struct Walk<'a> {
    cluster: &'a Cluster,
    t: &'a Topology,
    ti: usize,
    slot: usize,
    topology: usize,
    need: u64,
    anchor: Option<DomainId>,
    request: &'a [(usize, i64)],
    pods_res: Option<usize>,
}

impl Walk<'_> {
    /// Whether domain `d` may hold a winner: its count within pod slots reaches `need`.
    fn may_hold(&self, d: DomainId) -> bool {
        self.cluster.kai_counts_of(self.slot, self.topology)[d.index()].within_pod_slots
            >= self.need
    }

    /// The first domain at `depth` under `d`, in sorted-tree order, that takes all the pods.
    fn first_at(&self, d: DomainId, depth: u32) -> Option<DomainId> {
        let t = self.t;
        if t.domain(d).depth == depth {
            let related = self
                .anchor
                .is_none_or(|a| t.ancestors(d).any(|x| x == a) || t.ancestors(a).any(|x| x == d));
            return (related && self.may_hold(d)).then_some(d);
        }
        // `sortTree`'s order (ratio descending, then name) among the children that may hold
        // a winner; a stable sort of them keeps the relative order the full sort gives.
        let mut c: Vec<(f64, DomainId)> = t
            .domain(d)
            .children
            .iter()
            .filter(|&&x| self.may_hold(x))
            .map(|&x| {
                (
                    ratio(self.cluster, self.ti, x, self.request, self.pods_res),
                    x,
                )
            })
            .collect();
        c.sort_by(|&(ra, a), &(rb, b)| {
            rb.total_cmp(&ra)
                .then_with(|| t.domain(a).name.cmp(&t.domain(b).name))
        });
        c.into_iter().find_map(|(_, x)| self.first_at(x, depth))
    }
}

/// One allocation attempt of `need` tasks within the topology constraint: the first
/// candidate domain where every task places wins.
pub(super) fn topology_attempt(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    job_name: &str,
) -> Result<Vec<Binding>, String> {
    if let Some(shape) = uniform_pod(cluster, pods)
        && let Some(found) = first_fitting(world, cluster, pods, need, c, &shape)
    {
        return Ok(found);
    }
    every_candidate(world, cluster, pods, need, c, job_name)
}

/// `topology_attempt` over the whole candidate list: each domain in order gets a dry run
/// (or, for alike pods, its kept count) until one places every task, and the failure is
/// worded from all of them.
fn every_candidate(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    job_name: &str,
) -> Result<Vec<Binding>, String> {
    let t = &world.topologies[c.topology];
    let uniform = uniform_pod(cluster, pods);
    let cands = candidates(
        world,
        cluster,
        pods,
        need,
        c,
        DomainId::ROOT,
        job_name,
        None,
    )?;
    // Per domain tried: how many of the tasks it could take. Worded only if none takes them
    // all, so a long list of domains that cannot costs no strings.
    let mut short: Vec<(DomainId, u64)> = Vec::new();
    for &d in &cands.domains {
        if let Some(shape) = &uniform {
            let k = cluster
                .kai_fit_count(world, shape, c.topology, d)
                .within_pod_slots;
            if k < need as u64 {
                // What the dry run below would bind before running out (`uniform_pod`).
                short.push((d, k));
                continue;
            }
        }
        match dry_run(
            world,
            cluster,
            (c.topology, d),
            pods,
            need,
            uniform.is_some(),
            &cands.group_of,
            &cands.group_scores,
        ) {
            Ok(b) => return Ok(b),
            Err(bound) => short.push((d, bound as u64)),
        }
    }
    let mut errors: Vec<String> = short
        .into_iter()
        .map(|(d, k)| {
            format!(
                "node-group {} can allocate only {k} of {need} required pods",
                display_name(t, d)
            )
        })
        .collect();
    errors.push(cands.unsatisfied);
    Err(job_message(errors))
}

/// `checkJobDomainFit`: enough room for `need` copies of the largest task, or (tasks of
/// different kinds) request ÷ free ≤ 1.
#[allow(clippy::too_many_arguments)]
fn domain_fit(
    world: &World,
    cluster: &mut Cluster,
    ti: usize,
    d: DomainId,
    pods: &GangPods,
    need: usize,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> Result<(), String> {
    let t = &world.topologies[ti - 1];
    match largest_task(pods).map(|largest| allocatable_pods(world, cluster, ti, d, &largest)) {
        Some(k) if k < need => Err(format!(
            "node-group {} can allocate only {k} of {need} required pods",
            display_name(t, d)
        )),
        Some(_) => Ok(()),
        None if ratio(cluster, ti, d, request, pods_res) > 1.0 => Err(format!(
            "node-group(s) didn't have enough resources in {}",
            display_name(t, d)
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::{Labels, Node, NodeId, ResourceList};
    use proptest::prelude::*;

    /// Per zone, per spine, per leaf, the nodes' (GPUs, cpu).
    type Layout = Vec<Vec<Vec<Vec<(i64, i64)>>>>;

    /// A zone/spine/leaf cluster of `layout`, node names shuffled by `salt` so that name
    /// order and id order differ.
    fn world(layout: &Layout, salt: u32) -> World {
        let mut w = World::default();
        let gpu = w.resources.intern(kueuesim_model::resources::GPU);
        let cpu = w.resources.intern("cpu");
        for (z, spines) in layout.iter().enumerate() {
            for (s, leaves) in spines.iter().enumerate() {
                for (l, nodes) in leaves.iter().enumerate() {
                    for &(g, c) in nodes {
                        let mut alloc = vec![0; 2];
                        alloc[gpu.index()] = g;
                        alloc[cpu.index()] = c;
                        let i = w.nodes.len() as u32;
                        w.nodes.push(Node {
                            name: format!("n{:03}-{i}", i.wrapping_mul(salt) % 997),
                            labels: Labels::new(vec![
                                ("zone".into(), format!("z{z}")),
                                ("spine".into(), format!("z{z}-s{s}")),
                                ("leaf".into(), format!("z{z}-s{s}-l{l}")),
                            ]),
                            allocatable: alloc,
                            taints: vec![],
                            unschedulable: false,
                        });
                    }
                }
            }
        }
        w.topologies = vec![Topology::from_levels(
            "t",
            &["zone".into(), "spine".into(), "leaf".into()],
            &w.nodes,
        )];
        w
    }

    fn layout() -> impl Strategy<Value = Layout> {
        let node = (0i64..=8, 1i64..=16);
        let leaf = prop::collection::vec(node, 1..5);
        let spine = prop::collection::vec(leaf, 1..4);
        let zone = prop::collection::vec(spine, 1..4);
        prop::collection::vec(zone, 1..4)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The shortcut for alike pods (`first_fitting`) picks the domain and bindings the
        /// whole candidate list picks, on random busy clusters, gang sizes, constraints and
        /// already-bound pods; and it declines exactly when the list finds no domain.
        #[test]
        fn first_fitting_matches_every_candidate(
            layout in layout(),
            salt in 1u32..500,
            busy in prop::collection::vec((0usize..200, 1i64..=8, 0i64..=8), 0..40),
            (gpus, cpus, count, bound) in (0i64..=4, 1i64..=6, 1usize..12, 0usize..3),
            levels in (0u32..=3, 0u32..=3),
        ) {
            let w = world(&layout, salt);
            let mut cluster = Cluster::new(&w);
            let (gpu, cpu) = (
                w.resources.lookup(kueuesim_model::resources::GPU).unwrap(),
                w.resources.lookup("cpu").unwrap(),
            );
            for &(n, g, c) in &busy {
                let node = NodeId::from_index(n % w.nodes.len());
                let req = ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]);
                if cluster.nodes.fits(node, &req) {
                    cluster.apply(&w, node, &req, 1);
                }
            }
            let needs = crate::placement::PodNeeds {
                requests: ResourceList::from_pairs(vec![(gpu, gpus), (cpu, cpus)]),
                node_selector: Labels::default(),
                tolerations: vec![],
            };
            // Some pods already bound (on the first nodes they fit, as a previous attempt
            // would leave them), so that the required level's anchor applies.
            let mut slots = vec![None; count + bound];
            for slot in slots.iter_mut().take(bound) {
                let fit = (0..w.nodes.len())
                    .map(NodeId::from_index)
                    .find(|&n| cluster.nodes.fits(n, &needs.requests));
                if let Some(n) = fit {
                    cluster.apply(&w, n, &needs.requests, 1);
                    *slot = Some(n);
                }
            }
            let pods = vec![(needs, slots)];
            let need = pods[0].1.iter().filter(|s| s.is_none()).count();
            let (required, preferred) = levels;
            let c = KaiConstraint {
                topology: 0,
                required: (required > 0).then_some(required),
                preferred: (preferred >= required.max(1)).then_some(preferred),
            };
            prop_assume!(c.required.is_some() || c.preferred.is_some());
            let shape = uniform_pod(&cluster, &pods).expect("alike pods on plain nodes");
            let mut fast_cluster = cluster.clone();
            let fast = first_fitting(&w, &mut fast_cluster, &pods, need, c, &shape);
            let general = every_candidate(&w, &mut cluster, &pods, need, c, "ns/pg");
            match (fast, general) {
                (Some(b), Ok(g)) => prop_assert_eq!(b, g),
                (None, Err(_)) => {}
                (f, g) => prop_assert!(false, "shortcut {:?}, candidate list {:?}", f, g),
            }
            // Both leave the same bindings on the nodes (the winning dry run's, kept for the
            // commit), or none.
            for n in 0..w.nodes.len() {
                let n = NodeId::from_index(n);
                prop_assert_eq!(fast_cluster.nodes.free(n, gpu.index()), cluster.nodes.free(n, gpu.index()));
            }
        }
    }
}
