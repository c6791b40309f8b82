//! KAI Scheduler's allocate action for one job (a PodGroup): tasks to allocate are
//! `minMember − allocated` while below the minimum, then one per pass; with a topology
//! constraint the topology plugin's candidate domains (sorted tree, bottom-up candidate
//! levels, first fitting domain wins) and preferred-subdomain node scores, then the
//! nodeplacement plugin's bin-pack or spread; score ties go by node name (KAI's
//! `pkg/scheduler/actions/allocate`, `plugins/topology`, `plugins/nodeplacement`).

use std::collections::BTreeMap;

use kueuesim_model::{DomainId, NodeId, PlacementStrategy, ResourceId, Topology, World};

use super::{
    Binding, Cluster, GangPods, NodeCapacity, Placement, PodNeeds, Scorer, counts, fill, undo,
    with_bindings,
};

/// A KAI topology constraint resolved against its Topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KaiConstraint {
    /// Index into `world.topologies`.
    pub topology: usize,
    /// Depth (1 = broadest level) of `requiredTopologyLevel`.
    pub required: Option<u32>,
    /// Depth of `preferredTopologyLevel`.
    pub preferred: Option<u32>,
}

/// A KAI job as the allocate action sees it.
pub struct KaiJob<'a> {
    /// Its pods.
    pub pods: &'a GangPods,
    /// PodGroup `minMember`.
    pub min_member: usize,
    /// Its topology constraint, if any.
    pub constraint: Option<KaiConstraint>,
    /// `<namespace>/<podgroup>` for messages.
    pub job_name: &'a str,
    /// `<namespace>/<pod>` of a pod, for messages.
    pub pod_name: &'a dyn Fn(usize, usize) -> String,
}

/// KAI's wording of a resource in fit errors.
fn resource_word(name: &str) -> String {
    match name {
        kueuesim_model::resources::GPU => "GPUs".into(),
        "cpu" => "CPU".into(),
        other => other.into(),
    }
}

/// `TasksFitErrors`: "no nodes with enough resources were found: <n> <reason>. \n...".
fn fit_errors(world: &World, cap: &NodeCapacity, pod: &PodNeeds, nodes: &[NodeId]) -> String {
    let mut hist: BTreeMap<String, usize> = BTreeMap::new();
    // Nodes short of resources are counted by which of the pod's requests they are short of
    // (a bit set over `pod.requests`), without a string per node: this runs over every node
    // on every failed attempt. The words are made once per distinct set below.
    let requests: Vec<(ResourceId, i64)> = pod.requests.iter().collect();
    let mut short_sets: BTreeMap<u64, usize> = BTreeMap::new();
    for &n in nodes {
        if super::feasible(world, cap, n, pod) {
            continue;
        }
        if !super::statically_feasible(world, n, pod) {
            let reason = super::node_rejections(world, cap, n, pod)
                .into_iter()
                .next()
                .unwrap_or_default();
            *hist.entry(reason).or_default() += 1;
        } else {
            let set = requests
                .iter()
                .enumerate()
                .filter(|&(_, &(r, a))| a > cap.free(n, r.index()))
                .fold(0u64, |set, (i, _)| set | 1 << i.min(63));
            *short_sets.entry(set).or_default() += 1;
        }
    }
    for (set, count) in short_sets {
        let reason = if set == 0 {
            "Too many pods".to_string()
        } else {
            let short: Vec<String> = requests
                .iter()
                .enumerate()
                .filter(|&(i, _)| set & (1 << i.min(63)) != 0)
                .map(|(_, &(r, _))| resource_word(world.resources.name(r)))
                .collect();
            format!("node(s) didn't have enough resources: {}", short.join(", "))
        };
        *hist.entry(reason).or_default() += count;
    }
    let parts: Vec<String> = hist.iter().map(|(r, c)| format!("{c} {r}")).collect();
    format!(
        "no nodes with enough resources were found: {}.",
        parts.join(". \n")
    )
}

/// The nodeplacement plugin's score inside `fill`, plus the topology plugin's preferred
/// subdomain score (×10⁴) as the group score.
struct KaiScorer<'a> {
    /// Per node: its preferred-level subdomain's score group (0: none).
    group_of: &'a [u32],
    group_scores: &'a [f64],
    /// GPU tasks are scored on GPUs, CPU-only tasks on cpu.
    resource: Option<usize>,
    strategy: PlacementStrategy,
    min_free: i64,
    max_free: i64,
    world: &'a World,
    name_rank: &'a [u32],
}

