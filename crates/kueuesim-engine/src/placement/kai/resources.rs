//! The proportion plugin's per-resource view of KAI's queues: fair shares divided per
//! resource (`resource_division`, run for CPU, memory and GPUs alike), and the checks that
//! read all three (`reclaimable.CanReclaimResources`, the `MaintainFairShareStrategy` and
//! `GuaranteeDeservedQuotaStrategy` of `reclaimable/strategies`, the saturation test of
//! `reclaimingQueuesRemainWithinBoundaries`, and the capacity policy's quota check).
//!
//! Resources are indexed GPU, CPU, memory (an [`Amounts`]); GPUs count in milli-GPUs, CPU
//! in millicores, memory in bytes.

use kueuesim_model::{KaiQueue, KaiQueueResource};

use super::reclaim::QueueState;

/// GPU, CPU and memory amounts, in this order (`rs.ResourceQuantities`).
pub type Amounts = [i64; 3];
/// CPU and memory amounts (an [`Amounts`] without its GPUs).
pub type CpuMemory = [i64; 2];

/// Fair shares of one resource per queue (`resource_division.SetResourcesShare` for one
/// resource): each queue first gets its deserved quota (up to what it requests and its
/// limit; an unlimited quota deserves the whole pool), then what is left goes out by
/// over-quota weight, highest queue priority first, floored to whole `unit`s (a queue whose
/// request the slice covers gets its request, a fraction of a unit included); the units lost
/// to the flooring go one at a time to the largest unmet fractions; a parent's share is split
/// among its children the same way. `quotas[q]`: the queue's quota of the resource;
/// `requests[q]`: the resource allocated plus pending in the queue's own jobs.
pub fn divide(
    queues: &[KaiQueue],
    quotas: &[KaiQueueResource],
    total: i64,
    requests: &[i64],
    unit: i64,
) -> Vec<i64> {
    let mut share = vec![0i64; queues.len()];
    let sub = subtree(queues, requests);
    let top: Vec<usize> = (0..queues.len())
        .filter(|&q| queues[q].parent.is_none())
        .collect();
    divide_among(queues, quotas, &top, total, &sub, &mut share, unit);
    share
}

/// [`divide`] of `pool` among `members` (siblings), then of each member's share among its
/// children.
fn divide_among(
    queues: &[KaiQueue],
    quotas: &[KaiQueueResource],
    members: &[usize],
    pool: i64,
    sub: &[i64],
    share: &mut [i64],
    unit: i64,
) {
    let requestable = |q: usize| quotas[q].limit.map_or(sub[q], |l| sub[q].min(l)).max(0);
    let weight = |q: usize| quotas[q].over_quota_weight;
    let mut remaining = pool;
    for &q in members {
        let deserved = quotas[q].quota.unwrap_or(pool);
        share[q] = deserved.min(requestable(q));
        remaining -= share[q];
    }
    remaining = remaining.max(0);
    // Over quota, by priority band (highest first), by weight, in whole units.
    // Fractions lost to flooring in the last round, for the leftover units.
    let mut frac = vec![0f64; queues.len()];
    let mut bands: Vec<i32> = members.iter().map(|&q| queues[q].priority).collect();
    bands.sort_unstable_by(|a, b| b.cmp(a));
    bands.dedup();
    for band in bands {
        loop {
            let open: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&q| {
                    queues[q].priority == band && weight(q) > 0 && requestable(q) > share[q]
                })
                .collect();
            let weights: i64 = open.iter().map(|&q| weight(q)).sum();
            if open.is_empty() || remaining <= 0 || weights == 0 {
                break;
            }
            let pool_now = remaining;
            let mut gave = 0;
            // `divideUpToFairShare` runs another round only when a queue asked less than its
            // slice (`requested < fairShare`), leaving some of the pool: the units a round
            // floored away go to the largest fractions below, not to a second round by weight.
            let mut another = false;
            for &q in &open {
                // In units: exact for whole units, so whole-GPU runs divide as in GPUs.
                let slice = (pool_now as f64 / unit as f64) * weight(q) as f64 / weights as f64;
                let need = requestable(q) - share[q];
                let give = if (need as f64 / unit as f64) <= slice {
                    frac[q] = 0.0;
                    another |= (need as f64 / unit as f64) < slice;
                    need
                } else {
                    frac[q] = slice - slice.floor();
                    slice.floor() as i64 * unit
                };
                share[q] += give;
                gave += give;
            }
            remaining -= gave;
            if gave == 0 || !another {
                break;
            }
        }
    }
    // Whole units left by the flooring go one at a time to the largest unmet fractions
    // (ties: the older queue, here the input order); the last may be a fraction of a unit
    // (`divideRemainingResource`: min(1, left)).
    while remaining > 0 {
        let next = members
            .iter()
            .copied()
            .filter(|&q| requestable(q) > share[q] && frac[q] > 0.0)
            .max_by(|&a, &b| frac[a].total_cmp(&frac[b]).then(b.cmp(&a)));
        let Some(q) = next else { break };
        let give = remaining.min(unit);
        share[q] += give;
        frac[q] = 0.0;
        remaining -= give;
    }
    for &q in members {
        let children: Vec<usize> = (0..queues.len())
            .filter(|&c| queues[c].parent == Some(q))
            .collect();
        if !children.is_empty() {
            divide_among(queues, quotas, &children, share[q], sub, share, unit);
        }
    }
}

