//! Occupancy classes of nodes: nodes whose free capacity, free pod slots and allocatable are
//! all equal answer every filter and score question about a resource-only pod the same way,
//! so a scan over thousands of nodes asks once per class instead of once per node.
//!
//! A large cluster of identical nodes sits in a few dozen such states at any time (empty,
//! one 8-GPU pod, two 4-GPU pods, ...). kube-scheduler's filter phase visits
//! `numFeasibleNodesToFind` nodes per pod (512 of 10,240) and runs NodeResourcesFit and the
//! score plugins on each; with each class's members kept as a bitset over nodes, the feasible
//! nodes of a word are the union of the feasible classes' words, and the best score is the
//! best feasible class that has a member in the scanned range (`node_search::class_scan`). Exact: a
//! class is the node's whole capacity state, not a summary of it.
//!
//! Kept lazily, like the other indexes of the cluster: a bind or release notes its node, and
//! the next reader re-files the noted nodes. A clone of the capacity (KAI's reclaim check,
//! the TAS cache) starts unbuilt, so it pays nothing unless a kube-scheduler scan reads it.

use kueuesim_model::{NodeId, ResourceList};

use super::NodeCapacity;
use super::noted::NotedNodes;

/// The registry is rebuilt from the live states once it holds this many (and then at twice
/// the live count): memory stays proportional to the states nodes are in now, not to every
/// state seen. Small in tests, so that the placement proptests cross rebuilds.
const MIN_LIMIT: usize = if cfg!(test) { 4 } else { 64 };

/// With more classes than this (nodes in many different states, as on a trace whose pods ask
/// arbitrary cpu and memory) the class scan would cost more than the node-by-node one (its
/// walk ORs every feasible class's word), so the index is dropped and the scan goes node by
/// node; `RETRY_AFTER` reads later it is built again to see.
const MAX_SCANNED_CLASSES: usize = 128;
const RETRY_AFTER: u32 = 1024;

/// Request lists whose class answers are kept (`NodeClasses::answers`): kube-scheduler pods
/// come in a handful of sizes.
const MAX_ANSWERS: usize = 16;

/// Words of a block (512 nodes): each class counts its members per block, so that a scan
/// looking for the `want`-th feasible node passes a whole block by adding one count per
/// feasible class instead of reading eight member words of each.
pub(crate) const BLOCK_WORDS: usize = 8;

#[derive(Debug)]
pub(crate) struct NodeClasses {
    /// Values per state: `2 · resources + 1`.
    stride: usize,
    /// Nodes, words per member bitset, and blocks of `BLOCK_WORDS` words.
    nodes: usize,
    words: usize,
    blocks: usize,
    /// Class `k` stands for `states[k·stride .. (k+1)·stride]`: (free per resource,
    /// allocatable per resource, free pod slots).
    states: Vec<i64>,
    /// Open addressing (linear probing) over `states`, a power of two long: class + 1, or 0.
    buckets: Vec<u32>,
    /// Whether the index below reflects the nodes (apart from `stale`).
    built: bool,
    /// Per node, its class.
    class_of: Vec<u32>,
    /// Class `k`'s nodes: `members[k·words .. (k+1)·words]`, bit per node.
    members: Vec<u64>,
    /// Class `k`'s node count.
    count: Vec<u32>,
    /// Class `k`'s node count per block: `block_count[k·blocks + b]`.
    block_count: Vec<u32>,
    /// Per class `k`, the class the last node re-filed out of `k` went to (`u32::MAX`: none
    /// yet): nodes leave a class mostly the same way (the same pod shape bound or gone), so
    /// re-filing tries that class's state first, a comparison, before the registry's hash.
    /// Any class will do for correctness: a node in a class's state is filed there, as each
    /// state has one class (`class_id` registers a state only when it is not found).
    /// Invariant: the hint's allocatable is `k`'s (the node that moved kept its
    /// allocatable), so `in_state_of` compares only the free part (`check_classes` checks).
    moved_to: Vec<u32>,
    /// Per node, `alloc_hash` of its allocatable (fixed for the run): the part of the
    /// state's hash `class_id` need not work out again at every re-filing.
    alloc_hash: Vec<u64>,
    /// Nodes whose capacity changed since they were filed.
    stale: NotedNodes,
    /// Registry size that triggers a rebuild.
    limit: usize,
    /// Bumped whenever class ids are reassigned: a table indexed by class is then void.
    generation: u32,
    /// Reads left before the index, dropped for having too many classes, is tried again.
    given_up: u32,
    /// kube-scheduler's answers per class for the pod requests it scanned lately (`kube::place`):
    /// (requests, (the generation the answers are for, per class its score or no fit)). A
    /// class's state never changes while its id stands, so the answers hold for the whole
    /// generation; `class_scan` starts a table of another generation over. Kept here, not in
    /// the cluster, so that a copy (which starts unbuilt, its ids from a generation count of
    /// its own) never reads them.
    answers: Vec<(ResourceList, (u32, Vec<i64>))>,
}

