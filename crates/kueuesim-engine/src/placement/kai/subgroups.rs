//! KAI PodGroups with subgroups (`spec.subGroups`): per attempt the tasks of every subgroup
//! below its minimum (or one task of the least-allocated one), each subgroup solved inside
//! its parent's domain under its own topology constraint, with checkpoint and rollback.

use kueuesim_model::{DomainId, NodeId, World};

use super::messages::{fit_errors, job_message};
use super::nodeplacement::{scored_resource, scorer};
use super::topology::{candidate_fits, candidates};
use super::{KaiConstraint, KaiJob};
use crate::placement::{
    Binding, Cluster, GangPods, Placement, PodNeeds, fill, record_bindings, undo, with_bindings,
};

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
    place_tree_within(world, cluster, job, tree, None, super::Passes::All)
}

/// [`place_tree`] under the proportion plugin's capacity policy (`IsJobOverQueueCapacity`,
/// checked before every pass of `AllocateJob` with the pass's tasks, subgroups or not), as
/// `place_within` takes it ([`super::CapacityCheck`]: what this call bound so far and what
/// the pass's tasks ask); with [`super::Passes::One`] only the next pass.
pub fn place_tree_within(
    world: &World,
    cluster: &mut Cluster,
    job: &KaiJob<'_>,
    tree: &KaiTree<'_>,
    over: super::CapacityCheck<'_>,
    passes: super::Passes,
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    let mut placed = [0; 3];
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
        let request = super::amounts_of(cluster, tasks.iter().map(|&(ps, _)| &pods[ps].0));
        if let Some(message) = over.and_then(|over| over(placed, request)) {
            let (ps, idx) = tasks[0];
            out.unplaced = Some((ps, idx, message));
            break;
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
                super::add_amounts(&mut placed, request);
                record_bindings(&mut pods, &b);
                out.bound.extend(b);
                if passes == super::Passes::One {
                    break;
                }
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
