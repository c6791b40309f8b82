//! Capacity on demand: the cluster-autoscaler growing and shrinking NodePools with
//! `spec.autoscaling`, and Kueue's ProvisioningRequest admission check in front of them.
//!
//! An autoscaled pool's nodes are all in the world from the start (as a Timeline's late
//! nodes are); those above its current size are away (`NodeStates::removed`). A scale-up
//! picks the lowest away nodes, and each joins (`NodeOp::Add`) after the pool's
//! `provisioningDelay`. A scale-down removes an empty node once it was unneeded for
//! `scaleDownUnneeded`, never below `min`, and not within `--scale-down-delay-after-add` of
//! the last scale-up.
//!
//! The cluster-autoscaler scales up for two reasons, as upstream:
//! - pods that are pending unschedulable (its main loop, `ScaleUp` for unschedulable pods):
//!   as many new nodes as they need, up to `max`, not atomically;
//! - a ProvisioningRequest (Kueue's provisioning admission check): the class
//!   `best-effort-atomic-scale-up.autoscaling.x-k8s.io` gets every node its pods need or
//!   none; `check-capacity.autoscaling.x-k8s.io` only capacity that is there.
//!
//! Capacity a request was granted is booked for its workload (the autoscaler's "reservation
//! from other ProvReqs"): nodes joining for it and free capacity counted for it are not
//! counted again for another request, until the workload's pods run or 10 minutes after the
//! last of its nodes joined (`BookingExpired`). kube-scheduler does not read bookings, as
//! upstream: another pending pod may take a booked node first.

use kueuesim_model::autoscale::{AutoscaledPool, SCALE_DOWN_DELAY_AFTER_ADD};
use kueuesim_model::{NodeId, NodeOp, SimDuration, SimTime, WorkloadId, World};

use crate::outcome::{AutoscalingStats, WorkloadState};
use crate::placement::{PodNeeds, statically_feasible};

use super::{Ev, Simulation};

/// The cluster-autoscaler books a ProvisioningRequest's capacity this long
/// (`BookingExpired` after it).
pub(super) const BOOKING: SimDuration = SimDuration::from_secs(600);

/// The autoscaler's state; None in a run without autoscaled pools or provisioning checks.
#[derive(Clone, Debug)]
pub(super) struct AutoscaleState {
    /// Per node: the autoscaled pool it belongs to (index in `Autoscaling::pools`).
    pub(super) pool_of: Vec<Option<u32>>,
    /// Per node: requested by a scale-up, not joined yet.
    pub(super) joining: Vec<bool>,
    /// Per node: booked for a workload until a time.
    pub(super) booked: Vec<Option<(WorkloadId, SimTime)>>,
    /// Per node: empty since (None: has pods, or away).
    pub(super) empty_since: Vec<Option<SimTime>>,
    /// Per node: its pod slots when empty.
    pub(super) slots: Vec<i64>,
    /// Per pool: nodes there or joining.
    pub(super) size: Vec<u32>,
    /// The last scale-up (`--scale-down-delay-after-add` counts from it).
    pub(super) last_scale_up: Option<SimTime>,
    /// Per workload: its failed ProvisioningRequests so far (the check's `retryCount`).
    pub(super) retries: std::collections::BTreeMap<WorkloadId, u32>,
    /// Nodes there over time: (time, change in nodes, change in GPUs).
    pub(super) changes: Vec<(SimTime, i64, i64)>,
}

/// What a scale-up for a set of pods needs.
pub(super) struct Plan {
    /// The pool that can grow for them (None: none fits them).
    pub(super) pool: Option<usize>,
    /// Nodes there (or joining for this workload) whose free capacity the pods take.
    pub(super) existing: Vec<NodeId>,
    /// New nodes the remaining pods need.
    pub(super) new_nodes: u32,
}

impl AutoscaleState {
    pub(super) fn new(world: &World) -> Option<Self> {
        let a = world.autoscaling.as_ref()?;
        let n = world.nodes.len();
        let mut pool_of = vec![None; n];
        let mut size = Vec::new();
        for (p, pool) in a.pools.iter().enumerate() {
            for &node in &pool.nodes {
                pool_of[node.index()] = Some(p as u32);
            }
            size.push(pool.min);
        }
        Some(AutoscaleState {
            pool_of,
            joining: vec![false; n],
            booked: vec![None; n],
            empty_since: vec![None; n],
            slots: vec![0; n],
            size,
            last_scale_up: None,
            retries: std::collections::BTreeMap::new(),
            changes: Vec::new(),
        })
    }
}