impl Clone for NodeClasses {
    /// Unbuilt: a copy of the capacity is rarely scanned by kube-scheduler, and copying the
    /// member bitsets would cost every copy.
    fn clone(&self) -> Self {
        NodeClasses::new(self.nodes, (self.stride - 1) / 2)
    }
}

impl NodeClasses {
    pub(super) fn new(nodes: usize, n_resources: usize) -> Self {
        NodeClasses {
            stride: 2 * n_resources + 1,
            nodes,
            words: nodes.div_ceil(64),
            blocks: nodes.div_ceil(64).div_ceil(BLOCK_WORDS),
            states: Vec::new(),
            buckets: Vec::new(),
            built: false,
            class_of: Vec::new(),
            members: Vec::new(),
            count: Vec::new(),
            block_count: Vec::new(),
            moved_to: Vec::new(),
            alloc_hash: Vec::new(),
            stale: NotedNodes::default(),
            limit: MIN_LIMIT,
            generation: 0,
            given_up: 0,
            answers: Vec::new(),
        }
    }

    /// The class answers kept for pods of `requests` (`answers`), taken out; a table of no
    /// generation when none are kept.
    pub(crate) fn take_answers(&mut self, requests: &ResourceList) -> (u32, Vec<i64>) {
        match self.answers.iter().position(|(r, _)| r == requests) {
            Some(i) => std::mem::take(&mut self.answers[i].1),
            None => (u32::MAX, Vec::new()),
        }
    }

    /// Keeps `table`, the class answers for pods of `requests`, for the next scan of such
    /// pods; past `MAX_ANSWERS` request lists the one kept longest makes room.
    pub(crate) fn keep_answers(&mut self, requests: &ResourceList, table: (u32, Vec<i64>)) {
        if table.0 == u32::MAX {
            return;
        }
        if let Some(i) = self.answers.iter().position(|(r, _)| r == requests) {
            self.answers[i].1 = table;
            return;
        }
        if self.answers.len() >= MAX_ANSWERS {
            self.answers.remove(0);
        }
        self.answers.push((requests.clone(), table));
    }

    /// A bind or release changed `node`'s capacity.
    #[inline]
    pub(super) fn note(&mut self, node: NodeId) {
        if self.built {
            self.stale.note(node);
        }
    }

    /// Number of classes (ids are `0..len`; some may have no node).
    pub(crate) fn len(&self) -> usize {
        self.count.len()
    }

    /// How many nodes are in class `k`.
    pub(crate) fn count(&self, k: usize) -> u32 {
        self.count[k]
    }

    /// Every class's node count, by class id.
    pub(crate) fn counts(&self) -> &[u32] {
        &self.count
    }

    /// Word `w` of class `k`'s member bitset.
    #[inline]
    pub(crate) fn word(&self, k: usize, w: usize) -> u64 {
        self.members[k * self.words + w]
    }

    /// Class `k`'s member bitset, one word per 64 nodes.
    #[inline]
    pub(crate) fn row(&self, k: usize) -> &[u64] {
        &self.members[k * self.words..(k + 1) * self.words]
    }

    /// How many of class `k`'s nodes are in block `b` (words `b·BLOCK_WORDS..`).
    #[inline]
    pub(crate) fn block(&self, k: usize, b: usize) -> u32 {
        self.block_count[k * self.blocks + b]
    }

