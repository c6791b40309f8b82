//! Per-workload state for the workloads that are live: a dense map from `WorkloadId` (the
//! arrival index) that forgets the ids below the oldest one still held.
//!
//! The window spans from the smallest id present to the largest: one `Option` per id inside
//! it, nothing outside. Workloads arrive in id order and finish roughly in it, so the live
//! ids form a window from the oldest unfinished workload to the newest arrival, and a
//! replay's memory follows the workloads that overlap in time, not the length of the trace.
//! Lookups stay an offset and an index.

use std::collections::VecDeque;
use std::ops::{Index, IndexMut};

/// A map from dense ids to `T`, holding the ids from the oldest present one onwards.
#[derive(Clone, Debug)]
pub struct Window<T> {
    /// The id of `slots[0]`.
    base: usize,
    slots: VecDeque<Option<T>>,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            base: 0,
            slots: VecDeque::new(),
        }
    }
}

impl<T> Window<T> {
    /// Stores `value` for `id`, growing the window to it.
    pub fn insert(&mut self, id: usize, value: T) {
        if self.slots.is_empty() {
            self.base = id;
        }
        while id < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        let at = id - self.base;
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        self.slots[at] = Some(value);
    }

    /// The value of `id`, if present.
    #[inline]
    pub fn get(&self, id: usize) -> Option<&T> {
        self.slots.get(id.checked_sub(self.base)?)?.as_ref()
    }

    /// The value of `id`, mutable, if present.
    #[inline]
    pub fn get_mut(&mut self, id: usize) -> Option<&mut T> {
        self.slots.get_mut(id.checked_sub(self.base)?)?.as_mut()
    }

    /// Removes `id`'s value; the window then lets go of the leading ids that hold nothing.
    pub fn remove(&mut self, id: usize) -> Option<T> {
        let at = id.checked_sub(self.base)?;
        let value = self.slots.get_mut(at)?.take();
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        value
    }

    /// The present values, by id.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, v)| v.as_ref().map(|v| (base + i, v)))
    }

    /// The present values, mutable, by id.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        let base = self.base;
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, v)| v.as_mut().map(|v| (base + i, v)))
    }

    /// How many ids the window spans (present or not): its memory, in slots.
    pub fn span(&self) -> usize {
        self.slots.len()
    }
}

impl<T> Index<usize> for Window<T> {
    type Output = T;

    #[inline]
    fn index(&self, id: usize) -> &T {
        self.get(id)
            .unwrap_or_else(|| panic!("no live workload {id}"))
    }
}

impl<T> IndexMut<usize> for Window<T> {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut T {
        self.get_mut(id)
            .unwrap_or_else(|| panic!("no live workload {id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_ids_before_the_oldest_present_one() {
        let mut w = Window::default();
        for i in 0..5 {
            w.insert(i, i * 10);
        }
        assert_eq!(w.remove(1), Some(10));
        assert_eq!(w.span(), 5, "a hole in the middle stays");
        assert_eq!(w.remove(0), Some(0));
        assert_eq!(w.span(), 3, "ids 0 and 1 are let go of");
        assert_eq!(w.get(1), None);
        assert_eq!(w[2], 20);
        w.insert(7, 70);
        assert_eq!(
            w.iter().map(|(i, v)| (i, *v)).collect::<Vec<_>>(),
            [(2, 20), (3, 30), (4, 40), (7, 70)]
        );
        for i in [2, 3, 4, 7] {
            w.remove(i);
        }
        assert_eq!(w.span(), 0);
        w.insert(9, 90);
        assert_eq!(w.span(), 1, "an empty window restarts at the next id");
        assert_eq!(w.get(8), None);
        assert_eq!(w.remove(3), None);
        w.insert(6, 60);
        assert_eq!(w.span(), 4, "it grows back to a smaller id");
        assert_eq!((w[6], w[9], w.get(7)), (60, 90, None));
    }
}
