//! Quota arithmetic over the cohort tree, as Kueue's `resourceNode` does it
//! (`pkg/cache/scheduler/resource_node.go`).
//!
//! Every ClusterQueue and Cohort is a node. Per (flavor, resource) — an `Fr` — a node has its
//! own quota (nominal, borrowingLimit, lendingLimit), a subtree quota (a ClusterQueue's nominal;
//! a cohort's own nominal plus what each child lends it) and a usage (a ClusterQueue's admitted
//! workloads; for a cohort, the part of each child's usage that spills out of the child's
//! private, non-lendable quota). Availability is computed by walking to the root.

use std::cell::Cell;

use crate::ids::{ClusterQueueId, CohortId, FlavorId, ResourceId};
use crate::objects::ResourceGroup;
use crate::world::World;

/// A (flavor, resource) pair as a dense index: `flavor * resources + resource`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fr(pub u32);

impl Fr {
    /// The position in per-node arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A node of the cohort tree: ClusterQueues first, then cohorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIdx(pub u32);

impl NodeIdx {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The cohort tree with quotas and usage.
#[derive(Clone, Debug)]
pub struct QuotaTree {
    n_cqs: usize,
    n_resources: usize,
    n_fr: usize,
    parent: Vec<Option<NodeIdx>>,
    /// Child cohorts and child ClusterQueues of each node (empty for ClusterQueues).
    children: Vec<Vec<NodeIdx>>,
    nominal: Vec<i64>,
    borrowing_limit: Vec<Option<i64>>,
    lending_limit: Vec<Option<i64>>,
    subtree_quota: Vec<i64>,
    usage: Vec<i64>,
    /// Whether the node belongs to a tree with a cycle (its ClusterQueues are inactive).
    in_cycle: Vec<bool>,
    /// Height of each node (0 for a ClusterQueue; `getNodeHeight` for cohorts).
    height: Vec<u32>,
    /// Whether any node has a lendingLimit (else nothing is ever withheld from a cohort).
    any_lending_limit: bool,
    /// Usage changes since the oldest open mark, for `rollback_to` (an undo log, so a
    /// scheduling cycle or a preemption simulation costs what it changes, not the tree size).
    undo: Vec<(u32, i64)>,
    open_marks: u32,
    /// `potentialAvailable` per (node, `Fr`), worked out once: it reads only quotas, which
    /// never change after `new` (0 for a node in a cohort cycle, whose walk is not taken).
    potential: Vec<i64>,
    /// Which usage the tree holds: a fresh id for every usage change, and on `rollback_to`
    /// the id the mark saw (the usage is then exactly what it was). Equal ids mean equal
    /// usage everywhere, so a value computed from usage at one id holds while the id stays.
    state: u64,
    /// The last id handed out (ids are never reused, so no two usages share one).
    last_state: u64,
    /// `available_raw` per (node, `Fr`) and the usage id it was computed at: the scheduler
    /// asks the same ClusterQueue and `Fr` several times per head (the flavor scan, the
    /// preemption oracle, `GetTargets`) with the usage unchanged or rolled back in between.
    /// Debug builds check every hit against the walk.
    available_cache: Vec<Cell<(u64, i64)>>,
}

/// An id no usage has: an `available_cache` entry holding it was never computed.
const NO_STATE: u64 = u64::MAX;

/// A point to roll usage back to (see `QuotaTree::mark`).
#[derive(Debug)]
#[must_use = "a mark must be rolled back or released"]
pub struct UsageMark(usize, u64);

impl QuotaTree {
    /// Builds the tree of `world` with zero usage.
    pub fn new(world: &World) -> Self {
        let n_cqs = world.cluster_queues.len();
        let n_nodes = n_cqs + world.cohorts.len();
        let n_resources = world.resources.len();
        let n_fr = world.flavors.len() * n_resources;
        let mut t = QuotaTree {
            n_cqs,
            n_resources,
            n_fr,
            parent: vec![None; n_nodes],
            children: vec![Vec::new(); n_nodes],
            nominal: vec![0; n_nodes * n_fr],
            borrowing_limit: vec![None; n_nodes * n_fr],
            lending_limit: vec![None; n_nodes * n_fr],
            subtree_quota: vec![0; n_nodes * n_fr],
            usage: vec![0; n_nodes * n_fr],
            in_cycle: vec![false; n_nodes],
            height: vec![0; n_nodes],
            any_lending_limit: false,
            undo: Vec::new(),
            open_marks: 0,
            potential: vec![0; n_nodes * n_fr],
            state: 0,
            last_state: 0,
            available_cache: vec![Cell::new((NO_STATE, 0)); n_nodes * n_fr],
        };
        let set_quotas = |t: &mut QuotaTree, node: usize, groups: &[ResourceGroup]| {
            for g in groups {
                for f in &g.flavors {
                    for q in &f.resources {
                        let i = node * t.n_fr + t.fr(f.flavor, q.resource).index();
                        t.nominal[i] = q.nominal;
                        t.borrowing_limit[i] = q.borrowing_limit;
                        t.lending_limit[i] = q.lending_limit;
                    }
                }
            }
        };
        for (i, cq) in world.cluster_queues.iter().enumerate() {
            t.parent[i] = cq.cohort.map(|c| NodeIdx((n_cqs + c.index()) as u32));
            set_quotas(&mut t, i, &cq.resource_groups);
        }
        for (j, co) in world.cohorts.iter().enumerate() {
            t.parent[n_cqs + j] = co.parent.map(|c| NodeIdx((n_cqs + c.index()) as u32));
            set_quotas(&mut t, n_cqs + j, &co.resource_groups);
        }
        t.any_lending_limit = t.lending_limit.iter().any(Option::is_some);
        for n in 0..n_nodes {
            if let Some(p) = t.parent[n] {
                t.children[p.index()].push(NodeIdx(n as u32));
            }
        }
        // Cycles: a node whose walk to the root revisits a node is in a cycle, and so is
        // everything below it. Each node is walked once (0: not seen, 1: on the current walk,
        // 2: done), so a chain of 100,000 cohorts costs 100,000 steps, not their square.
        let mut state = vec![0u8; n_nodes];
        let mut path = Vec::new();
        for n in 0..n_nodes {
            let mut cur = Some(n);
            let mut cyclic = false;
            while let Some(c) = cur {
                match state[c] {
                    2 => {
                        cyclic = t.in_cycle[c];
                        break;
                    }
                    1 => {
                        cyclic = true;
                        break;
                    }
                    _ => {
                        state[c] = 1;
                        path.push(c);
                        cur = t.parent[c].map(NodeIdx::index);
                    }
                }
            }
            for c in path.drain(..) {
                state[c] = 2;
                t.in_cycle[c] = cyclic;
            }
        }
        // Subtree quotas and heights, children first (`updateCohortResourceNode`).
        for n in 0..n_nodes {
            if t.parent[n].is_none() && !t.in_cycle[n] {
                t.update_subtree(n);
            }
        }
        for n in 0..n_nodes {
            if t.in_cycle[n] {
                continue;
            }
            for fr in 0..n_fr {
                t.potential[n * n_fr + fr] =
                    t.potential_walk::<true>(NodeIdx(n as u32), Fr(fr as u32));
            }
        }
        t
    }

