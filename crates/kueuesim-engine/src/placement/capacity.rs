//! Free capacity of every node (per resource and pod slots), with the bitsets and occupancy
//! classes that let a filter scan skip nodes that cannot fit.

use kueuesim_model::{NodeId, ResourceList, World};

use super::{PodNeeds, node_classes};

/// The default `pods` capacity of a node that does not declare one (kubelet's maxPods).
pub const DEFAULT_MAX_PODS: i64 = 110;

/// Free capacity of every node, dense by (node, resource), plus free pod slots.
#[derive(Clone, Debug)]
pub struct NodeCapacity {
    pub(super) n_resources: usize,
    pub(super) free: Vec<i64>,
    pub(super) free_pods: Vec<i64>,
    /// Allocatable, in the layout of `free` (fixed): the scorers read it next to `free`
    /// instead of chasing each node's `allocatable` list.
    pub(super) alloc: Vec<i64>,
    /// Bumped on every change of `free`: results worked out on one version stay true while
    /// it holds.
    pub(super) version: u64,
    /// Per resource, a bitset over nodes (64 to a word, `words` words): bit set while the node
    /// has some of the resource free. A pod asking for a positive amount cannot fit where the
    /// bit is clear, so a filter scan skips 64 such nodes at a time (`candidates`).
    pub(super) has_free: Vec<u64>,
    /// The same for a free pod slot.
    pub(super) has_pod_slot: Vec<u64>,
    pub(super) words: usize,
    /// The nodes by occupancy class (kube-scheduler's scan), kept lazily.
    pub(super) classes: node_classes::NodeClasses,
    /// No node is unschedulable or has a taint that blocks scheduling: a pod without a
    /// nodeSelector passes every static filter on every node (`statically_feasible`).
    pub(super) plain: bool,
}

impl NodeCapacity {
    /// All nodes empty.
    pub fn new(world: &World) -> Self {
        let n_resources = world.resources.len();
        let pods = world.resources.lookup("pods");
        let mut free = Vec::with_capacity(world.nodes.len() * n_resources);
        let mut free_pods = Vec::with_capacity(world.nodes.len());
        for node in &world.nodes {
            free.extend((0..n_resources).map(|r| node.allocatable.get(r).copied().unwrap_or(0)));
            let max_pods = pods
                .and_then(|p| node.allocatable.get(p.index()).copied())
                .filter(|&p| p > 0)
                .unwrap_or(DEFAULT_MAX_PODS);
            free_pods.push(max_pods);
        }
        let words = world.nodes.len().div_ceil(64);
        let mut cap = NodeCapacity {
            n_resources,
            alloc: free.clone(),
            free,
            free_pods,
            version: 0,
            has_free: vec![0; n_resources * words],
            has_pod_slot: vec![0; words],
            words,
            classes: node_classes::NodeClasses::new(world.nodes.len(), n_resources),
            plain: world.nodes.iter().all(|n| {
                !n.unschedulable && n.taints.iter().all(|t| !t.effect.blocks_scheduling())
            }),
        };
        for node in 0..world.nodes.len() {
            for r in 0..n_resources {
                cap.mark(NodeId::from_index(node), r);
            }
            cap.mark_pods(NodeId::from_index(node));
        }
        cap
    }

    /// No nodes at all (the TAS view of a world without TAS flavors).
    pub fn empty() -> Self {
        NodeCapacity {
            n_resources: 0,
            free: Vec::new(),
            free_pods: Vec::new(),
            alloc: Vec::new(),
            version: 0,
            has_free: Vec::new(),
            has_pod_slot: Vec::new(),
            words: 0,
            classes: node_classes::NodeClasses::new(0, 0),
            plain: true,
        }
    }

    /// Brings `node`'s bit of `has_free` for resource `r` in line with its free amount.
    #[inline]
    pub(super) fn mark(&mut self, node: NodeId, r: usize) {
        let (w, b) = (node.index() / 64, node.index() % 64);
        let word = &mut self.has_free[r * self.words + w];
        if self.free[node.index() * self.n_resources + r] > 0 {
            *word |= 1 << b;
        } else {
            *word &= !(1 << b);
        }
    }

