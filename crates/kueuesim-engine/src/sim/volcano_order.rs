//! Volcano's session per instant, its actions in the conf's order over all its jobs: the
//! enqueue action (`actions/enqueue`) over the Pending jobs, then allocate
//! (`actions/allocate`) queue by queue, the session's `QueueOrderFn` picking the queue
//! before each job and the queue's share following what each job got, then `preempt` and
//! `reclaim` over the jobs still starving; a job released to Volcano, or waiting for
//! capacity, is tried in the session of its instant rather than alone.

use std::collections::{BTreeMap, VecDeque};

use kueuesim_model::{QueuePlugin, SchedulerKind, VolcanoAction, WorkloadId};

use crate::placement::volcano::queues::{Capacity, Proportion, QueueView, Res, Units};

use super::{Ev, Simulation};

/// The Volcano jobs of one session in allocate's order.
pub(super) struct AllocateOrder {
    /// The queue plugin's view at the session's opening, its allocated amounts kept up to date.
    view: QueueView,
    /// The queue plugin's `enableQueueOrder`.
    by_plugin: bool,
    /// By queue index: its waiting jobs in `JobOrderFn` order (kueuesim's placement order:
    /// priority, then release time), each with its place in that order among all queues'.
    jobs: BTreeMap<usize, VecDeque<(usize, WorkloadId)>>,
    units: Units,
}

impl<'w> Simulation<'w> {
    /// Whether Volcano takes job `w` queue by queue: a conf with a queue plugin
    /// (`proportion` or `capacity`, which order the queues) and a Volcano Queue for the job.
    pub(super) fn volcano_queue_ordered(&self, w: WorkloadId) -> bool {
        self.world
            .config
            .volcano
            .queues
            .as_ref()
            .is_some_and(|c| c.plugin.is_some())
            && self.spec(w).gang.volcano_queue.is_some()
            && self.scheduler_of(w) == SchedulerKind::Volcano
    }

    /// The jobs of `waiting` that Volcano takes queue by queue, with the queues' state at the
    /// start of the pass (one session: upstream's allocate sees the deserved shares of its
    /// session's opening and each queue's allocated as jobs get pods). None when there are
    /// none.
    pub(super) fn volcano_allocate_order(&self, waiting: &[WorkloadId]) -> Option<AllocateOrder> {
        let world = self.world;
        let conf = world.config.volcano.queues.as_ref()?;
        let plugin = conf.plugin?;
        let mut jobs: BTreeMap<usize, VecDeque<(usize, WorkloadId)>> = BTreeMap::new();
        for (place, &w) in waiting.iter().enumerate() {
            // A pipelined job goes first, outside the order (`retry_placements`).
            if self.volcano_queue_ordered(w) && !self.pipelined(w) {
                let q = self.spec(w).gang.volcano_queue?;
                jobs.entry(q).or_default().push_back((place, w));
            }
        }
        if jobs.is_empty() {
            return None;
        }
        let units = Units::new(&world.resources);
        let session: Vec<_> = self
            .volcano_session_jobs(&units)
            .into_iter()
            .map(|(_, j)| j)
            .collect();
        let (total, _) = self.volcano_totals(&units);
        let queues = &world.volcano_queues;
        let view = match plugin {
            QueuePlugin::Proportion => {
                QueueView::Proportion(Proportion::open(queues, &units, &total, &session))
            }
            QueuePlugin::Capacity { hierarchy } => {
                QueueView::Capacity(Capacity::open(queues, &units, &total, &session, hierarchy))
            }
        };
        Some(AllocateOrder {
            view,
            by_plugin: conf.queue_order,
            jobs,
            units,
        })
    }

    /// The enqueue action over the jobs of `order` still Pending, queue by queue in the
    /// order allocate takes them (what it lets in changes no queue's share); whether it let
    /// one in.
    fn volcano_enqueue_action(&mut self, order: &AllocateOrder) -> bool {
        let world = self.world;
        let mut jobs = order.jobs.clone();
        let mut let_in = false;
        while let Some(w) = next_job(&order.view, order.by_plugin, world, &mut jobs) {
            if !self.runtimes[w.index()].volcano_inqueue {
                let_in |= self.volcano_enqueue(w);
            }
        }
        let_in
    }

