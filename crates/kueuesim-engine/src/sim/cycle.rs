//! The Kueue scheduling cycle and applying its decisions (`processEntry`): admissions, preemptions
//! and requeues (the controller latency around them is `latency`'s).

use kueuesim_model::objects::push_decimal;
use kueuesim_model::quota::{NodeIdx, QuotaTree};
use kueuesim_model::{ClusterQueueId, QueueRef, SimDuration, SimTime, WorkloadId, World};

use crate::admission::{self, Assignment, Decision, Head, NotAdmitted, ScanClock, ScanProgress};
use crate::outcome::{Admission, ConditionType, EventType, WorkloadState};
use crate::preemption::{AdmittedWorkloads, Candidate, Target};
use crate::queues::RequeueReason;

use super::record::{KUEUE_ADMISSION, human_reason};
use super::{Ev, Simulation};

/// A scheduling cycle being applied, or blocked by `waitForPodsReady.blockAdmission`: the
/// decisions still to apply (the next, e.g. the blocked admission, last), and the heads to
/// requeue once every entry is processed.
#[derive(Clone)]
pub(super) struct SuspendedCycle {
    pub(super) cycle: u64,
    pub(super) rest: Vec<Decision>,
    /// Requeues wait for the end of the cycle, as upstream's step 6 ("Requeue the heads that
    /// were not scheduled"); the flag says whether a requeue that moved workloads counts as
    /// progress (not for a preemptor, which waits for its victims); last, the flavor-scan
    /// progress the head keeps.
    pub(super) deferred: Vec<DeferredRequeue>,
    pub(super) progress: bool,
    /// Waited: the queues may have changed since the cycle popped its heads.
    pub(super) resumed: bool,
}

/// A head to requeue at the end of its cycle: its reason, its condition, whether moving
/// workloads counts as progress, and its flavor-scan progress.
pub(super) type DeferredRequeue = (Head, RequeueReason, NotAdmitted, bool, Option<ScanProgress>);

impl SuspendedCycle {
    /// The heads the cycle holds: those of its decisions still to apply, then those to requeue.
    pub(super) fn heads(&self) -> impl Iterator<Item = &Head> {
        let deferred = self.deferred.iter().map(|d| &d.0);
        self.rest.iter().map(Decision::head).chain(deferred)
    }
}

/// Cycles at one instant that change nothing but the pending workloads' flavor-scan progress
/// (`LastAssignment`): a head put back in its heap because its scan has flavors left
/// (`PendingFlavors`), or any head of a StrictFIFO queue, is popped again at once, and
/// upstream's scheduler loops while a heap holds a head. With nothing else changing, each
/// cycle's decisions follow from the progress the cycle starts from, so once the progress of
/// every pending workload together comes back to a state it had, the cycles repeat what they
/// did: the scheduler would go round that loop until some other event. The run then waits
/// for that event. Comparing the whole state, not each workload's, stops where the loop
/// closes: two workloads taking turns at restarting their scans with periods 2 and 3 repeat
/// only after 6 cycles, and stopping earlier leaves one of them at another point of its own
/// loop, from which the next event's cycles go on differently.
#[derive(Clone, Debug, Default)]
pub(super) struct ScanLoop {
    /// The XOR of every workload's progress fingerprint (`ScanProgress::fingerprint`).
    state: u64,
    /// The states the cycles passed through since anything else changed, the first being
    /// the one they started from; empty after any other event.
    seen: Vec<u64>,
}

impl ScanLoop {
    /// Something other than a cycle happened: the states seen say nothing about what comes.
    pub(super) fn forget(&mut self) {
        self.seen.clear();
    }

    /// Workload `w`'s progress changes from `old` to `new`.
    fn replace(&mut self, w: WorkloadId, old: Option<&ScanProgress>, new: Option<&ScanProgress>) {
        let fp = |p: Option<&ScanProgress>| p.map_or(0, |p| p.fingerprint(w));
        self.state ^= fp(old) ^ fp(new);
    }

    /// A cycle starts: the first of a run starts from a state seen.
    fn start(&mut self) {
        if self.seen.is_empty() {
            self.seen.push(self.state);
        }
    }

