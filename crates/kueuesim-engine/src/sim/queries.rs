//! `Simulation`'s public queries during and after a run: the clock, the live span, a
//! workload's state, a pod's name, GPU sharing figures, and whether the run can only loop.

use kueuesim_model::{SimDuration, SimTime, WorkloadId};

use crate::outcome::WorkloadState;

use super::Simulation;

/// Without a horizon, a run with failures stops when nothing has finished for this many times
/// its longest workload (duration plus restart cost): by then a job has had ten chances to
/// run through (`Simulation::failures_without_end`).
const FAILURES_WITHOUT_END: i64 = 10;

impl Simulation<'_> {
    /// With GPU devices, how they are allocated and fragmented now.
    pub fn gpu_sharing_figures(&mut self) -> Option<crate::outcome::GpuSharingFigures> {
        let cluster = &mut self.sched.cluster;
        let (nodes, cpu) = (&cluster.nodes, cluster.res.cpu);
        let devices = cluster.devices.as_mut()?;
        Some(devices.figures(|n| cpu.map_or(0, |c| nodes.free(n, c))))
    }

    /// How many workload ids the run holds state for: from the oldest live workload to the
    /// newest arrival (what a lean run's memory follows).
    pub fn live_workloads(&self) -> usize {
        self.runtimes.span()
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Whether the run can only go round in circles: nothing runs or is still to arrive, and for
    /// two full PodsReady timeout + back-off rounds nothing has started or finished. Without a
    /// horizon the run ends there (Kueue would go on evicting and readmitting forever).
    pub fn only_futile_loops_left(&self) -> bool {
        let Some(cfg) = &self.world.config.kueue.wait_for_pods_ready else {
            return false;
        };
        if self.arrivals_pending() || self.progress.running > 0 || self.progress.terminating > 0 {
            return false;
        }
        let round = cfg.timeout + cfg.backoff_max + self.world.config.pod_termination;
        self.now - self.progress.last_progress > round + round
    }

    /// Without a horizon and with failures: how long nothing has arrived, finished or failed,
    /// if that is past `FAILURES_WITHOUT_END` times the longest workload (a day at least)
    /// while every workload has arrived. Failures go on as long as the run does; a job that
    /// loses its work faster than it does it would keep the run going for ever.
    pub fn failures_without_end(&self) -> Option<SimDuration> {
        if self.sched.failures.is_none() || self.arrivals_pending() {
            return None;
        }
        let stretch = SimDuration::from_millis(
            self.progress
                .longest
                .millis()
                .saturating_mul(FAILURES_WITHOUT_END)
                .max(SimDuration::from_secs(24 * 3600).millis()),
        );
        let quiet = self.now - self.progress.last_done;
        (quiet > stretch).then_some(quiet)
    }

    /// The state of workload `w` now, or `None` before it arrives.
    pub fn state_of(&self, w: WorkloadId) -> Option<WorkloadState> {
        match self.runtimes.get(w.index()) {
            Some(rt) => Some(rt.record.state),
            // A lean run lets go of a workload when it finishes.
            None if w.index() < self.progress.arrived => Some(WorkloadState::Finished),
            None => None,
        }
    }

    /// A pod's name as its controller would name it (see `Workload::pod_name`).
    pub fn pod_name(&self, w: WorkloadId, ps: usize, idx: usize) -> String {
        self.spec(w).pod_name(ps, idx)
    }
}
