//! The time series (`Simulation::with_time_series`): GPU quota held, pending workloads, gangs
//! and free GPUs per spine and, with GPU devices, their allocation and fragmentation, sampled
//! at a fixed step.

use kueuesim_model::quota::Fr;
use kueuesim_model::{ClusterQueueId, QueueRef, SimTime};

use crate::outcome::Sample;
use crate::preemption::AdmittedWorkloads;

use super::Simulation;

impl<'w> Simulation<'w> {
    /// Takes the samples due strictly before `at`: the state now is the state after every
    /// event at or before them.
    pub(super) fn sample_before(&mut self, at: SimTime) {
        let Some(series) = &self.rec.series else {
            return;
        };
        let step_len = series.step;
        let step = step_len.millis();
        let next = self.rec.last_sample.map_or(0, |t| t.millis() + step);
        if next >= at.millis() {
            return;
        }
        // Nothing changes between events, so every sample due before `at` is the same state
        // at another time: it is taken once, and a run with a sink hands the outbox one run of
        // samples, which it expands as the sink takes them. Memory follows the events, not
        // the horizon (a ten-year idle gap sampled every minute is one entry, not five million).
        let count = (at.millis() - 1 - next) / step + 1;
        let mut sample = self.sample(SimTime::from_millis(next));
        sample.gpu_sharing = self.gpu_sharing_figures();
        self.rec.last_sample = Some(SimTime::from_millis(next + (count - 1) * step));
        match &mut self.outbox {
            Some(out) => out.push_samples(sample, count as u64, step_len),
            None => {
                let samples = &mut self.rec.series.as_mut().expect("checked").samples;
                for k in 0..count {
                    samples.push(Sample {
                        at: SimTime::from_millis(next + k * step),
                        ..sample.clone()
                    });
                }
            }
        }
    }