    /// Subtree quotas and heights of `root`'s tree, children before parents. Iterative, so
    /// that a deep cohort chain cannot overflow the stack.
    fn update_subtree(&mut self, root: usize) {
        // Depth-first pre-order; reversed, every child comes before its parent.
        let mut order = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            order.push(n);
            stack.extend(self.children[n].iter().map(|c| c.index()));
        }
        for &n in order.iter().rev() {
            for fr in 0..self.n_fr {
                self.subtree_quota[n * self.n_fr + fr] = self.nominal[n * self.n_fr + fr];
            }
            let mut height = u32::from(!self.children[n].is_empty());
            for i in 0..self.children[n].len() {
                let c = self.children[n][i].index();
                if c >= self.n_cqs {
                    height = height.max(self.height[c] + 1);
                }
                for fr in 0..self.n_fr {
                    let lent = self.subtree_quota[c * self.n_fr + fr] - self.local_quota_at(c, fr);
                    self.subtree_quota[n * self.n_fr + fr] += lent;
                }
            }
            self.height[n] = if n < self.n_cqs { 0 } else { height };
        }
    }

    /// The `Fr` of `(flavor, resource)`.
    pub fn fr(&self, flavor: FlavorId, resource: ResourceId) -> Fr {
        Fr((flavor.index() * self.n_resources + resource.index()) as u32)
    }

