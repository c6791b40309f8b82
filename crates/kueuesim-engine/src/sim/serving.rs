//! Serving that scales: the replicas of Deployments, StatefulSets and LeaderWorkerSets
//! (`World::serving`) that a scale-down deletes, chosen as the object's controller chooses
//! them, and what `summary.serving` reports (replica-seconds wanted and ready, the time from a
//! scale-up to ready).
//!
//! A scale-up needs no event: its replica workloads were made at load, and arrive at the
//! scale-up (Kueue then admits each as upstream does for the kind). A scale-down is an
//! `Ev::Scale`; the replicas it deletes end at once, whatever their state.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use kueuesim_model::{NodeId, QueueRef, ServingKind, SimTime, WorkloadId, World};

use crate::outcome::{EventType, ServingStats, WorkloadState};

use super::{Ev, Simulation};

/// The source of the events kueuesim records for scale-downs.
const SERVING_SOURCE: &str = "kueuesim-serving";

/// The run's state of every serving object, parallel to `World::serving`.
#[derive(Clone, Debug)]
pub(super) struct ServingState {
    objects: Vec<ObjectState>,
}

#[derive(Clone, Debug, Default)]
struct ObjectState {
    /// Its replica workloads arrived and not deleted, in arrival order.
    live: Vec<WorkloadId>,
    /// Replicas whose pods all run now, since `since`.
    ready: u32,
    since: SimTime,
    stats: ServingStats,
}

impl ServingState {
    /// The state of `world`'s serving objects, None without any; queues their scale-downs.
    pub(super) fn new(
        world: &World,
        events: &mut crate::event_queue::EventQueue<Ev>,
    ) -> Option<Self> {
        if world.serving.is_empty() {
            return None;
        }
        for (o, obj) in world.serving.iter().enumerate() {
            for (s, pair) in obj.steps.windows(2).enumerate() {
                if pair[1].1 < pair[0].1 {
                    events.push(pair[1].0, Ev::Scale(o as u32, s as u32 + 1));
                }
            }
        }
        Some(ServingState {
            objects: vec![ObjectState::default(); world.serving.len()],
        })
    }

    /// Each object's figures at the end of the run (`end`).
    pub(super) fn finish(mut self, world: &World, end: SimTime) -> Vec<ServingStats> {
        for (obj, st) in world.serving.iter().zip(&mut self.objects) {
            if end > st.since {
                st.stats.ready_ms += i128::from(st.ready) * i128::from((end - st.since).millis());
            }
            st.stats.wanted_ms = obj.wanted_ms(end);
            st.stats.times_to_ready_ms.sort_unstable();
        }
        self.objects.into_iter().map(|o| o.stats).collect()
    }
}

impl<'w> Simulation<'w> {
    /// Replica workload `w` arrived: created by its object's controller at a scale-up.
    pub(super) fn serving_arrived(&mut self, w: WorkloadId) {
        let Some(state) = self.serving.as_mut() else {
            return;
        };
        let Some(r) = self.runtimes[w.index()].spec.serving else {
            return;
        };
        let st = &mut state.objects[r.object as usize];
        st.live.push(w);
        st.stats.replicas_created += r.replicas;
    }

    /// Replica workload `w`'s pods all run (`ready`), or stop doing so.
    pub(super) fn serving_ready(&mut self, w: WorkloadId, ready: bool) {
        let Some(state) = self.serving.as_mut() else {
            return;
        };
        let rt = &self.runtimes[w.index()];
        let Some(r) = rt.spec.serving else {
            return;
        };
        let now = self.now;
        let st = &mut state.objects[r.object as usize];
        st.stats.ready_ms += i128::from(st.ready) * i128::from((now - st.since).millis());
        st.since = now;
        if ready {
            st.ready += r.replicas;
            // The first time: its time from the scale-up that created it to ready.
            if rt.runs == 1 {
                let took = (now - rt.spec.arrival).millis();
                for _ in 0..r.replicas {
                    st.stats.times_to_ready_ms.push(took);
                }
            }
        } else {
            st.ready -= r.replicas;
        }
    }

    /// Serving object `o` scales down to its step `step`'s replicas: its controller deletes
    /// the replicas it ranks first (`victims`).
    pub(super) fn scale_down(&mut self, o: usize, step: usize) {
        // The input's serving objects (a Timeline's epochs carry none).
        let world = self.origin;
        let obj = &world.serving[o];
        let (from, to) = (obj.steps[step - 1].1, obj.steps[step].1);
        let Some(state) = self.serving.as_ref() else {
            return;
        };
        let victims = self.victims(obj.kind, &state.objects[o].live, from - to);
        for w in victims {
            let pod = self.spec(w).pod_name(0, 0);
            let what = match obj.kind {
                ServingKind::Deployment => format!("pod {pod}"),
                ServingKind::StatefulSet => format!("its pods from {pod}"),
                ServingKind::LeaderWorkerSet => format!("group {pod} (its leader and workers)"),
            };
            let message = format!(
                "{} {}/{} scaled from {from} to {to} replicas: {what} deleted",
                obj.kind.as_str(),
                obj.namespace,
                obj.name
            );
            self.record_event(
                w,
                EventType::Normal,
                SERVING_SOURCE,
                "ScaledDown",
                message,
                None,
            );
            self.delete_replica(w);
            if let Some(state) = self.serving.as_mut() {
                state.objects[o].live.retain(|&x| x != w);
            }
        }
    }