    /// A cycle ended, having `changed` something else (admitted, preempted, parked or moved
    /// workloads) or not: whether it moved the scans on to a state not seen since, so the
    /// next cycle at this instant may decide differently.
    fn moved_on(&mut self, changed: bool) -> bool {
        // Without a start (the cycle waited for PodsReady and other events ran meanwhile),
        // the state it ended in is where a new run starts.
        if changed || self.seen.is_empty() {
            self.seen.clear();
            self.seen.push(self.state);
            return false;
        }
        if self.seen.contains(&self.state) {
            return false;
        }
        self.seen.push(self.state);
        true
    }
}

impl<'w> Simulation<'w> {
    /// Sets pending workload `w`'s flavor-scan progress (`LastAssignment`).
    pub(super) fn set_last_assignment(&mut self, w: WorkloadId, scan: Option<ScanProgress>) {
        let rt = &mut self.runtimes[w.index()];
        match (&mut rt.last_assignment, scan) {
            // The common case under overload: a head fails again the way it failed before.
            // The same flavors tried leave the fingerprint as it was, and the box is reused.
            (Some(old), Some(new)) => {
                if old.last_tried != new.last_tried {
                    self.kueue.scan_loop.replace(w, Some(old), Some(&new));
                }
                // The replaced progress's vectors go back to the flavor assigner.
                let replaced = std::mem::replace(&mut **old, new);
                self.kueue.cycle_scratch.recycle_scan(replaced.last_tried);
            }
            (last, scan) => {
                self.kueue
                    .scan_loop
                    .replace(w, last.as_deref(), scan.as_ref());
                *last = scan.map(Box::new);
            }
        }
    }

    pub(super) fn request_cycle(&mut self) {
        if !self.kueue.cycle_scheduled {
            self.kueue.cycle_scheduled = true;
            // Controller latency: a cycle starts once the previous one has ended.
            let at = self.now.max(self.kueue.next_cycle_at);
            self.events.push(at, Ev::Cycle);
        }
    }

    pub(super) fn cycle(&mut self) {
        self.kueue.cycle_scheduled = false;
        if self.kueue.suspended.is_some() {
            // The scheduler is blocked in the cycle before; `resume_cycle` asks for the next.
            self.progress.idle = true;
            return;
        }
        let cq_stopped = &self.kueue.cq_stopped;
        // A LocalQueue's usage as the cycle's snapshot sees it: nothing changes the usage
        // between here and the cycle's decisions, so it is worked out where a workload asks,
        // not for every LocalQueue of the platform on every cycle.
        let world = self.world;
        let afs_state = &self.kueue.afs;
        let runtimes = &self.runtimes;
        let afs_usage = |w: WorkloadId| -> Option<f64> {
            // Without Admission Fair Sharing there is nothing to look up.
            let afs = afs_state.as_ref()?;
            match &runtimes[w.index()].spec.queue {
                QueueRef::Local(lq) => {
                    let l = world.local_queue(*lq);
                    afs.enabled_cq[l.cluster_queue.index()]
                        .then(|| afs.usage(lq.index(), l.fair_sharing_weight_milli))
                }
                _ => None,
            }
        };
        // The heads go into a buffer kept from cycle to cycle (an overloaded run has hundreds
        // of thousands of cycles).
        let mut heads = std::mem::take(&mut self.kueue.heads);
        heads.clear();
        self.kueue.queues.pop_heads_afs(
            |cq| !cq_stopped[cq.index()],
            afs_usage,
            |cq, key| heads.push(Head { cq, key }),
        );
        if heads.is_empty() {
            self.kueue.heads = heads;
            self.progress.idle = true;
            return;
        }
        self.rec.stats.cycles += 1;
        let cycle = self.rec.stats.cycles;
        self.kueue.scan_loop.start();
        if let Some(afs) = &self.kueue.afs {
            // The snapshot's `LocalQueueFSUsage` of every workload holding quota.
            self.kueue.admitted.set_lq_fs_usage(|w| {
                let usage = afs_usage(w)?;
                let QueueRef::Local(lq) = &runtimes[w.index()].spec.queue else {
                    return None;
                };
                Some((afs.lq_name_id[lq.index()], usage))
            });
        }
        // Without a TAS base (no TAS flavor, or no nodes) the cycle's TAS view is the kept
        // empty one (`tas_none`): it is lent to the cycle instead of cloned and dropped for
        // each of the million's 3.18 M cycles. The view has no nodes, so whatever the cycle
        // books on it (`apply`, `give_back` loop over nodes) writes nothing: it stays as it
        // was, which the debug check after the cycle states.
        let mut cycle_tas;
        let tas = if self.sched.tas_base.is_some() {
            cycle_tas = self.tas_capacity();
            &mut cycle_tas
        } else {
            &mut self.sched.tas_none
        };
        let mut rest = admission::run_cycle(
            self.world,
            &self.runtimes,
            &mut self.kueue.tree,
            &self.kueue.admitted,
            tas,
            &heads,
            ScanClock {
                cycle,
                cq_generations: &self.kueue.cq_generation,
            },
            &mut self.kueue.cycle_scratch,
        );
        debug_assert_eq!(
            self.sched.tas_none.nodes.version(),
            0,
            "a cycle booked something on the lent empty TAS view"
        );
        self.occupy_scheduler(heads.len(), &rest);
        self.kueue.heads = heads;
        rest.reverse();
        let deferred = std::mem::take(&mut self.kueue.deferred);
        self.apply_decisions(SuspendedCycle {
            cycle,
            rest,
            deferred,
            progress: false,
            resumed: false,
        });
    }

