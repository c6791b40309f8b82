//! KAI's fair share of GPUs per queue (the proportion plugin's `resource_division`) and its
//! reclaim of other queues' jobs for a job within its fair share.

/// KAI's fair share of GPUs per queue (`resource_division`): each queue first gets its
/// deserved quota (up to what it requests and its limit), then what is left goes out by
/// over-quota weight, highest queue priority first, in whole GPUs; a parent's share is split
/// among its children the same way. `requests[q]`: GPUs allocated plus pending in the queue's
/// subtree.
pub fn fair_shares(queues: &[kueuesim_model::KaiQueue], total: i64, requests: &[i64]) -> Vec<i64> {
    let mut share = vec![0i64; queues.len()];
    // Subtree requests.
    let mut sub = requests.to_vec();
    for q in 0..queues.len() {
        let mut p = queues[q].parent;
        while let Some(x) = p {
            sub[x] += requests[q];
            p = queues[x].parent;
        }
    }
    fn divide(
        queues: &[kueuesim_model::KaiQueue],
        members: &[usize],
        pool: i64,
        sub: &[i64],
        share: &mut [i64],
    ) {
        let requestable = |q: usize| queues[q].gpu_limit.map_or(sub[q], |l| sub[q].min(l)).max(0);
        let mut remaining = pool;
        for &q in members {
            let deserved = queues[q].gpu_quota.unwrap_or(pool);
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
                        queues[q].priority == band
                            && queues[q].gpu_over_quota_weight > 0
                            && requestable(q) > share[q]
                    })
                    .collect();
                let weights: i64 = open.iter().map(|&q| queues[q].gpu_over_quota_weight).sum();
                if open.is_empty() || remaining <= 0 || weights == 0 {
                    break;
                }
                let pool_now = remaining;
                let mut gave = 0;
                for &q in &open {
                    let slice =
                        pool_now as f64 * queues[q].gpu_over_quota_weight as f64 / weights as f64;
                    let need = requestable(q) - share[q];
                    let give = if (need as f64) <= slice {
                        frac[q] = 0.0;
                        need
                    } else {
                        frac[q] = slice - slice.floor();
                        slice.floor() as i64
                    };
                    share[q] += give;
                    gave += give;
                }
                remaining -= gave;
                if gave == 0 {
                    break;
                }
            }
        }
        // Whole units left by the flooring go one at a time to the largest unmet fractions
        // (ties: the older queue, here the input order).
        while remaining > 0 {
            let next = members
                .iter()
                .copied()
                .filter(|&q| requestable(q) > share[q] && frac[q] > 0.0)
                .max_by(|&a, &b| frac[a].total_cmp(&frac[b]).then(b.cmp(&a)));
            let Some(q) = next else { break };
            share[q] += 1;
            frac[q] = 0.0;
            remaining -= 1;
        }
        for &q in members {
            let children: Vec<usize> = (0..queues.len())
                .filter(|&c| queues[c].parent == Some(q))
                .collect();
            if !children.is_empty() {
                let pool = share[q];
                divide(queues, &children, pool, sub, share);
            }
        }
    }
    let top: Vec<usize> = (0..queues.len())
        .filter(|&q| queues[q].parent.is_none())
        .collect();
    divide(queues, &top, total, &sub, &mut share);
    share
}

/// A running KAI job that reclaim may evict.
#[derive(Clone, Copy, Debug)]
pub struct RunningJob {
    /// The caller's id for it.
    pub key: usize,
    /// Its queue.
    pub queue: usize,
    /// GPUs it holds.
    pub gpus: i64,
    /// Its priority (preemptible below 100, KAI's default).
    pub priority: i32,
    /// Creation time: younger jobs are evicted first.
    pub created: i64,
}

/// KAI's reclaim for a pending job of `queue` needing `gpus`: allowed while the queue stays
/// within its fair share with the job; victims come from other queues above
/// max(deserved, fair share), preemptible ones, lowest priority then youngest first, one at a
/// time while their queue is still above that share, until `fits(victims)` says the job
/// would fit once they are gone. None: no reclaim.
pub fn reclaim_victims(
    queues: &[kueuesim_model::KaiQueue],
    fair: &[i64],
    allocated: &[i64],
    queue: usize,
    gpus: i64,
    running: &[RunningJob],
    mut fits: impl FnMut(&[usize]) -> bool,
) -> Option<Vec<usize>> {
    if allocated[queue] + gpus > fair[queue] {
        return None;
    }
    let share = |q: usize| fair[q].max(queues[q].gpu_quota.unwrap_or(i64::MAX / 4));
    let mut order: Vec<&RunningJob> = running
        .iter()
        .filter(|j| j.queue != queue && j.priority < 100 && queues[j.queue].gpu_quota.is_some())
        .collect();
    order.sort_by_key(|j| (j.priority, std::cmp::Reverse(j.created), j.key));
    let mut left = allocated.to_vec();
    let mut victims = Vec::new();
    for j in order {
        if left[j.queue] <= share(j.queue) {
            continue;
        }
        left[j.queue] -= j.gpus;
        victims.push(j.key);
        if fits(&victims) {
            return Some(victims);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::KaiQueue;

    fn q(name: &str, quota: Option<i64>, weight: i64, priority: i32) -> KaiQueue {
        KaiQueue {
            name: name.into(),
            parent: None,
            gpu_quota: quota,
            gpu_over_quota_weight: weight,
            gpu_limit: None,
            priority,
        }
    }

    #[test]
    fn fair_share_deserved_first_then_weights_then_priority_bands() {
        // 10 GPUs: deserved 2 and 1; the 7 left by weight 3:1 (5.25 and 1.75, floored to 5
        // and 1); the next round splits the 1 left as .75 and .25, floored to nothing, and the
        // unit goes to the larger unmet fraction, a's.
        let qs = [q("a", Some(2), 3, 100), q("b", Some(1), 1, 100)];
        assert_eq!(fair_shares(&qs, 10, &[20, 20]), [8, 2]);
        // A queue asking for less gets exactly its request; the rest goes on.
        assert_eq!(fair_shares(&qs, 10, &[3, 20]), [3, 7]);
        // A higher-priority band takes the over-quota first.
        let qs = [q("hi", Some(0), 1, 200), q("lo", Some(0), 1, 100)];
        assert_eq!(fair_shares(&qs, 4, &[3, 4]), [3, 1]);
    }
}
