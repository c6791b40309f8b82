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
//!
//! Events pushed for the instant being processed (a Kueue cycle requested now, pods running
//! at once without a startup delay) wait in a FIFO lane beside the heap: pushed after every
//! event already scheduled, they are in (time, sequence) order by construction, so they
//! need no sift through the heap on push or pop, and the pop takes the least of the three
//! sorted sources.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use kueuesim_model::SimTime;

/// A min-queue of `T` keyed by simulated time; ties keep insertion order.
#[derive(Clone, Debug)]
pub struct EventQueue<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    /// Events pushed for one instant, in push order: every entry has the same time, so
    /// their keys increase along the lane (checked in debug builds on every push). Only
    /// an event pushed for the time of the last pop starts it (`push`).
    lane: VecDeque<Entry<T>>,
    /// The time of the last event popped: an event pushed for it goes to the lane.
    last_popped: Option<SimTime>,
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
            lane: VecDeque::new(),
            last_popped: None,
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
        let entry = Entry {
            key: Entry::<T>::key(at, seq),
            item,
        };
        // The lane takes an event of its own instant (its sequence number is above every
        // one there), or, empty, one for the instant being processed.
        let to_lane = match self.lane.back() {
            Some(last) => last.at() == at,
            None => self.last_popped == Some(at),
        };
        if to_lane {
            // What the pop's order rests on: the lane holds one instant, not before the
            // last pop (its keys then increase with the sequence numbers).
            debug_assert!(
                self.lane.front().is_none_or(|f| f.at() == at)
                    && self.last_popped.is_none_or(|t| t <= at)
            );
            self.lane.push_back(entry);
        } else {
            self.heap.push(Reverse(entry));
        }
    }

    /// A queue holding `items` as if pushed in this order into an empty queue; the items'
    /// times are sorted (stable) first, which keeps the order among equal times.
    pub fn presorted(mut items: Vec<(SimTime, T)>) -> Self {
        items.sort_by_key(|(at, _)| *at);
        EventQueue {
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            last_popped: None,
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

    /// The earliest of the heap's and the lane's entries, and whether it is the lane's.
    fn pushed_first(&self) -> Option<(&Entry<T>, bool)> {
        match (self.lane.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(l), None) => Some((l, true)),
            (None, Some(Reverse(h))) => Some((h, false)),
            (Some(l), Some(Reverse(h))) => Some(if l.key < h.key { (l, true) } else { (h, false) }),
        }
    }

    /// Whether the next event comes from the presorted list: its sequence number is below
    /// every pushed entry's (heap or lane), so it goes first at equal times.
    fn presorted_first(&self) -> bool {
        match self.presorted.get(self.presorted_next) {
            None => false,
            Some((at, _)) => self.pushed_first().is_none_or(|(e, _)| *at <= e.at()),
        }
    }

    /// The earliest event, removed.
    pub fn pop(&mut self) -> Option<(SimTime, T)>
    where
        T: Clone,
    {
        self.pop_until(None)
    }

    /// The earliest event, removed, if it is due by `until` (any, for None): the peek and
    /// the pop of the simulation's step in one, choosing the source once.
    pub fn pop_until(&mut self, until: Option<SimTime>) -> Option<(SimTime, T)>
    where
        T: Clone,
    {
        let due = |at: SimTime| until.is_none_or(|u| at <= u);
        if self.presorted_first() {
            // The time first: a step stopped by `until` clones nothing.
            if !due(self.presorted[self.presorted_next].0) {
                return None;
            }
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
            self.last_popped = Some(at);
            return Some((at, item));
        }
        let (first, from_lane) = self.pushed_first()?;
        if !due(first.at()) {
            return None;
        }
        let e = if from_lane {
            self.lane.pop_front()
        } else {
            self.heap.pop().map(|Reverse(e)| e)
        }?;
        let at = e.at();
        self.last_popped = Some(at);
        Some((at, e.item))
    }

    /// The earliest event, if any.
    pub fn peek(&self) -> Option<(SimTime, &T)> {
        if self.presorted_first() {
            let (at, item) = &self.presorted[self.presorted_next];
            return Some((*at, item));
        }
        self.pushed_first().map(|(e, _)| (e.at(), &e.item))
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.peek().map(|(at, _)| at)
    }

    /// How many events are scheduled (stale ones included).
    pub fn len(&self) -> usize {
        self.heap.len() + self.lane.len() + (self.presorted.len() - self.presorted_next)
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
        /// The queue pops in (time, sequence) order whatever goes to the lane: a reference
        /// ordered map keyed (time, presorted first, position) gets the same pushes, many of
        /// them for the instant last popped, some before it, and arrivals appended to the
        /// presorted list.
        #[test]
        fn pops_as_an_ordered_map_does(
            first in proptest::collection::vec(0i64..8, 0..10),
            ops in proptest::collection::vec((0usize..6, -1i64..3), 0..120),
        ) {
            use std::collections::BTreeMap;
            let mut reference: BTreeMap<(SimTime, u8, u64), u32> = BTreeMap::new();
            let items: Vec<(SimTime, u32)> =
                first.iter().enumerate().map(|(i, &t)| (SimTime(t), i as u32)).collect();
            let mut sorted = items.clone();
            sorted.sort_by_key(|(at, _)| *at);
            for (i, &(at, x)) in sorted.iter().enumerate() {
                reference.insert((at, 0, i as u64), x);
            }
            let mut presorted_seq = sorted.len() as u64;
            let mut last_presorted = sorted.last().map(|(at, _)| *at);
            let mut q = EventQueue::presorted(items);
            let mut now = SimTime(0);
            for (next, &(op, dt)) in (1000u32..).zip(ops.iter()) {
                match op {
                    // Pops, checked against the reference.
                    0 | 1 => {
                        let want = reference.pop_first().map(|((at, _, _), x)| (at, x));
                        proptest::prop_assert_eq!(q.peek_time(), want.map(|(at, _)| at));
                        let got = q.pop();
                        proptest::prop_assert_eq!(got, want);
                        if let Some((at, _)) = got {
                            now = at;
                        }
                    }
                    // An arrival appended to the presorted list, not before its last one.
                    5 => {
                        let at = SimTime((now.0 + dt.max(0)).max(last_presorted.map_or(0, |t| t.0)));
                        q.push_presorted(at, next);
                        reference.insert((at, 0, presorted_seq), next);
                        presorted_seq += 1;
                        last_presorted = Some(at);
                    }
                    // A push, mostly for the instant last popped (dt 0), now and then before it.
                    _ => {
                        let at = SimTime(now.0 + dt);
                        q.push(at, next);
                        reference.insert((at, 1, u64::from(next)), next);
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while let Some((key, x)) = reference.pop_first() {
                proptest::prop_assert_eq!(q.pop(), Some((key.0, x)));
            }
            proptest::prop_assert!(q.is_empty());
        }
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