    /// Tries the jobs of `order` as upstream's allocate does: pick the first queue by
    /// `QueueOrderFn`, try its next job (`attempt`), count the pods it got on the queue, and
    /// pick again, until every job was tried once. Queues the plugin does not tell apart go
    /// by their next job's place in kueuesim's placement order (upstream: the queue created
    /// first, then the smaller UID, which an input does not fix).
    pub(super) fn run_allocate_order(
        &mut self,
        mut order: AllocateOrder,
        mut attempt: impl FnMut(&mut Self, WorkloadId),
    ) {
        let world = self.world;
        // With the enqueue action in the conf, allocate leaves a job still Pending alone
        // (upstream's allocate skips it; without enqueue, allocate lets it in itself).
        let enqueue = world
            .config
            .volcano
            .queues
            .as_ref()
            .is_some_and(|c| c.has(VolcanoAction::Enqueue));
        while let Some(w) = next_job(&order.view, order.by_plugin, world, &mut order.jobs) {
            if enqueue && !self.runtimes[w.index()].volcano_inqueue {
                self.scale_up_for_pending(w);
                continue;
            }
            let before = self.volcano_placed(w, &order.units);
            attempt(self, w);
            let after = self.volcano_placed(w, &order.units);
            let got: Res = after.iter().zip(&before).map(|(a, b)| a - b).collect();
            if got.iter().any(|&x| x != 0.0) {
                let q = self
                    .spec(w)
                    .gang
                    .volcano_queue
                    .expect("an ordered job has a queue");
                order.view.account(q, &got, 1.0);
            }
        }
    }

    /// The requests of job `w`'s placed pods, in upstream units.
    fn volcano_placed(&self, w: WorkloadId, units: &Units) -> Res {
        let rt = &self.runtimes[w.index()];
        let mut placed = vec![0.0; units.len()];
        for (ps, slots) in rt.record.placement.iter().enumerate() {
            let n = slots.iter().filter(|s| s.is_some()).count();
            if let Some(needs) = rt.needs.get(ps) {
                units.add_list(&mut placed, &needs.requests, n as f64);
            }
        }
        placed
    }

    /// A job released to Volcano that takes part in the queue order: its first attempt is
    /// in the session of this instant (`Ev::VolcanoSession`, after the instant's other
    /// arrivals and releases), as upstream's allocate sees every job created before its
    /// session opens.
    pub(super) fn defer_to_volcano_session(&mut self) {
        if self.sched.volcano_session_at != Some(self.now) {
            self.sched.volcano_session_at = Some(self.now);
            self.events.push(self.now, Ev::VolcanoSession);
        }
    }

    /// The session of this instant (`scheduler.go` runOnce): the conf's actions in its
    /// order, each over all the waiting Volcano jobs (`enqueue`, `allocate`, `preempt`,
    /// `reclaim`; `backfill` goes with allocate, see `volcano_queue_gate`).
    pub(super) fn volcano_session(&mut self) {
        self.sched.volcano_session_at = None;
        let world = self.world;
        let Some(conf) = &world.config.volcano.queues else {
            return;
        };
        let mut allocated = false;
        for &action in &conf.actions {
            match action {
                VolcanoAction::Enqueue => {
                    let waiting = self.volcano_waiting();
                    if let Some(order) = self.volcano_allocate_order(&waiting) {
                        let let_in = self.volcano_enqueue_action(&order);
                        // Listed after allocate, what it lets in waits for the next
                        // session's allocate: one more session at this instant.
                        if allocated && let_in {
                            self.defer_to_volcano_session();
                        }
                    }
                }
                VolcanoAction::Allocate => {
                    self.volcano_allocate_action();
                    allocated = true;
                }
                VolcanoAction::Preempt => self.volcano_preempt_action(),
                VolcanoAction::Reclaim => self.volcano_reclaim_action(),
                _ => {}
            }
        }
    }

