//! The event queue: a binary heap ordered by (time, sequence), so equal times pop in FIFO order.
//!
//! Stale events (a workload evicted before its scheduled finish) are not removed from the heap;
//! they carry the workload's generation and the engine drops them on pop (lazy cancellation).
//!
//! Events known in time order before the run (the arrivals) wait in a sorted list beside the
//! heap instead of in it: they hold the first sequence numbers, so they win ties against
//! anything pushed later, exactly as if they had been pushed first, and the heap stays as
//! small as the events in flight (a million arrivals would otherwise make every pop walk a
//! deep heap).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use kueuesim_model::SimTime;

/// A min-queue of `T` keyed by simulated time; ties keep insertion order.
#[derive(Clone, Debug)]
pub struct EventQueue<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    next_seq: u64,
    /// Presorted events (`EventQueue::presorted`), in (time, sequence) order, not yet popped
    /// from `presorted_next` on. Their sequence numbers are their positions.
    presorted: Vec<(SimTime, T)>,
    presorted_next: usize,
}

/// A heap entry: its time and sequence number packed into one integer that orders as the pair
/// (`Entry::key`), so each comparison of a push or pop is one integer comparison.
#[derive(Clone, Debug)]
struct Entry<T> {
    key: u128,
    item: T,
}

impl<T> Entry<T> {
    /// The time with its sign bit flipped (so that negative times, objects created before the
    /// start, order below the others as unsigned numbers) above the sequence number.
    fn key(at: SimTime, seq: u64) -> u128 {
        (u128::from(at.0 as u64 ^ (1 << 63)) << 64) | u128::from(seq)
    }

    fn at(&self) -> SimTime {
        SimTime(((self.key >> 64) as u64 ^ (1 << 63)) as i64)
    }
}

// Ordering looks only at the key, (at, seq): seq is unique, so this is a total order.
impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            presorted: Vec::new(),
            presorted_next: 0,
        }
    }
}

impl<T> EventQueue<T> {
    /// Schedules `item` at `at`, after everything already scheduled at the same time.
    pub fn push(&mut self, at: SimTime, item: T) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry {
            key: Entry::<T>::key(at, seq),
            item,
        }));
    }

    /// A queue holding `items` as if pushed in this order into an empty queue; the items'
    /// times are sorted (stable) first, which keeps the order among equal times.
    pub fn presorted(mut items: Vec<(SimTime, T)>) -> Self {
        items.sort_by_key(|(at, _)| *at);
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: items.len() as u64,
            presorted: items,
            presorted_next: 0,
        }
    }

    /// Appends `item` at `at` to the presorted events, as if it had been among them from the
    /// start (it goes before heap events at equal times); `at` is not before the last one.
    pub fn push_presorted(&mut self, at: SimTime, item: T) {
        debug_assert!(
            self.presorted.last().is_none_or(|(last, _)| *last <= at),
            "presorted events are pushed in time order"
        );
        self.presorted.push((at, item));
    }

    /// Whether the next event comes from the presorted list: its sequence number is below
    /// every heap entry's, so it goes first at equal times.
    fn presorted_first(&self) -> bool {
        match (self.presorted.get(self.presorted_next), self.heap.peek()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some((at, _)), Some(Reverse(e))) => *at <= e.at(),
        }
    }

    /// The earliest event, removed.
    pub fn pop(&mut self) -> Option<(SimTime, T)>
    where
        T: Clone,
    {
        if self.presorted_first() {
            let (at, item) = self.presorted[self.presorted_next].clone();
            self.presorted_next += 1;
            if self.presorted_next == self.presorted.len() {
                // Drained. A stream's arrivals come one at a time (`push_presorted` after
                // each pop), so a short vector is kept for the next one: a new one per
                // arrival cost an allocation and a free each. A long list (the world's
                // arrivals, given at the start) is let go.
                if self.presorted.capacity() > 64 {
                    self.presorted = Vec::new();
                } else {
                    self.presorted.clear();
                }
                self.presorted_next = 0;
            }
            return Some((at, item));
        }
        self.heap.pop().map(|Reverse(e)| (e.at(), e.item))
    }

    /// The earliest event, if any.
    pub fn peek(&self) -> Option<(SimTime, &T)> {
        if self.presorted_first() {
            let (at, item) = &self.presorted[self.presorted_next];
            return Some((*at, item));
        }
        self.heap.peek().map(|Reverse(e)| (e.at(), &e.item))
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.peek().map(|(at, _)| at)
    }

    /// How many events are scheduled (stale ones included).
    pub fn len(&self) -> usize {
        self.heap.len() + (self.presorted.len() - self.presorted_next)
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_fifo() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), "c");
        q.push(SimTime(1), "a");
        q.push(SimTime(5), "d");
        q.push(SimTime(1), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, x)| x).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }

    /// Times before the start (negative) and the far end order as times, not as the bits
    /// of the packed key.
    #[test]
    fn negative_and_extreme_times_order_as_times() {
        let mut q = EventQueue::default();
        q.push(SimTime::MAX, "last");
        q.push(SimTime(0), "zero");
        q.push(SimTime(-1), "minus-one");
        q.push(SimTime(i64::MIN), "first");
        q.push(SimTime(-1), "minus-one-again");
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            popped,
            [
                (SimTime(i64::MIN), "first"),
                (SimTime(-1), "minus-one"),
                (SimTime(-1), "minus-one-again"),
                (SimTime(0), "zero"),
                (SimTime::MAX, "last"),
            ]
        );
    }

    proptest::proptest! {
        /// A presorted queue pops exactly as a heap queue into which the same items were
        /// pushed first, whatever is pushed between pops.
        #[test]
        fn presorted_pops_as_if_pushed_first(
            first in proptest::collection::vec(0i64..20, 0..30),
            later in proptest::collection::vec((0usize..4, 0i64..20), 0..40),
        ) {
            let items: Vec<(SimTime, u32)> =
                first.iter().enumerate().map(|(i, &t)| (SimTime(t), i as u32)).collect();
            let mut heap_only = EventQueue::default();
            for &(at, x) in &items {
                heap_only.push(at, x);
            }
            let mut split = EventQueue::presorted(items);
            for (next, &(pops, at)) in (1000u32..).zip(later.iter()) {
                for _ in 0..pops {
                    proptest::prop_assert_eq!(heap_only.peek_time(), split.peek_time());
                    proptest::prop_assert_eq!(heap_only.pop(), split.pop());
                }
                // Pushed events come after every earlier one at equal times.
                let at = SimTime(at.max(heap_only.peek_time().map_or(0, |t| t.0)));
                heap_only.push(at, next);
                split.push(at, next);
                proptest::prop_assert_eq!(heap_only.len(), split.len());
            }
            while let Some(x) = heap_only.pop() {
                proptest::prop_assert_eq!(Some(x), split.pop());
            }
            proptest::prop_assert!(split.is_empty());
        }
    }
}
