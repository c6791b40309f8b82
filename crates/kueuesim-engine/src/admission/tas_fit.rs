//! Kueue TAS in the preemption search: the topology half of `workloadFits`
//! (`pkg/scheduler/preemption/preemption.go`), which places the preemptor's pod sets with
//! topology requests (`FindTopologyAssignmentsForWorkload`) on the cycle's TAS snapshot with
//! the candidates removed so far taken out, so that victims are chosen until the placement
//! fits, not only the quota.

use kueuesim_model::{
    ClusterQueueId, FlavorId, PodSet, TopologyRequest, Workload, WorkloadId, World,
};

use crate::outcome::PodSetAssignment;
use crate::preemption::TopologyFit;
use crate::tas::TasCapacity;

use super::flavors::topology_assignment;
use super::pod_set_fit::tas_request;
use super::{Assignment, Specs};

/// One pod set's TAS request (`TASPodSetRequests`).
#[derive(Debug)]
struct Request<'a> {
    flavor: FlavorId,
    pod_set: &'a PodSet,
    count: u32,
    request: TopologyRequest,
}

/// The preemptor's TAS requests (`WorkloadsTopologyRequests`) and the snapshot they are
/// placed on; candidates' TAS usage is read from their admissions through `specs`.
pub(super) struct PreemptorTopology<'a, S: Specs + ?Sized> {
    world: &'a World,
    /// The cycle's TAS snapshot at nomination.
    base: &'a TasCapacity,
    specs: &'a S,
    requests: Vec<Request<'a>>,
}

impl<S: Specs + ?Sized> std::fmt::Debug for PreemptorTopology<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreemptorTopology")
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

/// The TAS flavor among a pod set assignment's flavors (`onlyTASFlavor`).
pub(crate) fn tas_flavor_of(world: &World, psa: &PodSetAssignment) -> Option<FlavorId> {
    psa.flavors
        .iter()
        .map(|&(_, f)| f)
        .find(|&f| world.flavor(f).topology_name.is_some())
}

impl<'a, S: Specs + ?Sized> PreemptorTopology<'a, S> {
    /// The TAS requests of assignment `a` of workload `wl` in `cq`: every pod set with a
    /// topology request (explicit or implied) on a TAS flavor, at its assigned count; a pod set
    /// of count 0 is skipped, as upstream does. None when there is none (the search is then
    /// quota only, as without TAS).
    pub(super) fn new(
        world: &'a World,
        base: &'a TasCapacity,
        specs: &'a S,
        cq: ClusterQueueId,
        wl: &'a Workload,
        a: &Assignment,
    ) -> Option<Self> {
        let requests: Vec<Request<'a>> = wl
            .pod_sets
            .iter()
            .zip(&a.pod_sets)
            .filter(|(_, psa)| psa.count > 0)
            .filter_map(|(ps, psa)| {
                Some(Request {
                    request: tas_request(world, cq, ps)?,
                    flavor: tas_flavor_of(world, psa)?,
                    pod_set: ps,
                    count: psa.count,
                })
            })
            .collect();
        (!requests.is_empty()).then_some(PreemptorTopology {
            world,
            base,
            specs,
            requests,
        })
    }
}

impl<S: Specs + ?Sized> TopologyFit for PreemptorTopology<'_, S> {
    fn fits(&self, removed: &[WorkloadId]) -> bool {
        let world = self.world;
        let mut tas = self.base.clone();
        for &w in removed {
            // A candidate without a topology assignment holds no TAS usage: its pods are
            // not taken out of the snapshot (upstream counts them as non-TAS pods).
            let Some(assignments) = self.specs.admission(w) else {
                continue;
            };
            let spec = self.specs.spec(w);
            for (ps, psa) in spec.pod_sets.iter().zip(assignments) {
                if let (Some(topo), Some(f)) = (&psa.topology, tas_flavor_of(world, psa)) {
                    tas.give_back(world, f, topo, &ps.requests);
                }
            }
        }
        // The pod sets in order, each on what the ones before it left (the assumed usage of
        // `FindTopologyAssignmentsForWorkload`).
        for r in &self.requests {
            match topology_assignment(world, &tas, r.flavor, r.pod_set, r.count, &r.request) {
                Ok(a) => tas.apply(world, &a, &r.pod_set.requests, 1),
                Err(_) => return false,
            }
        }
        true
    }
}
