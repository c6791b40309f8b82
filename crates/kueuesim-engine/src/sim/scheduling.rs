//! Handing admitted workloads to their gang scheduler (kube-scheduler, Volcano, KAI) and placing
//! their pods, with Kueue TAS's view of the nodes.

use std::cmp::Reverse;

use kueuesim_model::{Labels, NodeId, SchedulerKind, TierRef, WorkloadId};

use crate::outcome::EventType;
use crate::placement::{self, PodNeeds};

use super::Simulation;

impl<'w> Simulation<'w> {
    /// Hands the workload's pods to its scheduler: Kueue ungates/unsuspends them with the
    /// flavors' nodeLabels as nodeSelector and the flavors' tolerations added.
    pub(super) fn release_to_scheduler(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.spec(w);
        let needs = self.pod_needs(w);
        let rt = &mut self.runtimes[w.index()];
        rt.released = false;
        rt.needs = needs;
        // Partial admission lowers the pod count the scheduler sees. Every slot starts
        // empty, in the vectors the arrival made (or an earlier release left).
        let placement = &mut rt.record.placement;
        placement.truncate(wl.pod_sets.len());
        for (i, ps) in wl.pod_sets.iter().enumerate() {
            let n = rt
                .record
                .admission
                .as_ref()
                .and_then(|a| a.pod_sets.get(i))
                .map_or(ps.count, |a| a.count);
            empty_slots(placement, i, n as usize);
        }
        // Bind times are for the kubectl pod views of a full run; a lean run reports none.
        if self.rec.tally.is_none() {
            let bound_at = &mut rt.record.bound_at;
            bound_at.truncate(rt.record.placement.len());
            for (i, slots) in rt.record.placement.iter().enumerate() {
                empty_slots(bound_at, i, slots.len());
            }
        }
        if !world.has_nodes() {
            // Quota-only: an admitted workload runs at once (after the pod start-up delay).
            self.schedule_running(w);
            return;
        }
        // Pods of the input already running on their nodes (a partly placed gang): bound
        // before the scheduler looks, on the first release only.
        if !wl.gang.bound_nodes.is_empty() && self.runtimes[w.index()].record.evictions.is_empty() {
            self.book_bound_pods(w);
        }
        self.sched
            .awaiting_placement
            .insert((Reverse(wl.priority), self.now, w));
        // While the start state is booked, pods wait (`arrive`).
        if self.sched.defer_placement {
            return;
        }
        // Volcano's allocate takes its jobs queue by queue: one released now waits for the
        // session of this instant, which sees every job released in it.
        if self.volcano_queue_ordered(w) {
            self.defer_to_volcano_session();
            return;
        }
        // So does KAI's, for the jobs its actions serve: allocate takes them queue by queue,
        // then consolidation, reclaim and preempt take those still pending.
        if self.kai_session_job(w) {
            self.kai_session_for(w);
            return;
        }
        if !self.try_place(w) {
            // Pods pending unschedulable: the cluster-autoscaler may add nodes for them.
            self.scale_up_for_pending(w);
        }
    }

    /// What each pod set's pods need of a node as its scheduler sees them: the template's
    /// nodeSelector and tolerations with the admitted flavors' node labels and tolerations
    /// (Kueue's `podset.Merge`).
    pub(super) fn pod_needs(&self, w: WorkloadId) -> Vec<PodNeeds> {
        let world = self.world;
        let wl = self.spec(w);
        let rt = &self.runtimes[w.index()];
        wl.pod_sets
            .iter()
            .enumerate()
            .map(|(i, ps)| {
                let mut tolerations = ps.tolerations.clone();
                // The admitted flavors, each once in id order (as a sorted, deduplicated
                // list gives them), found by repeated minimum: a pod set names a flavor per
                // resource, a handful, so this allocates nothing per release.
                let flavors = rt
                    .record
                    .admission
                    .as_ref()
                    .and_then(|adm| adm.pod_sets.get(i))
                    .map_or(&[][..], |p| p.flavors.as_slice());
                let next_flavor = |after: Option<kueuesim_model::FlavorId>| {
                    flavors
                        .iter()
                        .map(|&(_, f)| f)
                        .filter(|&f| after.is_none_or(|a| f > a))
                        .min()
                };
                // The template's nodeSelector is a `Labels` already (sorted, one value a
                // key): with no flavor node labels to add, `Labels::new` would give it back
                // unchanged.
                let mut selector: Option<Vec<(String, String)>> = None;
                let mut at = next_flavor(None);
                while let Some(f) = at {
                    let flavor = world.flavor(f);
                    if !flavor.node_labels.is_empty() {
                        selector
                            .get_or_insert_with(|| {
                                ps.node_selector
                                    .iter()
                                    .map(|(k, v)| (k.to_string(), v.to_string()))
                                    .collect()
                            })
                            .extend(
                                flavor
                                    .node_labels
                                    .iter()
                                    .map(|(k, v)| (k.to_string(), v.to_string())),
                            );
                    }
                    tolerations.extend(flavor.tolerations.iter().cloned());
                    at = next_flavor(Some(f));
                }
                // A KAI share's `kueuesim.io/gpu-milli` is Kueue's charge only: the node sees
                // the pod without it (its device is held by KAI's reservation pod).
                let milli = ps
                    .gpu_share
                    .as_ref()
                    .and_then(|_| world.resources.lookup(kueuesim_model::gpu::GPU_MILLI));
                let requests = match milli {
                    Some(m) => kueuesim_model::ResourceList::from_pairs(
                        ps.requests.iter().filter(|&(r, _)| r != m).collect(),
                    ),
                    None => ps.requests.clone(),
                };
                PodNeeds {
                    requests,
                    node_selector: selector.map_or_else(|| ps.node_selector.clone(), Labels::new),
                    tolerations,
                }
            })
            .collect()
    }

