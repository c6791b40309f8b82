//! Arrivals: where the workloads come from (the world or a stream), their UID labels and
//! shape classes, and their first queue position (`GetQueueOrderTimestamp`).

use std::cmp::Reverse;
use std::rc::Rc;

use kueuesim_model::{QueueRef, SimDuration, StopPolicy, Workload, WorkloadId};

use crate::admission::{self, Assignment};
use crate::outcome::{ConditionType, EventType, PodSetAssignment, WorkloadState};
use crate::queues::QueueKey;

use super::runtime::{Spec, new_runtime};
use super::{Ev, Simulation};

/// The workloads of a streamed run (`Simulation::with_stream`), in arrival order.
pub trait WorkloadFeed: Iterator<Item = Workload> {
    /// The next workload as the run keeps it (`Spec::Streamed`, shared with the outbox). By
    /// default `next`'s is moved in; a feed that builds its workloads in their `Rc` at once
    /// says so here, sparing the moves of a ~500-byte `Workload` through its layers.
    fn next_shared(&mut self) -> Option<Rc<Workload>> {
        self.next().map(Rc::new)
    }

    /// Takes back a workload the run let go of (a lean run's finished one, its record
    /// folded into the tally), so that the feed may write a later workload over it rather
    /// than allocate one. By default it is dropped. The run reads nothing of it afterwards,
    /// but may still hold a handle on it (the shape classes keep the first workload of each
    /// shape): a feed writes over it only when `Rc::get_mut` gives it.
    fn recycle(&mut self, spent: Rc<Workload>) {
        drop(spent);
    }

    /// Reads the feed to its end and gives how many workloads it still held: what a run cut
    /// short by `until` reports as not yet arrived. The default builds each one; a feed that
    /// can move past a workload without building it says so here.
    fn count_rest(&mut self) -> u64 {
        let mut n = 0;
        while self.next().is_some() {
            n += 1;
        }
        n
    }
}

/// Where the workloads come from, in arrival order.
pub(super) enum Feed<'w> {
    /// `world.workloads`, by id.
    World,
    /// A stream (`Simulation::with_stream`): `next` is the workload pulled ahead, whose
    /// arrival is queued; `rest` gives the ones after it.
    Stream {
        next: Option<Rc<Workload>>,
        rest: Box<dyn WorkloadFeed + 'w>,
    },
}

impl Clone for Feed<'_> {
    /// A forked run needs its own copy of the workloads still to come; a stream has no copy
    /// to give, so only runs fed from the world fork.
    fn clone(&self) -> Self {
        match self {
            Feed::World => Feed::World,
            Feed::Stream { .. } => panic!("a simulation fed by a stream cannot be forked"),
        }
    }
}

impl<'w> Simulation<'w> {
    /// The queue position of `w` (`GetQueueOrderTimestamp`): its creation time, except after
    /// an eviction by `PodsReadyTimeout` or `AdmissionCheck`, which orders it by the eviction
    /// time (`requeuingStrategy.timestamp: Eviction`, the default). A preempted workload keeps
    /// its place (`PrioritySortingWithinCohort` is on).
    pub(super) fn queue_key(&self, w: WorkloadId) -> QueueKey {
        let wl = self.spec(w);
        let eviction = self.runtimes[w.index()]
            .record
            .evictions
            .last()
            .map(|e| (e.reason, e.at))
            .or_else(|| wl.last_eviction.as_ref().map(|(r, at)| (r.as_str(), *at)));
        let by_eviction = self
            .world
            .config
            .kueue
            .wait_for_pods_ready
            .as_ref()
            .is_none_or(|c| c.order_by_eviction);
        let timestamp = match eviction {
            Some(("PodsReadyTimeout", at)) if by_eviction => at,
            Some(("AdmissionCheck", at)) => at,
            _ => wl.created_at,
        };
        QueueKey {
            priority: Reverse(wl.priority),
            policy: self.policy_order_key(w, &wl),
            timestamp,
            uid_rank: self.runtimes[w.index()].uid_label,
            workload: w,
            shape: self.runtimes[w.index()].shape,
        }
    }

    /// Labels every live workload's UID afresh (its gap was used up) and rewrites the labels
    /// kept in queue keys, preemption candidates and a waiting cycle's heads. The order is
    /// unchanged, so nothing moves.
    fn respace_uid_labels(&mut self) {
        for (w, label) in self.kueue.uid_labels.respace() {
            let rt = &mut self.runtimes[w.index()];
            rt.uid_label = label;
            if let Some(k) = &mut rt.key {
                k.uid_rank = label;
            }
        }
        let runtimes = &self.runtimes;
        let label = |w: WorkloadId| runtimes[w.index()].uid_label;
        self.kueue.queues.relabel(label);
        self.kueue.admitted.relabel(label);
        if let Some(s) = &mut self.kueue.suspended {
            for d in &mut s.rest {
                let head = d.head_mut();
                head.key.uid_rank = label(head.key.workload);
            }
            for d in &mut s.deferred {
                d.0.key.uid_rank = label(d.0.key.workload);
            }
        }
    }

