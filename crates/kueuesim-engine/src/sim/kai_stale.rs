//! KAI's stale gang eviction (`staleGangEviction`): a gang left below its minMember by pods
//! it lost is checked once, the grace period later, and its remaining pods evicted.

use kueuesim_model::{NodeId, SchedulerKind, SimDuration, WorkloadId};

use crate::outcome::{EventType, WorkloadState};

use super::kai::gang_groups;
use super::{Ev, Simulation};

/// KAI's `staleGangEviction` grace period: the scheduler's `--default-staleness-grace-period`
/// (SchedulingShard / config `globalDefaultStalenessGracePeriod`), whose default is
/// `defaultStalenessGracePeriod`, 60 s.
const STALENESS_GRACE_PERIOD: SimDuration = SimDuration::from_millis(60_000);

impl Simulation<'_> {
    /// KAI: whether `w`'s gang is stale now (`gang_stale`); false for a job of another
    /// scheduler, or one that is not holding pods for a run (finished, evicted).
    pub(super) fn kai_gang_stale(&self, w: WorkloadId) -> bool {
        let rt = &self.runtimes[w.index()];
        !matches!(
            rt.record.state,
            WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
        ) && self.scheduler_of(w) == SchedulerKind::Kai
            && gang_stale(&self.spec(w), &rt.record.placement)
    }

    /// After `w` lost pods: a KAI gang that has just become stale starts its stale clock
    /// (`StalenessInfo.TimeStamp`) and `staleGangEviction` looks at it again once the grace
    /// period has passed; one that was stale already keeps its clock.
    pub(super) fn kai_watch_stale(&mut self, w: WorkloadId, was_stale: bool) {
        if !self.kai_gang_stale(w) {
            return;
        }
        let now = self.now;
        let rt = &mut self.runtimes[w.index()];
        if was_stale && rt.kai_stale_since.is_some() {
            return;
        }
        rt.kai_stale_since = Some(now);
        rt.kai_stale_epoch += 1;
        let epoch = rt.kai_stale_epoch;
        self.events
            .push(now + STALENESS_GRACE_PERIOD, Ev::KaiStaleGang(w, epoch));
    }

    /// KAI's `staleGangEviction` action, the grace period after `w`'s gang became stale
    /// (stale period `epoch`): still stale, every bound pod is evicted (`Evict` events with
    /// `GetGangEvictionMessage`, then the PodGroup's `StaleJob` event) and the job's
    /// controller reacts as to any pods it lost; no longer stale, the clock stops
    /// (`handleNonStaleJob`). Whether it evicted.
    pub(super) fn kai_stale_gang_due(&mut self, w: WorkloadId, epoch: u32) -> bool {
        let Some(rt) = self.runtimes.get(w.index()) else {
            return false;
        };
        if rt.kai_stale_epoch != epoch || rt.kai_stale_since.is_none() {
            return false;
        }
        let stale = self.kai_gang_stale(w);
        self.runtimes[w.index()].kai_stale_since = None;
        if !stale {
            return false;
        }
        let spec = self.spec(w);
        let placement = &self.runtimes[w.index()].record.placement;
        let pods: Vec<(usize, usize)> = self.runtimes[w.index()].record.placed_pods().collect();
        // `recordStaleJobEvent`: the active pods and minMember summed over the subgroups,
        // then each unsatisfied named subgroup.
        let groups = gang_groups(&spec, placement);
        let mut stale_message = format!(
            "Job is stale. {} pods are active, minMember is {}",
            groups.iter().map(|g| g.0).sum::<usize>(),
            groups.iter().map(|g| g.1).sum::<usize>()
        );
        let mut evict_messages = Vec::with_capacity(pods.len());
        for &(ps, i) in &pods {
            let pod = format!("{}/{}", spec.namespace, spec.pod_name(ps, i));
            // `GetGangEvictionMessage`: the pod's subgroup's minimum, or the PodGroup's.
            let sub = spec.gang.pod_set_subgroup.get(ps).copied().flatten();
            evict_messages.push(match sub {
                Some(sg) if !spec.gang.kai_subgroups.is_empty() => {
                    let sg = &spec.gang.kai_subgroups[sg];
                    format!(
                        "Workload doesn't meet the minimum required number of pods ({}) in sub-group {}, evicting remaining pod: {pod}",
                        sg.min_member, sg.name
                    )
                }
                _ => format!(
                    "Workload doesn't meet the minimum required number of pods ({}), evicting remaining pod: {pod}",
                    groups.iter().map(|g| g.1).sum::<usize>()
                ),
            });
        }
        if !spec.gang.kai_subgroups.is_empty() {
            let mut per_group = vec![0usize; spec.gang.kai_subgroups.len()];
            for (ps, sub) in spec.gang.pod_set_subgroup.iter().enumerate() {
                if let Some(sg) = *sub {
                    per_group[sg] += placement.get(ps).map_or(0, |s| s.iter().flatten().count());
                }
            }
            for (sg, group) in spec.gang.kai_subgroups.iter().enumerate() {
                if group.min_member > 0 && (per_group[sg] as u64) < u64::from(group.min_member) {
                    stale_message.push_str(&format!(
                        ", subGroup {} minMember is {} and {} pods are active",
                        group.name, group.min_member, per_group[sg]
                    ));
                }
            }
        }
        for message in evict_messages {
            self.record_event(
                w,
                EventType::Normal,
                SchedulerKind::Kai.event_source(),
                "Evict",
                message,
                None,
            );
        }
        self.record_event(
            w,
            EventType::Normal,
            SchedulerKind::Kai.event_source(),
            "StaleJob",
            stale_message,
            None,
        );
        // The pods are deleted (`defaultEvictor.Evict`); their nodes are free for the jobs
        // waiting, the gang's own new pods among them (its replacements wait as it did).
        self.lose_pods(w, &pods, super::pod_loss::Loss::StaleGang, None);
        self.retry_placements();
        true
    }
}

/// `PodGroupInfo.IsStale`: some pods of the gang are bound, but a subgroup (without
/// subgroups, the PodGroup) has fewer bound than its minMember. A batch Job's PodGroup per
/// pod (minMember 1) is never stale: a pod it loses leaves its group empty.
fn gang_stale(wl: &kueuesim_model::Workload, placement: &[Vec<Option<NodeId>>]) -> bool {
    if wl.gang.pod_group_per_pod {
        return false;
    }
    let bound: usize = placement.iter().map(|s| s.iter().flatten().count()).sum();
    bound > 0 && gang_groups(wl, placement).iter().any(|&(b, min)| b < min)
}