    pub(super) fn sample(&self, at: SimTime) -> Sample {
        let world = self.world;
        let mut by_cq = vec![0; world.cluster_queues.len()];
        let mut by_flavor = vec![0; world.flavors.len()];
        let flavors = world.flavors.len();
        let mut by_cq_flavor = vec![0; world.cluster_queues.len() * flavors];
        if let Some(gpu) = self.gpu {
            for fr in (0..self.kueue.tree.fr_count()).map(|f| Fr(f as u32)) {
                let (f, r) = self.kueue.tree.split(fr);
                if r != gpu {
                    continue;
                }
                for (c, held) in by_cq.iter_mut().enumerate() {
                    let used = self
                        .kueue
                        .tree
                        .usage(self.kueue.tree.cq_node(ClusterQueueId::from_index(c)), fr);
                    *held += used;
                    by_flavor[f.index()] += used;
                    by_cq_flavor[c * flavors + f.index()] += used;
                }
            }
        }
        let (mut active, inadmissible): (Vec<u32>, Vec<u32>) = (0..world.cluster_queues.len())
            .map(|c| {
                let q = self.kueue.queues.queue(ClusterQueueId::from_index(c));
                (q.active_len() as u32, q.inadmissible_len() as u32)
            })
            .unzip();
        // Heads held by a cycle waiting under blockAdmission count as active, as upstream's
        // popped heads do.
        if let Some(waiting) = &self.kueue.suspended {
            for cq in waiting.heads().map(|h| h.cq) {
                active[cq.index()] += 1;
            }
        }
        let mut by_lq = vec![0u32; world.local_queues.len()];
        let mut inadmissible_by_lq = vec![0u32; world.local_queues.len()];
        for c in 0..world.cluster_queues.len() {
            let q = self.kueue.queues.queue(ClusterQueueId::from_index(c));
            for k in q.active_keys() {
                if let QueueRef::Local(lq) = &self.spec(k.workload).queue {
                    by_lq[lq.index()] += 1;
                }
            }
            for k in q.inadmissible_keys() {
                if let QueueRef::Local(lq) = &self.spec(k.workload).queue {
                    by_lq[lq.index()] += 1;
                    inadmissible_by_lq[lq.index()] += 1;
                }
            }
        }
        // Holding quota: every candidate of the admitted index (evicted ones keep it until
        // their pods are gone, as Kueue counts them); admitted unless only reserving.
        let (reserving, admitted): (Vec<u32>, Vec<u32>) = (0..world.cluster_queues.len())
            .map(|c| {
                let held = self
                    .kueue
                    .admitted
                    .admitted_in(ClusterQueueId::from_index(c));
                let only_reserved = held
                    .iter()
                    .filter(|h| {
                        self.runtimes[h.workload.index()].record.state
                            == crate::outcome::WorkloadState::QuotaReserved
                    })
                    .count();
                (held.len() as u32, (held.len() - only_reserved) as u32)
            })
            .unzip();
        if let Some(waiting) = &self.kueue.suspended {
            for w in waiting.heads().map(|h| h.key.workload) {
                if let QueueRef::Local(lq) = &self.spec(w).queue {
                    by_lq[lq.index()] += 1;
                }
            }
        }
        let (spine_of, spines) = match &self.rec.spines {
            Some(s) => (s.of_node.as_slice(), s.domains.len()),
            None => (&[][..], 0),
        };
        let mut by_spine = vec![0u32; spines + 1];
        if spines > 0 {
            for (_, rt) in self.runtimes.iter() {
                if rt.record.state == crate::outcome::WorkloadState::Finished {
                    continue;
                }
                let mut spine: Option<Option<u32>> = None;
                for n in rt.record.placement.iter().flatten().flatten() {
                    let s = Some(spine_of[n.index()]).filter(|&i| i != u32::MAX);
                    spine = Some(match spine {
                        None => s,
                        Some(prev) if prev == s => s,
                        Some(_) => None,
                    });
                }
                match spine {
                    Some(Some(i)) => by_spine[i as usize] += 1,
                    Some(None) => by_spine[spines] += 1,
                    None => {}
                }
            }
        }
        // The cluster keeps every domain's free capacity in step with each bind and release:
        // a read per spine, no walk over its nodes.
        let cluster = &self.sched.cluster;
        let free_by_spine = match (&self.rec.spines, cluster.res.gpu) {
            (Some(s), Some(g)) => s
                .domains
                .iter()
                .map(|&d| cluster.domain_free(s.topology, d, g))
                .collect(),
            _ => Vec::new(),
        };
        Sample {
            at,
            gpus_in_use: self.rec.gpus_in_use,
            gpu_quota_by_cq: by_cq,
            gpu_quota_by_flavor: by_flavor,
            gpu_quota_by_cq_flavor: by_cq_flavor,
            reserving_by_cq: reserving,
            admitted_by_cq: admitted,
            pending_active: active,
            pending_inadmissible: inadmissible,
            pending_by_lq: by_lq,
            pending_inadmissible_by_lq: inadmissible_by_lq,
            gangs_by_spine: by_spine,
            free_gpus_by_spine: free_by_spine,
            // Filled in by `sample_before`: the fragmentation memo wants `&mut self`.
            gpu_sharing: None,
        }
    }
}

/// The spines (top-tier domains, `outcome::spine_domains`) the series counts by, and the
/// spine each node is under: what `sample` reads, worked out once per run instead of a walk
/// up the topology per pod per sample.
#[derive(Clone)]
pub(super) struct Spines {
    /// The topology the spines are domains of (as `placement::topologies` numbers them).
    topology: usize,
    /// The spines, in `spine_domains`' order.
    domains: Vec<kueuesim_model::DomainId>,
    /// Per node, the index of its spine in `domains`; `u32::MAX` for none.
    of_node: Vec<u32>,
}

impl Spines {
    pub(super) fn new(world: &kueuesim_model::World) -> Spines {
        let (topology, domains) = crate::outcome::spine_domains(world);
        let mut of_node = vec![u32::MAX; world.nodes.len()];
        if !domains.is_empty() {
            let t = crate::placement::topologies(world)
                .nth(topology)
                .expect("the spines' topology");
            for (i, slot) in of_node.iter_mut().enumerate() {
                let n = kueuesim_model::NodeId::from_index(i);
                if let Some(s) = t.domain_of(n).and_then(|d| {
                    t.ancestors(d)
                        .find_map(|a| domains.iter().position(|&x| x == a))
                }) {
                    *slot = s as u32;
                }
            }
        }
        Spines {
            topology,
            domains,
            of_node,
        }
    }
}