    pub(super) fn scheduler_of(&self, w: WorkloadId) -> SchedulerKind {
        let kind = self.runtimes[w.index()].scheduler;
        debug_assert_eq!(
            kind,
            self.world
                .config
                .scheduler(&self.spec(w).scheduler_name)
                .unwrap_or(SchedulerKind::Kube),
            "the scheduler kept on arrival is the config's"
        );
        kind
    }

    /// One placement attempt; returns whether the workload is now fully placed, or (KAI's
    /// session, `Passes::One`) whether its pass succeeded.
    pub(super) fn try_place(&mut self, w: WorkloadId) -> bool {
        let world = self.world;
        let kind = self.scheduler_of(w);
        // Volcano's queues (enqueue, and allocate's queue checks) come before its placement;
        // the pods its queue refused stay out of this attempt.
        let refused = if kind == SchedulerKind::Volcano {
            match self.volcano_queue_gate(w) {
                Some(refused) => refused,
                None => {
                    // Allocate left the job short: the conf's preempt and reclaim.
                    self.volcano_evict_for(w);
                    return false;
                }
            }
        } else {
            Vec::new()
        };
        let wl = self.spec(w);
        // The pods as the scheduler sees them, written into the buffer the last attempt
        // gave back (an attempt nested in this one finds it taken and makes its own).
        let mut all = std::mem::take(&mut self.sched.pods_scratch);
        self.runtimes[w.index()].pods_into(&mut all);
        let total: usize = all.iter().map(|(_, s)| s.len()).sum();
        // Only when Volcano's queue refused pods (rare; none on every other path):
        // `kept[ps][i]`, the index in its pod set of the i-th pod the placer sees.
        let kept: Option<Vec<Vec<usize>>> = (!refused.is_empty()).then(|| {
            all.iter()
                .enumerate()
                .map(|(ps, (_, slots))| {
                    (0..slots.len())
                        .filter(|&i| !refused.contains(&(ps, i)))
                        .collect()
                })
                .collect()
        });
        let pods: Vec<_> = match &kept {
            None => all,
            Some(kept) => all
                .into_iter()
                .zip(kept)
                .map(|((needs, slots), keep)| (needs, keep.iter().map(|&i| slots[i]).collect()))
                .collect(),
        };
        // The pod-set index of the i-th pod the placer sees.
        let original = |ps: usize, i: usize| kept.as_ref().map_or(i, |k| k[ps][i]);
        // Ties are broken by a stream seeded per (seed, workload, attempt); a KAI job's later
        // pass in its session is part of the same attempt.
        if !self.sched.kai_pushed_back {
            self.sched.placement_attempts += 1;
        }
        let seed = world.config.seed
            ^ (u64::from(w.0) << 32)
            ^ self
                .sched
                .placement_attempts
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // Kueue TAS: pods go to their assigned domains (the ungater's nodeSelectors).
        let (pods, tas_index) = match self.tas_groups(w, &pods) {
            Some((groups, index)) => (groups, Some(index)),
            None => (pods, None),
        };
        let pod_name = |ps: usize, idx: usize| match &tas_index {
            Some(ix) => {
                let (p, i) = ix[ps][idx];
                wl.pod_name(p, original(p, i))
            }
            None => wl.pod_name(ps, original(ps, idx)),
        };
        let mut result = match kind {
            SchedulerKind::Kube => {
                // The caller's score plugin, if any; it falls back to the built-in scores
                // (on unchanged capacity) when it fails.
                let hooked = self
                    .hooks
                    .clone()
                    .filter(|h| h.borrow().scores())
                    .and_then(|h| {
                        let w = placement::hooked::Pods {
                            id: w,
                            workload: &wl,
                            pods: &pods,
                            now: self.now,
                        };
                        placement::hooked::place(
                            world,
                            &mut self.sched.cluster,
                            &w,
                            &mut *h.borrow_mut(),
                        )
                    });
                hooked.unwrap_or_else(|| {
                    placement::kube::place(world, &mut self.sched.cluster, &pods, seed)
                })
            }
            SchedulerKind::Volcano => {
                let min_member = wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total));
                let highest_tier = wl.gang.network_topology.as_ref().and_then(|nt| {
                    if !nt.hard {
                        // Session open turns soft into hard at the virtual-root tier.
                        return Some(world.hypernodes.root_tier());
                    }
                    match nt.highest_tier.as_ref()? {
                        TierRef::Number(t) => Some(*t),
                        TierRef::Name(n) => world.hypernodes.tier_of_name(n),
                    }
                });
                // Subgroups: a hard tier of their own, else the job's (a soft subgroup under
                // a hard job is bounded by the job's tier).
                let subgroups: Vec<placement::volcano::SubJob> = match highest_tier {
                    None => Vec::new(),
                    Some(job_limit) => {
                        wl.gang
                            .volcano_subgroups
                            .iter()
                            .map(|g| {
                                let own =
                                    g.network_topology.as_ref().filter(|nt| nt.hard).and_then(
                                        |nt| match nt.highest_tier.as_ref()? {
                                            TierRef::Number(t) => Some(*t),
                                            TierRef::Name(n) => world.hypernodes.tier_of_name(n),
                                        },
                                    );
                                placement::volcano::SubJob {
                                    pod_sets: g.pod_sets.clone(),
                                    tier: own.map_or(job_limit, |t| t.min(job_limit)),
                                    policy: g.policy,
                                    min_available: g.min_available,
                                }
                            })
                            .collect()
                    }
                };
                let job = placement::volcano::VolcanoJob {
                    pods: &pods,
                    min_member,
                    highest_tier,
                    pod_name: &pod_name,
                    seed,
                    subgroups: &subgroups,
                    min_sub_groups: &wl.gang.volcano_min_sub_groups,
                    min_task_member: &wl.gang.min_task_member,
                };
                // Volcano vGPU: with the deviceshare plugin's vGPU on, a job with vGPU pods
                // goes through its device filter and score (flat node search).
                let vgpu: Vec<_> = (0..pods.len())
                    .filter(|_| self.sched.cluster.vgpu.is_some())
                    .map(|g| {
                        let ps = tas_index
                            .as_ref()
                            .map_or(Some(g), |ix| ix[g].first().map(|p| p.0));
                        ps.and_then(|ps| wl.pod_sets.get(ps)).and_then(|p| p.vgpu)
                    })
                    .collect();
                if vgpu.iter().any(Option::is_some) {
                    placement::volcano_vgpu::place(world, &mut self.sched.cluster, &job, &vgpu)
                } else {
                    placement::volcano::place(world, &mut self.sched.cluster, &job)
                }
            }
            SchedulerKind::Kai => self.place_kai(w, &pods, total),
        };
        // Read no more: its vectors serve the next attempt.
        self.sched.pods_scratch = pods;
        if let Some(ix) = &tas_index {
            for b in &mut result.bound {
                let (p, i) = ix[b.0][b.1];
                (b.0, b.1) = (p, i);
            }
            if let Some(u) = &mut result.unplaced {
                let (p, i) = ix[u.0][u.1];
                (u.0, u.1) = (p, i);
            }
            for c in &mut result.claims {
                let (p, i) = ix[c.0][c.1];
                (c.0, c.1) = (p, i);
            }
            for c in &mut result.vgpu {
                let (p, i) = ix[c.0][c.1];
                (c.0, c.1) = (p, i);
            }
        }
        if kept.is_some() {
            for b in &mut result.bound {
                b.1 = original(b.0, b.1);
            }
            if let Some(u) = &mut result.unplaced {
                u.1 = original(u.0, u.1);
            }
            for c in &mut result.claims {
                c.1 = original(c.0, c.1);
            }
            for c in &mut result.vgpu {
                c.1 = original(c.0, c.1);
            }
        }
        let gpu = self.gpu;
        // KAI's allocate sets `LastStartTimestamp` when it allocates a job that had no pod
        // allocated (`setLastStartTimestamp`).
        let rt = &mut self.runtimes[w.index()];
        if !result.bound.is_empty() && rt.record.placement.iter().flatten().all(Option::is_none) {
            rt.kai_last_start = Some(self.now);
        }
        // The GPUs the bound pods take: one `gpu_change` for them all, which is what one per
        // pod adds up to at one instant.
        let mut gpus_taken = 0;
        for &(ps, idx, node) in &result.bound {
            rt.record.placement[ps][idx] = Some(node);
            if let Some(at) = rt.record.bound_at.get_mut(ps) {
                at[idx] = Some(self.now);
            }
            if let Some(g) = gpu {
                gpus_taken += rt.needs[ps].requests.get(g);
            }
        }
        if gpu.is_some() && !result.bound.is_empty() {
            self.rec.gpu_change(rt, gpus_taken, self.now);
        }
        for &(ps, idx, claim) in &result.claims {
            let rt = &mut self.runtimes[w.index()];
            let node = rt.record.placement[ps][idx].expect("a claim of a bound pod");
            rt.claims.push((node, claim));
        }
        for &(ps, idx, claim) in &result.vgpu {
            let rt = &mut self.runtimes[w.index()];
            let node = rt.record.placement[ps][idx].expect("a vGPU claim of a bound pod");
            rt.vgpu.push((node, claim));
        }
        // With GPU devices, Volcano's and KAI's whole-GPU pods (placed on node-level counts)
        // take the lowest-indexed free devices, as the device plugin allocates them, so the
        // devices show what the node's count says is used.
        if kind != SchedulerKind::Kube
            && let Some(dev) = self.sched.cluster.devices.as_mut()
        {
            let rt = &mut self.runtimes[w.index()];
            for &(ps, idx, node) in &result.bound {
                if result.claims.iter().any(|c| (c.0, c.1) == (ps, idx)) {
                    continue;
                }
                if let Some(d @ kueuesim_model::gpu::GpuDemand::Whole(_)) =
                    dev.book.demand(&rt.needs[ps].requests)
                    && let Some(c) =
                        dev.book
                            .claim(node, d, placement::devices::DeviceChoice::BestFit)
                {
                    dev.book.apply(node, c, 1);
                    rt.claims.push((node, c));
                }
            }
        }
        if result.domain.is_some() {
            self.runtimes[w.index()].record.topology_domain = result.domain.clone();
        }
        if !result.bound.is_empty() {
            self.runtimes[w.index()].kai_pipelined = 0;
            self.runtimes[w.index()].kai_pipelined_cpu_memory = [0, 0];
            self.runtimes[w.index()].volcano_pipelined = None;
        }
        // Pods the Volcano queue refused stay pending: the gang is bound as far as its queue
        // lets it (JobReady held), and is tried again in later sessions.
        if result.unplaced.is_none() && !refused.is_empty() {
            self.bound_unplaced(w, kind);
            return false;
        }
        // KAI's session: a pass succeeded with tasks left to allocate; the session pushes the
        // job back into its order for the next pass (`PushJob`), the job still waiting.
        if result.unplaced.is_none()
            && self.sched.kai_passes == placement::kai::Passes::One
            && kind == SchedulerKind::Kai
            && self.runtimes[w.index()]
                .record
                .placement
                .iter()
                .flatten()
                .any(Option::is_none)
        {
            return true;
        }
        match result.unplaced {
            None => {
                self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
                self.bound_off(w);
                self.schedule_running(w);
                true
            }
            Some((_, _, message)) => {
                let reason = match kind {
                    SchedulerKind::Kube => "FailedScheduling",
                    SchedulerKind::Volcano | SchedulerKind::Kai => "Unschedulable",
                };
                self.record_event(
                    w,
                    EventType::Warning,
                    kind.event_source(),
                    reason,
                    message,
                    None,
                );
                // KAI's consolidation, reclaim and preempt run in its session, over every job
                // allocate left pending (`kai_session`).
                self.bound_unplaced(w, kind);
                if kind == SchedulerKind::Volcano {
                    self.volcano_evict_for(w);
                }
                false
            }
        }
    }

    /// What Kueue's TAS cache sees: the nodes' free capacity minus the pods of admitted TAS
    /// workloads assigned to them but not bound yet. Empty when no flavor is a TAS flavor.
    pub(super) fn tas_capacity(&self) -> crate::tas::TasCapacity {
        let world = self.world;
        let Some(base) = &self.sched.tas_base else {
            return self.sched.tas_none.clone();
        };
        let mut tas = crate::tas::TasCapacity {
            nodes: self.sched.cluster.nodes.clone(),
            in_flavor: base.in_flavor.clone(),
            leaves: base.leaves.clone(),
            empty: base.empty.clone(),
            exclusions: base.exclusions.clone(),
            orders: base.orders.clone(),
        };
        // The workloads holding quota, in id order (the assumed usage is spread over a
        // domain's nodes greedily, so the order matters).
        for w in self.kueue.admitted.ids_sorted() {
            let rt = &self.runtimes[w.index()];
            let Some(adm) = &rt.record.admission else {
                continue;
            };
            for (ps, psa) in adm.pod_sets.iter().enumerate() {
                let Some(topo) = &psa.topology else { continue };
                let t = &world.topologies[topo.topology];
                let placed = rt.record.placement.get(ps).map_or(&[][..], Vec::as_slice);
                let domains: Vec<(kueuesim_model::DomainId, u32)> = topo
                    .domains
                    .iter()
                    .map(|&(d, k)| {
                        let bound = placed
                            .iter()
                            .flatten()
                            .filter(|&&n| {
                                t.domain_of(n)
                                    .is_some_and(|x| t.ancestors(x).any(|a| a == d))
                            })
                            .count() as u32;
                        (d, k.saturating_sub(bound))
                    })
                    .collect();
                let requests = &self.spec(w).pod_sets[ps].requests;
                tas.apply(
                    world,
                    &crate::tas::TopologyAssignment {
                        topology: topo.topology,
                        domains,
                    },
                    requests,
                    1,
                );
            }
        }
        tas
    }

    /// A TAS workload's pods as Kueue's TopologyUngater releases them: per assigned domain, a
    /// group of pods whose nodeSelector pins the domain's level values. Returns the groups and,
    /// per group, the (pod set, pod index) of each of its pods.
    #[allow(clippy::type_complexity)]
    fn tas_groups(
        &self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    ) -> Option<(
        Vec<(PodNeeds, Vec<Option<NodeId>>)>,
        Vec<Vec<(usize, usize)>>,
    )> {
        let world = self.world;
        let adm = self.runtimes[w.index()].record.admission.as_ref()?;
        if adm.pod_sets.iter().all(|p| p.topology.is_none()) {
            return None;
        }
        let mut groups = Vec::new();
        let mut index = Vec::new();
        for (ps, (needs, slots)) in pods.iter().enumerate() {
            match adm.pod_sets.get(ps).and_then(|p| p.topology.as_ref()) {
                None => {
                    groups.push((needs.clone(), slots.clone()));
                    index.push((0..slots.len()).map(|i| (ps, i)).collect());
                }
                Some(topo) => {
                    let t = &world.topologies[topo.topology];
                    let kueuesim_model::topology::TopologySource::Levels { labels } = &t.source
                    else {
                        return None;
                    };
                    let mut next = 0;
                    for &(d, k) in &topo.domains {
                        let mut needs = needs.clone();
                        let mut sel: Vec<(String, String)> = needs
                            .node_selector
                            .iter()
                            .map(|(a, b)| (a.to_string(), b.to_string()))
                            .collect();
                        for a in t
                            .ancestors(d)
                            .filter(|&a| a != kueuesim_model::DomainId::ROOT)
                        {
                            let dom = t.domain(a);
                            sel.push((labels[dom.depth as usize - 1].clone(), dom.value.clone()));
                        }
                        needs.node_selector = Labels::new(sel);
                        let take = (k as usize).min(slots.len().saturating_sub(next));
                        groups.push((needs, slots[next..next + take].to_vec()));
                        index.push((next..next + take).map(|i| (ps, i)).collect());
                        next += take;
                    }
                }
            }
        }
        Some((groups, index))
    }
}

/// Makes pod set `i` of `sets` (one past its end at most) `n` empty slots, in the vector
/// already there if any.
fn empty_slots<T: Clone>(sets: &mut Vec<Vec<Option<T>>>, i: usize, n: usize) {
    match sets.get_mut(i) {
        Some(slots) => {
            slots.clear();
            slots.resize(n, None);
        }
        None => sets.push(vec![None; n]),
    }
}