    /// Applies a cycle's decisions in order (`processEntry`), until one admission finds
    /// `waitForPodsReady.blockAdmission` holding it (`waitForPodsReadyIfNeeded`): then the
    /// cycle waits, the rest of its decisions with it, until every workload holding quota
    /// has its pods ready (or loses its quota). Upstream's scheduler goroutine blocks on
    /// the cache's condition variable and admits with the snapshot it already took; that is
    /// safe because only the scheduler adds usage, so waiting can only free quota.
    fn apply_decisions(&mut self, mut state: SuspendedCycle) {
        let cycle = state.cycle;
        while let Some(d) = state.rest.pop() {
            match d {
                Decision::Admit { head, assignment } => {
                    if self.admission_blocked() {
                        self.bound_own(head.key.workload, crate::bound::Constraint::PodsReady);
                        self.set_pending_condition(
                            head.key.workload,
                            "WaitingForPodsReady",
                            "waiting for all admitted workloads to be in PodsReady condition",
                        );
                        state.rest.push(Decision::Admit { head, assignment });
                        self.kueue.suspended = Some(state);
                        return;
                    }
                    state.progress = true;
                    // A cycle that waited admits the head it popped even if a workload that
                    // arrived meanwhile now sorts before it, as upstream's blocked goroutine does.
                    if !state.resumed
                        && self.world.cluster_queue(head.cq).queueing_strategy
                            == kueuesim_model::QueueingStrategy::StrictFIFO
                        && let Some(audit) = &mut self.rec.audit
                        && let Some(first) = self.kueue.queues.queue(head.cq).first_active()
                        && *first < head.key
                    {
                        audit.push(format!(
                            "StrictFIFO ClusterQueue {} admitted {:?} past {:?}",
                            self.world.cluster_queue(head.cq).name,
                            head.key,
                            first
                        ));
                    }
                    self.kueue.queues.clear_sticky(head.cq, head.key.workload);
                    let written = self.api_write();
                    self.runtimes[head.key.workload.index()].starts_after = written;
                    self.admit(
                        head.key.workload,
                        head.cq,
                        assignment,
                        Some(cycle),
                        self.now,
                    );
                }
                Decision::Preempt {
                    head,
                    targets,
                    not_admitted,
                } => {
                    // `markPreemptionOutcome`: the next attempt reconsiders every flavor.
                    self.set_last_assignment(head.key.workload, None);
                    state.progress |= self.issue_preemptions(head, &targets, cycle);
                    state.deferred.push((
                        head,
                        RequeueReason::PendingPreemption,
                        not_admitted,
                        false,
                        None,
                    ));
                }
                Decision::Requeue {
                    head,
                    reason,
                    not_admitted,
                    scan,
                } => {
                    state
                        .deferred
                        .push((head, reason, not_admitted, true, scan));
                }
            }
        }
        for (head, reason, not_admitted, counts, scan) in state.deferred.drain(..) {
            let moved = self.requeue(head, reason, not_admitted, cycle, scan);
            state.progress |= counts && moved;
        }
        // The emptied vectors serve the next cycle.
        self.kueue.deferred = state.deferred;
        self.kueue.cycle_scratch.give_decisions(state.rest);
        // Entries of a cycle that waited are requeued after broadcasts that happened during
        // the wait; upstream marks them active again, so broadcast once more.
        if state.resumed {
            let mut nodes = std::mem::take(&mut self.kueue.requeued_while_suspended);
            nodes.sort_unstable();
            nodes.dedup();
            for n in nodes {
                self.requeue_inadmissible(n);
            }
        }
        // Upstream loops without delay after a cycle that admitted something and backs off
        // after one that did not. A cycle that changed nothing would repeat the same decisions
        // until something else happens, so the next one waits for that event instead; one
        // that only moved flavor scans on to a new state is followed at once (`ScanLoop`).
        let scans_moved_on = self.kueue.scan_loop.moved_on(state.progress);
        if (state.progress || scans_moved_on) && self.kueue.queues.any_active() {
            self.request_cycle();
        }
    }

