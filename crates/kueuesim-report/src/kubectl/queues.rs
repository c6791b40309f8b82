//! `kubectl describe clusterqueue` and `describe localqueue`: Kueue's CRDs have no describer
//! of their own, so kubectl prints them with its generic describer (fields in name order,
//! camelCase keys as words), spec and status as Kueue's controllers write them at time T.

use std::collections::BTreeMap;

use kueuesim_model::{ClusterQueue, StopPolicy, World, format_amount};

use super::{condition, present, rfc3339, specs, tabwrite};
use crate::output::{SimulationResult, WorkloadOut};

/// Lines of the generic describer: `key:\tvalue` or a `key:` heading, two spaces a level.
struct Lines(Vec<String>);

impl Lines {
    fn kv(&mut self, level: usize, k: &str, v: &str) {
        self.0.push(format!("{}{k}:\t{v}", "  ".repeat(level)));
    }
    fn head(&mut self, level: usize, k: &str) {
        self.0.push(format!("{}{k}:", "  ".repeat(level)));
    }
    fn item(&mut self, level: usize, v: &str) {
        self.0.push(format!("{}{v}", "  ".repeat(level)));
    }
}

/// Per (flavor, resource) name, the quota its workloads hold: reserved (QuotaReserved=True,
/// Kueue's `flavorsReservation`) and admitted (Admitted=True, `flavorsUsage`), in Kueue units.
#[derive(Default)]
pub(super) struct Usage {
    pub reserved: BTreeMap<(String, String), i64>,
    pub admitted: BTreeMap<(String, String), i64>,
    pub pending: u32,
    pub reserving: u32,
    pub admitted_count: u32,
}

pub(super) fn usage<'a>(world: &World, workloads: impl Iterator<Item = &'a WorkloadOut>) -> Usage {
    let specs = specs(world);
    let mut u = Usage::default();
    for w in workloads {
        // A finished workload keeps its conditions but no longer counts (Kueue's cache
        // drops it: `IsAdmitted && !IsFinished`).
        let live = w.state != "Finished";
        let reserved = live && condition(w, "QuotaReserved").is_some_and(|c| c.status == "True");
        let admitted = live && condition(w, "Admitted").is_some_and(|c| c.status == "True");
        // Kueue's pendingWorkloads: queued (active or inadmissible), not deactivated.
        if w.state == "Pending" {
            u.pending += 1;
        }
        u.reserving += u32::from(reserved);
        u.admitted_count += u32::from(admitted);
        if !reserved {
            continue;
        }
        let Some(spec) = specs.get(&(w.namespace.as_str(), w.name.as_str())) else {
            continue;
        };
        for (ps, out) in spec.pod_sets.iter().zip(&w.pod_sets) {
            let count = i64::from(out.admitted_count.unwrap_or(ps.count));
            for (r, a) in ps.requests.iter() {
                let name = world.resources.name(r);
                let Some(flavor) = out.flavors.get(name) else {
                    continue;
                };
                let key = (flavor.clone(), name.to_string());
                *u.reserved.entry(key.clone()).or_default() += a * count;
                if admitted {
                    *u.admitted.entry(key).or_default() += a * count;
                }
            }
        }
    }
    u
}

/// The flavors and resources of a ClusterQueue's resource groups, in their order.
pub(super) fn cells(world: &World, cq: &ClusterQueue) -> Vec<(String, Vec<(String, i64)>)> {
    let mut out: Vec<(String, Vec<(String, i64)>)> = Vec::new();
    for g in &cq.resource_groups {
        for f in &g.flavors {
            let name = world.flavor(f.flavor).name.clone();
            let res: Vec<(String, i64)> = f
                .resources
                .iter()
                .map(|q| (world.resources.name(q.resource).to_string(), q.nominal))
                .collect();
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, rs)) => rs.extend(res),
                None => out.push((name, res)),
            }
        }
    }
    out
}

/// Kueue's `FlavorUsage` lists: per flavor its resources' totals (and, for a ClusterQueue in a
/// cohort, what it borrows beyond its nominal quota).
fn flavor_usage(
    l: &mut Lines,
    level: usize,
    title: &str,
    cells: &[(String, Vec<(String, i64)>)],
    amounts: &BTreeMap<(String, String), i64>,
    borrowing: Option<bool>,
) {
    l.head(level, title);
    for (flavor, resources) in cells {
        l.kv(level + 1, "Name", flavor);
        l.head(level + 1, "Resources");
        for (r, nominal) in resources {
            let total = amounts
                .get(&(flavor.clone(), r.clone()))
                .copied()
                .unwrap_or(0);
            if let Some(cohort) = borrowing {
                let borrowed = if cohort { (total - nominal).max(0) } else { 0 };
                l.kv(level + 2, "Borrowed", &format_amount(r, borrowed));
            }
            l.kv(level + 2, "Name", r);
            l.kv(level + 2, "Total", &format_amount(r, total));
        }
    }
}

fn header(l: &mut Lines, world: &World, name: &str, namespace: &str, kind: &str) {
    l.kv(0, "Name", name);
    l.kv(0, "Namespace", namespace);
    l.kv(0, "Labels", "<none>");
    l.kv(0, "Annotations", "<none>");
    l.kv(0, "API Version", "kueue.x-k8s.io/v1beta2");
    l.kv(0, "Kind", kind);
    l.head(0, "Metadata");
    l.kv(1, "Creation Timestamp", &rfc3339(world, 0.0));
}