    /// The spec of arriving workload `w`; a stream then queues the arrival after it (ahead
    /// of every other event at its time, as if all arrivals had been queued at the start).
    fn take_arrival(&mut self, w: WorkloadId) -> Spec<'w> {
        match &mut self.feed {
            Feed::World => Spec::World(self.origin.workload(w)),
            Feed::Stream { next, rest } => {
                let wl = next.take().expect("its arrival was queued with it");
                *next = rest.next_shared();
                if let Some(n) = next {
                    assert!(
                        n.arrival >= wl.arrival,
                        "a workload stream gives workloads in arrival order"
                    );
                    let id = WorkloadId::from_index(w.index() + 1);
                    self.events.push_presorted(n.arrival, Ev::Arrive(id));
                }
                Spec::Streamed(wl)
            }
        }
    }

    /// Whether workloads are still to arrive.
    pub(super) fn arrivals_pending(&self) -> bool {
        match &self.feed {
            Feed::World => self.progress.arrived < self.origin.workloads.len(),
            Feed::Stream { next, .. } => next.is_some(),
        }
    }

    /// Whether the workload arriving after `w` holds capacity from the start and arrives at
    /// the same instant (the loader lets such workloads arrive first at their instant).
    fn next_arrival_holds(&self, w: WorkloadId) -> bool {
        let next = match &self.feed {
            Feed::World => self.origin.workloads.get(w.index() + 1),
            Feed::Stream { next, .. } => next.as_deref(),
        };
        next.is_some_and(|n| n.arrival == self.now && n.holds_at_start())
    }

    pub(super) fn arrive(&mut self, w: WorkloadId) {
        let wl = self.take_arrival(w);
        // A workload that holds capacity from the start (quota admitted in the input, pods
        // bound to nodes) is booked at once, but its pods still to place wait until every
        // such workload of this instant is booked: a snapshot is a state, and no pod may be
        // placed onto capacity a running pod listed later holds.
        let holds = wl.holds_at_start();
        if holds {
            self.sched.defer_placement = true;
        }
        self.arrive_booked(w, &wl);
        if holds && !self.next_arrival_holds(w) {
            self.sched.defer_placement = false;
            self.retry_placements();
        }
    }

    fn arrive_booked(&mut self, w: WorkloadId, wl: &Spec<'w>) {
        let world = self.world;
        let wl = wl.clone();
        let fp = &mut self.rec.stats.workload_fingerprint;
        *fp = crate::outcome::workload_fingerprint(*fp, &wl);
        let shape = self.kueue.shape_classes.class_of(&wl);
        let label = self.kueue.uid_labels.insert(&wl.uid, w);
        self.progress.last_done = self.now;
        if self.sched.failures.is_some() {
            let longest = wl.duration.unwrap_or(SimDuration::ZERO) + wl.resilience.restart_cost;
            self.progress.longest = self.progress.longest.max(longest);
        }
        let scheduler = world
            .config
            .scheduler(&wl.scheduler_name)
            .unwrap_or(kueuesim_model::SchedulerKind::Kube);
        let vecs = self.spare_vecs.take();
        let runtime = new_runtime(wl.clone(), scheduler, shape, label.unwrap_or(0), vecs);
        // Vectors kept from a workload let go of (`SpareVecs`) carry nothing of it: the
        // record is the one new vectors give, field for field.
        debug_assert_eq!(
            format!("{:?}", runtime.record),
            format!(
                "{:?}",
                new_runtime(
                    wl.clone(),
                    scheduler,
                    shape,
                    label.unwrap_or(0),
                    Default::default()
                )
                .record
            ),
            "a recycled record vector carried stale contents"
        );
        self.runtimes.insert(w.index(), Box::new(runtime));
        self.serving_arrived(w);
        if label.is_none() || self.kueue.respace_uids_always {
            self.respace_uid_labels();
        }
        if let Some(blocked) = &wl.creation_blocked {
            // No Workload exists, so Kueue never queues it; the job controller retries and
            // reports the same Warning.
            let message = blocked.message.clone();
            self.record_event(
                w,
                EventType::Warning,
                "kueue-job-controller",
                blocked.reason,
                message,
                None,
            );
            return;
        }
        if let Some(init) = &wl.initial_admission {
            let cq = init.cluster_queue;
            let assignment = Assignment {
                pod_sets: init
                    .pod_sets
                    .iter()
                    .map(|p| PodSetAssignment {
                        flavors: p.flavors.clone(),
                        count: p.count,
                        // Kueue TAS: where the input says its pods are (the TAS cache books
                        // them there, and preemption gives them back from there).
                        topology: p.topology.as_ref().map(|(t, domains)| {
                            crate::tas::TopologyAssignment {
                                topology: *t,
                                domains: domains.clone(),
                            }
                        }),
                    })
                    .collect(),
                usage: admission::usage_of(world, &self.kueue.tree, cq, &wl, &init.pod_sets),
                mode: admission::Mode::Fit,
                borrowing: 0,
                contested: Vec::new(),
                not_admitted: None,
                considered: String::new(),
                last_tried: Vec::new(),
            };
            // Reserved before (or, in a snapshot taken later than the start, at) time 0.
            let at = init.reserved_at.unwrap_or(self.now).min(self.now);
            self.runtimes[w.index()].key = Some(self.queue_key(w));
            self.admit(w, cq, assignment, None, at);
            // stopPolicy HoldAndDrain evicts what the queue had admitted.
            let lq_drains = matches!(&wl.queue, QueueRef::Local(lq) if world.local_queue(*lq).stop_policy == StopPolicy::HoldAndDrain);
            if world.cluster_queue(cq).stop_policy == StopPolicy::HoldAndDrain {
                self.evict(
                    w,
                    "ClusterQueueStopped",
                    None,
                    None,
                    "The ClusterQueue is stopped".into(),
                    None,
                );
            } else if lq_drains {
                self.evict(
                    w,
                    "LocalQueueStopped",
                    None,
                    None,
                    "The LocalQueue is stopped".into(),
                    None,
                );
            }
            return;
        }
        match &wl.queue {
            // A suspended job Kueue does not manage: nothing unsuspends it. The Job
            // controller says so once (`JobSuspended`).
            QueueRef::Unmanaged if wl.suspended => {
                if wl.owner.as_ref().is_some_and(|(k, _)| k == "Job") {
                    self.record_event(
                        w,
                        EventType::Normal,
                        "job-controller",
                        "Suspended",
                        "Job suspended".to_string(),
                        None,
                    );
                }
            }
            QueueRef::Unmanaged => self.release_to_scheduler(w),
            QueueRef::Missing(name) => {
                // Kueue's workload controller (getQueueBlocker): never queued, never admitted.
                let msg = format!("LocalQueue {name} doesn't exist");
                self.set_pending_condition(w, admission::REASON_MISCONFIGURED, msg);
            }
            QueueRef::Local(lq) => {
                if !wl.active {
                    self.runtimes[w.index()].record.state = WorkloadState::Inactive;
                    return;
                }
                let lq = world.local_queue(*lq);
                if lq.stop_policy != StopPolicy::None {
                    let msg = format!("LocalQueue {} is inactive", lq.name);
                    self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                    self.bound_queued(w);
                    return;
                }
                let cq = lq.cluster_queue;
                let key = self.queue_key(w);
                self.runtimes[w.index()].key = Some(key);
                let strategy = world.cluster_queue(cq).queueing_strategy;
                // Requeued before the start (`status.requeueState`): the next back-off goes
                // on from its count, and one still running holds it inadmissible until
                // `requeueAt`, as the workload controller does.
                let backoff = wl.requeue_state.as_ref().and_then(|rs| {
                    self.runtimes[w.index()].record.requeue_count = rs.count;
                    rs.requeue_at.filter(|&at| at > self.now).map(|at| (at, rs))
                });
                match backoff {
                    Some((at, rs)) => {
                        self.kueue.queues.park(cq, key);
                        self.runtimes[w.index()].requeue_at = Some(at);
                        let g = self.runtimes[w.index()].generation;
                        self.events.push(at, Ev::BackoffExpired(w, g));
                        // The reasons Kueue writes while a back-off runs.
                        let (reason, message) = match &rs.condition {
                            Some((r, m)) if r == "AdmissionCheck" => ("AdmissionCheck", m.clone()),
                            Some((_, m)) => ("PodsReadyTimeout", m.clone()),
                            None => ("PodsReadyTimeout", String::new()),
                        };
                        self.set_condition(w, ConditionType::Requeued, false, reason, message);
                        self.bound_own(w, crate::bound::Constraint::PodsReady);
                    }
                    None => {
                        self.kueue.queues.add(cq, strategy, key);
                        self.bound_queued(w);
                    }
                }
                if self.kueue.cq_stopped[cq.index()] || self.kueue.tree.in_cycle(cq) {
                    // The workload controller's getQueueBlocker.
                    let msg = format!("ClusterQueue {} is inactive", world.cluster_queue(cq).name);
                    self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                }
                if !self.kueue.cq_stopped[cq.index()] {
                    self.request_cycle();
                }
            }
        }
    }
}
