//! KAI Scheduler's allocate action for one job (a PodGroup): tasks to allocate are
//! `minMember − allocated` while below the minimum, then one per pass; with a topology
//! constraint the topology plugin's candidate domains (sorted tree, bottom-up candidate
//! levels, first fitting domain wins) and preferred-subdomain node scores, then the
//! nodeplacement plugin's bin-pack or spread; score ties go by node name.
//! research/volcano-kai.md §2.3–§2.6.

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
    for &n in nodes {
        if super::feasible(world, cap, n, pod) {
            continue;
        }
        let reason = if !super::statically_feasible(world, n, pod) {
            super::node_rejections(world, cap, n, pod)
                .into_iter()
                .next()
                .unwrap_or_default()
        } else {
            let short: Vec<String> = pod
                .requests
                .iter()
                .filter(|&(r, a)| a > cap.free(n, r.index()))
                .map(|(r, _)| resource_word(world.resources.name(r)))
                .collect();
            if short.is_empty() {
                "Too many pods".into()
            } else {
                format!("node(s) didn't have enough resources: {}", short.join(", "))
            }
        };
        *hist.entry(reason).or_default() += 1;
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

/// One allocation attempt of `need` tasks within the topology constraint.
fn topology_attempt(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    c: KaiConstraint,
    job_name: &str,
) -> Result<Vec<Binding>, String> {
    let t = &world.topologies[c.topology];
    let ti = 1 + c.topology;
    let pods_res = world.resources.lookup("pods").map(|r| r.index());
    let request = request_of(pods, need);
    let stop_depth = c.preferred.or(c.required).unwrap_or(0);
    // The lowest common domain of the input node set (all nodes), not below the stop level.
    let mut lcd = DomainId::ROOT;
    while t.domain(lcd).children.len() == 1 {
        let child = t.domain(lcd).children[0];
        if t.domain(child).depth > stop_depth {
            break;
        }
        lcd = child;
    }
    let requirement = c.required.map(|d| level_label(t, d)).unwrap_or_default();
    let unsatisfied = format!(
        "topology {}, requirement {requirement} couldn't be satisfied for job <{job_name}>",
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
    let mut errors = Vec::new();
    for depth in (top..=stop_depth.max(top)).rev() {
        let domains: Vec<DomainId> = if depth == t.domain(lcd).depth {
            vec![lcd]
        } else if depth < t.domain(lcd).depth {
            continue;
        } else {
            sorted_level(cluster, ti, t, lcd, depth, &request, pods_res)
        };
        errors.clear();
        for d in domains {
            if let Some(a) = anchor
                && !t.ancestors(d).any(|x| x == a)
                && !t.ancestors(a).any(|x| x == d)
            {
                continue;
            }
            if let Err(e) = domain_fit(world, cluster, ti, d, pods, need, &request, pods_res) {
                errors.push(e);
                continue;
            }
            let candidates = t.nodes_of(d);
            let resource = scored_resource(cluster, pods);
            let mut s = scorer(
                world,
                &cluster.nodes,
                resource,
                &cluster.name_rank,
                candidates,
                &group_of,
                &group_scores,
            );
            match fill(world, &mut cluster.nodes, candidates, pods, need, &mut s) {
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
    }
    errors.push(unsatisfied);
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
                let all = super::all_nodes(world);
                let (group_of, scores) = (Vec::new(), vec![0.0]);
                let resource = scored_resource(cluster, &pods);
                let mut s = scorer(
                    world,
                    &cluster.nodes,
                    resource,
                    &cluster.name_rank,
                    &all,
                    &group_of,
                    &scores,
                );
                match fill(world, &mut cluster.nodes, &all, &pods, need, &mut s) {
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