    /// Continues the blocked cycle once every workload holding quota is ready.
    pub(super) fn resume_cycle(&mut self) {
        if let Some(mut state) = self.kueue.suspended.take() {
            self.progress.idle = false;
            state.resumed = true;
            self.apply_decisions(state);
        }
    }

    pub(super) fn admit(
        &mut self,
        w: WorkloadId,
        cq: ClusterQueueId,
        a: Assignment,
        cycle: Option<u64>,
        at: SimTime,
    ) {
        let world = self.world;
        let cq_name = &world.cluster_queue(cq).name;
        // Kueue's two phases: with an admission check, quota reservation alone, and
        // `Admitted` once the check is Ready (a workload of the input admitted before the
        // start had its checks Ready then).
        let check = if cycle.is_some() {
            self.provisioning_check(
                cq,
                a.pod_sets
                    .iter()
                    .flat_map(|p| p.flavors.iter().map(|&(_, f)| f)),
            )
        } else {
            None
        };
        let node = self.kueue.tree.cq_node(cq);
        for &(fr, amount) in &a.usage {
            self.kueue.tree.add_usage(node, fr, amount);
        }
        // The admitted workload leaves the queue with its flavor-scan progress; the cache
        // then takes in its admitted object, an update that moves the ClusterQueue's
        // allocatable generation (`clusterQueue.addOrUpdateWorkload` → `deleteWorkload`).
        self.set_last_assignment(w, None);
        self.bound_off(w);
        self.kueue.cq_generation[cq.index()] += 1;
        self.rec.stats.admissions += 1;
        self.afs_admit(w, &a.usage);
        let wl = self.spec(w);

        self.kueue.admitted.insert(Candidate {
            workload: w,
            cq,
            priority: wl.priority,
            // Quota reservation resets the Evicted condition, so the queue-order timestamp
            // of an admitted workload is its creation time (`GetQueueOrderTimestamp`).
            timestamp: wl.created_at,
            reserved_at: api_server_time(self.world.config.start_unix_ms, at),
            evicted: false,
            uid_rank: self.runtimes[w.index()].uid_label,
            lq_fs_usage: None,
            usage: a.usage.clone(),
        });
        // `QueuedWaitTime`: since the last requeue, else since creation.
        let queued_since = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .find(|c| c.kind == ConditionType::Requeued && c.status)
            .map_or(wl.created_at, |c| c.at);
        // Only `metrics.prom` reads these; a lean run (a summary) keeps none, so its memory
        // does not grow with every admission.
        if cycle.is_some() && self.rec.tally.is_none() {
            self.rec
                .stats
                .quota_reserved_waits
                .push((w, at - queued_since));
        }
        if let (Some(out), Some(_)) = (&mut self.outbox, cycle) {
            out.push_wait(w, self.runtimes[w.index()].spec.clone(), at - queued_since);
        }
        // The admission's event messages, written piece by piece: formatting machinery for
        // two messages per admission showed in profiles of a million workloads.
        let (reserved_msg, admitted_msg) = if cycle.is_some() {
            let mut reserved = String::with_capacity(80 + cq_name.len() + a.considered.len());
            reserved.push_str("Quota reserved in ClusterQueue ");
            reserved.push_str(cq_name);
            reserved.push_str(", wait time since queued was ");
            (at - queued_since).push_whole_secs(&mut reserved);
            reserved.push('s');
            if !a.considered.is_empty() {
                reserved.push_str("; Flavors considered: ");
                reserved.push_str(&a.considered);
            }
            let mut admitted = String::with_capacity(64 + cq_name.len());
            admitted.push_str("Admitted by ClusterQueue ");
            admitted.push_str(cq_name);
            admitted.push_str(", wait time since reservation was 0s");
            (reserved, admitted)
        } else {
            (String::new(), String::new())
        };
        // Copied into the event's message: its string goes back for the next admission's.
        self.kueue.cycle_scratch.give_string(a.considered);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.usage = a.usage;
            // Time in queue ends at the quota reservation (a snapshot's may predate creation).
            rt.record.queued += (at - rt.record.pending_since).max(SimDuration::ZERO);
            if check.is_some() {
                rt.record.state = WorkloadState::QuotaReserved;
            } else {
                rt.record.state = WorkloadState::Admitted;
                rt.record.admitted_at = Some(at);
            }
            rt.record.admission = Some(Admission {
                cluster_queue: cq,
                pod_sets: a.pod_sets,
            });
        }
        if cycle.is_some() {
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_ADMISSION,
                "QuotaReserved",
                reserved_msg,
                cycle,
            );
            if check.is_none() {
                self.record_event(
                    w,
                    EventType::Normal,
                    KUEUE_ADMISSION,
                    "Admitted",
                    admitted_msg,
                    cycle,
                );
            }
        }
        self.set_condition_at(
            w,
            ConditionType::QuotaReserved,
            true,
            "QuotaReserved",
            ["Quota reserved in ClusterQueue ", cq_name].concat(),
            at,
        );
        // SetQuotaReservation resets an earlier eviction's conditions.
        for kind in [ConditionType::Evicted, ConditionType::Preempted] {
            // "Previously: " and the old message, written without copying the old one first.
            let previously = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .find(|c| c.kind == kind && c.status)
                .map(|c| ["Previously: ", c.message.as_ref()].concat());
            if let Some(previously) = previously {
                self.set_condition_at(w, kind, false, "QuotaReserved", previously, at);
            }
        }
        if let Some(check) = check {
            self.provisioning_start(w, check);
            return;
        }
        self.complete_admission(w, at, cycle.is_none());
    }

    /// The second phase of admission: `Admitted=True` (every admission check Ready), the
    /// PodsReady and maximum-execution-time clocks, and the pods to their scheduler.
    /// `from_input`: the workload was admitted in the input, before the start.
    pub(super) fn complete_admission(&mut self, w: WorkloadId, at: SimTime, from_input: bool) {
        let world = self.world;
        let wl = self.spec(w);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Admitted;
            rt.record.admitted_at = Some(at);
        }
        self.set_condition_at(
            w,
            ConditionType::Admitted,
            true,
            "Admitted",
            "The workload is admitted",
            at,
        );
        self.set_condition_at(
            w,
            ConditionType::PodsReady,
            false,
            "WaitForStart",
            "Not all pods are ready or succeeded",
            at,
        );
        // A workload of the input whose pods were ready before the start has no timeout
        // (Kueue arms none while PodsReady is True); its pods run again at once.
        let ready_before = from_input
            && wl.initial_admission.as_ref().is_some_and(|i| i.pods_ready)
            && self.runtimes[w.index()].record.evictions.is_empty();
        if let Some(wfpr) = &world.config.kueue.wait_for_pods_ready
            && !ready_before
        {
            let g = self.runtimes[w.index()].generation;
            self.events.push(
                (at + wfpr.timeout).max(self.now),
                Ev::PodsReadyTimeout(w, g),
            );
        }
        if let Some(max) = wl.max_execution_time {
            let rt = &self.runtimes[w.index()];
            let due = (at + max - rt.past_execution).max(self.now);
            self.events
                .push(due, Ev::MaxExecutionTime(w, rt.generation));
        }
        self.release_to_scheduler(w);
    }

    /// Evicts the targets of a preemption (`IssuePreemptions`); already evicted ones are left
    /// alone. Returns whether any eviction was new.
    fn issue_preemptions(&mut self, head: Head, targets: &[Target], cycle: u64) -> bool {
        let world = self.world;
        let preemptor = head.key.workload;
        let mut new = false;
        for t in targets {
            if self
                .kueue
                .admitted
                .candidate(t.workload)
                .is_none_or(|c| c.evicted)
            {
                continue;
            }
            new = true;
            let victim_cq = self
                .kueue
                .admitted
                .candidate(t.workload)
                .map(|c| c.cq)
                .expect("admitted");
            // The messages are written piece by piece, as `format!` would write them: five
            // `format!`s and two paths (a vector of names joined) per victim showed in
            // profiles of the million's preemptions.
            let (by, victim) = (self.spec(preemptor), self.spec(t.workload));
            let tree = &self.kueue.tree;
            let mut message = String::with_capacity(256);
            message.push_str("Preempted to accommodate a workload (UID: ");
            message.push_str(&by.uid);
            message.push_str(", JobUID: ");
            message.push_str(by.job_uid.as_deref().unwrap_or("UNKNOWN"));
            message.push_str(") due to ");
            message.push_str(human_reason(t.reason));
            message.push_str("; preemptor path: ");
            push_cq_path(&mut message, world, tree, head.cq);
            message.push_str("; preemptee path: ");
            push_cq_path(&mut message, world, tree, victim_cq);
            let mut priorities = String::with_capacity(128);
            priorities.push_str("; preemptor effective priority: ");
            push_priority(&mut priorities, by.priority);
            priorities.push_str(" (base: ");
            push_priority(&mut priorities, by.priority);
            priorities.push_str(", boost: 0); preemptee effective priority: ");
            push_priority(&mut priorities, victim.priority);
            priorities.push_str(" (base: ");
            push_priority(&mut priorities, victim.priority);
            priorities.push_str(", boost: 0)");
            let mut preempted_msg = String::with_capacity(message.len() + priorities.len());
            preempted_msg.push_str(&message);
            preempted_msg.push_str(&priorities);
            let victim_cq_name = &world.cluster_queue(victim_cq).name;
            let mut workload_msg = String::with_capacity(
                64 + victim.namespace.len()
                    + victim.name.len()
                    + victim.uid.len()
                    + victim_cq_name.len()
                    + priorities.len(),
            );
            workload_msg.push_str("Preempted workload ");
            workload_msg.push_str(&victim.namespace);
            workload_msg.push('/');
            workload_msg.push_str(&victim.name);
            workload_msg.push_str(" (UID: ");
            workload_msg.push_str(&victim.uid);
            workload_msg.push_str(") in ClusterQueue ");
            workload_msg.push_str(victim_cq_name);
            workload_msg.push_str(&priorities);
            let preemptor_name = [by.namespace.as_str(), "/", by.name.as_str()].concat();
            self.record_event(
                t.workload,
                EventType::Normal,
                KUEUE_ADMISSION,
                "Preempted",
                preempted_msg,
                Some(cycle),
            );
            self.record_event(
                preemptor,
                EventType::Normal,
                KUEUE_ADMISSION,
                "PreemptedWorkload",
                workload_msg,
                Some(cycle),
            );
            self.set_condition(
                t.workload,
                ConditionType::Preempted,
                true,
                t.reason.as_str(),
                message.clone(),
            );
            self.runtimes[preemptor.index()].record.preemptions_caused += 1;
            // `IssuePreemptions` patches each victim's `Evicted` condition on Kueue's client
            // and waits for the patches; the victim's quota is released once the patch is
            // done (the harness's runner, or the job controller, then clears the reservation).
            let written = self.api_write();
            self.wait_for_write(written);
            self.evict(
                t.workload,
                "Preempted",
                Some(t.reason.as_str()),
                Some(preemptor_name),
                message,
                Some(cycle),
            );
            self.release_not_before(t.workload, written);
            if let Some(e) = self.runtimes[t.workload.index()]
                .record
                .evictions
                .last_mut()
            {
                e.preemptor_cluster_queue = Some(head.cq);
            }
        }
        new
    }
}