    /// The flavor and resource of `fr`.
    pub fn split(&self, fr: Fr) -> (FlavorId, ResourceId) {
        (
            FlavorId::from_index(fr.index() / self.n_resources),
            ResourceId::from_index(fr.index() % self.n_resources),
        )
    }

    /// How many `Fr`s there are.
    pub fn fr_count(&self) -> usize {
        self.n_fr
    }

    /// The node of ClusterQueue `cq`.
    pub fn cq_node(&self, cq: ClusterQueueId) -> NodeIdx {
        NodeIdx(cq.0)
    }

    /// The node of cohort `c`.
    pub fn cohort_node(&self, c: CohortId) -> NodeIdx {
        NodeIdx((self.n_cqs + c.index()) as u32)
    }

    /// The ClusterQueue a node stands for, if it is one.
    pub fn as_cq(&self, n: NodeIdx) -> Option<ClusterQueueId> {
        (n.index() < self.n_cqs).then_some(ClusterQueueId(n.0))
    }

    /// The parent cohort node.
    pub fn parent(&self, n: NodeIdx) -> Option<NodeIdx> {
        self.parent[n.index()]
    }

    /// Child nodes (cohorts and ClusterQueues) of a cohort node.
    pub fn children(&self, n: NodeIdx) -> &[NodeIdx] {
        &self.children[n.index()]
    }

    /// The root of `n`'s tree (`n` itself without a parent).
    pub fn root(&self, mut n: NodeIdx) -> NodeIdx {
        while let Some(p) = self.parent(n) {
            n = p;
        }
        n
    }

    /// Whether ClusterQueue `cq` belongs to a cohort graph with a cycle (then it is inactive).
    pub fn in_cycle(&self, cq: ClusterQueueId) -> bool {
        self.in_cycle[cq.index()]
    }

    /// `getNodeHeight`: 0 for a ClusterQueue; for a cohort, 1 if it has children, plus the
    /// height of its tallest child cohort.
    pub fn height(&self, n: NodeIdx) -> u32 {
        self.height[n.index()]
    }

    fn at(&self, n: NodeIdx, fr: Fr) -> usize {
        n.index() * self.n_fr + fr.index()
    }

    /// Own nominal quota.
    pub fn nominal(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.nominal[self.at(n, fr)]
    }

    /// `borrowingLimit`.
    pub fn borrowing_limit(&self, n: NodeIdx, fr: Fr) -> Option<i64> {
        self.borrowing_limit[self.at(n, fr)]
    }

    /// `lendingLimit`.
    pub fn lending_limit(&self, n: NodeIdx, fr: Fr) -> Option<i64> {
        self.lending_limit[self.at(n, fr)]
    }

    /// `SubtreeQuota`.
    pub fn subtree_quota(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.subtree_quota[self.at(n, fr)]
    }

    /// `Usage`.
    pub fn usage(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.usage[self.at(n, fr)]
    }

    fn local_quota_at(&self, n: usize, fr: usize) -> i64 {
        let i = n * self.n_fr + fr;
        match self.lending_limit[i] {
            Some(ll) => (self.subtree_quota[i] - ll).max(0),
            None => 0,
        }
    }

