//! The input's running pods on their nodes: a snapshot's state booked before anything is
//! scheduled (node capacity, whole GPUs, KAI GPU shares, Volcano vGPU devices).

use kueuesim_model::{NodeId, SchedulerKind, WorkloadId};

use crate::placement::devices::{Claim, DeviceChoice};

use super::Simulation;

impl Simulation<'_> {
    /// Binds the pods the input says already run (`GangSpec::bound_nodes`: a bare Pod's
    /// `spec.nodeName`, `kueuesim.io/bound-nodes`) on their nodes, with what they hold there.
    pub(super) fn book_bound_pods(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.spec(w);
        let volcano = self.scheduler_of(w) == SchedulerKind::Volcano;
        // KAI's `LastStartTimestamp` of a job running at the start: its PodGroup's
        // annotation, else none (upstream's minruntime plugin does not protect it).
        self.runtimes[w.index()].kai_last_start = wl.gang.bound_started;
        for (ps, nodes) in wl.gang.bound_nodes.iter().enumerate() {
            let pods = self.runtimes[w.index()]
                .record
                .placement
                .get(ps)
                .map_or(0, Vec::len);
            for (idx, &node) in nodes.iter().enumerate().take(pods) {
                self.runtimes[w.index()].record.placement[ps][idx] = Some(node);
                if let Some(at) = self.runtimes[w.index()].record.bound_at.get_mut(ps) {
                    at[idx] = Some(self.now);
                }
                let req = self.runtimes[w.index()].needs[ps].requests.clone();
                self.sched.cluster.apply(world, node, &req, 1);
                if let Some(share) = wl.pod_sets[ps].gpu_share {
                    // A KAI share holds its part of one device, which KAI's reservation pod
                    // holds for every share on it (`addSharedGPUTaskResources`).
                    let group = wl
                        .gang
                        .bound_gpu_groups
                        .get(ps)
                        .and_then(|g| g.get(idx))
                        .and_then(Option::as_deref);
                    if let Some(claim) = self.running_share(node, share, group) {
                        self.sched.cluster.apply_claim(world, node, claim, 1);
                        self.runtimes[w.index()].claims.push((node, claim));
                    }
                } else if let Some(dev) = self.sched.cluster.devices.as_mut()
                    && let Some(d) = dev.book.demand(&req)
                    && let Some(c) = dev.book.claim(node, d, DeviceChoice::BestFit)
                {
                    // With GPU devices, a running pod of the input holds the best-fitting
                    // devices (none if its node's devices cannot hold it: the input
                    // overcommits the node, which node-level accounting allows too).
                    dev.book.apply(node, c, 1);
                    self.runtimes[w.index()].claims.push((node, c));
                }
                // With Volcano vGPU, a running vGPU pod of the input holds the devices the
                // plugin's device order gives it (none if they cannot hold it).
                if let (Some(book), Some(req), true) = (
                    self.sched.cluster.vgpu.as_mut(),
                    wl.pod_sets[ps].vgpu,
                    volcano,
                ) && let Ok((c, _)) = book.fit(node, req)
                    && c.mask != 0
                {
                    book.apply(node, c, 1);
                    self.runtimes[w.index()].vgpu.push((node, c));
                }
                if let Some(g) = self.gpu {
                    self.rec
                        .gpu_change(&mut self.runtimes[w.index()], req.get(g), self.now);
                }
            }
        }
    }

    /// The device a running KAI share of the input holds on `node`: the device of its GPU
    /// group (the pod's `runai-gpu-group` label: shares of one group are on one device) if
    /// another share of the group is booked there already, else, for a group not met yet, the
    /// first idle device, and without a group the device gpupack would give it (the fullest
    /// shared device it fits on, else the first idle one). None when
    /// no device can hold it (the input overcommits the node) or GPUs are not devices.
    fn running_share(
        &mut self,
        node: NodeId,
        share: kueuesim_model::gpu::GpuShare,
        group: Option<&str>,
    ) -> Option<Claim> {
        let book = &self.sched.cluster.devices.as_ref()?.book;
        let milli = book.share_milli(node, share)?;
        let free = book.free(node);
        let known = group.and_then(|g| {
            self.sched
                .start_gpu_groups
                .iter()
                .find(|(n, name, _)| *n == node && name == g)
                .map(|&(_, _, d)| d)
        });
        let shared = || {
            free.iter()
                .enumerate()
                .filter(|&(i, &f)| book.is_shared(node, i) && f >= milli)
                .min_by_key(|&(i, &f)| (f, i))
                .map(|(i, _)| i)
        };
        let idle = || {
            free.iter()
                .enumerate()
                .position(|(i, &f)| f == 1000 && !book.is_shared(node, i))
        };
        let device = match (known, group) {
            (Some(d), _) => (free[d] >= milli).then_some(d)?,
            // A group not met yet is a device of its own.
            (None, Some(_)) => idle().or_else(shared)?,
            (None, None) => shared().or_else(idle)?,
        };
        if known.is_none()
            && let Some(g) = group
        {
            self.sched
                .start_gpu_groups
                .push((node, g.to_string(), device));
        }
        Some(Claim {
            mask: 1 << device,
            milli,
            reserve: true,
        })
    }
}
