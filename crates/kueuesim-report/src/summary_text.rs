//! The human summary printed by default (`-o summary`): totals, wait times, GPU use, why
//! workloads are still waiting, and the per-queue table, read off a `SimulationResult`.

use kueuesim_model::{SimDuration, World};

use crate::output::{ClusterQueueSummary, SimulationResult, Summary, WorkloadOut};
use crate::queues::QueueFigures;

/// Preemption loops the summary names one per line; the rest are counted.
const MAX_LOOP_LINES: usize = 5;

fn fmt_secs(s: Option<f64>) -> String {
    match s {
        None => "-".into(),
        Some(s) => SimDuration::from_millis((s * 1000.0).round() as i64).to_string(),
    }
}

/// Why `w` waits in its own words: its last event, else its first False condition.
fn own_why(w: &WorkloadOut) -> Option<String> {
    w.events
        .last()
        .map(|e| format!("{}: {}", e.reason, e.message))
        .or_else(|| {
            w.conditions
                .iter()
                .find(|c| c.status == "False")
                .map(|c| format!("{}: {}", c.reason, c.message))
        })
}

/// Why `w` waits when it has no event or condition of its own. Under Kueue's
/// `SchedulingEquivalenceHashing` a BestEffortFIFO head found inadmissible parks every
/// pending workload of its scheduling shape with it, and upstream writes the condition on the
/// head alone; the parked ones are never tried while the head fails. Said here so that an
/// empty line does not read as "no reason".
fn why_without_condition(w: &WorkloadOut, waiting: &[&WorkloadOut]) -> String {
    let same_shape = |o: &WorkloadOut| {
        o.cluster_queue == w.cluster_queue
            && o.priority == w.priority
            && o.pod_sets.len() == w.pod_sets.len()
            && o.pod_sets.iter().zip(&w.pod_sets).all(|(a, b)| {
                a.name == b.name
                    && a.count == b.count
                    && a.min_count == b.min_count
                    && a.requests == b.requests
            })
    };
    match w.queue_status.as_deref() {
        Some("inadmissible") => {
            let head = waiting
                .iter()
                .filter(|o| !std::ptr::eq(**o, w) && same_shape(o))
                .find_map(|o| own_why(o).map(|why| (o.name.as_str(), why)));
            match head {
                Some((name, why)) => format!(
                    "(no condition of its own: parked as inadmissible with {name}, of the same scheduling shape — SchedulingEquivalenceHashing) {why}"
                ),
                None => "(no condition of its own: parked as inadmissible)".to_string(),
            }
        }
        Some("active") => "(no condition yet: not tried since it arrived)".to_string(),
        _ => String::new(),
    }
}

