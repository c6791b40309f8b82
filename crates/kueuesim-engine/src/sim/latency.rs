//! Kueue's controller latency (`spec.kueue.controllerLatency`): how long a scheduling cycle
//! keeps the scheduler busy, and the API writes it issues on Kueue's rate-limited client.

use kueuesim_model::{ControllerLatency, CycleWork, SimDuration, SimTime};

use crate::admission::Decision;

use super::Simulation;

impl Simulation<'_> {
    /// Controller latency (`spec.kueue.controllerLatency`): a cycle that popped `heads` and
    /// decided `rest` keeps the scheduler busy for `cycle + perClusterQueue × ClusterQueues +
    /// perTasFlavor × TAS flavors + perHead × heads + perAdmission × admissions`; its decisions
    /// apply at its start (Kueue stamps the conditions and assumes the quota in its cache
    /// while processing the cycle). The writes the scheduler waits for (`wait_for_write`)
    /// may end it later.
    pub(super) fn occupy_scheduler(&mut self, heads: usize, rest: &[Decision]) {
        let latency = &self.world.config.controller_latency;
        if *latency == ControllerLatency::default() {
            // No latency modelled: the next cycle may start now, as `next_cycle_at` (never
            // later than now then) already allows.
            return;
        }
        let admissions = rest
            .iter()
            .filter(|d| matches!(d, Decision::Admit { .. }))
            .count();
        let work = CycleWork {
            heads,
            admissions,
            // `cache.Snapshot` copies every ClusterQueue, whether or not it has a head.
            cluster_queues: self.world.cluster_queues.len(),
            tas_flavors: self.sched.tas_flavors,
        };
        self.kueue.next_cycle_at = self.now + latency.cycle_duration(work);
    }

    /// Controller latency: the scheduler waits, inside the cycle, for a write it issued
    /// synchronously (an eviction in `IssuePreemptions`, a requeued head's status patch in
    /// `requeueAndUpdate`), done at `done`; the next cycle starts no earlier.
    pub(super) fn wait_for_write(&mut self, done: SimTime) {
        self.kueue.next_cycle_at = self.kueue.next_cycle_at.max(done);
    }

    /// Controller latency: one API write (an admission's status patch, an eviction), queued
    /// behind the earlier ones on Kueue's rate-limited client; returns when it is done.
    pub(super) fn api_write(&mut self) -> SimTime {
        self.client_write(self.world.config.controller_latency.api_write)
    }

    /// Controller latency: one write costing `write` of Kueue's client, queued behind the
    /// earlier ones; returns when it is done. client-go's rate limiter is a token bucket
    /// (`flowcontrol.NewTokenBucketRateLimiter`, `rate.Limiter.Wait`: reservations in request
    /// order) refilled one token per `apiWrite` and holding `apiBurst`: after an idle spell
    /// that many writes go at once, and then one per token. Kept in the GCRA form: `api_tat`
    /// is when the writes queued so far will have had their tokens; a write may start
    /// `(apiBurst − 1) × apiWrite` ahead of it, and takes `write` once started.
    pub(super) fn client_write(&mut self, write: SimDuration) -> SimTime {
        if write == SimDuration::ZERO {
            return self.now;
        }
        let latency = self.world.config.controller_latency;
        let ahead = latency
            .api_write
            .millis()
            .saturating_mul(i64::from(latency.api_burst.saturating_sub(1)));
        let start = self
            .now
            .max(self.kueue.api_tat - SimDuration::from_millis(ahead));
        self.kueue.api_tat = self.kueue.api_tat.max(start) + write;
        start + write
    }

    /// Controller latency: a requeued head whose `QuotaReserved=False` condition changed gets
    /// a status patch (`requeueAndUpdate` writes only when `UnsetQuotaReservationWithCondition`
    /// changed something), which the scheduler waits for.
    pub(super) fn status_write(&mut self) {
        let write = self.world.config.controller_latency.status_write;
        if write > SimDuration::ZERO {
            let done = self.client_write(write);
            self.wait_for_write(done);
        }
    }
}