/// Each queue's figure summed over its subtree (a queue and its descendants).
pub(super) fn subtree(queues: &[KaiQueue], own: &[i64]) -> Vec<i64> {
    let mut sub = own.to_vec();
    for q in 0..queues.len() {
        let mut p = queues[q].parent;
        while let Some(x) = p {
            sub[x] += own[q];
            p = queues[x].parent;
        }
    }
    sub
}

/// One resource besides GPUs as the proportion plugin sees it, per queue.
#[derive(Clone, Debug, Default)]
pub struct ResourceShares {
    /// Each queue's quota of the resource (deserved, weight, limit).
    pub quota: Vec<KaiQueueResource>,
    /// Each queue's fair share, from [`divide`].
    pub fair: Vec<i64>,
    /// The resource allocated to each queue's own jobs.
    pub allocated: Vec<i64>,
    /// The cluster's amount of the resource (what an unlimited allocatable share counts
    /// against in the dominant share, `GetDominantResourceShare`).
    pub total: i64,
}

/// What reclaim and preempt read of CPU and memory: the queues' shares of each, and the
/// amounts of the pending job's tasks and of the running jobs' pods. The default (no
/// shares) leaves CPU and memory out of every check, as a world without KAI Queues would.
#[derive(Clone, Debug, Default)]
pub struct CpuMemoryState {
    /// CPU, then memory; empty: they take no part.
    pub shares: Vec<ResourceShares>,
    /// CPU and memory of each task the pending job allocates now, in task order.
    pub tasks: Vec<CpuMemory>,
    /// Each running job's (by its key, ascending) pods' CPU and memory, in its eviction order
    /// (`RunningJob::pods`).
    pub pods: Vec<(usize, Vec<CpuMemory>)>,
    /// CPU and memory of the non-preemptible jobs of the pending job's queue.
    pub non_preemptible: CpuMemory,
}

impl CpuMemoryState {
    /// CPU and memory of every task the pending job allocates now (what it is pipelined on
    /// once its victims are chosen).
    pub fn tasks_total(&self) -> CpuMemory {
        self.tasks_amount(self.tasks.len())
    }

    /// CPU and memory of the first `tasks` tasks of the pending job.
    pub fn tasks_amount(&self, tasks: usize) -> CpuMemory {
        self.tasks
            .iter()
            .take(tasks)
            .fold([0, 0], |a, t| [a[0] + t[0], a[1] + t[1]])
    }

    /// CPU and memory of the pods `from..upto` of running job `key` (in eviction order).
    pub(super) fn pods_amount(&self, key: usize, from: usize, upto: usize) -> CpuMemory {
        let Ok(i) = self.pods.binary_search_by_key(&key, |(k, _)| *k) else {
            return [0, 0];
        };
        let pods = &self.pods[i].1;
        pods.iter()
            .take(upto)
            .skip(from)
            .fold([0, 0], |a, p| [a[0] + p[0], a[1] + p[1]])
    }
}

/// Every resource's view of the queues: GPUs from `state`, then CPU and memory from `other`
/// when it has them. Quantities are subtree sums.
pub(super) struct Resources {
    /// Per resource taking part (GPU first): (quota, fair share, subtree allocation) per
    /// queue.
    per: Vec<(Vec<KaiQueueResource>, Vec<i64>, Vec<i64>)>,
    /// The cluster's amount of each resource taking part.
    total: Vec<i64>,
}