/// The human summary: totals, wait times, GPU use, and why workloads are still waiting.
pub fn summary_text(world: &World, result: &SimulationResult) -> String {
    use std::fmt::Write;
    let s = &result.summary;
    let c = &s.workloads;
    let mut out = String::new();
    // First, what a replicate of this run would change: `--seeds` answers that question only.
    let _ = writeln!(out, "Seeds vary:   {}", s.variation.seeds_vary_text());
    let _ = writeln!(
        out,
        "Simulated {} from {} (seed {}): {} Kueue scheduling cycles, {} events",
        fmt_secs(Some(s.end_time)),
        s.start_time,
        s.seed,
        s.cycles,
        s.events_processed
    );
    if let Some(stop) = &s.stopped_early {
        let _ = writeln!(
            out,
            "Stopped early: {}; every figure below describes the run up to then",
            stop.message
        );
    }
    for line in crate::policies::header_lines(&s.policies) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "Workloads:    {} total, {} finished, {} running, {} admitted (not yet running), {} pending, {} inactive, {} evicted, {} not yet arrived",
        c.total, c.finished, c.running, c.admitted, c.pending, c.inactive, c.evicted, c.not_arrived
    );
    // The headline counts the still-pending workloads, at their wait so far (a lower bound
    // of their wait, and so of each percentile); the admitted alone follow. A change that
    // admits more of the long waiters raises the admitted-only percentiles while every wait
    // shortens: that figure alone would read the wrong way.
    let wp = &s.wait_seconds_incl_pending;
    let still = wp
        .count
        .saturating_sub(s.time_in_queue_seconds_admitted.count);
    let counted = if still > 0 {
        format!(
            "{} workloads; the {still} still pending counted at their wait so far, so these are lower bounds",
            wp.count
        )
    } else {
        format!("{} workloads, none still pending", wp.count)
    };
    // Without Kueue (`spec.kueue.enabled: false`) no workload has a queue wait: the time
    // to start below says what they waited.
    if world.config.kueue_enabled {
        let _ = writeln!(
            out,
            "Queue wait:   p50 {}, p90 {}, p95 {}, p99 {}, max {} ({counted})",
            fmt_secs(wp.p50),
            fmt_secs(wp.p90),
            fmt_secs(wp.p95),
            fmt_secs(wp.p99),
            fmt_secs(wp.max),
        );
    }
    let w = &s.wait_seconds_admitted;
    if still > 0 {
        let _ = writeln!(
            out,
            "  admitted:   p50 {}, p90 {}, p95 {}, p99 {}, max {} (the {} admitted workloads alone)",
            fmt_secs(w.p50),
            fmt_secs(w.p90),
            fmt_secs(w.p95),
            fmt_secs(w.p99),
            fmt_secs(w.max),
            w.count
        );
    }
    let q = &s.time_in_queue_seconds_incl_pending;
    if q.count > 0 {
        let _ = writeln!(
            out,
            "In queue:     p50 {}, p95 {}, max {} (time Pending without quota, across readmissions; still pending included)",
            fmt_secs(q.p50),
            fmt_secs(q.p95),
            fmt_secs(q.max),
        );
    }
    // Kueue's waits count the workloads of ClusterQueues; where some run without Kueue (it
    // is left out, or does not manage them), the time to start covers every workload.
    if s.outside_queues > 0 && s.start_seconds_incl_pending.count > 0 {
        let t = &s.start_seconds_incl_pending;
        let waiting = match s.start_waiting {
            0 => "none still waiting".to_string(),
            n => format!("the {n} still waiting counted at their wait so far"),
        };
        let _ = writeln!(
            out,
            "To start:     p50 {}, p90 {}, p95 {}, p99 {}, max {} (creation to all pods running, {} workloads with or without Kueue, {} outside its ClusterQueues; {waiting})",
            fmt_secs(t.p50),
            fmt_secs(t.p90),
            fmt_secs(t.p95),
            fmt_secs(t.p99),
            fmt_secs(t.max),
            t.count,
            s.outside_queues,
        );
    }
    let mode = if world.has_nodes() {
        "allocatable on nodes"
    } else {
        "nominal quota, quota-only run"
    };
    // With GPU devices whose shares are charged as another resource (the openb adapter's
    // `gpuSharing: device`), nodes may list no `nvidia.com/gpu` at all: the devices line
    // below counts the GPUs, and "0 GPUs" here would only mislead.
    let devices_only = s.gpu.capacity == 0 && s.gpu.sharing.is_some();
    match s.gpu.utilization {
        _ if devices_only => {}
        Some(u) => {
            let _ = writeln!(
                out,
                "GPU:          {} GPUs ({mode}), utilisation {:.1}%",
                s.gpu.capacity,
                u * 100.0
            );
        }
        None => {
            let _ = writeln!(out, "GPU:          {} GPUs ({mode})", s.gpu.capacity);
        }
    }
    if let Some(g) = &s.gpu.sharing {
        let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0));
        let _ = write!(
            out,
            "GPU devices:  {} GPUs, {} allocated ({}), milli-GPU allocation {} ({} policy)",
            g.gpus,
            g.gpus_allocated,
            pct(g.gpu_allocation_ratio),
            pct(g.milli_gpu_allocation_ratio),
            g.policy
        );
        match g.fragmented_milli_gpus {
            Some(f) => {
                let _ = writeln!(
                    out,
                    "; fragmented {:.1} GPUs ({} of all GPUs, {} of the idle)",
                    f / 1000.0,
                    pct(g.fragmented_gpu_ratio),
                    pct(g.fragmentation_rate)
                );
            }
            None => {
                let _ = writeln!(out);
            }
        }
    }
    if s.evictions.values().any(|&v| v > 0) {
        // The reasons that happened: the summary lists every reason, zeros included.
        let happened = |m: &std::collections::BTreeMap<String, u64>| -> Vec<String> {
            m.iter()
                .filter(|&(_, &v)| v > 0)
                .map(|(k, v)| format!("{v} {k}"))
                .collect()
        };
        let (by, pre) = (happened(&s.evictions), happened(&s.preemptions));
        let _ = writeln!(
            out,
            "Evictions:    {}{}; {:.1} GPU-hours of work lost",
            by.join(", "),
            if pre.is_empty() {
                String::new()
            } else {
                format!(" (preempted: {})", pre.join(", "))
            },
            s.gpu.lost_gpu_hours
        );
        // Preemption loops under the evictions they account for, so that a count in the
        // thousands is not read as a simulator fault (also a warning: the capacity checks).
        let loops: Vec<&str> = s
            .checks
            .iter()
            .filter(|c| c.kind == "PreemptionLoop")
            .map(|c| c.message.as_str())
            .collect();
        for message in loops.iter().take(MAX_LOOP_LINES) {
            let _ = writeln!(out, "  loop:       {message}");
        }
        if loops.len() > MAX_LOOP_LINES {
            let _ = writeln!(
                out,
                "  loop:       and {} more (summary.checks of -o json)",
                loops.len() - MAX_LOOP_LINES
            );
        }
    }
    let g = &s.gpu;
    if g.busy_gpu_seconds > 0.0 || g.lost_gpu_hours > 0.0 || g.held_not_running_gpu_hours > 0.0 {
        let _ = writeln!(
            out,
            "GPU-hours:    {:.1} used, {:.1} lost to evictions{}, {:.1} of quota held with pods not all running",
            g.busy_gpu_seconds / 3600.0,
            g.lost_gpu_hours,
            if s.failures.is_some() {
                " and lost pods"
            } else {
                ""
            },
            g.held_not_running_gpu_hours
        );
    }
    if let (Some(f), Some(goodput)) = (&s.failures, s.goodput) {
        let _ = writeln!(
            out,
            "Failures:     {} node, {} GPU; {} pods lost, {} restarts, {} jobs failed; {:.1} GPU-hours of work lost; goodput {}",
            f.node_failures,
            f.gpu_failures,
            f.pods_lost,
            f.restarts,
            f.jobs_failed,
            f.lost_gpu_seconds / 3600.0,
            goodput.map_or("n/a".to_string(), |g| format!("{:.1}%", g * 100.0)),
        );
    }
    if let Some(a) = &s.autoscaling {
        let _ = writeln!(
            out,
            "Autoscaling:  {} scale-ups, {} nodes added, {} removed, peak {} nodes, {} at the end; {:.1} node-hours ({:.1} GPU-hours); {} ProvisioningRequests, {} failed, {} workloads rejected",
            a.scale_ups,
            a.nodes_added,
            a.nodes_removed,
            a.peak_nodes,
            a.nodes_at_end,
            a.node_hours,
            a.gpu_hours,
            a.provisioning_requests,
            a.provisioning_failed,
            a.provisioning_rejected,
        );
    }
    for v in s.serving.iter().flatten() {
        let _ = writeln!(
            out,
            "Serving:      {} {}/{}: {:.1} of {:.1} replica-hours ready ({}), {} replicas created, {} never ready, time to ready p50 {} p95 {}",
            v.kind,
            v.namespace,
            v.name,
            v.replica_seconds_ready / 3600.0,
            v.replica_seconds_wanted / 3600.0,
            v.ready_fraction
                .map_or("n/a".to_string(), |f| format!("{:.1}%", f * 100.0)),
            v.replicas_created,
            v.replicas_never_ready,
            v.time_to_ready_seconds
                .p50
                .map_or("n/a".to_string(), |t| format!("{t:.0}s")),
            v.time_to_ready_seconds
                .p95
                .map_or("n/a".to_string(), |t| format!("{t:.0}s")),
        );
    }
    queue_table(&mut out, s);
    let waiting: Vec<&WorkloadOut> = result
        .workloads
        .iter()
        .filter(|w| matches!(w.state, "Pending" | "Admitted" | "QuotaReserved"))
        .collect();
    if !waiting.is_empty() {
        let _ = writeln!(out, "\nWaiting at the end ({}):", waiting.len());
        let rows: Vec<[String; 5]> = waiting
            .iter()
            .take(20)
            .map(|w| {
                let why = own_why(w).unwrap_or_else(|| why_without_condition(w, &waiting));
                [
                    w.namespace.clone(),
                    w.name.clone(),
                    w.local_queue.clone().unwrap_or_else(|| "<none>".into()),
                    w.state.to_string(),
                    why,
                ]
            })
            .collect();
        let headers = ["NAMESPACE", "NAME", "QUEUE", "STATE", "WHY"];
        let widths: Vec<usize> = (0..4)
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].len())
                    .max()
                    .unwrap_or(0)
                    .max(headers[i].len())
            })
            .collect();
        let line = |cells: [&str; 5]| {
            let mut l = String::new();
            for i in 0..4 {
                let _ = write!(l, "{:<w$}   ", cells[i], w = widths[i]);
            }
            l.push_str(cells[4]);
            l
        };
        let _ = writeln!(out, "  {}", line(headers));
        for r in &rows {
            let _ = writeln!(out, "  {}", line([&r[0], &r[1], &r[2], &r[3], &r[4]]));
        }
        if waiting.len() > rows.len() {
            let _ = writeln!(
                out,
                "  … and {} more (see -o json)",
                waiting.len() - rows.len()
            );
        }
    }
    out
}