    /// The allocate action: the pipelined jobs first (upstream binds their pipelined tasks),
    /// then the others in allocate's order. A job it leaves short waits for the conf's
    /// preempt and reclaim, which run after it over all the jobs.
    fn volcano_allocate_action(&mut self) {
        let waiting = self.volcano_waiting();
        let mut failed = Vec::new();
        self.sched.volcano_in_session = true;
        for &w in &waiting {
            if self.pipelined(w) && self.volcano_queue_ordered(w) {
                self.retry_one(w, &mut failed);
            }
        }
        if let Some(order) = self.volcano_allocate_order(&waiting) {
            self.run_allocate_order(order, |s, w| s.retry_one(w, &mut failed));
        }
        self.sched.volcano_in_session = false;
    }

    /// The workloads waiting for nodes, in placement order.
    fn volcano_waiting(&self) -> Vec<WorkloadId> {
        self.sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, w)| w)
            .collect()
    }

    /// The session's jobs that preempt and reclaim act for, as the action begins: those
    /// `volcano_may_evict` lets act that starve (`JobStarving`), by queue in job order, with
    /// the queues' view. None when there are none.
    fn volcano_preemptors(&self) -> Option<AllocateOrder> {
        let waiting = self.volcano_waiting();
        let mut order = self.volcano_allocate_order(&waiting)?;
        for list in order.jobs.values_mut() {
            list.retain(|&(_, w)| self.volcano_may_evict(w) && self.volcano_starving(w));
        }
        order.jobs.retain(|_, list| !list.is_empty());
        (!order.jobs.is_empty()).then_some(order)
    }

    /// The `preempt` action (`preempt.go` Execute): queue by queue in `QueueOrderFn` order,
    /// first each starving job in job order against the other jobs of its queue, then each
    /// of those jobs' pending tasks against the job's own tasks. Upstream takes the second
    /// loop's jobs in its session's map order; kueuesim in job order.
    fn volcano_preempt_action(&mut self) {
        let Some(order) = self.volcano_preemptors() else {
            return;
        };
        let world = self.world;
        let front = |q: usize| order.jobs.get(&q).and_then(|l| l.front()).map(|&(p, _)| p);
        let mut queues: Vec<usize> = order.jobs.keys().copied().collect();
        queues.sort_by(|&a, &b| {
            order
                .view
                .queue_order(&world.volcano_queues, order.by_plugin, a, b)
                .then_with(|| front(a).cmp(&front(b)))
        });
        for q in queues {
            let jobs: Vec<WorkloadId> = order.jobs[&q].iter().map(|&(_, w)| w).collect();
            let pipelined: Vec<Vec<(usize, usize)>> = jobs
                .iter()
                .map(|&w| self.volcano_preempt_between(w))
                .collect();
            for (&w, pipelined) in jobs.iter().zip(&pipelined) {
                self.volcano_preempt_within(w, pipelined);
            }
        }
    }

    /// The `reclaim` action (`reclaim.go` Execute): the first queue by `QueueOrderFn`, its
    /// next starving job, then the first queue again, until every starving job was taken.
    fn volcano_reclaim_action(&mut self) {
        let Some(mut order) = self.volcano_preemptors() else {
            return;
        };
        let world = self.world;
        while let Some(w) = next_job(&order.view, order.by_plugin, world, &mut order.jobs) {
            self.volcano_reclaim_for(w);
        }
    }
}

/// Takes the next job of the first queue by `QueueOrderFn` (then by its next job's place)
/// out of `jobs`.
fn next_job(
    view: &QueueView,
    by_plugin: bool,
    world: &kueuesim_model::World,
    jobs: &mut BTreeMap<usize, VecDeque<(usize, WorkloadId)>>,
) -> Option<WorkloadId> {
    let front = |q: usize| jobs.get(&q).and_then(|l| l.front()).map(|&(p, _)| p);
    let q = jobs.keys().copied().min_by(|&a, &b| {
        view.queue_order(&world.volcano_queues, by_plugin, a, b)
            .then_with(|| front(a).cmp(&front(b)))
    })?;
    let list = jobs.get_mut(&q)?;
    let (_, w) = list.pop_front()?;
    if list.is_empty() {
        jobs.remove(&q);
    }
    Some(w)
}