impl Scorer for KaiScorer<'_> {
    fn group(&self, node: NodeId) -> usize {
        self.group_of.get(node.index()).map_or(0, |&g| g as usize)
    }
    fn group_score(&mut self, group: usize) -> f64 {
        self.group_scores[group]
    }
    fn node_score(&self, cap: &NodeCapacity, node: NodeId, _pod: &PodNeeds) -> f64 {
        let Some(r) = self.resource else { return 0.0 };
        let alloc = self
            .world
            .node(node)
            .allocatable
            .get(r)
            .copied()
            .unwrap_or(0);
        if alloc == 0 {
            return 0.0;
        }
        let free = cap.free(node, r);
        match self.strategy {
            PlacementStrategy::Binpack => {
                if self.max_free == 0 {
                    0.0
                } else if self.max_free == self.min_free {
                    9.0
                } else {
                    9.0 * (1.0
                        - (free - self.min_free) as f64 / (self.max_free - self.min_free) as f64)
                }
            }
            PlacementStrategy::Spread => free as f64 / alloc as f64,
        }
    }
    fn tie(&self, node: NodeId) -> u64 {
        u64::MAX - u64::from(self.name_rank[node.index()])
    }
    fn bound(&mut self, _node: NodeId) {}
}

/// The resource the nodeplacement plugin scores a task on: GPUs for GPU tasks, else cpu.
fn scored_resource(cluster: &Cluster, pods: &GangPods) -> Option<usize> {
    let gpu_task = cluster.res.gpu.is_some_and(|g| {
        pods.iter()
            .any(|(n, _)| n.requests.get(ResourceId::from_index(g)) > 0)
    });
    if gpu_task {
        cluster.res.gpu
    } else {
        cluster.res.cpu
    }
}

fn scorer<'a>(
    world: &'a World,
    nodes: &NodeCapacity,
    resource: Option<usize>,
    name_rank: &'a [u32],
    candidates: &[NodeId],
    group_of: &'a [u32],
    group_scores: &'a [f64],
) -> KaiScorer<'a> {
    let (mut min_free, mut max_free) = (i64::MAX, 0);
    if let Some(r) = resource {
        for &n in candidates {
            if world.node(n).allocatable.get(r).copied().unwrap_or(0) == 0 {
                continue;
            }
            let f = nodes.free(n, r);
            min_free = min_free.min(f);
            max_free = max_free.max(f);
        }
    }
    KaiScorer {
        group_of,
        group_scores,
        resource,
        strategy: world.config.kai.placement_strategy,
        min_free: if min_free == i64::MAX { 0 } else { min_free },
        max_free,
        world,
        name_rank,
    }
}

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

/// How many of the next `need` pods the domain can hold, counting copies of the largest task
/// per node (`AllocatablePods`, for jobs whose tasks ask for the same kinds of resources), or
/// None when the tasks differ and the ratio test applies.
fn allocatable_pods(
    world: &World,
    cluster: &Cluster,
    nodes: &[NodeId],
    pods: &GangPods,
) -> Option<usize> {
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
    let max: Vec<(ResourceId, i64)> = first
        .iter()
        .map(|&r| {
            (
                r,
                pending.iter().map(|p| p.requests.get(r)).max().unwrap_or(0),
            )
        })
        .collect();
    let mut count = 0usize;
    for &n in nodes {
        let fit = max
            .iter()
            .map(|&(r, a)| (cluster.nodes.free(n, r.index()).max(0) / a) as usize)
            .min()
            .unwrap_or(usize::MAX);
        count = count.saturating_add(fit);
    }
    let _ = world;
    Some(count)
}