impl Resources {
    /// The view of `state` (GPUs) and `other` (CPU and memory).
    pub(super) fn new(state: &QueueState<'_>, other: &CpuMemoryState) -> Self {
        let gpu_quota: Vec<KaiQueueResource> = state
            .queues
            .iter()
            .map(|q| KaiQueueResource {
                quota: q.gpu_quota,
                over_quota_weight: q.gpu_over_quota_weight,
                limit: q.gpu_limit,
            })
            .collect();
        let mut per = vec![(
            gpu_quota,
            state.fair.to_vec(),
            subtree(state.queues, state.allocated),
        )];
        let mut total = vec![state.total];
        for s in &other.shares {
            per.push((
                s.quota.clone(),
                s.fair.clone(),
                subtree(state.queues, &s.allocated),
            ));
            total.push(s.total);
        }
        Self { per, total }
    }

    /// Adds `amounts` to the allocation of queue `q` and of its ancestors (a job allocated
    /// in `q`, as the proportion plugin's allocate event handler counts it up the tree).
    pub(super) fn add(&mut self, queues: &[KaiQueue], q: usize, amounts: &Amounts) {
        for (r, (_, _, allocated)) in self.per.iter_mut().enumerate() {
            let mut cur = Some(q);
            while let Some(x) = cur {
                allocated[x] += amounts[r];
                cur = queues[x].parent;
            }
        }
    }

    /// The cluster's amount of resource `r`.
    pub(super) fn total(&self, r: usize) -> i64 {
        self.total[r]
    }

    /// How many resources take part.
    pub(super) fn len(&self) -> usize {
        self.per.len()
    }

    /// Fair share of resource `r` of queue `q`.
    pub(super) fn fair(&self, r: usize, q: usize) -> i64 {
        self.per[r].1[q]
    }

    /// Resource `r` allocated in queue `q`'s subtree.
    pub(super) fn allocated(&self, r: usize, q: usize) -> i64 {
        self.per[r].2[q]
    }

    /// Deserved quota of resource `r` of queue `q`; None: unlimited.
    pub(super) fn deserved(&self, r: usize, q: usize) -> Option<i64> {
        self.per[r].0[q].quota
    }

    /// `GetAllocatableShare` of resource `r`: max(deserved, fair share), capped by the limit;
    /// an unlimited deserved quota gives the limit (None: unlimited).
    pub(super) fn allocatable(&self, r: usize, q: usize) -> Option<i64> {
        let quota = &self.per[r].0[q];
        match quota.quota {
            None => quota.limit,
            Some(d) => {
                let a = d.max(self.fair(r, q));
                Some(quota.limit.map_or(a, |l| a.min(l)))
            }
        }
    }
}

/// `CanReclaimResources`: the job's queue stays within its fair share of every resource with
/// the job's tasks (`want`).
pub(super) fn within_fair_share(res: &Resources, queue: usize, want: &Amounts) -> bool {
    (0..res.len()).all(|r| res.allocated(r, queue) + want[r] <= res.fair(r, queue))
}

