//! `metrics.prom` of `run --out DIR`: Kueue's ClusterQueue metrics at the end of the run in the
//! Prometheus text exposition format (0.0.4), with Kueue's metric and label names
//! (`pkg/metrics/metrics.go`), so PromQL written for a real cluster reads them unchanged.
//! A single simulated replica reports `replica_role="standalone"`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kueuesim_model::quota::QuotaTree;
use kueuesim_model::{
    ClusterQueueId, FlavorId, QueueRef, ResourceId, SimDuration, StopPolicy, Workload, World,
};

use crate::output::WorkloadOut;

const ROLE: &str = "standalone";

/// One metric family: its samples by label values, in a stable order.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    samples: BTreeMap<Vec<String>, f64>,
}

impl Family {
    fn new(
        name: &'static str,
        kind: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Self {
        Family {
            name,
            kind,
            help,
            labels,
            samples: BTreeMap::new(),
        }
    }

    /// Makes the sample exist (Kueue reports zeros for every ClusterQueue it knows).
    fn touch(&mut self, values: &[&str]) {
        self.samples.entry(owned(values)).or_insert(0.0);
    }

    fn add(&mut self, values: &[&str], n: f64) {
        *self.samples.entry(owned(values)).or_insert(0.0) += n;
    }

    fn write(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind);
        for (values, n) in &self.samples {
            // Label pairs sorted by name, as client_golang writes them.
            let mut pairs: Vec<(&str, &str)> = self
                .labels
                .iter()
                .copied()
                .zip(values.iter().map(String::as_str))
                .chain(std::iter::once(("replica_role", ROLE)))
                .collect();
            pairs.sort_unstable();
            let labels: Vec<String> = pairs
                .iter()
                .map(|(l, v)| format!("{l}=\"{}\"", escape(v)))
                .collect();
            let _ = writeln!(out, "{}{{{}}} {}", self.name, labels.join(","), value(*n));
        }
    }
}

/// A histogram family with fixed bucket bounds (`le`), by label values.
struct Histogram {
    name: &'static str,
    help: &'static str,
    bounds: Vec<f64>,
    /// Per label values (cluster_queue, priority_class): count per bucket, sum, count.
    series: BTreeMap<Vec<String>, (Vec<u64>, f64, u64)>,
}

impl Histogram {
    /// Kueue's `generateExponentialBuckets(count)`: 1, then 2.5·2^k for k < count − 1.
    fn kueue(name: &'static str, help: &'static str, count: usize) -> Self {
        let mut bounds = vec![1.0];
        bounds.extend((0..count - 1).map(|k| 2.5 * f64::from(1u32 << k)));
        Histogram {
            name,
            help,
            bounds,
            series: BTreeMap::new(),
        }
    }

    fn observe(&mut self, values: &[&str], v: f64) {
        let n = self.bounds.len();
        let (buckets, sum, count) = self
            .series
            .entry(owned(values))
            .or_insert_with(|| (vec![0; n], 0.0, 0));
        for (b, le) in buckets.iter_mut().zip(&self.bounds) {
            if v <= *le {
                *b += 1;
            }
        }
        *sum += v;
        *count += 1;
    }

    fn write(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} histogram", self.name);
        for (values, (buckets, sum, count)) in &self.series {
            let labels = format!(
                "cluster_queue=\"{}\",priority_class=\"{}\",replica_role=\"{ROLE}\"",
                escape(&values[0]),
                escape(&values[1])
            );
            for (le, n) in self.bounds.iter().zip(buckets) {
                let _ = writeln!(out, "{}_bucket{{{labels},le=\"{le}\"}} {n}", self.name);
            }
            let _ = writeln!(out, "{}_bucket{{{labels},le=\"+Inf\"}} {count}", self.name);
            let _ = writeln!(out, "{}_sum{{{labels}}} {sum}", self.name);
            let _ = writeln!(out, "{}_count{{{labels}}} {count}", self.name);
        }
    }
}

/// A sample value as the text format writes it (`+Inf` for an unlimited quota).
fn value(v: f64) -> String {
    if v == f64::INFINITY {
        "+Inf".into()
    } else {
        format!("{v}")
    }
}