/// The sorted tree: every domain's children ordered fullest-first for `request` (ratio
/// descending, ties by domain id), down to `stop_depth`.
fn sorted_children(
    cluster: &Cluster,
    ti: usize,
    t: &Topology,
    d: DomainId,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> Vec<DomainId> {
    let mut c = t.domain(d).children.clone();
    c.sort_by(|&a, &b| {
        ratio(cluster, ti, b, request, pods_res)
            .total_cmp(&ratio(cluster, ti, a, request, pods_res))
            .then_with(|| t.domain(a).name.cmp(&t.domain(b).name))
    });
    c
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

/// The topology plugin's answer for one subgroup set (`subSetNodesFn`): the candidate domains
/// in the order allocation tries them (each still to pass `checkJobDomainFit`, checked lazily
/// by the caller so a hit early in the list costs nothing more), the node scores of the
/// preferred level (per node, a group; per group, a score), and the closing message.
struct Candidates {
    domains: Vec<DomainId>,
    group_of: Vec<u32>,
    group_scores: Vec<f64>,
    unsatisfied: String,
}

/// Candidate domains for the pending pods of `pods` (`need` of them) under constraint `c`,
/// inside domain `within` (the parent subgroup's domain, or the root).
#[allow(clippy::too_many_arguments)]
fn candidates(
    world: &World,
    cluster: &Cluster,
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
    // The lowest common domain of the input node set, not below the stop level.
    let mut lcd = within;
    while t.domain(lcd).children.len() == 1 {
        let child = t.domain(lcd).children[0];
        if t.domain(child).depth > stop_depth {
            break;
        }
        lcd = child;
    }
    let requirement = c.required.map(|d| level_label(t, d)).unwrap_or_default();
    let who = subgroup.map_or(String::new(), |s| format!(", subgroup {s}"));
    let unsatisfied = format!(
        "topology {}, requirement {requirement} couldn't be satisfied for job <{job_name}>{who}",
        t.name
    );
    if let Err(e) = domain_fit(world, cluster, ti, lcd, pods, need, &request, pods_res) {
        return Err(job_message(vec![e, unsatisfied]));
    }
    // Node scores by preferred-level subdomain under the LCD (roomiest last, highest).
    let mut group_of = vec![0u32; world.nodes.len()];
    let mut group_scores = vec![0.0];
    if let Some(p) = c.preferred {
        let subs = sorted_level(cluster, ti, t, lcd, p, &request, pods_res);
        let n = subs.len();
        for (i, &d) in subs.iter().enumerate() {
            let g = group_scores.len() as u32;
            group_scores.push(((10 * (i + 1) / n) * 10_000) as f64);
            for &node in t.nodes_of(d) {
                group_of[node.index()] = g;
            }
        }
    }
    // Required level with pods already placed: only domains holding them.
    let anchor: Option<DomainId> = c.required.and_then(|req| {
        pods.iter()
            .flat_map(|(_, s)| s.iter().flatten())
            .filter_map(|&n| t.domain_of(n))
            .map(|d| {
                t.ancestors(d)
                    .find(|&a| t.domain(a).depth == req)
                    .unwrap_or(d)
            })
            .next()
    });
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
fn candidate_fits(
    world: &World,
    cluster: &Cluster,
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

/// One allocation attempt of `need` tasks within the topology constraint: the first
/// candidate domain where every task places wins.
fn topology_attempt(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    job_name: &str,
) -> Result<Vec<Binding>, String> {
    let t = &world.topologies[c.topology];
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
    let mut errors = Vec::new();
    for &d in &cands.domains {
        let nodes = t.nodes_of(d);
        let resource = scored_resource(cluster, pods);
        let mut s = scorer(
            world,
            &cluster.nodes,
            resource,
            &cluster.name_rank,
            nodes,
            &cands.group_of,
            &cands.group_scores,
        );
        match fill(world, &mut cluster.nodes, nodes, pods, need, &mut s) {
            Ok(b) => {
                undo(&mut cluster.nodes, pods, &b);
                return Ok(b);
            }
            Err((b, _)) => {
                undo(&mut cluster.nodes, pods, &b);
                errors.push(format!(
                    "node-group {} can allocate only {} of {need} required pods",
                    display_name(t, d),
                    b.len()
                ));
            }
        }
    }
    errors.push(cands.unsatisfied);
    Err(job_message(errors))
}

/// `checkJobDomainFit`: enough room for `need` copies of the largest task, or (tasks of
/// different kinds) request ÷ free ≤ 1.
#[allow(clippy::too_many_arguments)]
fn domain_fit(
    world: &World,
    cluster: &Cluster,
    ti: usize,
    d: DomainId,
    pods: &GangPods,
    need: usize,
    request: &[(usize, i64)],
    pods_res: Option<usize>,
) -> Result<(), String> {
    let t = &world.topologies[ti - 1];
    match allocatable_pods(world, cluster, t.nodes_of(d), pods) {
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

fn display_name(t: &Topology, d: DomainId) -> String {
    if d == DomainId::ROOT {
        "root".into()
    } else {
        t.domain(d).value.clone()
    }
}

fn level_label(t: &Topology, depth: u32) -> String {
    match &t.source {
        kueuesim_model::topology::TopologySource::Levels { labels } => {
            labels[depth as usize - 1].clone()
        }
        kueuesim_model::topology::TopologySource::HyperNodes { .. } => String::new(),
    }
}

/// `JobFitErrorsToMessage`: the single error, or "Unable to schedule podgroup: " with the
/// sorted messages joined by ". \n", ending with ".".
fn job_message(mut errors: Vec<String>) -> String {
    if errors.len() == 1 {
        return format!("{}.", errors.remove(0));
    }
    errors.sort();
    let mut counted: Vec<String> = Vec::new();
    let mut i = 0;
    while i < errors.len() {
        let j = errors[i..]
            .iter()
            .position(|e| *e != errors[i])
            .map_or(errors.len(), |k| i + k);
        counted.push(if j - i > 1 {
            format!("{} {}", j - i, errors[i])
        } else {
            errors[i].clone()
        });
        i = j;
    }
    format!("Unable to schedule podgroup: {}.", counted.join(". \n"))
}

/// Allocates the job: `minMember − allocated` tasks while below the minimum, then one task
/// per pass (KAI pushes the job back and keeps going in the same cycle).
pub fn place(world: &World, cluster: &mut Cluster, job: &KaiJob<'_>) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    loop {
        let (bound, pending) = counts(&pods);
        if pending == 0 {
            break;
        }
        let need = if bound < job.min_member {
            (job.min_member - bound).min(pending)
        } else {
            1
        };
        let attempt = match job.constraint {
            Some(c) => topology_attempt(world, cluster, &pods, need, c, job.job_name),
            None => {
                let all = cluster.all_nodes.clone();
                let (group_of, scores) = (Vec::new(), vec![0.0]);
                let resource = scored_resource(cluster, &pods);
                let indexed = world.config.kai.placement_strategy == PlacementStrategy::Binpack
                    && resource.is_some()
                    && resource == cluster.res.gpu
                    && pods.iter().all(|(n, slots)| {
                        slots.iter().all(Option::is_some)
                            || resource
                                .is_some_and(|g| n.requests.get(ResourceId::from_index(g)) > 0)
                    });
                let filled = if indexed {
                    fill_binpack(world, cluster, &pods, need)
                } else {
                    let mut s = scorer(
                        world,
                        &cluster.nodes,
                        resource,
                        &cluster.name_rank,
                        &all,
                        &group_of,
                        &scores,
                    );
                    fill(world, &mut cluster.nodes, &all, &pods, need, &mut s)
                };
                match filled {
                    Ok(b) => {
                        undo(&mut cluster.nodes, &pods, &b);
                        Ok(b)
                    }
                    Err((b, (ps, idx))) => {
                        let failed = with_bindings(&pods, &b);
                        let why = fit_errors(world, &cluster.nodes, &failed[ps].0, &all);
                        undo(&mut cluster.nodes, &pods, &b);
                        Err(if bound < job.min_member {
                            format!(
                                "Resources were found for {} pods while {} are required for gang scheduling. Additional pods cannot be scheduled due to: {why}",
                                bound + b.len(),
                                job.min_member
                            )
                        } else {
                            format!(
                                "Resources were not found for pod {} due to: {why}",
                                (job.pod_name)(ps, idx)
                            )
                        })
                    }
                }
            }
        };
        match attempt {
            Ok(b) => {
                for &(ps, _, n) in &b {
                    cluster.apply(world, n, &pods[ps].0.requests, 1);
                }
                if let Some(c) = job.constraint {
                    let t = &world.topologies[c.topology];
                    let placed = with_bindings(&pods, &b);
                    out.domain = placed
                        .iter()
                        .flat_map(|(_, s)| s.iter().flatten())
                        .filter_map(|&n| t.domain_of(n))
                        .reduce(|a, b| t.lca(a, b))
                        .map(|d| display_name(t, d));
                }
                pods = with_bindings(&pods, &b);
                out.bound.extend(b);
            }
            Err(message) => {
                let (ps, idx) = super::first_pending(&pods).unwrap_or((0, 0));
                out.unplaced = Some((ps, idx, message));
                break;
            }
        }
    }
    out
}

/// `fill` with KAI's bin-pack node score on GPUs and no topology, over every node, using the
/// cluster's (free GPUs, name rank) order instead of scoring every node: the score falls as
/// free GPUs rise and ties go to the lower name rank, so the best feasible node is the first
/// feasible one in that order, or a node this call already bound to (it has fewer GPUs free
/// now than its place in the order says). Within a pod set nothing becomes feasible again, so
/// one forward scan per pod set serves all its pods. Same bindings as `fill`; leaves them
/// applied to the node capacity as `fill` does.
#[allow(clippy::type_complexity)]
fn fill_binpack(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    limit: usize,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    let Some(g) = cluster.res.gpu else {
        unreachable!("fill_binpack is only chosen for GPU tasks")
    };
    let mut bound: Vec<Binding> = Vec::new();
    let mut touched: Vec<NodeId> = Vec::new();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        if bound.len() >= limit {
            break;
        }
        let pending: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| i)
            .take(limit - bound.len())
            .collect();
        let k = needs.requests.get(ResourceId::from_index(g));
        let mut cursor = (k, 0u32, NodeId(0));
        for idx in pending {
            // The first feasible untouched node from the cursor on.
            let mut untouched = None;
            for &(free, rank, n) in cluster.gpu_order.range(cursor..) {
                cursor = (free, rank, n);
                if !touched.contains(&n) && super::feasible(world, &cluster.nodes, n, needs) {
                    untouched = Some((free, rank, n));
                    break;
                }
            }
            if untouched.is_none() {
                cursor = (i64::MAX, u32::MAX, NodeId(u32::MAX));
            }
            let best_touched = touched
                .iter()
                .filter(|&&n| super::feasible(world, &cluster.nodes, n, needs))
                .map(|&n| (cluster.nodes.free(n, g), cluster.name_rank[n.index()], n))
                .min();
            let best = match (untouched, best_touched) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(x) => x,
                    None => return Err((bound, (ps, idx))),
                },
            };
            let node = best.2;
            cluster.nodes.apply(node, &needs.requests, 1);
            bound.push((ps, idx, node));
            if !touched.contains(&node) {
                touched.push(node);
            }
        }
    }
    Ok(bound)
}

/// Preferred-level node scores: per node a group, per group a score.
type NodeScores = (Vec<u32>, Vec<f64>);

/// A leaf group's state in one pass: (subgroup, pods bound, pending pods).
type GroupState = (Option<usize>, usize, Vec<(usize, usize)>);

/// A pod outside the current attempt's view (neither bound nor to be placed now).
const OUTSIDE: NodeId = NodeId(u32::MAX);

/// The job with only `tasks` pending; every other pod is bound (its node) or outside.
fn view(pods: &GangPods, tasks: &[(usize, usize)]) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    pods.iter()
        .enumerate()
        .map(|(ps, (n, slots))| {
            let v = slots
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if tasks.contains(&(ps, i)) {
                        None
                    } else {
                        Some(b.unwrap_or(OUTSIDE))
                    }
                })
                .collect();
            (n.clone(), v)
        })
        .collect()
}

