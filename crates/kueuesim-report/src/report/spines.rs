//! report.html's free GPUs per spine over time, and the gangs it is read against: which
//! workloads must fit in one spine (Volcano's hard `networkTopology` at or below the spines'
//! tier, KAI's required level and Kueue TAS's required topology of the spines' Topology),
//! the largest of them admitted, and the panel with one line per spine and that gang's GPUs
//! as a reference line, so that "no spine ever had room for it" can be read off the page.

use std::collections::BTreeMap;
use std::fmt::Write;

use kueuesim_model::topology::TopologySource;
use kueuesim_model::{
    DomainId, NetworkTopology, SchedulerKind, TierRef, TopologyRequest, Workload, World,
};

use super::axis::duration;
use super::panels::{Timeline, line_el, natural_key, ref_line};
use super::plot::{MAX_LINES, Mark, esc, section, style};
use super::series::Column;

/// Reference lines the panel draws at most (the largest gangs).
const MAX_REFS: usize = 4;

/// Which workloads must fit in one spine, and the largest of those noted.
#[derive(Clone, Debug, Default)]
pub(crate) struct OneSpineGangs {
    /// Spines with a free-GPU column: every spine when the world has GPUs, else none.
    columns: usize,
    /// The rule that keeps a gang in one spine.
    rule: Rule,
    /// `nvidia.com/gpu`.
    gpu: Option<kueuesim_model::ResourceId>,
    /// Scheduler names and their kinds, sorted by name (`SimConfig::schedulers`).
    schedulers: Vec<(String, SchedulerKind)>,
    /// Per LocalQueue, its ClusterQueue's index.
    cq_of_lq: Vec<usize>,
    /// Per ClusterQueue, then one slot for the workloads of no ClusterQueue: the largest
    /// noted, its GPUs and `namespace/name` (the first noted among equals).
    largest: Vec<Option<(i64, String)>>,
}

/// What keeps a gang in one spine, by where the spines come from.
#[derive(Clone, Debug, Default)]
enum Rule {
    /// No spines.
    #[default]
    None,
    /// The spines are the highest HyperNode tier: Volcano's hard `highestTierAllowed` (or
    /// `highestTierName`) up to their tier keeps a gang under one of them.
    HyperNodes {
        spine_tier: i32,
        /// `(tierName, tier)`, sorted by name.
        tier_names: Vec<(String, i32)>,
    },
    /// The spines are the top level of the first Topology: any required level of it (KAI's
    /// `requiredTopologyLevel` naming it, Kueue TAS's `podset-required-topology`).
    Levels { name: String, labels: Vec<String> },
}

impl OneSpineGangs {
    pub(crate) fn new(world: &World) -> OneSpineGangs {
        let (topology, spines) = kueuesim_engine::outcome::spine_domains(world);
        let gpu = world.resources.lookup(kueuesim_model::resources::GPU);
        if spines.is_empty() || gpu.is_none() {
            return OneSpineGangs::default();
        }
        let t = kueuesim_engine::placement::topologies(world).nth(topology);
        let rule = match t.map(|t| (t, &t.source)) {
            Some((t, TopologySource::HyperNodes { tier_names })) => Rule::HyperNodes {
                spine_tier: t.domain(spines[0]).tier,
                tier_names: tier_names.clone(),
            },
            Some((t, TopologySource::Levels { labels })) => Rule::Levels {
                name: t.name.clone(),
                labels: labels.clone(),
            },
            None => Rule::None,
        };
        OneSpineGangs {
            columns: spines.len(),
            rule,
            gpu,
            schedulers: world.config.schedulers.clone(),
            cq_of_lq: world
                .local_queues
                .iter()
                .map(|l| l.cluster_queue.index())
                .collect(),
            largest: vec![None; world.cluster_queues.len() + 1],
        }
    }

    /// The spines with a free-GPU column.
    pub(crate) fn spine_columns(&self) -> usize {
        self.columns
    }