/// The proportion plugin's `Reclaimable` for victims `(queue, amounts)` in order, over every
/// resource taking part: each victim's queue, taken at the level where its path and the
/// reclaimer's part (`getLeveledQueues`), must be above its allocatable share in some
/// resource before the victim goes (`MaintainFairShareStrategy`), or above its deserved quota
/// in some resource while the reclaimer's stays within its own in all of them with the job
/// (`GuaranteeDeservedQuotaStrategy`); then, at every level of the reclaimer's path, for
/// each resource the reclaimer asks or a reclaimed sibling's victims held (the involved
/// resources), the reclaimer's saturation (allocated ÷ fair share) above 1 must stay below
/// that sibling's (`reclaimingQueuesRemainWithinBoundaries`, multiplier 1).
pub(super) fn reclaimable(
    state: &QueueState<'_>,
    res: &Resources,
    reclaimer: usize,
    request: &Amounts,
    victims: &[(usize, Amounts)],
) -> bool {
    let nr = res.len();
    let queues = state.queues;
    let mut remaining: Vec<Option<Amounts>> = vec![None; queues.len()];
    // Per queue, the resources its reclaimed victims (its subtree's) held.
    let mut involved: Vec<[bool; 3]> = vec![[false; 3]; queues.len()];
    let start = |q: usize| -> Amounts {
        let mut a = [0; 3];
        for (r, x) in a.iter_mut().enumerate().take(nr) {
            *x = res.allocated(r, q);
        }
        a
    };
    let reclaimer_path = state.path(reclaimer);
    for &(vq, amounts) in victims {
        let victim_path = state.path(vq);
        let level = reclaimer_path
            .iter()
            .zip(&victim_path)
            .position(|(a, b)| a != b)
            .unwrap_or(reclaimer_path.len().min(victim_path.len()) - 1);
        let (rq, eq) = (reclaimer_path[level], victim_path[level]);
        let left = *remaining[eq].get_or_insert_with(|| start(eq));
        let over_allocatable = (0..nr).any(|r| res.allocatable(r, eq).is_some_and(|a| left[r] > a));
        let reclaimer_within = (0..nr).all(|r| {
            res.deserved(r, rq)
                .is_none_or(|d| res.allocated(r, rq) + request[r] <= d)
        });
        let victim_over = (0..nr).any(|r| res.deserved(r, eq).is_some_and(|d| left[r] > d));
        // `MaintainFairShareStrategy` or `GuaranteeDeservedQuotaStrategy`.
        let guarantee = reclaimer_within && victim_over;
        if !(over_allocatable || guarantee) {
            return false;
        }
        for &q in victim_path.iter().rev() {
            let left = remaining[q].get_or_insert_with(|| start(q));
            for r in 0..nr {
                left[r] -= amounts[r];
                involved[q][r] |= amounts[r] > 0;
            }
        }
    }
    let ratio = |alloc: i64, fair: i64| -> f64 {
        if fair == 0 {
            if alloc > 0 { f64::INFINITY } else { 0.0 }
        } else {
            alloc as f64 / fair as f64
        }
    };
    for &rq in reclaimer_path.iter().rev() {
        let mine = remaining[rq].unwrap_or_else(|| start(rq));
        for (s, left) in remaining.iter().enumerate() {
            let Some(left) = *left else { continue };
            if s == rq || queues[s].parent != queues[rq].parent {
                continue;
            }
            for r in 0..nr {
                if !(involved[s][r] || request[r] > 0) {
                    continue;
                }
                let (fair_r, fair_s) = (res.fair(r, rq), res.fair(r, s));
                let ratio_r = ratio(mine[r] + request[r], fair_r);
                if ratio_r > 1.0 && fair_s > 0 && ratio_r >= ratio(left[r], fair_s) {
                    return false;
                }
            }
        }
    }
    true
}

