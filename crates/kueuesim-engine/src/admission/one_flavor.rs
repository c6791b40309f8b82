//! `assignFlavors` for the common shape: one pod set, in a ClusterQueue of one resource group
//! with one flavor, without TAS. It gives the assignment the general scan
//! (`FlavorAssigner::assign_scan`) gives, without the scan's per-group and per-attempt
//! vectors (a million-workload run assigns millions of heads of this shape, one per cycle).

use kueuesim_model::{FlavorId, ResourceId};

use crate::preemption::AdmittedWorkloads;

use super::flavors::{
    BEST, FlavorAssigner, Granular, PMode, WORST, give, is_preferred, should_try_next, take,
};
use super::messages::{
    Attempt, Unfit, considered_message_one, most_severe, resolve_no_fit_reason, sort_reasons,
};
use super::pod_set_fit::{flavor_mismatch, merge_usage, quota_requests_into};
use super::{Assignment, Mode, REASON_WAITING_FOR_QUOTA};
use crate::outcome::PodSetAssignment;

impl<A: AdmittedWorkloads> FlavorAssigner<'_, A> {
    /// `assign` for one pod set in a ClusterQueue whose only resource group has one flavor,
    /// not a TAS flavor, covering every resource the pod set requests; None (nothing changed
    /// but scratch vectors) for any other input, which the general scan then takes.
    ///
    /// Why it is the general scan's answer: with no pod set before it, nothing is assumed
    /// (`assumed` is 0 for every resource); the first requested resource reaches the group,
    /// whose requests are all the pod set's, so `find_flavor` runs once and its one flavor
    /// decides, or the pod set fails; without a TAS flavor the pod set has no topology request
    /// (`tas_request`: one flavor, not TAS, and no annotation), so no TAS step runs; a
    /// nomination mapping (`pin`), a scan resuming past the flavor, or a flavor that does not
    /// match the pod set go to the general scan. Each resource is tried in the same order
    /// (name order), so the preemption oracle is asked the same questions in the same order
    /// and its last search (`Scratch::oracle`) is the same. Debug builds compare every answer
    /// with the general scan's (`check_one_flavor`).
    pub(super) fn assign_one_flavor(&mut self, counts: &[u32]) -> Option<Assignment> {
        let world = self.world;
        let cq = self.subject.cq;
        let wl = self.subject.wl;
        let queue = world.cluster_queue(cq);
        if self.pin.is_some() {
            return None;
        }
        let ([ps], [group]) = (wl.pod_sets.as_slice(), queue.resource_groups.as_slice()) else {
            return None;
        };
        let [fq] = group.flavors.as_slice() else {
            return None;
        };
        let f: FlavorId = fq.flavor;
        if ps.topology_request.is_some() || world.flavor(f).topology_name.is_some() {
            return None;
        }
        let count = counts[0];
        let pods = self.scratch.pods_resource(world);
        let mut totals = std::mem::take(&mut self.scratch.totals);
        quota_requests_into(world, cq, &ps.requests, count, pods, &mut totals);
        let mut resources = std::mem::take(&mut self.scratch.resources);
        resources.clear();
        resources.extend(totals.iter());
        {
            let ranks = self.scratch.name_ranks(world);
            resources.sort_by_key(|a| ranks[a.0.index()]);
        }
        self.scratch.totals = totals;
        let simple = resources
            .first()
            .is_some_and(|&(r, _)| self.last.map_or(0, |l| l.next_flavor(0, r)) == 0)
            && resources.iter().all(|(r, _)| group.covered.contains(r))
            && flavor_mismatch(world, f, wl, 0).is_none();
        if !simple {
            self.scratch.resources = resources;
            return None;
        }

        // `find_flavor` for the one flavor: each resource's mode, the flavor as good as its
        // worst resource.
        let fung = queue.flavor_fungibility;
        let pools = &mut self.scratch.pools;
        let mut flavor_reasons = take(&mut pools.reasons);
        let mut chosen = std::mem::take(&mut self.scratch.flavors);
        chosen.clear();
        let mut rep = BEST;
        let mut flavor_reason: &'static str = "";
        let mut max_borrow = 0;
        for &(r, request) in &resources {
            let fr = self.tree.fr(f, r);
            let (mode, borrow, why, no_fit) = self.fits_resource_quota(fr, 0, request);
            if let Some(why) = why {
                flavor_reasons.push(why);
            }
            max_borrow = max_borrow.max(borrow);
            if !no_fit.is_empty() {
                flavor_reason = most_severe(flavor_reason, no_fit);
            }
            let g = Granular { mode, borrow };
            if is_preferred(rep, g, &fung) {
                rep = g;
            }
            if rep.mode != PMode::NoFit {
                chosen.push((r, f, mode, borrow));
            }
        }
        sort_reasons(world, &mut flavor_reasons);
        // The flavor is chosen unless it is NoFit (`should_try_next`, then `is_preferred`
        // over the worst mode).
        let found = !should_try_next(rep, &fung) || is_preferred(rep, WORST, &fung);
        let best_mode = if found { rep } else { WORST };
        // The group's reasons: none for a plain fit (the attempt keeps its own, which the
        // QuotaReserved event lists), else the attempt's, moved out.
        let (reasons, attempt_reasons) = if best_mode.mode == PMode::Fit {
            (take(&mut self.scratch.pools.reasons), flavor_reasons)
        } else {
            (flavor_reasons, take(&mut self.scratch.pools.reasons))
        };
        let attempt = Attempt {
            flavor: f,
            mode: rep.mode,
            borrow: max_borrow,
            reasons: attempt_reasons,
            no_fit_reason: flavor_reason,
        };

        let pools = &mut self.scratch.pools;
        let mut usage = take(&mut pools.usage);
        // Made only for an assignment that fits (see `complete_one_flavor`).
        let mut pod_sets = Vec::new();
        let mut contested = take(&mut pools.frs);
        let mut per_pod_set = take(&mut pools.per_pod_set);
        let mut last_tried = take(&mut pools.scans);
        let mut borrowing = 0u32;
        let mut mode = Mode::Fit;
        let mut considered = String::new();
        if !found {
            // The pod set failed: no progress recorded, the attempt's NoFit reason.
            last_tried.push(Vec::new());
            let reason = resolve_no_fit_reason(queue, std::slice::from_ref(&attempt));
            let mut reasons = reasons;
            sort_reasons(world, &mut reasons);
            per_pod_set.push((0, reasons));
            mode = Mode::NoFit;
            give(&mut self.scratch.pools.reasons, attempt.reasons);
            self.scratch.resources = resources;
            self.scratch.flavors = chosen;
            return Some(Assignment {
                pod_sets,
                usage,
                mode,
                borrowing,
                contested,
                not_admitted: Some(Unfit {
                    reason,
                    pod_sets: per_pod_set,
                }),
                considered,
                last_tried,
            });
        }
        let mut tried = take(&mut pools.tried);
        // Reaching the group's last flavor (its only one): the next scan starts over.
        tried.extend(chosen.iter().map(|c| (c.0, -1)));
        last_tried.push(tried);
        let status_fit = reasons.is_empty();
        for &(r, f, m, b) in &chosen {
            let fr = self.tree.fr(f, r);
            let amount = resources.iter().find(|x| x.0 == r).map_or(0, |x| x.1);
            usage.push((fr, amount));
            borrowing = borrowing.max(b);
            if m != PMode::Fit {
                contested.push(fr);
                if !status_fit {
                    mode = mode.min(Mode::Preempt);
                }
            }
        }
        usage = merge_usage(usage);
        if reasons.is_empty() {
            give(&mut self.scratch.pools.reasons, reasons);
        } else {
            let mut reasons = reasons;
            sort_reasons(world, &mut reasons);
            per_pod_set.push((0, reasons));
        }
        // A Preempt assignment leaves its pod set assignment out: under overload most have
        // no preemption target and are dropped, and nothing reads the pod sets of a dropped
        // one; the few kept get it from `complete_one_flavor`.
        if mode == Mode::Fit {
            pod_sets = take(&mut self.scratch.pools.pod_sets);
            pod_sets.push(self.one_pod_set(f, chosen.iter().map(|c| c.0), count));
        }
        contested.sort();
        contested.dedup();
        let not_admitted = match mode {
            Mode::Fit => {
                self.scratch.pools.give_per_pod_set(per_pod_set);
                None
            }
            Mode::Preempt => Some(Unfit {
                reason: REASON_WAITING_FOR_QUOTA,
                pod_sets: per_pod_set,
            }),
            Mode::NoFit => unreachable!("a chosen flavor is not NoFit"),
        };
        if mode == Mode::Fit {
            let out = self.scratch.take_string();
            considered = considered_message_one(world, &ps.name, &attempt, out);
        }
        give(&mut self.scratch.pools.reasons, attempt.reasons);
        self.scratch.resources = resources;
        self.scratch.flavors = chosen;
        Some(Assignment {
            pod_sets,
            usage,
            mode,
            borrowing,
            contested,
            not_admitted,
            considered,
            last_tried,
        })
    }

    /// The assignment of the one pod set to flavor `f` for `resources`, `count` pods.
    fn one_pod_set(
        &mut self,
        f: FlavorId,
        resources: impl Iterator<Item = ResourceId>,
        count: u32,
    ) -> PodSetAssignment {
        let mut assigned = take(&mut self.scratch.pools.flavors);
        assigned.extend(resources.map(|r| (r, f)));
        assigned.sort();
        PodSetAssignment {
            flavors: assigned,
            count,
            topology: None,
        }
    }

    /// Makes the pod set assignment `assign_one_flavor` leaves out of a Preempt assignment
    /// `a` (at `counts` pods), once the cycle keeps it (it has preemption targets); any
    /// other assignment is left as it is.
    ///
    /// Invariant: a Preempt assignment with no pod sets is `assign_one_flavor`'s (the general
    /// scan's Preempt assignments hold every pod set, at least one). Until completed, only
    /// what a dropped head reads is in it: its mode, usage, borrowing level, contested
    /// resources, reasons (`not_admitted`) and scan progress; the preemption search reads
    /// pod sets only for their TAS flavors (`PreemptorTopology`), which this path has none
    /// of. Its one pod set took the ClusterQueue's one flavor for every resource its scan
    /// progress lists (`last_tried[0]`, one entry per resource chosen). Debug builds check
    /// the completed assignment against the general scan's (`check_one_flavor`).
    pub(super) fn complete_one_flavor(&mut self, a: &mut Assignment, counts: &[u32]) {
        if a.mode != Mode::Preempt || !a.pod_sets.is_empty() {
            return;
        }
        let group = &self.world.cluster_queue(self.subject.cq).resource_groups[0];
        let f = group.flavors[0].flavor;
        let tried = std::mem::take(&mut a.last_tried[0]);
        let ps = self.one_pod_set(f, tried.iter().map(|t| t.0), counts[0]);
        a.last_tried[0] = tried;
        a.pod_sets = take(&mut self.scratch.pools.pod_sets);
        a.pod_sets.push(ps);
    }

    /// Debug builds: `assign_one_flavor`'s answer `fast` is the general scan's, and so is
    /// what the preemption oracle's last search left behind. A Preempt answer is compared
    /// on what it keeps, then completed (`complete_one_flavor`) and compared whole.
    #[cfg(debug_assertions)]
    pub(super) fn check_one_flavor(&mut self, counts: &[u32], fast: &Assignment) {
        let oracle = |fa: &Self| {
            let o = &fa.scratch.oracle;
            (
                fa.searched,
                o.usage.clone(),
                o.contested.clone(),
                o.targets.clone(),
                o.none_possible,
                fa.scratch.search.none_possible,
            )
        };
        let after_fast = oracle(self);
        let full = self.assign_scan(counts);
        if fast.mode == Mode::Preempt {
            assert!(
                fast.pod_sets.is_empty(),
                "a Preempt assignment of the one-flavor path has its pod sets"
            );
            let kept = Assignment {
                pod_sets: Vec::new(),
                ..full.clone()
            };
            assert_eq!(
                &kept, fast,
                "assign_one_flavor differs from the general scan on what it keeps"
            );
            let mut completed = fast.clone();
            self.complete_one_flavor(&mut completed, counts);
            assert_eq!(
                completed, full,
                "a completed one-flavor assignment differs from the general scan"
            );
        } else {
            assert_eq!(
                &full, fast,
                "assign_one_flavor differs from the general scan"
            );
        }
        assert_eq!(
            oracle(self),
            after_fast,
            "assign_one_flavor left another oracle search than the general scan"
        );
        self.scratch.recycle(full);
    }
}
