//! Dense typed ids: every entity lives in a `Vec` and is named by its index.

/// Defines a dense id newtype over an unsigned integer with `index()` and `from_index()`.
macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident($int:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $int);

        impl $name {
            /// The position of this entity in its `Vec`.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id of the entity at position `i`; panics if `i` does not fit, which would
            /// mean the scenario has more entities than the id type was sized for.
            #[inline]
            pub fn from_index(i: usize) -> Self {
                Self(<$int>::try_from(i).expect(concat!(stringify!($name), " overflow")))
            }
        }
    };
}

dense_id!(
    /// A workload: the unit of admission and gang scheduling.
    WorkloadId(u32)
);
dense_id!(
    /// A node of the cluster.
    NodeId(u32)
);
dense_id!(
    /// A Kueue ClusterQueue.
    ClusterQueueId(u32)
);
dense_id!(
    /// A Kueue LocalQueue.
    LocalQueueId(u32)
);
dense_id!(
    /// A Kueue ResourceFlavor.
    FlavorId(u16)
);
dense_id!(
    /// A resource name (`cpu`, `memory`, `nvidia.com/gpu`, ...), interned at load.
    ResourceId(u16)
);
dense_id!(
    /// A namespace.
    NamespaceId(u32)
);
dense_id!(
    /// A Kueue Cohort (declared or implicit).
    CohortId(u32)
);
