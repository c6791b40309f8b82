//! Resource names interned into dense ids, and resource lists as Kueue does arithmetic on them.
//!
//! Amounts are `i64` in Kueue's units (`resources.ResourceValue`): millicores for `cpu`, whole
//! units (bytes, GPUs, pods) for everything else.

use crate::ids::ResourceId;

/// The well-known name of the GPU resource the summaries report on.
pub const GPU: &str = "nvidia.com/gpu";

/// The interned resource names of one scenario, in first-seen order.
#[derive(Clone, Debug, Default)]
pub struct ResourceTable {
    names: Vec<String>,
}

impl ResourceTable {
    /// The id of `name`, interning it if new.
    pub fn intern(&mut self, name: &str) -> ResourceId {
        match self.lookup(name) {
            Some(id) => id,
            None => {
                self.names.push(name.to_string());
                ResourceId::from_index(self.names.len() - 1)
            }
        }
    }

    /// The id of `name`, if interned. Linear: there are only a handful of resources.
    pub fn lookup(&self, name: &str) -> Option<ResourceId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(ResourceId::from_index)
    }

    /// The name of `id`.
    pub fn name(&self, id: ResourceId) -> &str {
        &self.names[id.index()]
    }

    /// How many resources are interned.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A sparse list of `(resource, amount)` sorted by resource id, zero amounts kept only if given.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ResourceList(Vec<(ResourceId, i64)>);

/// Cloned as its vector, so that `clone_from` writes into the vector the list already has
/// (the engine copies a pod's requests into kept buffers on every placement attempt).
impl Clone for ResourceList {
    fn clone(&self) -> Self {
        ResourceList(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

/// Sorts `pairs` by key and sums the amounts of equal keys into one entry, in place (no
/// allocation): resource lists built from containers, quota usage merged per flavor-resource.
pub fn sum_by_key<K: Ord + Copy>(pairs: &mut Vec<(K, i64)>) {
    pairs.sort_by_key(|p| p.0);
    // `dedup_by` hands the later element first and the kept earlier one second.
    pairs.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 += later.1;
        }
        same
    });
}

impl ResourceList {
    /// Builds a list; amounts of a repeated resource are summed (containers of one pod).
    pub fn from_pairs(mut pairs: Vec<(ResourceId, i64)>) -> Self {
        // In place: every generated workload builds one.
        sum_by_key(&mut pairs);
        ResourceList(pairs)
    }

    /// The list's vector, sorted by resource: to be written over and given back to
    /// `from_pairs` (a generator remaking a workload in place keeps its buffer so).
    pub fn into_pairs(self) -> Vec<(ResourceId, i64)> {
        self.0
    }

    /// The amount of `r` (0 if absent).
    pub fn get(&self, r: ResourceId) -> i64 {
        self.0
            .binary_search_by_key(&r, |p| p.0)
            .map(|i| self.0[i].1)
            .unwrap_or(0)
    }

    /// Sets the amount of `r`.
    pub fn set(&mut self, r: ResourceId, amount: i64) {
        match self.0.binary_search_by_key(&r, |p| p.0) {
            Ok(i) => self.0[i].1 = amount,
            Err(i) => self.0.insert(i, (r, amount)),
        }
    }

    /// All entries in resource-id order.
    pub fn iter(&self) -> impl Iterator<Item = (ResourceId, i64)> + '_ {
        self.0.iter().copied()
    }

    /// Whether no resource is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `scaled`, written into `out` (its vector reused).
    pub fn scale_into(&self, n: i64, out: &mut ResourceList) {
        out.0.clear();
        out.0
            .extend(self.0.iter().map(|&(r, a)| (r, a.saturating_mul(n))));
    }

    /// Each amount multiplied by `n` (per-pod requests to a pod set's total).
    pub fn scaled(&self, n: i64) -> ResourceList {
        ResourceList(
            self.0
                .iter()
                .map(|&(r, a)| (r, a.saturating_mul(n)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_lists_sum_duplicates() {
        let mut t = ResourceTable::default();
        let cpu = t.intern("cpu");
        let gpu = t.intern(GPU);
        assert_eq!(t.intern("cpu"), cpu);
        assert_eq!(t.name(gpu), GPU);
        let l = ResourceList::from_pairs(vec![(gpu, 1), (cpu, 500), (cpu, 250)]);
        assert_eq!(l.get(cpu), 750);
        assert_eq!(l.scaled(4).get(gpu), 4);
        assert_eq!(l.iter().map(|p| p.0).collect::<Vec<_>>(), [cpu, gpu]);
    }
}
