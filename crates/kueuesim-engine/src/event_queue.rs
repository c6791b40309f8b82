//! The event queue: a binary heap ordered by (time, sequence), so equal times pop in FIFO order.
//!
//! Stale events (a workload evicted before its scheduled finish) are not removed from the heap;
//! they carry the workload's generation and the engine drops them on pop (lazy cancellation).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use kueuesim_model::SimTime;

/// A min-queue of `T` keyed by simulated time; ties keep insertion order.
#[derive(Clone, Debug)]
pub struct EventQueue<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    next_seq: u64,
}

#[derive(Clone, Debug)]
struct Entry<T> {
    at: SimTime,
    seq: u64,
    item: T,
}

// Ordering looks only at (at, seq): seq is unique, so this is a total order.
impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
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
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<T> EventQueue<T> {
    /// Schedules `item` at `at`, after everything already scheduled at the same time.
    pub fn push(&mut self, at: SimTime, item: T) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry { at, seq, item }));
    }

    /// The earliest event, removed.
    pub fn pop(&mut self) -> Option<(SimTime, T)> {
        self.heap.pop().map(|Reverse(e)| (e.at, e.item))
    }

    /// The earliest event, if any.
    pub fn peek(&self) -> Option<(SimTime, &T)> {
        self.heap.peek().map(|Reverse(e)| (e.at, &e.item))
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// How many events are scheduled (stale ones included).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