impl<'w> Simulation<'w> {
    pub(super) fn pools(&self) -> &'w [AutoscaledPool] {
        self.origin
            .autoscaling
            .as_ref()
            .map_or(&[], |a| a.pools.as_slice())
    }

    /// At the start: the nodes of each pool above `min` (and those the pool lays out above
    /// `max`) are away; those there are empty (a pool at its `min` has nothing to scale
    /// down, so no scan is due).
    pub(super) fn autoscale_start(&mut self) {
        let world = self.world;
        let Some(a) = self.origin.autoscaling.as_ref() else {
            return;
        };
        let Some(states) = self.sched.nodes.as_mut() else {
            return;
        };
        let Some(st) = self.autoscale.as_mut() else {
            return;
        };
        let gpu = self.gpu;
        for pool in &a.pools {
            for (i, &n) in pool.nodes.iter().enumerate() {
                st.slots[n.index()] = self.sched.cluster.nodes.free_pods(n);
                if i >= pool.min as usize {
                    states.removed[n.index()] = true;
                    states.sync(world, &mut self.sched.cluster, n);
                } else {
                    st.empty_since[n.index()] = Some(SimTime::ZERO);
                    let gpus = gpu.map_or(0, |g| world.node(n).allocatable[g.index()]);
                    st.changes.push((SimTime::ZERO, 1, gpus));
                }
            }
            // The nodes a pool lays out above `max` never join.
            if let Some(&first) = pool.nodes.first() {
                for i in pool.nodes.len()..pool.laid_out as usize {
                    let n = NodeId::from_index(first.index() + i);
                    states.removed[n.index()] = true;
                    states.sync(world, &mut self.sched.cluster, n);
                }
            }
        }
    }

    /// Whether the booking of `node` still holds against other workloads.
    pub(super) fn booked_for_other(&self, node: NodeId, w: Option<WorkloadId>) -> bool {
        let Some(st) = self.autoscale.as_ref() else {
            return false;
        };
        match st.booked[node.index()] {
            Some((b, until)) if Some(b) != w && until > self.now => {
                self.runtimes.get(b.index()).is_some_and(|rt| {
                    matches!(
                        rt.record.state,
                        WorkloadState::QuotaReserved | WorkloadState::Admitted
                    )
                })
            }
            _ => false,
        }
    }

    /// The capacity the pending pods `pods` of workload `w` need: the free capacity they take
    /// on the nodes there (or joining for `w`), first fit in node order, and the new nodes of
    /// the first autoscaled pool whose nodes can take every remaining pod.
    pub(super) fn plan_for(&self, w: WorkloadId, pods: &[&PodNeeds]) -> Plan {
        let world = self.world;
        let st = self.autoscale.as_ref().expect("autoscale state");
        let states = self.sched.nodes.as_ref().expect("node states");
        let cap = &self.sched.cluster.nodes;
        let n_res = world.resources.len();
        let mut remaining: Vec<&PodNeeds> = Vec::new();
        let mut existing: Vec<NodeId> = Vec::new();
        // Free capacity per node, taken as pods are counted on it.
        let mut taken: std::collections::BTreeMap<usize, (Vec<i64>, i64)> =
            std::collections::BTreeMap::new();
        for pod in pods {
            let mut placed = false;
            for i in 0..world.nodes.len() {
                let n = NodeId::from_index(i);
                let joining_for_w = st.joining[i] && st.booked[i].is_some_and(|(b, _)| b == w);
                // A closed or joining node counts only if it joins for `w`.
                if ((states.closed(n) || st.joining[i]) && !joining_for_w)
                    || self.booked_for_other(n, Some(w))
                    || !statically_feasible(world, n, pod)
                {
                    continue;
                }
                let (free, free_pods) = taken.entry(i).or_insert_with(|| {
                    if joining_for_w {
                        (world.node(n).allocatable.clone(), st.slots[i])
                    } else {
                        (
                            (0..n_res).map(|r| cap.free(n, r)).collect(),
                            cap.free_pods(n),
                        )
                    }
                });
                if *free_pods >= 1 && pod.requests.iter().all(|(r, v)| free[r.index()] >= v) {
                    for (r, v) in pod.requests.iter() {
                        free[r.index()] -= v;
                    }
                    *free_pods -= 1;
                    if !existing.contains(&n) {
                        existing.push(n);
                    }
                    placed = true;
                    break;
                }
            }
            if !placed {
                remaining.push(pod);
            }
        }
        if remaining.is_empty() {
            return Plan {
                pool: None,
                existing,
                new_nodes: 0,
            };
        }
        for (p, pool) in self.pools().iter().enumerate() {
            let Some(&template) = pool.nodes.first() else {
                continue;
            };
            let alloc = &world.node(template).allocatable;
            let slots = st.slots[template.index()];
            if !remaining.iter().all(|pod| {
                statically_feasible(world, template, pod)
                    && pod.requests.iter().all(|(r, v)| alloc[r.index()] >= v)
            }) {
                continue;
            }
            // First fit on fresh nodes of the pool's template.
            let mut fresh: Vec<(Vec<i64>, i64)> = Vec::new();
            for pod in &remaining {
                let slot = fresh.iter_mut().find(|(free, pods)| {
                    *pods >= 1 && pod.requests.iter().all(|(r, v)| free[r.index()] >= v)
                });
                let (free, pods) = match slot {
                    Some(s) => s,
                    None => {
                        fresh.push((alloc.clone(), slots));
                        fresh.last_mut().expect("pushed")
                    }
                };
                for (r, v) in pod.requests.iter() {
                    free[r.index()] -= v;
                }
                *pods -= 1;
            }
            return Plan {
                pool: Some(p),
                existing,
                new_nodes: fresh.len() as u32,
            };
        }
        Plan {
            pool: None,
            existing,
            new_nodes: u32::MAX,
        }
    }

    /// Scales pool `p` up by `k` nodes for `w`, booking them (and `existing`) for it.
    pub(super) fn scale_up(&mut self, p: usize, k: u32, w: WorkloadId, existing: &[NodeId]) {
        let pool = &self.pools()[p];
        let delay = pool.provisioning_delay;
        let until = self.now + delay + BOOKING;
        let st = self.autoscale.as_mut().expect("autoscale state");
        let states = self.sched.nodes.as_ref().expect("node states");
        for &n in existing {
            st.booked[n.index()] = Some((w, until));
        }
        let mut added = 0;
        for &n in &pool.nodes {
            if added == k {
                break;
            }
            if states.removed[n.index()] && !st.joining[n.index()] {
                st.joining[n.index()] = true;
                st.booked[n.index()] = Some((w, until));
                self.events.push(self.now + delay, Ev::NodeJoin(n));
                added += 1;
            }
        }
        st.size[p] += added;
        st.last_scale_up = Some(self.now);
        self.rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default)
            .scale_ups += 1;
    }

    /// Headroom of pool `p`: nodes it may still add.
    pub(super) fn headroom(&self, p: usize) -> u32 {
        let st = self.autoscale.as_ref().expect("autoscale state");
        self.pools()[p].nodes.len() as u32 - st.size[p]
    }

    /// The cluster-autoscaler sees pods of `w` pending unschedulable: it scales up a pool
    /// for them, as far as the pool's `max` lets it (`ScaleUp` for unschedulable pods is not
    /// atomic).
    pub(super) fn scale_up_for_pending(&mut self, w: WorkloadId) {
        if self.autoscale.is_none() || self.pools().is_empty() {
            return;
        }
        // Every pool at its max: no plan can add a node, so none is worked out (this runs
        // on every failed placement).
        if (0..self.pools().len()).all(|p| self.headroom(p) == 0) {
            return;
        }
        let pods: Vec<&PodNeeds> = {
            let rt = &self.runtimes[w.index()];
            let mut pods = Vec::new();
            for (ps, need) in rt.needs.iter().enumerate() {
                let count = rt
                    .record
                    .placement
                    .get(ps)
                    .map_or(0, |s| s.iter().filter(|n| n.is_none()).count());
                pods.extend(std::iter::repeat_n(need, count));
            }
            pods
        };
        if pods.is_empty() {
            return;
        }
        let plan = self.plan_for(w, &pods);
        if let Some(p) = plan.pool
            && plan.new_nodes > 0
        {
            let k = plan.new_nodes.min(self.headroom(p));
            if k > 0 {
                self.scale_up(p, k, w, &plan.existing);
            }
        }
    }

    /// A node a scale-up asked for joins the cluster.
    pub(super) fn node_join(&mut self, n: NodeId) {
        let lost = self.rec.stats.failures.pods_lost;
        let world = self.world;
        let gpus = self.gpu.map_or(0, |g| world.node(n).allocatable[g.index()]);
        {
            let st = self.autoscale.as_mut().expect("autoscale state");
            st.joining[n.index()] = false;
            st.empty_since[n.index()] = Some(self.now);
            st.changes.push((self.now, 1, gpus));
            // The booking lasts 10 minutes from the node's joining at the latest.
            if let Some((b, until)) = st.booked[n.index()] {
                st.booked[n.index()] = Some((b, until.min(self.now + BOOKING)));
            }
        }
        self.rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default)
            .nodes_added += 1;
        self.sched.nodes_changing = true;
        self.node_op(NodeOp::Add, &[n]);
        self.after_node_change(lost);
        if let Some(p) = self.autoscale.as_ref().and_then(|s| s.pool_of[n.index()]) {
            let unneeded = self.pools()[p as usize].scale_down_unneeded;
            let at = self.now + unneeded.max(SCALE_DOWN_DELAY_AFTER_ADD);
            self.events.push(at, Ev::AutoscaleScan);
        }
    }

    /// After pods left `nodes`: those of autoscaled pools that are now empty start their
    /// unneeded time.
    pub(super) fn autoscale_released(&mut self, nodes: &[NodeId]) {
        let Some(st) = self.autoscale.as_mut() else {
            return;
        };
        let mut due: Option<SimTime> = None;
        for &n in nodes {
            let Some(p) = st.pool_of[n.index()] else {
                continue;
            };
            if self.sched.cluster.nodes.free_pods(n) == st.slots[n.index()] {
                st.empty_since[n.index()] = Some(self.now);
                let pool =
                    &self.origin.autoscaling.as_ref().expect("autoscaling").pools[p as usize];
                let at = self.now + pool.scale_down_unneeded;
                due = Some(due.map_or(at, |d: SimTime| d.min(at)));
            }
        }
        if let Some(at) = due {
            self.events.push(at, Ev::AutoscaleScan);
        }
    }

    /// The cluster-autoscaler's scale-down: every empty node unneeded for long enough goes,
    /// the highest index first, down to `min`.
    pub(super) fn autoscale_scan(&mut self) {
        self.progress.idle = true;
        let Some(st) = self.autoscale.as_ref() else {
            return;
        };
        if let Some(last) = st.last_scale_up
            && last + SCALE_DOWN_DELAY_AFTER_ADD > self.now
        {
            self.events
                .push(last + SCALE_DOWN_DELAY_AFTER_ADD, Ev::AutoscaleScan);
            return;
        }
        let world = self.world;
        let mut remove: Vec<NodeId> = Vec::new();
        let mut next: Option<SimTime> = None;
        for (p, pool) in self.pools().iter().enumerate() {
            let st = self.autoscale.as_ref().expect("autoscale state");
            let states = self.sched.nodes.as_ref().expect("node states");
            let mut size = st.size[p];
            for &n in pool.nodes.iter().rev() {
                if size <= pool.min {
                    break;
                }
                let i = n.index();
                if states.removed[i] || st.joining[i] || self.booked_for_other(n, None) {
                    continue;
                }
                let empty = self.sched.cluster.nodes.free_pods(n) == st.slots[i];
                match st.empty_since[i] {
                    Some(since) if empty => {
                        let due = since + pool.scale_down_unneeded;
                        if due <= self.now {
                            remove.push(n);
                            size -= 1;
                        } else {
                            next = Some(next.map_or(due, |x: SimTime| x.min(due)));
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(at) = next {
            self.events.push(at, Ev::AutoscaleScan);
        }
        if remove.is_empty() {
            return;
        }
        for &n in &remove {
            let gpus = self.gpu.map_or(0, |g| world.node(n).allocatable[g.index()]);
            let st = self.autoscale.as_mut().expect("autoscale state");
            let p = st.pool_of[n.index()].expect("pool node") as usize;
            st.size[p] -= 1;
            st.empty_since[n.index()] = None;
            st.booked[n.index()] = None;
            st.changes.push((self.now, -1, -gpus));
        }
        self.rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default)
            .nodes_removed += remove.len() as u64;
        self.node_op(NodeOp::Remove, &remove);
    }

    /// The autoscaled capacity's figures at the end of the run.
    pub(super) fn autoscale_finish(&mut self, end: SimTime) {
        let Some(st) = self.autoscale.as_ref() else {
            return;
        };
        let mut nodes = 0i64;
        let mut gpus = 0i64;
        let mut last = SimTime::ZERO;
        let mut node_ms = 0i128;
        let mut gpu_ms = 0i128;
        let mut peak = 0i64;
        for &(at, dn, dg) in &st.changes {
            if at > end {
                break;
            }
            let dt = i128::from((at - last).millis());
            node_ms += i128::from(nodes) * dt;
            gpu_ms += i128::from(gpus) * dt;
            nodes += dn;
            gpus += dg;
            peak = peak.max(nodes);
            last = at;
        }
        let dt = i128::from((end - last).millis().max(0));
        node_ms += i128::from(nodes) * dt;
        gpu_ms += i128::from(gpus) * dt;
        // A run without a horizon ends at its last effective event: nodes that joined or
        // went after it (idle scale-downs) are not the run's.
        let (mut late_added, mut late_removed) = (0u64, 0u64);
        for &(_, dn, _) in st.changes.iter().filter(|c| c.0 > end) {
            if dn > 0 {
                late_added += 1;
            } else {
                late_removed += 1;
            }
        }
        let s = self
            .rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default);
        s.node_ms = node_ms;
        s.gpu_ms = gpu_ms;
        s.peak_nodes = peak as u64;
        s.nodes_at_end = nodes as u64;
        s.nodes_added -= late_added;
        s.nodes_removed -= late_removed;
    }
}