    /// Some node of class `k` (which must have one).
    pub(crate) fn some_member(&self, k: usize) -> NodeId {
        let row = &self.members[k * self.words..(k + 1) * self.words];
        let (w, bits) = row
            .iter()
            .enumerate()
            .find(|(_, b)| **b != 0)
            .expect("a class with a node");
        NodeId::from_index(w * 64 + bits.trailing_zeros() as usize)
    }

    /// The class `node` is filed under.
    #[inline]
    pub(crate) fn class_of(&self, node: NodeId) -> usize {
        self.class_of[node.index()] as usize
    }

    /// Changes when class ids are reassigned.
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// Moves node `i` from class `old` to class `new`: its member bit, the counts, its class.
    #[inline(always)]
    fn move_node(&mut self, i: usize, old: usize, new: usize) {
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        self.members[old * self.words + w] &= !bit;
        self.members[new * self.words + w] |= bit;
        self.count[old] -= 1;
        self.count[new] += 1;
        let b = w / BLOCK_WORDS;
        self.block_count[old * self.blocks + b] -= 1;
        self.block_count[new * self.blocks + b] += 1;
        self.class_of[i] = new as u32;
    }
}

/// FxHash's step: the key is a few dozen integers and the table is ours alone, so a
/// multiplicative hash is enough.
#[inline]
pub(crate) fn mix(h: u64, x: i64) -> u64 {
    (h.rotate_left(5) ^ x as u64).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// The allocatable's part of a state's hash (`state_hash`).
fn alloc_hash(alloc: &[i64]) -> u64 {
    alloc.iter().fold(0, |h, &x| mix(h, x))
}

/// A state's hash in the registry: the allocatable's part (`alloc_hash`, kept per node), then
/// the free capacity and pod slots. Only bucket positions depend on it, never class ids
/// (those go by first registration).
#[inline]
fn state_hash(alloc_h: u64, free: &[i64], pods: i64) -> u64 {
    mix(free.iter().fold(alloc_h, |h, &x| mix(h, x)), pods)
}

impl NodeCapacity {
    /// The occupancy classes as last brought up to date (`node_classes`).
    pub(crate) fn classes(&self) -> &NodeClasses {
        debug_assert!(
            self.classes.built && self.classes.stale.is_empty(),
            "classes read before node_classes"
        );
        &self.classes
    }

    /// Brings the classes up to date and says whether they are few enough for the class scan
    /// (`MAX_SCANNED_CLASSES`); if not, drops them (no upkeep on binds meanwhile) and answers
    /// no for the next `RETRY_AFTER` reads.
    pub(crate) fn node_classes_if_few(&mut self) -> bool {
        if self.classes.given_up > 0 {
            self.classes.given_up -= 1;
            return false;
        }
        if self.node_classes().len() <= MAX_SCANNED_CLASSES {
            return true;
        }
        let generation = self.classes.generation;
        self.classes = NodeClasses::new(self.classes.nodes, self.n_resources);
        // Ids of a later build must not match a table made under this one.
        self.classes.generation = generation.wrapping_add(1);
        self.classes.given_up = RETRY_AFTER;
        false
    }

    /// The occupancy classes, with every node filed under its current state.
    pub(crate) fn node_classes(&mut self) -> &NodeClasses {
        if !self.classes.built {
            self.rebuild_classes();
        } else if !self.classes.stale.is_empty() {
            // The world's resource count as a constant (usually four: cpu, memory, GPUs,
            // pods): each re-filed node's state is compared as fixed-size rows.
            match self.n_resources {
                1 => self.refile_stale::<1>(),
                2 => self.refile_stale::<2>(),
                3 => self.refile_stale::<3>(),
                4 => self.refile_stale::<4>(),
                5 => self.refile_stale::<5>(),
                6 => self.refile_stale::<6>(),
                7 => self.refile_stale::<7>(),
                8 => self.refile_stale::<8>(),
                _ => self.refile_stale_any(),
            }
        }
        &self.classes
    }

    /// Files each node noted stale under the class of its current state; `N`: the world's
    /// resource count (1 to 8; `refile_stale_any` for more). Most nodes are back in their class's state or in its `moved_to` hint's: those are
    /// re-filed by `refile_known` with the rows borrowed once; a node in neither goes through
    /// the registry (`refile_new`), which may add a class or rebuild.
    fn refile_stale<const N: usize>(&mut self) {
        let generation = self.classes.generation;
        let mut stale = std::mem::take(&mut self.classes.stale);
        let mut nodes = stale.drain();
        while let Some(node) = self.refile_known::<N>(&mut nodes) {
            if !self.refile_new(node, true) {
                // The registry was rebuilt: every node is filed already.
                break;
            }
        }
        drop(nodes);
        if self.classes.generation == generation {
            // Keep the emptied list's buffer and marks for the next notes (a rebuild made
            // fresh ones).
            self.classes.stale = stale;
        }
    }

    /// `refile_stale` node by node for a world of more resources than it is made for.
    fn refile_stale_any(&mut self) {
        let generation = self.classes.generation;
        let mut stale = std::mem::take(&mut self.classes.stale);
        for node in stale.drain() {
            if !self.refile_new(node, false) {
                break;
            }
        }
        if self.classes.generation == generation {
            self.classes.stale = stale;
        }
    }

    /// Re-files the nodes of `nodes`, in order, that are in their class's state (nothing
    /// moves, as `class_id` would answer that class) or in its `moved_to` hint's (the node
    /// moves there), for a world of `N > 0` resources; stops at the first node in neither
    /// and returns it. The rows are borrowed once and cut to the node and class counts, so
    /// that a node's or a class's index is checked once, not at every row; a node's free
    /// part is read once for both comparisons, a class's state is one row of the constant
    /// stride `2·N + 1`, compared as fixed-size arrays (no `memcmp`). Exact as `in_state_of`
    /// (the two classes asked about have the node's allocatable).
    fn refile_known<const N: usize>(
        &mut self,
        nodes: &mut impl Iterator<Item = NodeId>,
    ) -> Option<NodeId> {
        let cl = &mut self.classes;
        debug_assert_eq!(
            cl.stride,
            2 * N + 1,
            "a fixed row of another resource count"
        );
        let (n, len) = (cl.nodes, cl.count.len());
        let free = &self.free.as_chunks::<N>().0[..n];
        let free_pods = &self.free_pods[..n];
        let class_of = &mut cl.class_of[..n];
        let states = &cl.states[..len * (2 * N + 1)];
        let moved_to = &cl.moved_to[..len];
        let count = &mut cl.count[..len];
        let (members, words) = (&mut cl.members, cl.words);
        let (block_count, blocks) = (&mut cl.block_count, cl.blocks);
        for node in nodes {
            let i = node.index();
            let old = class_of[i] as usize;
            let mine = (&free[i], free_pods[i]);
            let in_state = |k: usize| {
                let s = &states[k * (2 * N + 1)..][..2 * N + 1];
                debug_assert!(
                    s[N..2 * N] == self.alloc[i * N..][..N],
                    "refile_known asked about a class of another allocatable"
                );
                s[2 * N] == mine.1 && s.first_chunk::<N>() == Some(mine.0)
            };
            if in_state(old) {
                continue;
            }
            let hint = moved_to[old] as usize;
            if hint == u32::MAX as usize || !in_state(hint) {
                return Some(node);
            }
            // Not `old`: the node is not in `old`'s state, the hint's is the node's, and
            // each state has one class.
            debug_assert_ne!(hint, old, "a hint to its own class");
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            members[old * words + w] &= !bit;
            members[hint * words + w] |= bit;
            count[old] -= 1;
            count[hint] += 1;
            let b = w / BLOCK_WORDS;
            block_count[old * blocks + b] -= 1;
            block_count[hint * blocks + b] += 1;
            class_of[i] = hint as u32;
        }
        None
    }

    /// Re-files `node` (through the hint first unless `compared`: `refile_known` found the
    /// node in neither its class's state nor the hint's), registering its state if new;
    /// false when that rebuilt the registry (every node is then filed already).
    fn refile_new(&mut self, node: NodeId, compared: bool) -> bool {
        let generation = self.classes.generation;
        let old = self.classes.class_of[node.index()] as usize;
        if !compared && self.in_state_of(node, old) {
            // Back in the state it was filed under (a bind undone, a pod gone and
            // another alike bound): nothing moves, as `class_id` would answer `old`.
            return true;
        }
        let hint = self.classes.moved_to[old];
        let new = if !compared && hint != u32::MAX && self.in_state_of(node, hint as usize) {
            hint as usize
        } else {
            let new = self.class_id(node);
            if self.classes.generation != generation {
                return false;
            }
            self.classes.moved_to[old] = new as u32;
            new
        };
        // Not `old`: the node is not in `old`'s state, and each state has one class (the
        // hint's state is the node's; `class_id` answers the node's).
        debug_assert_ne!(new, old, "a node re-filed under the class it left");
        self.classes.move_node(node.index(), old, new);
        true
    }

    /// Files every node afresh under a new registry of the states they are in.
    fn rebuild_classes(&mut self) {
        let cl = &mut self.classes;
        cl.generation = cl.generation.wrapping_add(1);
        cl.states.clear();
        cl.buckets.clear();
        cl.buckets.resize(64, 0);
        cl.members.clear();
        cl.count.clear();
        cl.block_count.clear();
        cl.moved_to.clear();
        cl.class_of.clear();
        cl.class_of.resize(cl.nodes, 0);
        cl.stale = NotedNodes::new(cl.nodes);
        if cl.alloc_hash.is_empty() {
            let nr = self.n_resources;
            cl.alloc_hash = (0..cl.nodes)
                .map(|n| alloc_hash(&self.alloc[n * nr..(n + 1) * nr]))
                .collect();
        }
        // No rebuild from inside this one: every state of the nodes gets registered.
        cl.limit = usize::MAX;
        for n in 0..self.classes.nodes {
            let k = self.class_id(NodeId::from_index(n));
            let cl = &mut self.classes;
            cl.members[k * cl.words + n / 64] |= 1 << (n % 64);
            cl.count[k] += 1;
            cl.block_count[k * cl.blocks + n / 64 / BLOCK_WORDS] += 1;
            cl.class_of[n] = k as u32;
        }
        let cl = &mut self.classes;
        cl.limit = (2 * cl.len()).max(MIN_LIMIT);
        cl.built = true;
    }

    /// Whether `node`'s current state is class `k`'s, for a class `k` whose allocatable is
    /// the node's: the class it is filed under, or that class's `moved_to` hint (see there).
    /// The allocatable never changes, so only the free pod slots and free capacity are
    /// compared, element by element (a slice comparison calls `memcmp`, which costs more
    /// than the handful of values here; this runs for every node re-filed).
    #[inline(always)]
    fn in_state_of(&self, node: NodeId, k: usize) -> bool {
        let (nr, cl) = (self.n_resources, &self.classes);
        let base = node.index() * nr;
        let s = &cl.states[k * cl.stride..][..cl.stride];
        debug_assert!(
            s[nr..2 * nr] == self.alloc[base..base + nr],
            "in_state_of asked about a class of another allocatable"
        );
        s[2 * nr] == self.free_pods[node.index()]
            && s[..nr]
                .iter()
                .zip(&self.free[base..base + nr])
                .all(|(a, b)| a == b)
    }

    /// The class of `node`'s current state, registering the state if it is new. A new state
    /// past the registry's limit rebuilds the whole index first (the generation changes: the
    /// caller's view of the other nodes' classes is then void).
    fn class_id(&mut self, node: NodeId) -> usize {
        let nr = self.n_resources;
        let base = node.index() * nr;
        let free = &self.free[base..base + nr];
        let alloc = &self.alloc[base..base + nr];
        let pods = self.free_pods[node.index()];
        let cl = &mut self.classes;
        let h = state_hash(cl.alloc_hash[node.index()], free, pods);
        let stride = cl.stride;
        let mask = cl.buckets.len() - 1;
        let mut i = (h >> 32) as usize & mask;
        loop {
            match cl.buckets[i] {
                0 => break,
                k => {
                    let s = &cl.states[(k as usize - 1) * stride..k as usize * stride];
                    if s[..nr] == *free && s[nr..2 * nr] == *alloc && s[2 * nr] == pods {
                        return k as usize - 1;
                    }
                    i = (i + 1) & mask;
                }
            }
        }
        if cl.len() >= cl.limit {
            // Too many states, most of them no longer any node's: start over from the live
            // ones (files every node, this one included).
            self.rebuild_classes();
            return self.classes.class_of[node.index()] as usize;
        }
        let k = cl.len();
        cl.states.extend_from_slice(free);
        cl.states.extend_from_slice(alloc);
        cl.states.push(pods);
        cl.count.push(0);
        cl.moved_to.push(u32::MAX);
        cl.block_count.resize(cl.block_count.len() + cl.blocks, 0);
        cl.members.resize(cl.members.len() + cl.words, 0);
        cl.buckets[i] = k as u32 + 1;
        if 2 * cl.len() > cl.buckets.len() {
            let size = cl.buckets.len() * 2;
            cl.buckets = vec![0; size];
            for k in 0..cl.len() {
                let s = &cl.states[k * stride..(k + 1) * stride];
                let h = state_hash(alloc_hash(&s[nr..2 * nr]), &s[..nr], s[2 * nr]);
                let mut i = (h >> 32) as usize & (size - 1);
                while cl.buckets[i] != 0 {
                    i = (i + 1) & (size - 1);
                }
                cl.buckets[i] = k as u32 + 1;
            }
        }
        k
    }
}

impl NodeCapacity {
    /// Whether every node not noted stale is filed under the class of its current state, in
    /// that class's members and count, and nowhere else (an invariant `check_indexes` states).
    pub(crate) fn check_classes(&self) -> Result<(), String> {
        let cl = &self.classes;
        if !cl.built {
            return Ok(());
        }
        let nr = self.n_resources;
        // `alloc_hash` is worked out once per build from the allocatable, which never changes.
        for (n, &h) in cl.alloc_hash.iter().enumerate() {
            if h != alloc_hash(&self.alloc[n * nr..(n + 1) * nr]) {
                return Err(format!("node {n}: allocatable hash out of date"));
            }
        }
        if cl.moved_to.len() != cl.len()
            || cl
                .moved_to
                .iter()
                .any(|&k| k != u32::MAX && k as usize >= cl.len())
        {
            return Err(format!(
                "re-filing hints {:?} for {} classes",
                cl.moved_to,
                cl.len()
            ));
        }
        // A hint has its class's allocatable (`in_state_of` compares only the free part).
        for (k, &hint) in cl.moved_to.iter().enumerate() {
            let alloc_of = |k: usize| &cl.states[k * cl.stride + nr..][..nr];
            if hint != u32::MAX && alloc_of(hint as usize) != alloc_of(k) {
                return Err(format!(
                    "class {k}'s re-filing hint {hint} has another allocatable"
                ));
            }
        }
        // Each registered state has one class: a node in a hinted class's state belongs there.
        let mut states: Vec<&[i64]> = cl.states.chunks(cl.stride).collect();
        states.sort_unstable();
        if states.windows(2).any(|p| p[0] == p[1]) {
            return Err("a state is registered under two classes".into());
        }
        let mut count = vec![0u32; cl.len()];
        let mut block_count = vec![0u32; cl.len() * cl.blocks];
        for n in 0..cl.nodes {
            let k = cl.class_of[n] as usize;
            count[k] += 1;
            block_count[k * cl.blocks + n / 64 / BLOCK_WORDS] += 1;
            for j in 0..cl.len() {
                let member = cl.members[j * cl.words + n / 64] & (1 << (n % 64)) != 0;
                if member != (j == k) {
                    return Err(format!(
                        "node {n}: class {k}, member bit of class {j} is {member}"
                    ));
                }
            }
            if cl.stale.contains(NodeId::from_index(n)) {
                continue;
            }
            let s = &cl.states[k * cl.stride..(k + 1) * cl.stride];
            let base = n * nr;
            if s[..nr] != self.free[base..base + nr]
                || s[nr..2 * nr] != self.alloc[base..base + nr]
                || s[2 * nr] != self.free_pods[n]
            {
                return Err(format!("node {n} is not in the state of its class {k}"));
            }
        }
        if count != cl.count {
            return Err(format!(
                "class counts {:?}, nodes filed {count:?}",
                cl.count
            ));
        }
        if block_count != cl.block_count {
            return Err(format!(
                "class counts per block {:?}, nodes filed {block_count:?}",
                cl.block_count
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kueuesim_model::{NodeId, ResourceList, World};

    use super::super::NodeCapacity;

    proptest::proptest! {
        /// Binds and releases of varied sizes, read now and then: every read files each node
        /// under its current state, across the registry's rebuilds (many distinct states).
        /// Nodes of two sizes, so that equal free capacities of different allocatables are
        /// different classes (re-filing compares only the free part, `in_state_of`).
        #[test]
        fn classes_follow_binds_and_releases(
            ops in proptest::collection::vec((0usize..40, 1i64..9, proptest::bool::ANY, proptest::bool::ANY), 1..300),
        ) {
            let mut w = World::default();
            let cpu = w.resources.intern("cpu");
            let gpu = w.resources.intern("nvidia.com/gpu");
            for i in 0..40 {
                w.nodes.push(kueuesim_model::Node {
                    name: format!("n{i}"),
                    labels: Default::default(),
                    allocatable: if i % 2 == 0 { vec![64_000, 8] } else { vec![56_000, 8] },
                    taints: vec![],
                    unschedulable: false,
                });
            }
            let mut cap = NodeCapacity::new(&w);
            let mut generations = std::collections::BTreeSet::new();
            for (node, amount, bind, read) in ops {
                let pod = ResourceList::from_pairs(vec![(cpu, amount * 1_000 + node as i64), (gpu, amount % 3)]);
                cap.apply(NodeId::from_index(node), &pod, if bind { 1 } else { -1 });
                if read {
                    generations.insert(cap.node_classes().generation());
                    proptest::prop_assert_eq!(cap.check_classes(), Ok(()));
                }
            }
            cap.node_classes();
            proptest::prop_assert_eq!(cap.check_classes(), Ok(()));
            // A clone starts unbuilt and builds on its first read.
            let mut copy = cap.clone();
            copy.node_classes();
            proptest::prop_assert_eq!(copy.check_classes(), Ok(()));
        }
    }

    /// `n` nodes of a million millicores, and the id of `cpu`.
    fn cpu_nodes(n: usize) -> (World, kueuesim_model::ResourceId) {
        let mut w = World::default();
        let cpu = w.resources.intern("cpu");
        for i in 0..n {
            w.nodes.push(kueuesim_model::Node {
                name: format!("n{i}"),
                labels: Default::default(),
                allocatable: vec![1_000_000],
                taints: vec![],
                unschedulable: false,
            });
        }
        (w, cpu)
    }

    #[test]
    fn too_many_classes_give_way_to_the_node_scan_for_a_while() {
        let (w, cpu) = cpu_nodes(300);
        let mut cap = NodeCapacity::new(&w);
        assert!(cap.node_classes_if_few(), "one class: all nodes empty");
        // Every node in a state of its own: 300 classes.
        let pods: Vec<ResourceList> = (0..300)
            .map(|i| ResourceList::from_pairs(vec![(cpu, 1 + i as i64)]))
            .collect();
        for (i, pod) in pods.iter().enumerate() {
            cap.apply(NodeId::from_index(i), pod, 1);
        }
        assert!(!cap.node_classes_if_few());
        assert_eq!(cap.check_classes(), Ok(()), "dropped: nothing to check");
        for (i, pod) in pods.iter().enumerate() {
            cap.apply(NodeId::from_index(i), pod, -1);
        }
        // Given up for a while, then built again: one class.
        for _ in 0..super::RETRY_AFTER {
            assert!(!cap.node_classes_if_few());
        }
        assert!(cap.node_classes_if_few());
        assert_eq!(cap.classes().len(), 1);
        assert_eq!(cap.check_classes(), Ok(()));
    }

    #[test]
    fn many_states_rebuild_the_registry() {
        let (w, cpu) = cpu_nodes(8);
        let mut cap = NodeCapacity::new(&w);
        let first = cap.node_classes().generation();
        for step in 1..100 {
            let pod = ResourceList::from_pairs(vec![(cpu, step)]);
            cap.apply(NodeId::from_index(step as usize % 8), &pod, 1);
            cap.node_classes();
            assert_eq!(cap.check_classes(), Ok(()));
        }
        // 99 distinct states went through 8 nodes: the registry started over several times
        // and holds no more than twice the live states.
        assert!(cap.classes().generation() > first + 3);
        assert!(cap.classes().len() <= 2 * 8 + 1);
    }
}