/// A KAI job with subgroups (PodGroup `spec.subGroups`).
pub struct KaiTree<'a> {
    /// The subgroups, parents first.
    pub subgroups: &'a [kueuesim_model::KaiSubGroup],
    /// Per subgroup, its resolved constraint.
    pub constraints: Vec<Option<KaiConstraint>>,
    /// Per pod set, its subgroup (None: directly under the PodGroup).
    pub pod_set_subgroup: &'a [Option<usize>],
}

impl KaiTree<'_> {
    /// Whether pod set `ps` lies in the subtree of `node` (None: the PodGroup).
    fn in_subtree(&self, ps: usize, node: Option<usize>) -> bool {
        let Some(n) = node else { return true };
        let mut x = self.pod_set_subgroup.get(ps).copied().flatten();
        while let Some(g) = x {
            if g == n {
                return true;
            }
            x = self.subgroups[g].parent;
        }
        false
    }
}

/// Places `tasks` of subgroup `node` and its subtree inside domain `within`: the subgroup's
/// own constraint picks candidate domains in order, and in each every child subgroup is
/// solved in turn inside it (checkpoint and rollback), then the subgroup's own pods fill it
/// (with its preferred-level node scores, or the nearest ancestor's). Bindings are applied
/// to `cluster` as they are made; a failure leaves `cluster` as it was.
#[allow(clippy::too_many_arguments)]
fn solve(
    world: &World,
    cluster: &mut Cluster,
    job: &KaiJob<'_>,
    tree: &KaiTree<'_>,
    node: Option<usize>,
    within: (usize, DomainId),
    tasks: &[(usize, usize)],
    scores: &NodeScores,
) -> Result<Vec<Binding>, String> {
    let mine: Vec<(usize, usize)> = tasks
        .iter()
        .copied()
        .filter(|&(ps, _)| tree.in_subtree(ps, node))
        .collect();
    if mine.is_empty() {
        return Ok(Vec::new());
    }
    let constraint = match node {
        None => job.constraint,
        Some(g) => tree.constraints[g],
    };
    let pods = view(job.pods, &mine);
    let name = node.map(|g| tree.subgroups[g].name.as_str());
    // Candidate (topology, domain) pairs in order, and the node scores to use.
    let (domains, own_scores): (Vec<(usize, DomainId)>, Option<NodeScores>) = match constraint {
        Some(c) => {
            let start = if within.0 == c.topology {
                within.1
            } else {
                DomainId::ROOT
            };
            let cands = candidates(
                world,
                cluster,
                &pods,
                mine.len(),
                c,
                start,
                job.job_name,
                name,
            )?;
            // checkJobDomainFit, for the candidates in order.
            let mut errors = Vec::new();
            let mut fitting: Vec<(usize, DomainId)> = Vec::new();
            for &d in &cands.domains {
                match candidate_fits(world, cluster, c, d, &pods, mine.len()) {
                    Ok(()) => fitting.push((c.topology, d)),
                    Err(e) => errors.push(e),
                }
            }
            if fitting.is_empty() {
                errors.push(cands.unsatisfied);
                return Err(job_message(errors));
            }
            let scores = c
                .preferred
                .map(|_| (cands.group_of.clone(), cands.group_scores.clone()));
            (fitting, scores)
        }
        None => (vec![within], None),
    };
    let scores = own_scores.as_ref().unwrap_or(scores);
    let children: Vec<usize> = (0..tree.subgroups.len())
        .filter(|&g| tree.subgroups[g].parent == node)
        .collect();
    let mut last_error = String::new();
    // Without any constraint up the tree, `within` is a placeholder (topology 0, its root)
    // and the input may have no Topology at all: then every node is a candidate, as in KAI,
    // whose topology plugin leaves a job without a topology name unconstrained.
    let all_nodes = cluster.all_nodes.clone();
    'domains: for &(ti, d) in &domains {
        let nodes_in = |d| {
            world
                .topologies
                .get(ti)
                .map_or(&all_nodes[..], |t| t.nodes_of(d))
        };
        let mut made: Vec<Binding> = Vec::new();
        for &child in &children {
            match solve(
                world,
                cluster,
                job,
                tree,
                Some(child),
                (ti, d),
                &mine,
                scores,
            ) {
                Ok(b) => made.extend(b),
                Err(e) => {
                    for &(ps, _, n) in &made {
                        cluster.apply(world, n, &job.pods[ps].0.requests, -1);
                    }
                    last_error = e;
                    continue 'domains;
                }
            }
        }
        // The subgroup's own pods (pod sets directly in it).
        let own: Vec<(usize, usize)> = mine
            .iter()
            .copied()
            .filter(|&(ps, _)| tree.pod_set_subgroup.get(ps).copied().flatten() == node)
            .collect();
        if !own.is_empty() {
            let own_view = view(job.pods, &own);
            let nodes = nodes_in(d);
            let resource = scored_resource(cluster, &own_view);
            let mut s = scorer(
                world,
                &cluster.nodes,
                resource,
                &cluster.name_rank,
                nodes,
                &scores.0,
                &scores.1,
            );
            match fill(
                world,
                &mut cluster.nodes,
                nodes,
                &own_view,
                own.len(),
                &mut s,
            ) {
                Ok(b) => {
                    undo(&mut cluster.nodes, &own_view, &b);
                    for &(ps, _, n) in &b {
                        cluster.apply(world, n, &job.pods[ps].0.requests, 1);
                    }
                    made.extend(b);
                }
                Err((b, (ps, _))) => {
                    let failed = with_bindings(&own_view, &b);
                    last_error = fit_errors(world, &cluster.nodes, &failed[ps].0, nodes);
                    undo(&mut cluster.nodes, &own_view, &b);
                    for &(ps, _, n) in &made {
                        cluster.apply(world, n, &job.pods[ps].0.requests, -1);
                    }
                    continue 'domains;
                }
            }
        }
        return Ok(made);
    }
    Err(last_error)
}

