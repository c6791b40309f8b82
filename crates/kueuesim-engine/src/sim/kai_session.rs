//! KAI's session per instant for the jobs of KAI Queues that Kueue does not manage: the
//! allocate action over every such job due now, in `JobsOrderByQueues` order, then the
//! consolidation, reclaim and preempt actions, each over every job still pending, in that
//! order (upstream's action list `allocate, consolidation, reclaim, preempt`).

use std::collections::BTreeSet;

use kueuesim_model::{QueueRef, ResourceId, SchedulerKind, WorkloadId};

use crate::placement;

use super::kai_actions::{KaiAction, KaiView, elastic_rank};
use super::{Ev, Simulation};

/// An action of the session after allocate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Consolidate,
    Evict(KaiAction),
}

impl<'w> Simulation<'w> {
    /// Whether KAI's session takes job `w`: a KAI job of a KAI Queue that Kueue does not
    /// manage (the jobs KAI's consolidation, reclaim and preempt act for). Others are placed
    /// the moment they are released or retried, as by kube-scheduler.
    pub(super) fn kai_session_job(&self, w: WorkloadId) -> bool {
        let wl = self.spec(w);
        wl.gang.kai_queue.is_some()
            && wl.queue == QueueRef::Unmanaged
            && self.scheduler_of(w) == SchedulerKind::Kai
    }

    /// Job `w` is tried in KAI's session of this instant (`Ev::KaiSession`, after the
    /// instant's other arrivals and releases): upstream's session sees every job created
    /// before it opens.
    pub(super) fn kai_session_for(&mut self, w: WorkloadId) {
        self.sched.kai_due.insert(w);
        if self.sched.kai_session_at != Some(self.now) {
            self.sched.kai_session_at = Some(self.now);
            self.events.push(self.now, Ev::KaiSession);
        }
    }

