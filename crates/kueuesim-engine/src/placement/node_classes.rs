//! Occupancy classes of nodes: nodes whose free capacity, free pod slots and allocatable are
//! all equal answer every filter and score question about a resource-only pod the same way,
//! so a scan over thousands of nodes asks once per class instead of once per node.
//!
//! A large cluster of identical nodes sits in a few hundred such states at any time (empty,
//! one 8-GPU pod, two 4-GPU pods, ...). kube-scheduler's filter phase visits
//! `numFeasibleNodesToFind` nodes per pod (512 of 10,240) and runs NodeResourcesFit and the
//! score plugins on each; with classes a visit is a table lookup. Exact: a class is the node's
//! whole capacity state, not a summary of it.

use kueuesim_model::NodeId;

use super::NodeCapacity;

/// `NodeCapacity::class_of` of a node changed since it was last classified.
pub(super) const UNCLASSED: u32 = u32::MAX;

/// More distinct states than this and the registry starts over (a new generation): it then
/// holds only states seen since, so memory stays bounded on long, varied runs. Small in
/// tests, so that the placement proptests cross restarts.
const MAX_CLASSES: usize = if cfg!(test) { 16 } else { 1 << 16 };

/// The distinct capacity states seen, each once: (free per resource, allocatable per
/// resource, free pod slots) flattened, found by an open-addressing table of their hashes.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeClasses {
    /// Values per class: `2 · resources + 1`.
    stride: usize,
    /// Class `k` is `states[k·stride .. (k+1)·stride]`.
    states: Vec<i64>,
    /// Open addressing (linear probing), a power of two long: class + 1, or 0 for empty.
    buckets: Vec<u32>,
    /// Bumped when the registry starts over: class ids of an older generation mean nothing.
    generation: u32,
}

impl NodeClasses {
    pub(super) fn new(n_resources: usize) -> Self {
        NodeClasses {
            stride: 2 * n_resources + 1,
            states: Vec::new(),
            buckets: vec![0; 64],
            generation: 0,
        }
    }

    fn len(&self) -> usize {
        self.states.len().checked_div(self.stride).unwrap_or(0)
    }
}

/// FxHash's step: the key is a few dozen integers and the table is ours alone, so a
/// multiplicative hash is enough.
#[inline]
fn mix(h: u64, x: i64) -> u64 {
    (h.rotate_left(5) ^ x as u64).wrapping_mul(0x517c_c1b7_2722_0a95)
}

impl NodeCapacity {
    /// The class of `node`'s current capacity state, registering the state if it is new.
    #[inline]
    pub fn classify(&mut self, node: NodeId) -> u32 {
        let c = self.class_of[node.index()];
        if c != UNCLASSED {
            return c;
        }
        self.classify_slow(node)
    }

    #[inline(never)]
    fn classify_slow(&mut self, node: NodeId) -> u32 {
        let nr = self.n_resources;
        let base = node.index() * nr;
        let free = &self.free[base..base + nr];
        let alloc = &self.alloc[base..base + nr];
        let pods = self.free_pods[node.index()];
        let h = free
            .iter()
            .chain(alloc)
            .fold(mix(0, pods), |h, &x| mix(h, x));
        let cl = &mut self.classes;
        let stride = cl.stride;
        let is = |cl: &NodeClasses, k: usize| {
            let s = &cl.states[k * stride..(k + 1) * stride];
            s[..nr] == *free && s[nr..2 * nr] == *alloc && s[2 * nr] == pods
        };
        let mask = cl.buckets.len() - 1;
        let mut i = (h >> 32) as usize & mask;
        loop {
            match cl.buckets[i] {
                0 => break,
                k if is(cl, k as usize - 1) => {
                    self.class_of[node.index()] = k - 1;
                    return k - 1;
                }
                _ => i = (i + 1) & mask,
            }
        }
        // A new state.
        if cl.len() >= MAX_CLASSES {
            cl.states.clear();
            cl.buckets.iter_mut().for_each(|b| *b = 0);
            cl.generation = cl.generation.wrapping_add(1);
            self.class_of.iter_mut().for_each(|c| *c = UNCLASSED);
            return self.classify_slow(node);
        }
        let k = cl.len() as u32;
        cl.states.extend_from_slice(free);
        cl.states.extend_from_slice(alloc);
        cl.states.push(pods);
        cl.buckets[i] = k + 1;
        if 2 * cl.len() > cl.buckets.len() {
            self.rehash();
        }
        self.class_of[node.index()] = k;
        k
    }

    /// Doubles the bucket table and puts every class back in it.
    fn rehash(&mut self) {
        let cl = &mut self.classes;
        let size = cl.buckets.len() * 2;
        cl.buckets = vec![0; size];
        for k in 0..cl.len() {
            let s = &cl.states[k * cl.stride..(k + 1) * cl.stride];
            let nr = (cl.stride - 1) / 2;
            let h = s[..2 * nr]
                .iter()
                .fold(mix(0, s[2 * nr]), |h, &x| mix(h, x));
            let mut i = (h >> 32) as usize & (size - 1);
            while cl.buckets[i] != 0 {
                i = (i + 1) & (size - 1);
            }
            cl.buckets[i] = k as u32 + 1;
        }
    }

    /// Changes when class ids are reassigned (the registry started over): a table indexed by
    /// class must then be emptied.
    #[inline]
    pub fn class_generation(&self) -> u32 {
        self.classes.generation
    }

    /// `scan_candidates` handing `visit` each candidate node with its class (and the capacity,
    /// to work out a new class's answer from that node). Stops at the first node for which
    /// `visit` returns true and returns it; None when the walk went round.
    pub fn scan_classified(
        &mut self,
        n: usize,
        start: usize,
        positive: &[usize],
        mut visit: impl FnMut(&NodeCapacity, NodeId, u32) -> bool,
    ) -> Option<NodeId> {
        super::walk_words(
            self,
            n,
            start,
            |c, w| c.candidates(w, positive),
            |c, node| {
                let class = c.classify(node);
                visit(c, node, class)
            },
        )
    }
}