/// Allocates a job with subgroups: per attempt, `minMember − allocated` tasks of every
/// subgroup below its minimum, or else one task of the subgroup with the lowest
/// allocated/min ratio (ties by name); KAI pushes the job back and goes on in the same cycle.
pub fn place_tree(
    world: &World,
    cluster: &mut Cluster,
    job: &KaiJob<'_>,
    tree: &KaiTree<'_>,
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    // Leaf groups: per subgroup (or the PodGroup itself), its pods.
    let group_of = |ps: usize| tree.pod_set_subgroup.get(ps).copied().flatten();
    let groups: Vec<Option<usize>> = {
        let mut g: Vec<Option<usize>> = (0..pods.len()).map(group_of).collect();
        g.sort();
        g.dedup();
        g
    };
    let min_of = |g: Option<usize>| -> usize {
        match g {
            Some(i) => tree.subgroups[i].min_member as usize,
            None => job.min_member.max(1),
        }
    };
    let name_of = |g: Option<usize>| g.map_or("", |i| tree.subgroups[i].name.as_str());
    loop {
        let mut tasks: Vec<(usize, usize)> = Vec::new();
        let mut stats: Vec<GroupState> = Vec::new();
        for &g in &groups {
            let mut bound = 0;
            let mut pending = Vec::new();
            for (ps, (_, slots)) in pods.iter().enumerate() {
                if group_of(ps) != g {
                    continue;
                }
                for (i, s) in slots.iter().enumerate() {
                    match s {
                        Some(_) => bound += 1,
                        None => pending.push((ps, i)),
                    }
                }
            }
            stats.push((g, bound, pending));
        }
        let below: Vec<&GroupState> = stats
            .iter()
            .filter(|(g, b, p)| *b < min_of(*g) && !p.is_empty())
            .collect();
        if !below.is_empty() {
            for (g, b, p) in below {
                tasks.extend(p.iter().take(min_of(*g) - b));
            }
        } else {
            let next = stats
                .iter()
                .filter(|(_, _, p)| !p.is_empty())
                .min_by(|a, b| {
                    let ra = a.1 as f64 / min_of(a.0) as f64;
                    let rb = b.1 as f64 / min_of(b.0) as f64;
                    ra.total_cmp(&rb)
                        .then_with(|| name_of(a.0).cmp(name_of(b.0)))
                });
            match next {
                Some((_, _, p)) => tasks.push(p[0]),
                None => break,
            }
        }
        let scores = (Vec::new(), vec![0.0]);
        let now = KaiJob {
            pods: &pods,
            min_member: job.min_member,
            constraint: job.constraint,
            job_name: job.job_name,
            pod_name: job.pod_name,
        };
        let result = solve(
            world,
            cluster,
            &now,
            tree,
            None,
            (job.constraint.map_or(0, |c| c.topology), DomainId::ROOT),
            &tasks,
            &scores,
        );
        match result {
            Ok(b) => {
                pods = with_bindings(&pods, &b);
                out.bound.extend(b);
            }
            Err(message) => {
                let (ps, idx) = tasks[0];
                out.unplaced = Some((ps, idx, message));
                break;
            }
        }
    }
    out
}