    /// `localQuota`: the part of the subtree quota that is not lent (private).
    pub fn local_quota(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.local_quota_at(n.index(), fr.index())
    }

    /// `LocalAvailable`: unused private quota.
    pub fn local_available(&self, n: NodeIdx, fr: Fr) -> i64 {
        (self.local_quota(n, fr) - self.usage(n, fr)).max(0)
    }

    /// `n` and its ancestors, root last, handed to `f`; on the stack for the usual shallow
    /// trees. The walks below are loops over this path rather than recursion (as Kueue's
    /// Go code has it), so that a chain of 100,000 cohorts cannot overflow the stack.
    fn with_path<R>(&self, n: NodeIdx, f: impl FnOnce(&[NodeIdx]) -> R) -> R {
        const SHALLOW: usize = 16;
        let mut buf = [NodeIdx(0); SHALLOW];
        let mut len = 0;
        let mut cur = Some(n);
        while let Some(c) = cur {
            if len == SHALLOW {
                let mut path = buf.to_vec();
                let mut cur = Some(c);
                while let Some(c) = cur {
                    path.push(c);
                    cur = self.parent(c);
                }
                return f(&path);
            }
            buf[len] = c;
            len += 1;
            cur = self.parent(c);
        }
        f(&buf[..len])
    }

    /// `available` (unclamped): what `n` could still use, counting what its ancestors lend.
    /// Remembered per node and `Fr` while the usage stays the same (`available_cache`).
    pub fn available_raw(&self, n: NodeIdx, fr: Fr) -> i64 {
        let cell = &self.available_cache[self.at(n, fr)];
        let (state, value) = cell.get();
        if state == self.state {
            debug_assert_eq!(value, self.available_walk::<true>(n, fr), "stale available");
            return value;
        }
        let value = self.available_walk::<true>(n, fr);
        cell.set((self.state, value));
        value
    }

    /// `available_raw` as it would be without any borrowingLimit on `n`'s path: what the
    /// cohort could lend `n` now if no limit stopped it (for telling a borrowing limit that
    /// binds from a cohort that is used up).
    pub fn available_without_borrowing_limits(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.available_walk::<false>(n, fr)
    }

    /// `available`'s walk, with or without the borrowing limits on the path (`LIMITS`; a
    /// constant, so the walk the scheduler runs is the plain one).
    fn available_walk<const LIMITS: bool>(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.with_path(n, |path| {
            // From the root down: a node's available is its unused private quota plus what
            // its parent has available, the latter capped by its borrowing limit.
            let (&root, below) = path.split_last().expect("the path holds n");
            let mut avail = self.subtree_quota(root, fr) - self.usage(root, fr);
            for &m in below.iter().rev() {
                let mut parent_available = avail;
                if LIMITS && let Some(bl) = self.borrowing_limit(m, fr) {
                    let lq = self.local_quota(m, fr);
                    let stored_in_parent = self.subtree_quota(m, fr) - lq;
                    let used_in_parent = (self.usage(m, fr) - lq).max(0);
                    parent_available = parent_available.min(stored_in_parent - used_in_parent + bl);
                }
                avail = self.local_available(m, fr) + parent_available;
            }
            avail
        })
    }

    /// `ClusterQueueSnapshot.Available`: never negative.
    pub fn available(&self, cq: ClusterQueueId, fr: Fr) -> i64 {
        self.available_raw(self.cq_node(cq), fr).max(0)
    }

    /// `potentialAvailable`: the largest request `n` could ever hold with the whole tree idle.
    pub fn potential_available(&self, n: NodeIdx, fr: Fr) -> i64 {
        if self.in_cycle[n.index()] {
            return self.potential_walk::<true>(n, fr);
        }
        let value = self.potential[self.at(n, fr)];
        debug_assert_eq!(value, self.potential_walk::<true>(n, fr), "stale potential");
        value
    }

    /// `potential_available` without any borrowingLimit on `n`'s path.
    pub fn potential_available_without_borrowing_limits(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.potential_walk::<false>(n, fr)
    }