    /// Keeps `wl` if it must fit in one spine and needs more GPUs there than any noted before
    /// in its ClusterQueue.
    pub(crate) fn note(&mut self, wl: &Workload) {
        let Some(need) = self.one_spine_gpus(wl).filter(|&g| g > 0) else {
            return;
        };
        let cq = match &wl.queue {
            kueuesim_model::QueueRef::Local(lq) => self.cq_of_lq.get(lq.index()).copied(),
            _ => None,
        };
        let slot = cq.unwrap_or(self.largest.len() - 1);
        if let Some(kept) = self.largest.get_mut(slot)
            && kept.as_ref().is_none_or(|(g, _)| need > *g)
        {
            *kept = Some((need, format!("{}/{}", wl.namespace, wl.name)));
        }
    }

    /// Per ClusterQueue with one (`None`: workloads of no ClusterQueue), the largest gang
    /// noted: its GPUs and `namespace/name`.
    pub(crate) fn largest(&self) -> impl Iterator<Item = (Option<usize>, i64, &str)> + '_ {
        let none = self.largest.len().saturating_sub(1);
        self.largest.iter().enumerate().filter_map(move |(c, l)| {
            let (g, n) = l.as_ref()?;
            Some(((c < none).then_some(c), *g, n.as_str()))
        })
    }

    /// The GPUs `wl` needs within one spine, if its placement must keep them there: the whole
    /// gang under Volcano's hard `networkTopology` of a tier up to the spines' (or a hard
    /// subgroup's pods), or under KAI's required level of the spines' Topology; a pod set
    /// with a Kueue TAS required level of that Topology.
    fn one_spine_gpus(&self, wl: &Workload) -> Option<i64> {
        let gpu = self.gpu?;
        let gpus_of = |ps: &mut dyn Iterator<Item = usize>| -> i64 {
            ps.filter_map(|i| wl.pod_sets.get(i))
                .map(|p| i64::from(p.count) * p.requests.get(gpu))
                .sum()
        };
        let kind = self
            .schedulers
            .binary_search_by(|(n, _)| n.as_str().cmp(&wl.scheduler_name))
            .ok()
            .map(|i| self.schedulers[i].1);
        let gang = &wl.gang;
        match &self.rule {
            Rule::None => None,
            Rule::HyperNodes {
                spine_tier,
                tier_names,
            } => {
                if kind != Some(SchedulerKind::Volcano) {
                    return None;
                }
                let confined = |nt: &Option<NetworkTopology>| {
                    let Some(nt) = nt.as_ref().filter(|nt| nt.hard) else {
                        return false;
                    };
                    let tier = match nt.highest_tier.as_ref() {
                        Some(TierRef::Number(t)) => Some(*t),
                        Some(TierRef::Name(n)) => tier_names
                            .binary_search_by(|(x, _)| x.as_str().cmp(n))
                            .ok()
                            .map(|i| tier_names[i].1),
                        None => None,
                    };
                    tier.is_some_and(|t| t <= *spine_tier)
                };
                if confined(&gang.network_topology) {
                    return Some(gpus_of(&mut (0..wl.pod_sets.len())));
                }
                gang.volcano_subgroups
                    .iter()
                    .filter(|g| confined(&g.network_topology))
                    .map(|g| gpus_of(&mut g.pod_sets.iter().copied()))
                    .max()
            }
            Rule::Levels { name, labels } => {
                let kai = kind == Some(SchedulerKind::Kai)
                    && gang
                        .kai_topology
                        .as_ref()
                        .is_some_and(|c| c.required.is_some() && c.topology == *name);
                if kai {
                    return Some(gpus_of(&mut (0..wl.pod_sets.len())));
                }
                wl.pod_sets
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| {
                        matches!(&p.topology_request, Some(TopologyRequest::Required(l))
                            if labels.contains(l))
                    })
                    .map(|(i, _)| gpus_of(&mut std::iter::once(i)))
                    .max()
            }
        }
    }
}

/// A spine as the panel draws it.
struct Spine {
    /// Its free-GPU column (`outcome::spine_domains`' order).
    column: usize,
    name: String,
    /// The allocatable GPUs of its nodes.
    gpus: i64,
}