/// Appends `/root/.../cq` (`buildCQPath`): the cohorts from the root down, then the
/// ClusterQueue, each after a `/`. A loop, not a recursion: a cohort chain is as deep as the
/// input makes it (the loader takes chains of 100,000 cohorts), deeper than a thread's stack.
fn push_cq_path(out: &mut String, world: &World, tree: &QuotaTree, cq: ClusterQueueId) {
    // The cohorts from the ClusterQueue up, in a stack array for the usual shallow tree and
    // in a vector past it (as `QuotaTree::with_path` keeps its path).
    const SHALLOW: usize = 16;
    let mut shallow = [NodeIdx(0); SHALLOW];
    let mut deep = Vec::new();
    let mut len = 0;
    let mut n = tree.cq_node(cq);
    while let Some(p) = tree.parent(n) {
        if len < SHALLOW {
            shallow[len] = p;
        } else {
            if deep.is_empty() {
                deep.extend_from_slice(&shallow);
            }
            deep.push(p);
        }
        len += 1;
        n = p;
    }
    let up: &[NodeIdx] = if len <= SHALLOW {
        &shallow[..len]
    } else {
        &deep
    };
    for &p in up.iter().rev() {
        let cohort =
            kueuesim_model::CohortId::from_index(p.0 as usize - world.cluster_queues.len());
        out.push('/');
        out.push_str(&world.cohorts[cohort.index()].name);
    }
    out.push('/');
    out.push_str(&world.cluster_queue(cq).name);
}