    fn potential_walk<const LIMITS: bool>(&self, n: NodeIdx, fr: Fr) -> i64 {
        self.with_path(n, |path| {
            let (&root, below) = path.split_last().expect("the path holds n");
            let mut avail = self.subtree_quota(root, fr);
            for &m in below.iter().rev() {
                avail += self.local_quota(m, fr);
                if LIMITS && let Some(bl) = self.borrowing_limit(m, fr) {
                    avail = avail.min(self.subtree_quota(m, fr) + bl);
                }
            }
            avail
        })
    }

    /// The quota of `fr` the other nodes of `n`'s tree keep back with their lendingLimit
    /// (their `localQuota`, the private part no one else may borrow): unused now, or all of
    /// it with `idle` (as `potentialAvailable` counts the tree). The nodes on `n`'s path to
    /// the root are left out: `available` counts their private quota already.
    pub fn withheld_by_lending_limits(&self, n: NodeIdx, fr: Fr, idle: bool) -> i64 {
        if !self.any_lending_limit {
            return 0;
        }
        let on_path = |m: NodeIdx| {
            let mut cur = Some(n);
            while let Some(c) = cur {
                if c == m {
                    return true;
                }
                cur = self.parent(c);
            }
            false
        };
        let mut withheld = 0;
        let mut stack = vec![self.root(n)];
        while let Some(m) = stack.pop() {
            stack.extend_from_slice(self.children(m));
            if on_path(m) {
                continue;
            }
            withheld += if idle {
                self.local_quota(m, fr)
            } else {
                self.local_available(m, fr)
            };
        }
        withheld
    }

    /// Which usage the tree holds (`state`): equal ids mean equal usage everywhere, so an
    /// answer read from the usage at one id holds while the id stays (a rolled-back change
    /// gives the id back).
    pub fn usage_id(&self) -> u64 {
        self.state
    }

    /// Starts recording usage changes so they can be undone with `rollback_to`.
    pub fn mark(&mut self) -> UsageMark {
        self.open_marks += 1;
        UsageMark(self.undo.len(), self.state)
    }

    /// Undoes every usage change since `mark` (marks nest; roll back inner ones first).
    pub fn rollback_to(&mut self, mark: UsageMark) {
        while self.undo.len() > mark.0 {
            let (i, delta) = self.undo.pop().expect("non-empty");
            self.usage[i as usize] -= delta;
        }
        // Every change since the mark undone: the usage is the one the mark saw.
        self.state = mark.1;
        self.release(mark);
    }

    /// Keeps the changes since `mark`.
    pub fn release(&mut self, mark: UsageMark) {
        debug_assert!(
            self.open_marks > 0 && mark.0 <= self.undo.len(),
            "unbalanced usage marks"
        );
        self.open_marks -= 1;
        if self.open_marks == 0 {
            self.undo.clear();
        }
    }

    fn change_usage(&mut self, i: usize, delta: i64) {
        self.usage[i] += delta;
        self.last_state += 1;
        self.state = self.last_state;
        if self.open_marks > 0 {
            self.undo.push((i as u32, delta));
        }
    }

    /// `addUsage`: the part beyond the node's unused private quota bubbles up.
    pub fn add_usage(&mut self, n: NodeIdx, fr: Fr, val: i64) {
        let (mut n, mut val) = (n, val);
        loop {
            let local_available = self.local_available(n, fr);
            let i = self.at(n, fr);
            self.change_usage(i, val);
            match self.parent(n) {
                Some(p) if val > local_available => {
                    (n, val) = (p, val - local_available);
                }
                _ => return,
            }
        }
    }

    /// `removeUsage`: retracts from the parent only what was stored there.
    pub fn remove_usage(&mut self, n: NodeIdx, fr: Fr, val: i64) {
        let (mut n, mut val) = (n, val);
        loop {
            let stored_in_parent = self.usage(n, fr) - self.local_quota(n, fr);
            let i = self.at(n, fr);
            self.change_usage(i, -val);
            if stored_in_parent <= 0 {
                return;
            }
            match self.parent(n) {
                Some(p) => (n, val) = (p, val.min(stored_in_parent)),
                None => return,
            }
        }
    }