/// KAI's fair share of GPUs per queue (`resource_division`): each queue first gets its
/// deserved quota (up to what it requests and its limit), then what is left goes out by
/// over-quota weight, highest queue priority first, in whole GPUs; a parent's share is split
/// among its children the same way. `requests[q]`: GPUs allocated plus pending in the queue's
/// subtree.
pub fn fair_shares(queues: &[kueuesim_model::KaiQueue], total: i64, requests: &[i64]) -> Vec<i64> {
    let mut share = vec![0i64; queues.len()];
    // Subtree requests.
    let mut sub = requests.to_vec();
    for q in 0..queues.len() {
        let mut p = queues[q].parent;
        while let Some(x) = p {
            sub[x] += requests[q];
            p = queues[x].parent;
        }
    }
    fn divide(
        queues: &[kueuesim_model::KaiQueue],
        members: &[usize],
        pool: i64,
        sub: &[i64],
        share: &mut [i64],
    ) {
        let requestable = |q: usize| queues[q].gpu_limit.map_or(sub[q], |l| sub[q].min(l)).max(0);
        let mut remaining = pool;
        for &q in members {
            let deserved = queues[q].gpu_quota.unwrap_or(pool);
            share[q] = deserved.min(requestable(q));
            remaining -= share[q];
        }
        remaining = remaining.max(0);
        // Over quota, by priority band (highest first), by weight, in whole units.
        // Fractions lost to flooring in the last round, for the leftover units.
        let mut frac = vec![0f64; queues.len()];
        let mut bands: Vec<i32> = members.iter().map(|&q| queues[q].priority).collect();
        bands.sort_unstable_by(|a, b| b.cmp(a));
        bands.dedup();
        for band in bands {
            loop {
                let open: Vec<usize> = members
                    .iter()
                    .copied()
                    .filter(|&q| {
                        queues[q].priority == band
                            && queues[q].gpu_over_quota_weight > 0
                            && requestable(q) > share[q]
                    })
                    .collect();
                let weights: i64 = open.iter().map(|&q| queues[q].gpu_over_quota_weight).sum();
                if open.is_empty() || remaining <= 0 || weights == 0 {
                    break;
                }
                let pool_now = remaining;
                let mut gave = 0;
                for &q in &open {
                    let slice =
                        pool_now as f64 * queues[q].gpu_over_quota_weight as f64 / weights as f64;
                    let need = requestable(q) - share[q];
                    let give = if (need as f64) <= slice {
                        frac[q] = 0.0;
                        need
                    } else {
                        frac[q] = slice - slice.floor();
                        slice.floor() as i64
                    };
                    share[q] += give;
                    gave += give;
                }
                remaining -= gave;
                if gave == 0 {
                    break;
                }
            }
        }
        // Whole units left by the flooring go one at a time to the largest unmet fractions
        // (ties: the older queue, here the input order).
        while remaining > 0 {
            let next = members
                .iter()
                .copied()
                .filter(|&q| requestable(q) > share[q] && frac[q] > 0.0)
                .max_by(|&a, &b| frac[a].total_cmp(&frac[b]).then(b.cmp(&a)));
            let Some(q) = next else { break };
            share[q] += 1;
            frac[q] = 0.0;
            remaining -= 1;
        }
        for &q in members {
            let children: Vec<usize> = (0..queues.len())
                .filter(|&c| queues[c].parent == Some(q))
                .collect();
            if !children.is_empty() {
                let pool = share[q];
                divide(queues, &children, pool, sub, share);
            }
        }
    }
    let top: Vec<usize> = (0..queues.len())
        .filter(|&q| queues[q].parent.is_none())
        .collect();
    divide(queues, &top, total, &sub, &mut share);
    share
}