    /// The session of this instant: allocate over the jobs due (those still waiting and not
    /// pipelined onto their victims' resources, which go first outside the order,
    /// `retry_placements`), then consolidation over those still pending (only preemptible
    /// ones: the action's `FilterNonPreemptible`), then reclaim, then preempt, each action
    /// over every job still pending and not pipelined, in `JobsOrderByQueues` order.
    /// A job that reclaim and preempt found nothing for tries again when a min-runtime
    /// protection that kept a victim from it ends.
    pub(super) fn kai_session(&mut self) {
        self.sched.kai_session_at = None;
        let due = std::mem::take(&mut self.sched.kai_due);
        let jobs: Vec<WorkloadId> = self
            .sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, w)| w)
            .filter(|w| due.contains(w) && !self.pipelined(*w))
            .collect();
        if jobs.is_empty() {
            return;
        }
        // Allocate: one pass of a job at a time (its minimum while below it, else one more
        // task); a job a pass left with tasks to allocate goes back into the order
        // (`PushJob`), behind the jobs the queue order and the job order now put first.
        let mut failed = Vec::new();
        self.sched.kai_passes = placement::kai::Passes::One;
        self.kai_in_order(&jobs, |s, w| {
            let before = s.kai_bound_amounts(w);
            let bound_before = s.kai_bound_pods(w);
            if s.sched.kai_pushed_back {
                // A later pass is always tried, not skipped for a like job that failed: the
                // job's pass ends its passes with its own outcome (and event).
                if !s.try_place(w) {
                    s.scale_up_for_pending(w);
                }
            } else {
                s.retry_one(w, &mut failed);
            }
            let again = s.kai_bound_pods(w) > bound_before
                && s.sched.awaiting_placement.iter().any(|&(_, _, x)| x == w);
            let after = s.kai_bound_amounts(w);
            (std::array::from_fn(|r| after[r] - before[r]), again)
        });
        self.sched.kai_passes = placement::kai::Passes::All;
        // The views each action read for a job, with the number of actions that had
        // succeeded when it was built: an action that finds nothing changes nothing, so a
        // view stays valid until another job's action succeeds (each build scans every
        // runtime).
        let mut views: Vec<(WorkloadId, u32, KaiView)> = Vec::new();
        let mut done = 0u32;
        let mut tried_preempt = Vec::new();
        for step in [
            Step::Consolidate,
            Step::Evict(KaiAction::Reclaim),
            Step::Evict(KaiAction::Preempt),
        ] {
            let waiting: BTreeSet<WorkloadId> = self
                .sched
                .awaiting_placement
                .iter()
                .map(|&(_, _, w)| w)
                .collect();
            let pending: Vec<WorkloadId> = jobs
                .iter()
                .copied()
                .filter(|&w| {
                    waiting.contains(&w)
                        && !self.pipelined(w)
                        && (step != Step::Consolidate || self.spec(w).kai_preemptible())
                })
                .collect();
            if pending.is_empty() {
                continue;
            }
            self.kai_in_order(&pending, |s, w| {
                let fresh = views.iter().position(|v| v.0 == w && v.1 == done);
                let view = match fresh {
                    Some(i) => views.swap_remove(i).2,
                    None => match s.kai_view(w) {
                        Some(v) => v,
                        None => return ([0; 3], false),
                    },
                };
                let acted = match step {
                    Step::Consolidate => s.kai_consolidate(w, &view),
                    Step::Evict(action) => s.kai_evict_for(w, &view, action),
                };
                if acted {
                    done += 1;
                    views.retain(|v| v.0 != w);
                    let rt = &s.runtimes[w.index()];
                    let [cpu, memory] = rt.kai_pipelined_cpu_memory;
                    return ([rt.kai_pipelined, cpu, memory], false);
                }
                if step == Step::Evict(KaiAction::Preempt) {
                    tried_preempt.push(w);
                }
                views.retain(|v| v.0 != w);
                views.push((w, done, view));
                ([0; 3], false)
            });
        }
        for w in tried_preempt {
            if let Some(i) = views.iter().position(|v| v.0 == w) {
                let (_, _, view) = views.swap_remove(i);
                self.kai_retry_when_protection_ends(w, &view);
            }
        }
    }

    /// The milli-GPUs (a share as the part of its device it holds), CPU and memory job `w`
    /// has bound.
    fn kai_bound_amounts(&self, w: WorkloadId) -> placement::kai::Amounts {
        let gpus = self.gpu.map_or(0, |g| self.kai_milli(w.index(), g).0);
        let ([cpu, memory], _) = self.kai_cpu_memory(w.index());
        [gpus, cpu, memory]
    }

    /// The pods job `w` has bound.
    fn kai_bound_pods(&self, w: WorkloadId) -> usize {
        self.runtimes[w.index()]
            .record
            .placement
            .iter()
            .flatten()
            .filter(|n| n.is_some())
            .count()
    }

    /// Job `w` as the session's order sees it now: its queue, the milli-GPUs, CPU and memory
    /// of the tasks its next pass allocates, its priority, elastic rank and creation time.
    fn kai_pending_job(&self, w: WorkloadId, g: ResourceId) -> Option<placement::kai::PendingJob> {
        let wl = self.spec(w);
        let rt = &self.runtimes[w.index()];
        let pods = rt.pods();
        let cpu_memory = self
            .kai_task_cpu_memory(&wl, &pods)
            .iter()
            .fold([0, 0], |a, t| [a[0] + t[0], a[1] + t[1]]);
        Some(placement::kai::PendingJob {
            key: w.index(),
            queue: wl.gang.kai_queue?,
            gpus: self.kai_task_gpus(&wl, &pods, Some(g)).iter().sum(),
            cpu_memory,
            priority: wl.priority,
            elastic: elastic_rank(&wl, &rt.record.placement),
            created: wl.created_at.millis(),
        })
    }

    /// Runs `act` on each of `jobs` in `JobsOrderByQueues` order (`placement::kai::JobsOrder`)
    /// over the queues as they are now; `act` returns what the job's queue gained
    /// (milli-GPUs, CPU, memory), which the order counts before its next pick, and whether the job goes back into the
    /// order (allocate's `PushJob`, with its elastic rank and next tasks as they are now).
    /// Without a view of the queues (no GPU resource) the jobs go in the order given
    /// (kube-scheduler's activeQ order), a job pushed back taken again at once.
    fn kai_in_order(
        &mut self,
        jobs: &[WorkloadId],
        mut act: impl FnMut(&mut Self, WorkloadId) -> (placement::kai::Amounts, bool),
    ) {
        let (Some(g), Some(view)) = (self.gpu, jobs.iter().find_map(|&w| self.kai_view(w))) else {
            for &w in jobs {
                while act(self, w).1 {
                    self.sched.kai_pushed_back = true;
                }
                self.sched.kai_pushed_back = false;
            }
            return;
        };
        let pending: Vec<placement::kai::PendingJob> = jobs
            .iter()
            .filter_map(|&w| self.kai_pending_job(w, g))
            .collect();
        let state = view.queue_state(self.now);
        let mut order = placement::kai::JobsOrder::new(&state, &view.cpu_memory, &pending);
        // The jobs pushed back: their next pass is not a new placement attempt.
        let mut pushed: BTreeSet<usize> = BTreeSet::new();
        while let Some(job) = order.pop() {
            self.sched.kai_pushed_back = pushed.contains(&job.key);
            let w = WorkloadId::from_index(job.key);
            let (got, again) = act(self, w);
            self.sched.kai_pushed_back = false;
            if got != [0; 3] {
                order.account(job.queue, &got);
            }
            if again && let Some(next) = self.kai_pending_job(w, g) {
                pushed.insert(job.key);
                order.push(next);
            }
        }
    }
}