    /// `BorrowingWith`: whether `n` would use more than its (subtree) quota with `val` more.
    pub fn borrowing_with(&self, n: NodeIdx, fr: Fr, val: i64) -> bool {
        self.subtree_quota(n, fr) < self.usage(n, fr) + val
    }

    /// `FindHeightOfLowestSubtreeThatFits`: 0 if `val` more fits in the ClusterQueue's own
    /// quota (or it has no cohort); otherwise the height of the lowest ancestor whose subtree
    /// absorbs it (the root's when none does). The flag says whether that subtree is smaller
    /// than the whole tree (reclaiming inside it is possible).
    pub fn height_of_lowest_subtree_that_fits(
        &self,
        cq: ClusterQueueId,
        fr: Fr,
        val: i64,
    ) -> (u32, bool) {
        let n = self.cq_node(cq);
        let Some(mut tracking) = self.parent(n) else {
            return (0, false);
        };
        if !self.borrowing_with(n, fr, val) {
            return (0, true);
        }
        let mut remaining = val - self.local_available(n, fr);
        loop {
            if !self.borrowing_with(tracking, fr, remaining) {
                return (self.height(tracking), self.parent(tracking).is_some());
            }
            remaining -= self.local_available(tracking, fr);
            match self.parent(tracking) {
                Some(p) => tracking = p,
                None => return (self.height(tracking), false),
            }
        }
    }