    /// Brings `node`'s bit of `has_pod_slot` in line with its free pod slots.
    #[inline]
    pub(super) fn mark_pods(&mut self, node: NodeId) {
        let (w, b) = (node.index() / 64, node.index() % 64);
        if self.free_pods[node.index()] >= 1 {
            self.has_pod_slot[w] |= 1 << b;
        } else {
            self.has_pod_slot[w] &= !(1 << b);
        }
    }

    /// Nodes `64·word ..` that may fit one more pod asking for `positive` (the resources
    /// it requests a positive amount of), as bits: a clear bit is a node where `fits` is
    /// false (no pod slot, or none of one of those resources free); a set bit still needs
    /// `fits`.
    #[inline]
    pub fn candidates(&self, word: usize, positive: &[usize]) -> u64 {
        positive.iter().fold(self.has_pod_slot[word], |m, &r| {
            m & self.has_free[r * self.words + word]
        })
    }

    /// Free amount of resource index `r` on `node`.
    #[inline]
    pub fn free(&self, node: NodeId, r: usize) -> i64 {
        self.free[node.index() * self.n_resources + r]
    }

    /// The version of the free capacity (changes on every bind and release).
    #[inline]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Allocatable amount of resource index `r` on `node`.
    #[inline]
    pub fn allocatable(&self, node: NodeId, r: usize) -> i64 {
        self.alloc[node.index() * self.n_resources + r]
    }

    /// Free pod slots on `node`.
    #[inline]
    pub fn free_pods(&self, node: NodeId) -> i64 {
        self.free_pods[node.index()]
    }

    /// Whether nodes `a` and `b` have equal free capacity, free pod slots and allocatable:
    /// NodeResourcesFit and every score computed from capacity alone answer them alike.
    #[inline]
    pub fn same_state(&self, a: NodeId, b: NodeId) -> bool {
        let n = self.n_resources;
        let (a, b) = (a.index(), b.index());
        // Element by element: a slice `==` on `i64` calls libc's `memcmp` for rows of a
        // handful of resources (`fill` asks this of every node that can take the pod).
        let same = |rows: &[i64]| {
            rows[a * n..][..n]
                .iter()
                .zip(&rows[b * n..][..n])
                .all(|(x, y)| x == y)
        };
        self.free_pods[a] == self.free_pods[b] && same(&self.free) && same(&self.alloc)
    }

    /// Binds (sign 1) or releases (sign -1) one pod with `requests` on `node`.
    pub fn apply(&mut self, node: NodeId, requests: &ResourceList, sign: i64) {
        // A world of a handful of resources (usually four: cpu, memory, GPUs, pods) takes
        // the change as one dense row of its resource count (`apply_delta`).
        match self.n_resources {
            1 => self.apply_delta::<1>(node, &dense_delta(requests, sign), sign),
            2 => self.apply_delta::<2>(node, &dense_delta(requests, sign), sign),
            3 => self.apply_delta::<3>(node, &dense_delta(requests, sign), sign),
            4 => self.apply_delta::<4>(node, &dense_delta(requests, sign), sign),
            5 => self.apply_delta::<5>(node, &dense_delta(requests, sign), sign),
            6 => self.apply_delta::<6>(node, &dense_delta(requests, sign), sign),
            7 => self.apply_delta::<7>(node, &dense_delta(requests, sign), sign),
            8 => self.apply_delta::<8>(node, &dense_delta(requests, sign), sign),
            _ => self.apply_pairs(node, requests, sign),
        }
    }

    /// `apply` with the change of `node`'s free capacity as a dense row (`delta[r]`: what
    /// resource `r`'s free amount moves by, `-sign·request` summed over the request's
    /// pairs) for a world of exactly `N` resources: the row is added as a fixed-size array,
    /// and a `has_free` bit is rewritten only where the amount crossed zero. The same state
    /// as `apply_pairs`: the sums are integer sums, and as a bit always says whether its
    /// amount is positive (`mark`), the bit after the pairs one by one is the sign of the
    /// final amount whichever crossings happened in between.
    #[inline(always)]
    pub(super) fn apply_delta<const N: usize>(
        &mut self,
        node: NodeId,
        delta: &[i64; N],
        sign: i64,
    ) {
        debug_assert_eq!(self.n_resources, N, "a dense row of another resource count");
        self.version += 1;
        self.classes.note(node);
        let (w, b) = (node.index() / 64, node.index() % 64);
        let row = self.free[node.index() * N..]
            .first_chunk_mut::<N>()
            .expect("every node has a row");
        for (r, (free, &d)) in row.iter_mut().zip(delta).enumerate() {
            let had = *free > 0;
            *free += d;
            let has = *free > 0;
            if had != has {
                let word = &mut self.has_free[r * self.words + w];
                *word = *word & !(1 << b) | u64::from(has) << b;
            }
        }
        let pods = &mut self.free_pods[node.index()];
        let had = *pods >= 1;
        *pods -= sign;
        if had != (*pods >= 1) {
            self.mark_pods(node);
        }
    }