/// The spines in natural order (spine-2 before spine-10).
fn spines_in_order(world: &World) -> Option<Vec<Spine>> {
    let (ti, spines) = kueuesim_engine::outcome::spine_domains(world);
    let gpu = world.resources.lookup(kueuesim_model::resources::GPU)?;
    let t = kueuesim_engine::placement::topologies(world).nth(ti)?;
    let gpus_of = |d: DomainId| -> i64 {
        t.nodes_of(d)
            .iter()
            .map(|&n| {
                world
                    .node(n)
                    .allocatable
                    .get(gpu.index())
                    .copied()
                    .unwrap_or(0)
            })
            .sum()
    };
    let mut v: Vec<Spine> = spines
        .iter()
        .enumerate()
        .map(|(column, &d)| Spine {
            column,
            name: t.domain(d).name.clone(),
            gpus: gpus_of(d),
        })
        .collect();
    v.sort_by_cached_key(|s| natural_key(&s.name));
    Some(v)
}

/// Free GPUs per spine over time: a line per spine (the first `MAX_LINES - 1` in natural
/// order, then the most free in any of the others), against the largest gang each
/// ClusterQueue had admitted that must fit in one spine. The note says how long no spine had
/// room for each.
pub(super) fn free_gpus_by_spine(world: &World, t: &Timeline<'_>) -> Option<String> {
    let series = t.series();
    if series.spines() == 0 {
        return None;
    }
    let spines = spines_in_order(world)?;
    let n = spines.len();
    if n != series.spines() || spines.iter().all(|s| s.gpus == 0) {
        return None;
    }
    let kept = n.min(if n > MAX_LINES { MAX_LINES - 1 } else { n });
    let mut lines: Vec<(String, Column<'_>)> = spines[..kept]
        .iter()
        .map(|s| (s.name.clone(), series.free_gpus(s.column)))
        .collect();
    if kept < n {
        lines.push((
            format!("({} other spines: the most free in any one)", n - kept),
            series.most_free_of(spines[kept..].iter().map(|s| s.column)),
        ));
    }
    // Per distinct need, largest first, the ClusterQueues whose largest one-spine gang it is
    // (and that gang's name): a reference line each, the largest `MAX_REFS`.
    let mut by_need: BTreeMap<i64, Vec<(String, &str)>> = BTreeMap::new();
    for (cq, gpus, name) in series.largest_one_spine_gangs() {
        let who = cq.map_or("(no ClusterQueue)".to_string(), |c| {
            world.cluster_queues[c].name.clone()
        });
        by_need.entry(gpus).or_default().push((who, name));
    }
    let refs: Vec<(i64, Vec<(String, &str)>)> = by_need.into_iter().rev().take(MAX_REFS).collect();
    // How long no spine had each need free: the runs of the most free in any one spine.
    let most = series.most_free_of(0..n);
    let short_of = |need: i64| -> f64 {
        most.runs()
            .filter(|&(_, _, v)| v < need as f64)
            .map(|(from, to, _)| {
                let end = if to < series.len() {
                    series.time(to)
                } else {
                    t.end()
                };
                end - series.time(from)
            })
            // A fold from +0: a sum of no floats is -0, which would print as "-0".
            .fold(0.0, |a, b| a + b)
    };
    let short: Vec<f64> = refs.iter().map(|(need, _)| short_of(*need)).collect();
    let largest_spine = spines.iter().map(|s| s.gpus).max().unwrap_or(0);
    let y_max = lines
        .iter()
        .fold(largest_spine as f64, |m, (_, v)| v.max(m))
        .max(refs.first().map_or(0.0, |r| r.0 as f64))
        .max(1.0);
    let f = t.frame(y_max * 1.04, true);
    let mut body = f.axes("time since start", "free GPUs");
    let mut keys = Vec::new();
    // A label goes under its line when it would touch the one above.
    let mut last_label_y = f64::NEG_INFINITY;
    for ((need, who), short) in refs.iter().zip(&short) {
        let names: Vec<&str> = who.iter().map(|(q, _)| q.as_str()).collect();
        let y = f.y(*need as f64);
        let below = y - 4.0 - last_label_y < 12.0;
        last_label_y = if below { y + 11.0 } else { y - 4.0 };
        let _ = write!(
            body,
            r#"<g class="gang" data-cq="{}" data-gpus="{need}" data-short-seconds="{short}">{}</g>"#,
            esc(&names.join(",")),
            ref_line(
                &f,
                *need as f64,
                "6 3",
                &format!("{}: {need} GPUs", names.join(", ")),
                below,
            )
        );
    }
    if !refs.is_empty() {
        keys.push((
            "largest gang admitted per ClusterQueue that must fit in one spine".into(),
            Mark::Ref("6 3"),
        ));
    }
    for (k, (name, v)) in lines.iter().enumerate() {
        body.push_str(
            &line_el(
                &t.line(&f, v.iter()),
                style(k),
                1.6,
                &format!("{name}: free GPUs"),
            )
            .replacen("class=\"data\"", "class=\"data spine\"", 1),
        );
        keys.push((name.clone(), Mark::Line(style(k))));
    }
    let mut note = format!(
        "GPUs free on each spine's nodes (allocatable less the requests of bound pods) at each \
         sample; a spine holds {largest_spine} GPUs at most."
    );
    if !refs.is_empty() {
        let parts: Vec<String> = refs
            .iter()
            .zip(&short)
            .map(|((need, who), below)| {
                let gangs: Vec<String> = who.iter().map(|(q, g)| format!("{q}'s {g}")).collect();
                let how_long = if *below > 0.0 {
                    format!(
                        "{} ({:.0} %)",
                        duration(*below),
                        100.0 * below / t.end().max(1e-9)
                    )
                } else {
                    "never".into()
                };
                format!("{need} GPUs ({}): {how_long}", gangs.join(", "))
            })
            .collect();
        let _ = write!(
            note,
            " The dashed lines are the largest gang each ClusterQueue had admitted that must fit \
             in one spine; below, how long no spine had that many GPUs free (such a gang cannot \
             start then, whatever its quota): {}.",
            parts.join("; ")
        );
    }
    Some(section(
        "free-gpus-by-spine",
        "Free GPUs per spine over time",
        super::plot::H,
        &body,
        &keys,
        &note,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::series::PlottedSeries;
    use kueuesim_engine::outcome::Sample;
    use kueuesim_model::{SimDuration, SimTime};

    #[test]
    fn the_most_free_of_spines_follows_each_change() {
        // Spine columns can only be made through `push`: a world-less series of 3 spines.
        let mut s = PlottedSeries::for_spines(3);
        let sample = |at: i64, free: [i64; 3]| Sample {
            at: SimTime::from_millis(at),
            gpus_in_use: 0,
            gpu_quota_by_cq: Vec::new(),
            gpu_quota_by_flavor: Vec::new(),
            gpu_quota_by_cq_flavor: Vec::new(),
            reserving_by_cq: Vec::new(),
            admitted_by_cq: Vec::new(),
            pending_active: Vec::new(),
            pending_inadmissible: Vec::new(),
            pending_by_lq: Vec::new(),
            pending_inadmissible_by_lq: Vec::new(),
            gangs_by_spine: Vec::new(),
            free_gpus_by_spine: free.to_vec(),
            gpu_sharing: None,
        };
        let step = SimDuration::from_millis(60_000);
        s.push(&sample(0, [8, 8, 8]), 2, step);
        s.push(&sample(120_000, [0, 8, 4]), 1, step);
        s.push(&sample(180_000, [0, 2, 4]), 1_000_000, step);
        s.push(&sample(60_180_000, [16, 2, 0]), 1, step);
        let most: Vec<f64> = s.most_free_of(0..3).iter().collect();
        assert_eq!(most.len(), 1_000_004);
        assert_eq!(&most[..4], [8.0, 8.0, 8.0, 4.0]);
        assert_eq!(most[1_000_003], 16.0);
        let runs: Vec<(usize, usize, f64)> = s.most_free_of(0..3).runs().collect();
        assert_eq!(
            runs,
            [
                (0, 3, 8.0),
                (3, 1_000_003, 4.0),
                (1_000_003, 1_000_004, 16.0)
            ]
        );
        // Without spine 1, whose 8 free GPUs held the most at sample 2.
        let two: Vec<(usize, usize, f64)> = s.most_free_of([0, 2]).runs().collect();
        assert_eq!(
            two,
            [
                (0, 2, 8.0),
                (2, 1_000_003, 4.0),
                (1_000_003, 1_000_004, 16.0)
            ]
        );
        // Spine 1: 8 free, then 2 from sample 3 on.
        let one: Vec<(usize, usize, f64)> = s.free_gpus(1).runs().collect();
        assert_eq!(one, [(0, 3, 8.0), (3, 1_000_004, 2.0)]);
    }
}