/// A running KAI job that reclaim may evict.
#[derive(Clone, Copy, Debug)]
pub struct RunningJob {
    /// The caller's id for it.
    pub key: usize,
    /// Its queue.
    pub queue: usize,
    /// GPUs it holds.
    pub gpus: i64,
    /// Its priority (preemptible below 100, KAI's default).
    pub priority: i32,
    /// Creation time: younger jobs are evicted first.
    pub created: i64,
}

/// KAI's reclaim for a pending job of `queue` needing `gpus`: allowed while the queue stays
/// within its fair share with the job; victims come from other queues above
/// max(deserved, fair share), preemptible ones, lowest priority then youngest first, one at a
/// time while their queue is still above that share, until `fits(victims)` says the job
/// would fit once they are gone. None: no reclaim.
pub fn reclaim_victims(
    queues: &[kueuesim_model::KaiQueue],
    fair: &[i64],
    allocated: &[i64],
    queue: usize,
    gpus: i64,
    running: &[RunningJob],
    mut fits: impl FnMut(&[usize]) -> bool,
) -> Option<Vec<usize>> {
    if allocated[queue] + gpus > fair[queue] {
        return None;
    }
    let share = |q: usize| fair[q].max(queues[q].gpu_quota.unwrap_or(i64::MAX / 4));
    let mut order: Vec<&RunningJob> = running
        .iter()
        .filter(|j| j.queue != queue && j.priority < 100 && queues[j.queue].gpu_quota.is_some())
        .collect();
    order.sort_by_key(|j| (j.priority, std::cmp::Reverse(j.created), j.key));
    let mut left = allocated.to_vec();
    let mut victims = Vec::new();
    for j in order {
        if left[j.queue] <= share(j.queue) {
            continue;
        }
        left[j.queue] -= j.gpus;
        victims.push(j.key);
        if fits(&victims) {
            return Some(victims);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::KaiQueue;

    fn q(name: &str, quota: Option<i64>, weight: i64, priority: i32) -> KaiQueue {
        KaiQueue {
            name: name.into(),
            parent: None,
            gpu_quota: quota,
            gpu_over_quota_weight: weight,
            gpu_limit: None,
            priority,
        }
    }

    use proptest::prelude::*;

    /// A world of nodes with (GPUs, cpu, GPUs busy, cpu busy) and shuffled names, plus the
    /// cluster with the busy part bound.
    fn binpack_world(nodes: &[(i64, i64, i64, i64, u32)]) -> (World, Cluster) {
        let mut w = World::default();
        let gpu = w.resources.intern(kueuesim_model::resources::GPU);
        let cpu = w.resources.intern("cpu");
        for (i, &(g, c, _, _, name)) in nodes.iter().enumerate() {
            let mut alloc = vec![0; 2];
            alloc[gpu.index()] = g;
            alloc[cpu.index()] = c;
            w.nodes.push(kueuesim_model::Node {
                name: format!("n-{name:03}-{i}"),
                labels: Default::default(),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
        let mut cluster = Cluster::new(&w);
        for (i, &(g, c, bg, bc, _)) in nodes.iter().enumerate() {
            let busy =
                kueuesim_model::ResourceList::from_pairs(vec![(gpu, bg.min(g)), (cpu, bc.min(c))]);
            cluster.apply(&w, NodeId::from_index(i), &busy, 1);
        }
        (w, cluster)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The indexed bin-pack fill binds exactly what `fill` with KAI's bin-pack scorer
        /// binds, fails on the same pod, and leaves the same capacity.
        #[test]
        fn fill_binpack_matches_fill(
            nodes in prop::collection::vec((0i64..=8, 1i64..=16, 0i64..=8, 0i64..=16, 0u32..50), 1..30),
            sets in prop::collection::vec((1usize..6, 1i64..=4, 0i64..=4), 1..4),
            limit in 1usize..20,
        ) {
            let (w, mut fast) = binpack_world(&nodes);
            let mut slow = fast.clone();
            let gpu = w.resources.lookup(kueuesim_model::resources::GPU).unwrap();
            let cpu = w.resources.lookup("cpu").unwrap();
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = sets
                .iter()
                .map(|&(count, g, c)| {
                    (
                        PodNeeds {
                            requests: kueuesim_model::ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]),
                            node_selector: Default::default(),
                            tolerations: vec![],
                        },
                        vec![None; count],
                    )
                })
                .collect();
            let all = super::super::all_nodes(&w);
            let (group_of, scores) = (Vec::new(), vec![0.0]);
            let name_rank = slow.name_rank.clone();
            let mut s = scorer(&w, &slow.nodes, Some(gpu.index()), &name_rank, &all, &group_of, &scores);
            let expected = fill(&w, &mut slow.nodes, &all, &pods, limit, &mut s);
            let got = fill_binpack(&w, &mut fast, &pods, limit);
            prop_assert_eq!(&got, &expected);
            for n in &all {
                prop_assert_eq!(fast.nodes.free(*n, gpu.index()), slow.nodes.free(*n, gpu.index()));
            }
        }
    }

    #[test]
    fn fair_share_deserved_first_then_weights_then_priority_bands() {
        // 10 GPUs: deserved 2 and 1; the 7 left by weight 3:1 (5.25 and 1.75, floored to 5
        // and 1); the next round splits the 1 left as .75 and .25, floored to nothing, and the
        // unit goes to the larger unmet fraction, a's.
        let qs = [q("a", Some(2), 3, 100), q("b", Some(1), 1, 100)];
        assert_eq!(fair_shares(&qs, 10, &[20, 20]), [8, 2]);
        // A queue asking for less gets exactly its request; the rest goes on.
        assert_eq!(fair_shares(&qs, 10, &[3, 20]), [3, 7]);
        // A higher-priority band takes the over-quota first.
        let qs = [q("hi", Some(0), 1, 200), q("lo", Some(0), 1, 100)];
        assert_eq!(fair_shares(&qs, 4, &[3, 4]), [3, 1]);
    }
}