    /// `apply` pair by pair, for a world of more resources than `apply_delta` is made for.
    fn apply_pairs(&mut self, node: NodeId, requests: &ResourceList, sign: i64) {
        self.version += 1;
        self.classes.note(node);
        let base = node.index() * self.n_resources;
        // A bit changes only when its amount crosses zero (one): the bitsets' words are
        // touched only then, not on every bind and release of the dry runs.
        for (r, a) in requests.iter() {
            let free = &mut self.free[base + r.index()];
            let had = *free > 0;
            *free -= sign * a;
            if had != (*free > 0) {
                self.mark(node, r.index());
            }
        }
        let pods = &mut self.free_pods[node.index()];
        let had = *pods >= 1;
        *pods -= sign;
        if had != (*pods >= 1) {
            self.mark_pods(node);
        }
    }

    /// Whether `pod` passes the static filters (unschedulable, taints, node selector) on every
    /// node, so that only `fits` can turn it down.
    #[inline]
    pub fn statically_plain(&self, pod: &PodNeeds) -> bool {
        self.plain && pod.node_selector.is_empty()
    }

    /// Whether one more pod with `requests` fits on `node` (NodeResourcesFit).
    #[inline]
    pub fn fits(&self, node: NodeId, requests: &ResourceList) -> bool {
        self.free_pods[node.index()] >= 1
            && requests
                .iter()
                .all(|(r, a)| a <= self.free(node, r.index()))
    }
}

/// The change one pod's `requests` bound (sign 1) or released (sign -1) makes to a node's
/// free capacity, as a dense row of a world's `N` resources (the pairs summed into it).
#[inline(always)]
pub(super) fn dense_delta<const N: usize>(requests: &ResourceList, sign: i64) -> [i64; N] {
    let mut delta = [0i64; N];
    for (r, q) in requests.iter() {
        // A request names a resource of the world (the loader interns every name): checked
        // in release too, so that a stray id cannot fall silently into another resource's
        // amount (`apply_pairs`, for worlds past eight resources, relies on the loader alone).
        assert!(r.index() < N, "a request for an unknown resource");
        delta[r.index()] -= sign * q;
    }
    delta
}

/// One pod's requests laid out for `NodeCapacity::fits` over node after node (`fill`'s pass
/// over a domain's candidates): the resource that turned the last node down is compared
/// first, as it most likely turns the next one down too (on a busy GPU cluster, GPUs), so a
/// node that cannot take the pod mostly costs one comparison. The answer is `fits`'s own:
/// the same comparisons, a conjunction of them taken in another order.
#[derive(Clone, Debug, Default)]
pub(crate) struct FitCheck {
    /// (resource index, amount) of each request; the order changes, the set does not.
    requests: Vec<(usize, i64)>,
}

impl FitCheck {
    /// Checks for `requests` from now on (the buffer reused).
    pub(crate) fn set(&mut self, requests: &ResourceList) {
        self.requests.clear();
        self.requests
            .extend(requests.iter().map(|(r, a)| (r.index(), a)));
    }

    /// `cap.fits(node, requests)`.
    #[inline]
    pub(crate) fn fits(&mut self, cap: &NodeCapacity, node: NodeId) -> bool {
        let base = node.index() * cap.n_resources;
        for i in 0..self.requests.len() {
            let (r, a) = self.requests[i];
            if a > cap.free[base + r] {
                self.requests.swap(0, i);
                return false;
            }
        }
        cap.free_pods[node.index()] >= 1
    }
}