/// Appends a priority in decimal, as `{}` formats an `i32`.
fn push_priority(out: &mut String, p: i32) {
    if p < 0 {
        out.push('-');
    }
    push_decimal(out, p.unsigned_abs() as usize);
}

/// `at` as Kueue reads it back of a condition's `lastTransitionTime`: the API server stores a
/// `metav1.Time` in whole seconds (RFC 3339), so two quota reservations within one wall-clock
/// second tie in `CandidatesOrdering`'s `quotaReservationTime` and the UID decides.
fn api_server_time(start_unix_ms: i64, at: SimTime) -> SimTime {
    let instant = start_unix_ms.saturating_add(at.millis());
    SimTime::from_millis(instant.div_euclid(1000) * 1000 - start_unix_ms)
}

#[cfg(test)]
mod tests {
    use kueuesim_model::objects::{ClusterQueue, Cohort};
    use kueuesim_model::quota::QuotaTree;
    use kueuesim_model::{ClusterQueueId, CohortId, World};

    use super::{push_cq_path, push_priority};

    /// A world of one ClusterQueue `cq` under a chain of `depth` cohorts `c0` ← `c1` ← ….
    fn chain(depth: u32) -> World {
        let mut w = World::default();
        for i in 0..depth {
            w.cohorts.push(Cohort {
                name: format!("c{i}"),
                parent: i.checked_sub(1).map(CohortId),
                resource_groups: Vec::new(),
                fair_sharing_weight_milli: 1000,
                declared: true,
            });
        }
        w.cluster_queues.push(ClusterQueue {
            name: "cq".into(),
            cohort: depth.checked_sub(1).map(CohortId),
            ..Default::default()
        });
        w
    }