    /// `IsWithinNominalInResources`: usage within subtree quota on every given `Fr`.
    pub fn within_nominal(&self, n: NodeIdx, frs: &[Fr]) -> bool {
        frs.iter()
            .all(|&fr| self.usage(n, fr) <= self.subtree_quota(n, fr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{ClusterQueue, Cohort, FlavorQuotas, ResourceFlavor, ResourceQuota};

    /// A ClusterQueue of the test trees: (cohort, nominal, borrowingLimit, lendingLimit).
    type TestCq = (Option<u32>, i64, Option<i64>, Option<i64>);

    /// One flavor, one resource.
    fn tree(cohorts: &[(Option<u32>, i64)], cqs: &[TestCq]) -> QuotaTree {
        let mut w = World::default();
        let r = w.resources.intern("cpu");
        w.flavors.push(ResourceFlavor {
            name: "f".into(),
            ..Default::default()
        });
        let group = |nominal, bl, ll| {
            vec![ResourceGroup {
                covered: vec![r],
                flavors: vec![FlavorQuotas {
                    flavor: FlavorId(0),
                    resources: vec![ResourceQuota {
                        resource: r,
                        nominal,
                        borrowing_limit: bl,
                        lending_limit: ll,
                    }],
                }],
            }]
        };
        for (i, &(parent, nominal)) in cohorts.iter().enumerate() {
            w.cohorts.push(Cohort {
                name: format!("co{i}"),
                parent: parent.map(CohortId),
                resource_groups: group(nominal, None, None),
                fair_sharing_weight_milli: 1000,
                declared: true,
            });
        }
        for (i, &(cohort, nominal, bl, ll)) in cqs.iter().enumerate() {
            w.cluster_queues.push(ClusterQueue {
                name: format!("cq{i}"),
                cohort: cohort.map(CohortId),
                resource_groups: group(nominal, bl, ll),
                ..Default::default()
            });
        }
        QuotaTree::new(&w)
    }

    const FR: Fr = Fr(0);

    #[test]
    fn lending_limit_keeps_the_rest_private() {
        // S-05's tree: lender 10 with lendingLimit 3, borrower 5 with borrowingLimit 10.
        let mut t = tree(
            &[(None, 0)],
            &[(Some(0), 10, None, Some(3)), (Some(0), 5, Some(10), None)],
        );
        let (lender, borrower) = (ClusterQueueId(0), ClusterQueueId(1));
        assert_eq!(t.subtree_quota(t.cohort_node(CohortId(0)), FR), 3 + 5);
        assert_eq!(t.available(borrower, FR), 8);
        t.add_usage(t.cq_node(borrower), FR, 5);
        // The borrower's own 5 are used (lent to the cohort), the lender lends only 3.
        assert_eq!(t.available(borrower, FR), 3);
        assert_eq!(t.potential_available(t.cq_node(borrower), FR), 8);
        // The lender still has its 7 private plus the 3 it lends.
        assert_eq!(t.available(lender, FR), 10);
        t.remove_usage(t.cq_node(borrower), FR, 5);
        assert_eq!(t.usage(t.cohort_node(CohortId(0)), FR), 0);
    }

    /// What the cohort could give without the limits, for telling which limit binds
    /// (`pendingBoundBy`): the borrowing limit lifted on the path, and the private quota the
    /// other members keep back with their lending limit.
    #[test]
    fn what_the_limits_hold_back() {
        // cq0: 10 with borrowingLimit 2; cq1: 10 lending 4 of it; cq2: 6, no limits.
        let mut t = tree(
            &[(None, 0)],
            &[
                (Some(0), 10, Some(2), None),
                (Some(0), 10, None, Some(4)),
                (Some(0), 6, None, None),
            ],
        );
        let n0 = t.cq_node(ClusterQueueId(0));
        assert_eq!(t.available_raw(n0, FR), 12);
        assert_eq!(t.available_without_borrowing_limits(n0, FR), 20);
        assert_eq!(t.potential_available(n0, FR), 12);
        assert_eq!(t.potential_available_without_borrowing_limits(n0, FR), 20);
        // cq1 keeps 6 private; cq2 lends all it has.
        assert_eq!(t.withheld_by_lending_limits(n0, FR, true), 6);
        t.add_usage(t.cq_node(ClusterQueueId(1)), FR, 8);
        assert_eq!(t.withheld_by_lending_limits(n0, FR, false), 0);
        assert_eq!(t.withheld_by_lending_limits(n0, FR, true), 6);
        // Its own path is never withheld from it.
        let n1 = t.cq_node(ClusterQueueId(1));
        assert_eq!(t.withheld_by_lending_limits(n1, FR, true), 0);
        // Without any lending limit nothing is withheld.
        let plain = tree(
            &[(None, 0)],
            &[(Some(0), 4, None, None), (Some(0), 4, None, None)],
        );
        assert_eq!(
            plain.withheld_by_lending_limits(plain.cq_node(ClusterQueueId(0)), FR, true),
            0
        );
    }

    #[test]
    fn borrowing_limit_caps_what_comes_from_the_parent() {
        let mut t = tree(
            &[(None, 0)],
            &[(Some(0), 50, Some(10), None), (Some(0), 50, None, None)],
        );
        let a = ClusterQueueId(0);
        assert_eq!(t.available(a, FR), 60);
        assert_eq!(t.potential_available(t.cq_node(a), FR), 60);
        t.add_usage(t.cq_node(ClusterQueueId(1)), FR, 45);
        assert_eq!(t.available(a, FR), 55);
    }

    #[test]
    fn usage_bubbles_only_past_private_quota() {
        let mut t = tree(
            &[(None, 0)],
            &[(Some(0), 6, None, Some(2)), (Some(0), 6, None, None)],
        );
        let (n, co) = (t.cq_node(ClusterQueueId(0)), t.cohort_node(CohortId(0)));
        t.add_usage(n, FR, 3);
        assert_eq!(t.usage(co, FR), 0, "3 of 4 private");
        t.add_usage(n, FR, 3);
        assert_eq!(t.usage(co, FR), 2);
        t.remove_usage(n, FR, 4);
        assert_eq!((t.usage(n, FR), t.usage(co, FR)), (2, 0));
    }

    #[test]
    fn heights_and_lowest_fitting_subtree() {
        // root(co0) ← mid(co1) ← cq0 (2), cq1 (0) under root directly.
        let mut t = tree(
            &[(None, 0), (Some(0), 0)],
            &[(Some(1), 2, None, None), (Some(0), 0, None, None)],
        );
        assert_eq!(t.height(t.cohort_node(CohortId(1))), 1);
        assert_eq!(t.height(t.cohort_node(CohortId(0))), 2);
        assert_eq!(
            t.height_of_lowest_subtree_that_fits(ClusterQueueId(0), FR, 2),
            (0, true)
        );
        t.add_usage(t.cq_node(ClusterQueueId(1)), FR, 1);
        // cq1 borrows 1 of cq0's quota through the root; cq0 is still within its nominal.
        assert_eq!(
            t.height_of_lowest_subtree_that_fits(ClusterQueueId(0), FR, 2),
            (0, true)
        );
        // Beyond its nominal nothing fits below the root.
        assert_eq!(
            t.height_of_lowest_subtree_that_fits(ClusterQueueId(0), FR, 3),
            (2, false)
        );
        assert_eq!(
            t.height_of_lowest_subtree_that_fits(ClusterQueueId(1), FR, 1),
            (2, false)
        );
    }

    #[test]
    fn marks_roll_usage_back() {
        let mut t = tree(
            &[(None, 0)],
            &[(Some(0), 6, None, Some(2)), (Some(0), 6, None, None)],
        );
        let (n, co) = (t.cq_node(ClusterQueueId(0)), t.cohort_node(CohortId(0)));
        t.add_usage(n, FR, 5);
        let outer = t.mark();
        t.add_usage(n, FR, 3);
        let inner = t.mark();
        t.remove_usage(n, FR, 8);
        t.rollback_to(inner);
        assert_eq!((t.usage(n, FR), t.usage(co, FR)), (8, 4));
        t.rollback_to(outer);
        assert_eq!((t.usage(n, FR), t.usage(co, FR)), (5, 1));
    }

    #[test]
    fn cohort_cycles_are_detected() {
        let t = tree(
            &[(Some(1), 0), (Some(0), 0), (None, 0)],
            &[(Some(0), 1, None, None), (Some(2), 1, None, None)],
        );
        assert!(t.in_cycle(ClusterQueueId(0)));
        assert!(!t.in_cycle(ClusterQueueId(1)));
    }

    #[test]
    fn a_chain_of_100000_cohorts_is_walked_without_recursion() {
        // Cohort i's parent is i − 1; the root lends 10, the ClusterQueue hangs off the last
        // one. Recursive walks would overflow the stack here, quadratic ones take minutes.
        let n = 100_000u32;
        let cohorts: Vec<(Option<u32>, i64)> = (0..n)
            .map(|i| (i.checked_sub(1), if i == 0 { 10 } else { 0 }))
            .collect();
        let mut t = tree(&cohorts, &[(Some(n - 1), 0, None, None)]);
        let fr = Fr(0);
        let cq = t.cq_node(ClusterQueueId(0));
        assert!(!t.in_cycle(ClusterQueueId(0)));
        assert_eq!(t.available(ClusterQueueId(0), fr), 10);
        assert_eq!(t.potential_available(cq, fr), 10);
        t.add_usage(cq, fr, 4);
        assert_eq!(t.available(ClusterQueueId(0), fr), 6);
        assert_eq!(t.usage(t.cohort_node(CohortId(0)), fr), 4);
        t.remove_usage(cq, fr, 4);
        assert_eq!(t.usage(t.cohort_node(CohortId(0)), fr), 0);
        assert_eq!(t.height(t.cohort_node(CohortId(0))), n);

        // A cycle at the top of a long chain makes everything below it cyclic.
        let mut cyclic = cohorts.clone();
        cyclic[0].0 = Some(n - 1);
        let t = tree(&cyclic, &[(Some(n - 1), 0, None, None)]);
        assert!(t.in_cycle(ClusterQueueId(0)));
    }
}