fn owned(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// Label value escaping of the text format: backslash, double quote and line feed.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `reason` and `underlying_cause` labels of an eviction: a deactivation's condition reason
/// `DeactivatedDueTo<Cause>` is reported as `Deactivated` with the cause (`evict.go`).
fn metric_reason(condition_reason: &str) -> (&str, &str) {
    match condition_reason.strip_prefix("DeactivatedDueTo") {
        Some(cause) => ("Deactivated", cause),
        None => (condition_reason, ""),
    }
}

/// The metrics of `metrics.prom` folded one workload at a time (in any order: counts only),
/// so a streamed run adds each workload as it finishes and lets go of it.
pub struct PromMetrics {
    pending: Family,
    reserving: Family,
    admitted_active: Family,
    quota_reserved_total: Family,
    admitted_total: Family,
    finished_total: Family,
    finished: Family,
    evicted: Family,
    preempted: Family,
    status: Family,
    info: Family,
    lq_pending: Family,
    lq_reserving: Family,
    lq_admitted: Family,
    lq_finished: Family,
    quota_wait: Histogram,
    admission_wait: Histogram,
}

impl PromMetrics {
    /// Every family of `world`'s queues at zero, as Kueue reports the queues it knows.
    pub fn new(world: &World) -> Self {
        let mut pending = Family::new(
            "kueue_pending_workloads",
            "gauge",
            "The number of pending workloads, per 'cluster_queue' and 'status'.",
            &["cluster_queue", "status"],
        );
        let mut reserving = Family::new(
            "kueue_reserving_active_workloads",
            "gauge",
            "The number of Workloads that are reserving quota, per 'cluster_queue'",
            &["cluster_queue"],
        );
        let mut admitted_active = Family::new(
            "kueue_admitted_active_workloads",
            "gauge",
            "The number of admitted Workloads that are active, per 'cluster_queue'",
            &["cluster_queue"],
        );
        let quota_reserved_total = Family::new(
            "kueue_quota_reserved_workloads_total",
            "counter",
            "The total number of quota reserved workloads per 'cluster_queue'",
            &["cluster_queue", "priority_class"],
        );
        let admitted_total = Family::new(
            "kueue_admitted_workloads_total",
            "counter",
            "The total number of admitted workloads per 'cluster_queue'",
            &["cluster_queue", "priority_class"],
        );
        let finished_total = Family::new(
            "kueue_finished_workloads_total",
            "counter",
            "The total number of finished workloads per 'cluster_queue'",
            &["cluster_queue", "priority_class"],
        );
        let mut finished = Family::new(
            "kueue_finished_workloads",
            "gauge",
            "The number of finished workloads per 'cluster_queue'.",
            &["cluster_queue"],
        );
        let evicted = Family::new(
            "kueue_evicted_workloads_total",
            "counter",
            "The number of evicted workloads per 'cluster_queue'",
            &[
                "cluster_queue",
                "reason",
                "underlying_cause",
                "priority_class",
            ],
        );
        let preempted = Family::new(
            "kueue_preempted_workloads_total",
            "counter",
            "The number of preempted workloads per 'preempting_cluster_queue'",
            &["preempting_cluster_queue", "reason"],
        );
        let mut status = Family::new(
            "kueue_cluster_queue_status",
            "gauge",
            "Reports 'cluster_queue' with its 'status' (with possible values 'pending', 'active' or 'terminated').",
            &["cluster_queue", "status"],
        );
        let mut info = Family::new(
            "kueue_cluster_queue_info",
            "gauge",
            "Reports ClusterQueue hierarchy information. The metric has value 1 and can be joined using labels.",
            &["cluster_queue", "parent_cohort", "root_cohort"],
        );
        // LocalQueue mirrors (`LocalQueueMetrics`, on by default since Kueue 0.17).
        let mut lq_pending = Family::new(
            "kueue_local_queue_pending_workloads",
            "gauge",
            "The number of pending workloads, per 'local_queue' and 'status'.",
            &["name", "namespace", "status"],
        );
        let mut lq_reserving = Family::new(
            "kueue_local_queue_reserving_active_workloads",
            "gauge",
            "The number of Workloads that are reserving quota, per 'localQueue'",
            &["name", "namespace"],
        );
        let mut lq_admitted = Family::new(
            "kueue_local_queue_admitted_active_workloads",
            "gauge",
            "The number of admitted Workloads that are active, per 'localQueue'",
            &["name", "namespace"],
        );
        let mut lq_finished = Family::new(
            "kueue_local_queue_finished_workloads",
            "gauge",
            "The number of finished workloads, per 'local_queue'.",
            &["name", "namespace"],
        );
        for lq in &world.local_queues {
            let (name, ns) = (lq.name.as_str(), lq.namespace.as_str());
            lq_pending.touch(&[name, ns, "active"]);
            lq_pending.touch(&[name, ns, "inadmissible"]);
            lq_reserving.touch(&[name, ns]);
            lq_admitted.touch(&[name, ns]);
            lq_finished.touch(&[name, ns]);
        }
        let tree = QuotaTree::new(world);
        for (c, cq) in world.cluster_queues.iter().enumerate() {
            // Inactive (stopped, or in a cohort cycle) ClusterQueues are `pending`.
            let inactive =
                cq.stop_policy != StopPolicy::None || tree.in_cycle(ClusterQueueId::from_index(c));
            let current = if inactive { "pending" } else { "active" };
            for s in ["pending", "active", "terminating"] {
                status.add(&[&cq.name, s], if s == current { 1.0 } else { 0.0 });
            }
            let parent = cq
                .cohort
                .map_or("", |co| world.cohorts[co.index()].name.as_str());
            // The root of the cohort chain; none inside a cycle.
            let mut root = cq.cohort;
            let mut steps = 0;
            while let Some(r) = root.and_then(|r| world.cohorts[r.index()].parent) {
                root = Some(r);
                steps += 1;
                if steps > world.cohorts.len() {
                    root = None;
                    break;
                }
            }
            let root = root.map_or("", |r| world.cohorts[r.index()].name.as_str());
            info.add(&[&cq.name, parent, root], 1.0);
        }
        for cq in &world.cluster_queues {
            let cq = cq.name.as_str();
            pending.touch(&[cq, "active"]);
            pending.touch(&[cq, "inadmissible"]);
            reserving.touch(&[cq]);
            admitted_active.touch(&[cq]);
            finished.touch(&[cq]);
        }
        // Without admission checks a workload is admitted as its quota is reserved, so both
        // histograms observe the same waits (Kueue: 14 and 16 buckets).
        let quota_wait = Histogram::kueue(
            "kueue_quota_reserved_wait_time_seconds",
            "The time between a workload was created or requeued until it got quota reservation, per 'cluster_queue'",
            14,
        );
        let admission_wait = Histogram::kueue(
            "kueue_admission_wait_time_seconds",
            "The time between a workload was created or requeued until admission, per 'cluster_queue'",
            16,
        );
        PromMetrics {
            pending,
            reserving,
            admitted_active,
            quota_reserved_total,
            admitted_total,
            finished_total,
            finished,
            evicted,
            preempted,
            status,
            info,
            lq_pending,
            lq_reserving,
            lq_admitted,
            lq_finished,
            quota_wait,
            admission_wait,
        }
    }

    /// Folds one workload of the document (its state at the end, its admissions and
    /// evictions).
    pub fn add_workload(&mut self, w: &WorkloadOut) {
        let Some(cq) = w.cluster_queue.as_deref() else {
            return;
        };
        let pc = w.priority_class.as_deref().unwrap_or("");
        if let Some(lq) = w.local_queue.as_deref() {
            let key = [lq, w.namespace.as_str()];
            match w.state {
                "Pending" => {
                    let status = w.queue_status.as_deref().unwrap_or("inadmissible");
                    self.lq_pending.add(&[lq, &w.namespace, status], 1.0);
                }
                "QuotaReserved" => self.lq_reserving.add(&key, 1.0),
                "Admitted" | "Running" | "Evicted" => {
                    self.lq_reserving.add(&key, 1.0);
                    self.lq_admitted.add(&key, 1.0);
                }
                "Finished" => self.lq_finished.add(&key, 1.0),
                _ => {}
            }
        }
        match w.state {
            "Pending" => {
                let status = w.queue_status.as_deref().unwrap_or("inadmissible");
                self.pending.add(&[cq, status], 1.0);
            }
            // Quota held (evicted workloads keep it until their pods are gone).
            "QuotaReserved" | "Admitted" | "Running" | "Evicted" => {
                self.reserving.add(&[cq], 1.0);
                if w.state != "QuotaReserved" {
                    self.admitted_active.add(&[cq], 1.0);
                }
            }
            "Finished" => {
                self.finished_total.add(&[cq, pc], 1.0);
                self.finished.add(&[cq], 1.0);
            }
            _ => {}
        }
        for e in &w.events {
            match e.reason {
                "QuotaReserved" => self.quota_reserved_total.add(&[cq, pc], 1.0),
                "Admitted" => self.admitted_total.add(&[cq, pc], 1.0),
                _ => {}
            }
        }
        for ev in &w.evictions {
            let (reason, cause) = metric_reason(ev.reason);
            self.evicted.add(&[cq, reason, cause, pc], 1.0);
            // Counted for the preemptor's ClusterQueue (Kueue's preemptions; KAI's reclaim
            // has no preemption reason).
            if let (Some(reason), Some(by_cq)) = (ev.preemption_reason, &ev.preemptor_cluster_queue)
            {
                self.preempted.add(&[by_cq, reason], 1.0);
            }
        }
    }

    /// Observes one quota reservation by a scheduling cycle: the time since creation or the
    /// last requeue (`QueuedWaitTime`), in the histograms of the workload's ClusterQueue.
    pub fn observe_wait(&mut self, world: &World, wl: &Workload, waited: SimDuration) {
        let QueueRef::Local(lq) = &wl.queue else {
            return;
        };
        let cq = world
            .cluster_queue(world.local_queue(*lq).cluster_queue)
            .name
            .as_str();
        let pc = wl.priority_class.as_deref().unwrap_or("");
        self.quota_wait.observe(&[cq, pc], waited.as_secs_f64());
        self.admission_wait.observe(&[cq, pc], waited.as_secs_f64());
    }

    /// The text of `metrics.prom`: the folded families, then the quota families from the spec
    /// and `final_usage` (`RunStats::final_quota_usage`), then the wait histograms.
    pub fn render(
        &self,
        world: &World,
        final_usage: &[Vec<(FlavorId, ResourceId, i64)>],
    ) -> String {
        // The ClusterQueue resource metrics (`metrics.enableClusterQueueResources`): quotas from
        // the spec, usage at the end; without admission checks reserved and admitted usage agree.
        let quota_labels: &'static [&'static str] =
            &["cohort", "cluster_queue", "flavor", "resource"];
        let mut nominal = Family::new(
            "kueue_cluster_queue_nominal_quota",
            "gauge",
            "Reports the cluster_queue's resource nominal quota within all the flavors",
            quota_labels,
        );
        let mut borrowing = Family::new(
            "kueue_cluster_queue_borrowing_limit",
            "gauge",
            "Reports the cluster_queue's resource borrowing limit within all the flavors",
            quota_labels,
        );
        let mut lending = Family::new(
            "kueue_cluster_queue_lending_limit",
            "gauge",
            "Reports the cluster_queue's resource lending limit within all the flavors",
            quota_labels,
        );
        let mut reservation = Family::new(
            "kueue_cluster_queue_resource_reservation",
            "gauge",
            "Reports the cluster_queue's total resource reservation within all the flavors",
            quota_labels,
        );
        let mut usage = Family::new(
            "kueue_cluster_queue_resource_usage",
            "gauge",
            "Reports the cluster_queue's total admitted resource usage within all the flavors",
            quota_labels,
        );
        // `AsApproximateFloat64`: cpu in cores, everything else in its base unit.
        let amount = |r: ResourceId, a: i64| -> f64 {
            if world.resources.name(r) == "cpu" {
                a as f64 / 1000.0
            } else {
                a as f64
            }
        };
        for (c, cq) in world.cluster_queues.iter().enumerate() {
            let cohort = cq
                .cohort
                .map_or("", |co| world.cohorts[co.index()].name.as_str());
            for fq in cq.resource_groups.iter().flat_map(|rg| &rg.flavors) {
                let flavor = world.flavors[fq.flavor.index()].name.as_str();
                for rq in &fq.resources {
                    let labels = [
                        cohort,
                        cq.name.as_str(),
                        flavor,
                        world.resources.name(rq.resource),
                    ];
                    let limit =
                        |l: Option<i64>| l.map_or(f64::INFINITY, |l| amount(rq.resource, l));
                    nominal.add(&labels, amount(rq.resource, rq.nominal));
                    borrowing.add(&labels, limit(rq.borrowing_limit));
                    lending.add(&labels, limit(rq.lending_limit));
                    let held = final_usage
                        .get(c)
                        .and_then(|u| {
                            u.iter()
                                .find(|(f, r, _)| *f == fq.flavor && *r == rq.resource)
                        })
                        .map_or(0, |u| u.2);
                    reservation.add(&labels, amount(rq.resource, held));
                    usage.add(&labels, amount(rq.resource, held));
                }
            }
        }
        let mut out = String::new();
        for f in [
            &self.pending,
            &self.reserving,
            &self.admitted_active,
            &self.quota_reserved_total,
            &self.admitted_total,
            &self.finished_total,
            &self.finished,
            &self.evicted,
            &self.preempted,
            &self.status,
            &self.info,
            &self.lq_pending,
            &self.lq_reserving,
            &self.lq_admitted,
            &self.lq_finished,
            &nominal,
            &borrowing,
            &lending,
            &reservation,
            &usage,
        ] {
            f.write(&mut out);
        }
        self.quota_wait.write(&mut out);
        self.admission_wait.write(&mut out);
        out
    }
}