    /// The `n` replicas of `live` the controller deletes first. A LeaderWorkerSet deletes its
    /// groups of the highest indexes, a StatefulSet (scaling to zero) its pod group; a
    /// Deployment's ReplicaSet ranks its pods (`controller.ActivePodsWithRanks`, as
    /// `getPodsToDelete` sorts them): unscheduled before scheduled, pending before running,
    /// more pods of the set on the same node first, then the most recently ready, then the
    /// newest (upstream's `LogarithmicScaleDown` compares those times in powers of two and
    /// then by random UID; kueuesim compares them exactly, then by creation order).
    fn victims(&self, kind: ServingKind, live: &[WorkloadId], n: u32) -> Vec<WorkloadId> {
        // A head that a cycle waiting under `blockAdmission` popped is about to be decided
        // by it: its controller's deletion would race the admission, so it is left alone.
        let popped: Vec<WorkloadId> = self
            .kueue
            .suspended
            .as_ref()
            .map(|s| s.heads().map(|h| h.key.workload).collect())
            .unwrap_or_default();
        let mut candidates: Vec<WorkloadId> = live
            .iter()
            .copied()
            .filter(|w| !popped.contains(w))
            .filter(|w| {
                self.runtimes
                    .get(w.index())
                    .is_some_and(|rt| rt.record.state != WorkloadState::Finished)
            })
            .collect();
        match kind {
            ServingKind::StatefulSet | ServingKind::LeaderWorkerSet => {
                candidates.sort_by_key(|w| {
                    Reverse(
                        self.runtimes[w.index()]
                            .spec
                            .serving
                            .map_or(0, |r| r.ordinal),
                    )
                });
            }
            ServingKind::Deployment => {
                let node_of = |w: WorkloadId| {
                    self.runtimes[w.index()]
                        .record
                        .placement
                        .first()?
                        .first()
                        .copied()?
                };
                // `ActivePodsWithRanks`' rank: how many of the candidates share a pod's node,
                // counted once per node (a count per candidate would be quadratic).
                let mut per_node: BTreeMap<NodeId, usize> = BTreeMap::new();
                for &w in &candidates {
                    if let Some(node) = node_of(w) {
                        *per_node.entry(node).or_default() += 1;
                    }
                }
                let colocated = |w: WorkloadId| node_of(w).map_or(0, |node| per_node[&node]);
                let mut keyed: Vec<_> = candidates
                    .iter()
                    .map(|&w| {
                        let rt = &self.runtimes[w.index()];
                        let assigned = node_of(w).is_some();
                        let running = rt.record.state == WorkloadState::Running;
                        (
                            (
                                assigned,
                                running,
                                Reverse(colocated(w)),
                                Reverse(rt.record.running_at),
                                Reverse(rt.spec.arrival),
                                Reverse(rt.spec.serving.map_or(0, |r| r.ordinal)),
                            ),
                            w,
                        )
                    })
                    .collect();
                keyed.sort();
                candidates = keyed.into_iter().map(|(_, w)| w).collect();
            }
        }
        candidates.truncate(n as usize);
        candidates
    }

    /// Replica `w` is deleted by its controller, in whatever state: a pending one leaves its
    /// queue, an admitted or running one gives its quota and nodes back at once; one being
    /// evicted is let go when its pods are gone. It reports `Finished` from now (upstream
    /// its Workload object goes with its pod or group).
    fn delete_replica(&mut self, w: WorkloadId) {
        let state = self.runtimes[w.index()].record.state;
        match state {
            WorkloadState::Finished => return,
            WorkloadState::Evicted => {
                // Its pods are terminating; nothing requeues it (`pods_gone`).
                self.runtimes[w.index()].deactivated = true;
                self.runtimes[w.index()].scaled_down = true;
                return;
            }
            WorkloadState::Running => {
                self.progress.running -= 1;
                self.serving_ready(w, false);
                self.end_run(w, true);
            }
            WorkloadState::Admitted | WorkloadState::QuotaReserved => {
                self.close_idle_quota(w);
            }
            WorkloadState::Pending | WorkloadState::Inactive => {
                if let (QueueRef::Local(lq), Some(key)) = (
                    &self.runtimes[w.index()].spec.queue,
                    self.runtimes[w.index()].key,
                ) {
                    let cq = self.world.local_queue(*lq).cluster_queue;
                    self.kueue.queues.remove(cq, &key);
                }
                self.bound_off(w);
            }
        }
        self.release(w, true);
        self.end_deleted(w);
    }

    /// A deleted replica is done: `Finished` from now, its events stale.
    pub(super) fn end_deleted(&mut self, w: WorkloadId) {
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Finished;
            rt.record.finished_at = Some(self.now);
            rt.record.scaled_down = true;
            rt.key = None;
            rt.generation += 1;
        }
        self.progress.last_done = self.now;
        self.progress.last_progress = self.now;
        self.let_go_if_lean(w);
    }
}