fn condition_lines(l: &mut Lines, world: &World, status: &str, reason: &str, message: &str) {
    l.head(1, "Conditions");
    l.kv(2, "Last Transition Time", &rfc3339(world, 0.0));
    l.kv(2, "Message", message);
    l.kv(2, "Observed Generation", "1");
    l.kv(2, "Reason", reason);
    l.kv(2, "Status", status);
    l.kv(2, "Type", "Active");
}

/// `kubectl describe clusterqueue NAME` at time `at`.
pub(super) fn describe_cluster_queue(
    world: &World,
    doc: &SimulationResult,
    name: &str,
    at: f64,
) -> Result<String, String> {
    let cq = world
        .cluster_queues
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("clusterqueues.kueue.x-k8s.io \"{name}\" not found"))?;
    let u = usage(
        world,
        present(doc, at).filter(|w| w.cluster_queue.as_deref() == Some(name)),
    );
    let cells = cells(world, cq);
    let mut l = Lines(Vec::new());
    header(&mut l, world, name, "", "ClusterQueue");
    l.head(0, "Spec");
    if let Some(c) = cq.cohort {
        l.kv(1, "Cohort Name", &world.cohorts[c.index()].name);
    }
    l.head(1, "Flavor Fungibility");
    l.kv(
        2,
        "When Can Borrow",
        &format!("{:?}", cq.flavor_fungibility.when_can_borrow),
    );
    l.kv(
        2,
        "When Can Preempt",
        &format!("{:?}", cq.flavor_fungibility.when_can_preempt),
    );
    l.head(1, "Preemption");
    l.head(2, "Borrow Within Cohort");
    l.kv(
        3,
        "Policy",
        &format!("{:?}", cq.preemption.borrow_within_cohort),
    );
    l.kv(
        2,
        "Reclaim Within Cohort",
        &format!("{:?}", cq.preemption.reclaim_within_cohort),
    );
    l.kv(
        2,
        "Within Cluster Queue",
        &format!("{:?}", cq.preemption.within_cluster_queue),
    );
    l.kv(1, "Queueing Strategy", cq.queueing_strategy.as_str());
    l.head(1, "Resource Groups");
    for g in &cq.resource_groups {
        l.head(2, "Covered Resources");
        for r in &g.covered {
            l.item(3, world.resources.name(*r));
        }
        l.head(2, "Flavors");
        for f in &g.flavors {
            l.kv(3, "Name", &world.flavor(f.flavor).name);
            l.head(3, "Resources");
            for q in &f.resources {
                let r = world.resources.name(q.resource);
                if let Some(b) = q.borrowing_limit {
                    l.kv(4, "Borrowing Limit", &format_amount(r, b));
                }
                if let Some(x) = q.lending_limit {
                    l.kv(4, "Lending Limit", &format_amount(r, x));
                }
                l.kv(4, "Name", r);
                l.kv(4, "Nominal Quota", &format_amount(r, q.nominal));
            }
        }
    }
    l.kv(1, "Stop Policy", &format!("{:?}", cq.stop_policy));
    l.head(0, "Status");
    l.kv(1, "Admitted Workloads", &u.admitted_count.to_string());
    if cq.stop_policy == StopPolicy::None {
        condition_lines(&mut l, world, "True", "Ready", "Can admit new workloads");
    } else {
        condition_lines(
            &mut l,
            world,
            "False",
            "Stopped",
            "Can't admit new workloads: is stopped.",
        );
    }
    let cohort = Some(cq.cohort.is_some());
    flavor_usage(
        &mut l,
        1,
        "Flavors Reservation",
        &cells,
        &u.reserved,
        cohort,
    );
    flavor_usage(&mut l, 1, "Flavors Usage", &cells, &u.admitted, cohort);
    l.kv(1, "Pending Workloads", &u.pending.to_string());
    l.kv(1, "Reserving Workloads", &u.reserving.to_string());
    l.0.push("Events:\t<none>".into());
    Ok(tabwrite(&l.0))
}

/// `kubectl describe localqueue NAME -n NS` at time `at`.
pub(super) fn describe_local_queue(
    world: &World,
    doc: &SimulationResult,
    namespace: &str,
    name: &str,
    at: f64,
) -> Result<String, String> {
    let lq = world
        .local_queues
        .iter()
        .find(|q| q.namespace == namespace && q.name == name)
        .ok_or_else(|| format!("localqueues.kueue.x-k8s.io \"{name}\" not found"))?;
    let cq = world.cluster_queue(lq.cluster_queue);
    let u = usage(
        world,
        present(doc, at)
            .filter(|w| w.namespace == namespace && w.local_queue.as_deref() == Some(name)),
    );
    let cells = cells(world, cq);
    let mut l = Lines(Vec::new());
    header(&mut l, world, name, namespace, "LocalQueue");
    l.head(0, "Spec");
    l.kv(1, "Cluster Queue", &cq.name);
    l.kv(1, "Stop Policy", &format!("{:?}", lq.stop_policy));
    l.head(0, "Status");
    l.kv(1, "Admitted Workloads", &u.admitted_count.to_string());
    if lq.stop_policy == StopPolicy::None {
        condition_lines(
            &mut l,
            world,
            "True",
            "Ready",
            "Can submit new workloads to localQueue",
        );
    } else {
        condition_lines(&mut l, world, "False", "Stopped", "LocalQueue is stopped");
    }
    flavor_usage(&mut l, 1, "Flavors Reservation", &cells, &u.reserved, None);
    flavor_usage(&mut l, 1, "Flavors Usage", &cells, &u.admitted, None);
    l.kv(1, "Pending Workloads", &u.pending.to_string());
    l.kv(1, "Reserving Workloads", &u.reserving.to_string());
    l.0.push("Events:\t<none>".into());
    Ok(tabwrite(&l.0))
}