/// The per-queue table of the summary: one row per ClusterQueue, its LocalQueues under it.
fn queue_table(out: &mut String, s: &Summary) {
    use std::fmt::Write;
    if s.cluster_queues.iter().all(|c| c.figures.workloads == 0) {
        return;
    }
    let pct = |v: Option<f64>| v.map_or("-".into(), |u| format!("{:.0}%", u * 100.0));
    let ratio = |v: Option<f64>| v.map_or("-".into(), |u| format!("{u:.1}"));
    // What held the queue back: its two largest shares of pending time.
    let bound = |b: &std::collections::BTreeMap<String, f64>| -> String {
        let mut v: Vec<(&String, &f64)> = b.iter().collect();
        v.sort_by(|x, y| y.1.total_cmp(x.1).then(x.0.cmp(y.0)));
        let top: Vec<String> = v
            .iter()
            .take(2)
            .map(|(k, x)| format!("{k} {:.0}%", *x * 100.0))
            .collect();
        if top.is_empty() {
            "-".into()
        } else {
            top.join(", ")
        }
    };
    let row = |name: String,
               adm: u64,
               f: &QueueFigures,
               b: &std::collections::BTreeMap<String, f64>|
     -> Vec<String> {
        vec![
            name,
            adm.to_string(),
            f.finished_workloads.to_string(),
            f.pending_workloads.to_string(),
            fmt_secs(f.wait_seconds_incl_pending.p50),
            fmt_secs(f.wait_seconds_incl_pending.p95),
            fmt_secs(f.wait_seconds_admitted.p95),
            fmt_secs(f.time_in_queue_seconds_incl_pending.p95),
            fmt_secs(f.jct_seconds_finished.p50),
            ratio(f.bounded_slowdown_finished.p95),
            format!(
                "{:.1}/{:.1}/{:.1}",
                f.gpu_hours_used, f.gpu_hours_lost, f.gpu_hours_held_not_running
            ),
            format!(
                "{}/{}",
                pct(f.gpu_utilization_of_capacity),
                pct(f.gpu_utilization_of_nominal_quota)
            ),
            format!("{}/{}", f.preemptions_suffered, f.preemptions_caused),
            bound(b),
        ]
    };
    let mut rows = Vec::new();
    // A summary is read on a terminal: past 30 ClusterQueues (Kueue's perf scenarios have
    // 1,000), the 30 with the longest pending-inclusive p95 wait, in their own order; every
    // queue is in queues.csv and -o json.
    const SHOWN: usize = 30;
    let mut active: Vec<_> = s
        .cluster_queues
        .iter()
        .enumerate()
        .filter(|(_, c)| c.figures.workloads > 0)
        .collect();
    let hidden = active.len().saturating_sub(SHOWN);
    if hidden > 0 {
        active.sort_by(|(i, a), (j, b)| {
            let key = |c: &&ClusterQueueSummary| c.figures.wait_seconds_incl_pending.p95;
            key(b)
                .unwrap_or(-1.0)
                .total_cmp(&key(a).unwrap_or(-1.0))
                .then(i.cmp(j))
        });
        active.truncate(SHOWN);
        active.sort_by_key(|(i, _)| *i);
    }
    for (_, cq) in active {
        rows.push(row(
            cq.name.clone(),
            cq.admitted_workloads,
            &cq.figures,
            &cq.pending_bound_by,
        ));
        let lqs: Vec<_> = s
            .local_queues
            .iter()
            .filter(|l| l.cluster_queue == cq.name && l.figures.workloads > 0)
            .collect();
        // A LocalQueue alone in its ClusterQueue repeats it: shown only beside others.
        if lqs.len() > 1 {
            for lq in lqs.iter().take(20) {
                let name = format!("  {}/{}", lq.namespace, lq.name);
                rows.push(row(
                    name,
                    lq.admitted_workloads,
                    &lq.figures,
                    &lq.pending_bound_by,
                ));
            }
            if lqs.len() > 20 {
                let mut more = vec![String::new(); 14];
                more[0] = format!("  … {} more LocalQueues (see -o json)", lqs.len() - 20);
                rows.push(more);
            }
        }
    }
    if hidden > 0 {
        let mut more = vec![String::new(); 14];
        more[0] = format!("… {hidden} more ClusterQueues with shorter waits (queues.csv, -o json)");
        rows.push(more);
    }
    let headers = [
        "QUEUE",
        "ADMITTED",
        "FINISHED",
        "PENDING",
        "WAIT p50",
        "WAIT p95",
        "ADMITTED-ONLY p95",
        "IN-QUEUE p95",
        "JCT p50",
        "SLOWDOWN p95",
        "GPU-H USED/LOST/HELD",
        "UTIL CAP/QUOTA",
        "PREEMPTED/CAUSED",
        "BOUND BY",
    ];
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                // A "… N more" line spans the row: it does not widen the first column.
                .filter(|r| r[1..].iter().any(|c| !c.is_empty()))
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
                .max(headers[i].len())
        })
        .collect();
    let _ = writeln!(
        out,
        "\nQueues (wait: creation to latest admission, still-pending workloads at their wait so far; admitted-only: the admitted alone; in-queue: Pending time; jct, slowdown: finished workloads, slowdown bound 10s; held: quota held with pods not all running; bound by: what held its pending time back, largest shares):"
    );
    let line = |cells: Vec<&str>| {
        let mut l = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            let _ = write!(l, " {:<w$}", c, w = widths[i]);
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(headers.to_vec()));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}
