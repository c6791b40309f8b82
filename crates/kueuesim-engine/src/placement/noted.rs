//! The set of nodes a lazily kept index must bring up to date: each node noted once, in the
//! order noted, until the index drains the set when it is next read.

use kueuesim_model::NodeId;

/// Nodes noted since the last drain, each once (so the list is bounded by the node count
/// however long the index goes unread).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NotedNodes {
    list: Vec<NodeId>,
    /// Per node: whether it is in `list`.
    mark: Vec<bool>,
}

impl NotedNodes {
    /// An empty set over `nodes` nodes.
    pub(crate) fn new(nodes: usize) -> Self {
        NotedNodes {
            list: Vec::new(),
            mark: vec![false; nodes],
        }
    }

    /// Notes `node` (once).
    #[inline]
    pub(crate) fn note(&mut self, node: NodeId) {
        let m = &mut self.mark[node.index()];
        if !*m {
            *m = true;
            self.list.push(node);
        }
    }

    /// Whether `node` is noted.
    #[inline]
    pub(crate) fn contains(&self, node: NodeId) -> bool {
        self.mark[node.index()]
    }

    /// Whether no node is noted.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The noted nodes, in the order noted (for tests' comparisons).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.list.iter().copied()
    }

    /// Takes every noted node out, in the order noted.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = NodeId> + '_ {
        let NotedNodes { list, mark } = self;
        list.drain(..).inspect(move |n| mark[n.index()] = false)
    }
}