/// The capacity policy's quota check for a non-preemptible job
/// (`isAllocatedNonPreemptibleOverQuota`) on CPU and memory: whether the non-preemptible
/// allocation of `queue` with `want` would pass its deserved quota of either (a resource the
/// job does not ask, or of unlimited quota, is skipped).
pub(super) fn non_preemptible_over_quota(
    other: &CpuMemoryState,
    queue: usize,
    want: &CpuMemory,
) -> bool {
    other.shares.iter().enumerate().any(|(i, s)| {
        want[i] > 0
            && s.quota
                .get(queue)
                .and_then(|q| q.quota)
                .is_some_and(|d| d < other.non_preemptible[i] + want[i])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(name: &str, parent: Option<usize>) -> KaiQueue {
        KaiQueue {
            name: name.into(),
            parent,
            gpu_quota: Some(0),
            gpu_over_quota_weight: 0,
            gpu_limit: None,
            priority: 100,
            preempt_min_runtime: None,
            reclaim_min_runtime: None,
            cpu: KaiQueueResource::UNLIMITED,
            memory: KaiQueueResource::UNLIMITED,
        }
    }

    fn quota(quota: Option<i64>, weight: i64, limit: Option<i64>) -> KaiQueueResource {
        KaiQueueResource {
            quota,
            over_quota_weight: weight,
            limit,
        }
    }

    #[test]
    fn each_resource_divides_on_its_own() {
        // reclaim_test.go "DRF - reclaim from queue that has one resource over fair share":
        // CPU in millicores (8000 cores; quotas of 1500 millicores), memory in bytes (quotas
        // of 1500 MB). queue0 asks 2000 cores and 22.5e9 bytes, queue1 200 cores and 15e9.
        let qs = [queue("queue0", None), queue("queue1", None)];
        let q = [quota(Some(1500), 1, None), quota(Some(1500), 1, None)];
        assert_eq!(
            divide(&qs, &q, 8_000_000, &[2_000_000, 200_000], 1),
            [2_000_000, 200_000],
            "CPU: both queues get their request"
        );
        let q = [quota(Some(1_500_000_000), 1, None); 2];
        assert_eq!(
            divide(
                &qs,
                &q,
                30_000_000_000,
                &[22_500_000_000, 15_000_000_000],
                1
            ),
            [15_000_000_000, 15_000_000_000],
            "memory: queue0 is held to half of what is over the quotas"
        );
    }

    #[test]
    fn a_limit_caps_a_department_and_its_children_share_it() {
        // reclaim_elastic_test.go "Elastic job reclaims single task from another elastic job
        // - equal queues": department-a (CPU limit 4000 millicores, unlimited quota) holds
        // queue0 and queue1 (1000 millicores deserved each), both asking 3 cores.
        let qs = [
            queue("department-a", None),
            queue("queue0", Some(0)),
            queue("queue1", Some(0)),
        ];
        let q = [
            quota(None, 1, Some(4000)),
            quota(Some(1000), 1, None),
            quota(Some(1000), 1, None),
        ];
        assert_eq!(
            divide(&qs, &q, 4_000_000, &[0, 3000, 3000], 1),
            [4000, 2000, 2000]
        );
    }

    /// A view of `n` queues with one resource besides GPUs (CPU), GPUs all zero.
    fn cpu_view(
        qs: &[KaiQueue],
        quotas: &[KaiQueueResource],
        fair: &[i64],
        alloc: &[i64],
    ) -> Resources {
        let zeros = vec![0; qs.len()];
        let state = QueueState {
            queues: qs,
            fair: &zeros,
            allocated: &zeros,
            total: 0,
            now: 0,
        };
        let other = CpuMemoryState {
            shares: vec![ResourceShares {
                quota: quotas.to_vec(),
                fair: fair.to_vec(),
                allocated: alloc.to_vec(),
                total: 0,
            }],
            ..Default::default()
        };
        Resources::new(&state, &other)
    }

    #[test]
    fn can_reclaim_needs_every_resource_within_its_fair_share() {
        // reclaimable_test.go "Partially above fair share": GPUs at their fair share of 1
        // with the job's 1000 (milli) — here CPU is the resource over: fair 1500, allocated
        // 1000, the job asks 1000.
        let qs = [queue("queue1", None)];
        let q = [quota(None, 1, None)];
        let res = cpu_view(&qs, &q, &[1500], &[1000]);
        assert!(!within_fair_share(&res, 0, &[0, 1000, 0]));
        // "Some resources at fair share with job, other stay below": CPU 1000 + 1000 = 2000.
        let res = cpu_view(&qs, &q, &[2000], &[1000]);
        assert!(within_fair_share(&res, 0, &[0, 1000, 0]));
    }

    #[test]
    fn a_non_preemptible_job_stays_within_its_queues_cpu_quota() {
        // quota_check.go (`isAllocatedNonPreemptibleOverQuota`) on CPU: deserved 2000
        // millicores with 1500 non-preemptible; 500 more fits, 501 does not; memory, of
        // unlimited quota, never refuses; a resource the job does not ask is skipped.
        let other = CpuMemoryState {
            shares: vec![
                ResourceShares {
                    quota: vec![quota(Some(2000), 1, None)],
                    ..Default::default()
                },
                ResourceShares {
                    quota: vec![quota(None, 1, None)],
                    ..Default::default()
                },
            ],
            non_preemptible: [1500, 1 << 40],
            ..Default::default()
        };
        assert!(!non_preemptible_over_quota(&other, 0, &[500, 1 << 40]));
        assert!(non_preemptible_over_quota(&other, 0, &[501, 0]));
        let other = CpuMemoryState {
            non_preemptible: [2500, 0],
            ..other
        };
        assert!(!non_preemptible_over_quota(&other, 0, &[0, 1]));
    }

    #[test]
    fn a_victim_queue_over_its_allocatable_share_in_one_resource_is_reclaimable() {
        // A queue over its fair share in CPU only is reclaimable (`MaintainFairShare`: not
        // LessEqual in every resource); one within it in CPU is not, when GPUs do not count.
        let qs = [queue("queue0", None), queue("queue1", None)];
        let q = [quota(Some(1000), 1, None), quota(Some(1000), 1, None)];
        let zeros = [0, 0];
        let state = QueueState {
            queues: &qs,
            fair: &zeros,
            allocated: &zeros,
            total: 0,
            now: 0,
        };
        let res = cpu_view(&qs, &q, &[2000, 2000], &[3000, 1000]);
        assert!(reclaimable(
            &state,
            &res,
            1,
            &[0, 1000, 0],
            &[(0, [0, 1000, 0])]
        ));
        let res = cpu_view(&qs, &q, &[3000, 2000], &[3000, 1000]);
        assert!(!reclaimable(
            &state,
            &res,
            1,
            &[0, 1000, 0],
            &[(0, [0, 1000, 0])]
        ));
    }
}