    /// `buildCQPath` from the root down, on chains around the 16 cohorts kept on the stack,
    /// and on 100,000 in a thread of 256 KiB of stack: a walk that recursed once per cohort
    /// would overflow it.
    #[test]
    fn cq_path_of_a_deep_chain_without_recursion() {
        let path = |depth: u32| {
            let w = chain(depth);
            let tree = QuotaTree::new(&w);
            let mut out = String::from(">");
            push_cq_path(&mut out, &w, &tree, ClusterQueueId(0));
            out
        };
        let expected = |depth: u32| {
            let cohorts: String = (0..depth).map(|i| format!("/c{i}")).collect();
            format!(">{cohorts}/cq")
        };
        for depth in [0, 1, 15, 16, 17, 40] {
            assert_eq!(path(depth), expected(depth), "depth {depth}");
        }
        let deep = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || path(100_000))
            .expect("a thread")
            .join()
            .expect("the walk ends without overflowing its stack");
        assert_eq!(deep, expected(100_000));
    }

    /// `push_priority` writes what `{}` formats for an `i32`, signs and extremes included
    /// (the preemption messages name both priorities twice).
    #[test]
    fn priority_as_formatted() {
        for p in [0, 1, -1, 9, -10, 100, 1000, -12345, i32::MAX, i32::MIN] {
            let mut out = String::from("x");
            push_priority(&mut out, p);
            assert_eq!(out, format!("x{p}"));
        }
    }
}
