//! The packets in flight on a link direction, oldest first: a ring whose size is a power of two, so that a
//! position wraps with one mask where `VecDeque` compares with its capacity and subtracts (issue 25: the
//! deque's wrap-around arithmetic was 5.15 M of bulk-1g's 175.5 M instructions, four operations per packet).

/// A FIFO of clonable values in `mask + 1` slots (a power of two). The slots come into being as the ring
/// first reaches them (`slots` grows by `push` up to its reserved capacity), so that no value is needed to
/// fill them; a slot left behind by `pop_front` keeps its stale copy until overwritten.
#[derive(Debug)]
pub(crate) struct Ring<T> {
    slots: Vec<T>,
    /// The oldest value's slot and how many are held.
    head: usize,
    len: usize,
    /// Slots in the ring, less one.
    mask: usize,
}

impl<T: Clone> Ring<T> {
    /// An empty ring with room for `n` values (rounded up to a power of two) before it grows.
    pub(crate) fn with_capacity(n: usize) -> Self {
        let size = n.next_power_of_two();
        Ring { slots: Vec::with_capacity(size), head: 0, len: 0, mask: size - 1 }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & self.mask
    }

    // The head is kept wrapped, so the oldest value's slot needs no mask.
    #[inline(always)]
    pub(crate) fn front(&self) -> Option<&T> {
        debug_assert!(self.head <= self.mask);
        (self.len > 0).then(|| &self.slots[self.head])
    }

    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.slots[self.slot(i)])
    }

    #[inline(always)]
    pub(crate) fn push_back(&mut self, x: T) {
        if self.len > self.mask {
            self.grow();
        }
        // The slots in use run from the head around to it, so the one after them is in `slots` unless the
        // ring has not yet reached it (then it is the next to come into being).
        let len = self.len;
        let i = self.slot(len);
        // The count is stored before the value: after the store into the slots it would be read again.
        self.len = len + 1;
        match self.slots.get_mut(i) {
            Some(s) => *s = x,
            None => self.slots.push(x),
        }
    }

    /// Doubles the full ring, its values moved to the front in order (the new slots come into being as
    /// it reaches them).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        debug_assert_eq!(self.slots.len(), self.len);
        self.slots.rotate_left(self.head);
        self.head = 0;
        let size = 2 * (self.mask + 1);
        self.slots.reserve_exact(size - self.len);
        self.mask = size - 1;
    }

    /// Takes the oldest value out (a copy; its slot is free).
    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let x = self.front()?.clone();
        self.discard_front();
        Some(x)
    }

    /// Drops the oldest value, which the caller has read in place.
    #[inline(always)]
    pub(crate) fn discard_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = self.slot(1);
        self.len -= 1;
    }

    /// Puts `x` at position `pos` (`pos <= len`), the values from there on one place later.
    pub(crate) fn insert(&mut self, pos: usize, x: T) {
        assert!(pos <= self.len, "insertion past the end");
        self.push_back(x);
        for i in (pos..self.len - 1).rev() {
            let (a, b) = (self.slot(i), self.slot(i + 1));
            self.slots.swap(a, b);
        }
    }

    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + '_ {
        (0..self.len).map(|i| &self.slots[self.slot(i)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The ring against `VecDeque` through pushes, pops, inserts and growth past its reserved room.
    #[test]
    fn behaves_as_a_deque() {
        let mut ring = Ring::with_capacity(3);
        let mut deque = VecDeque::new();
        let mut state = 7u64;
        for n in 0..5_000u32 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match state >> 61 {
                0..=3 => {
                    ring.push_back(n);
                    deque.push_back(n);
                }
                4 | 5 => assert_eq!(ring.pop_front(), deque.pop_front()),
                6 => {
                    let pos = (state >> 20) as usize % (deque.len() + 1);
                    ring.insert(pos, n);
                    deque.insert(pos, n);
                }
                _ => {
                    if !deque.is_empty() {
                        ring.discard_front();
                        deque.pop_front();
                    }
                }
            }
            assert_eq!(ring.len(), deque.len());
            assert_eq!(ring.front(), deque.front());
            assert_eq!(ring.get(1), deque.get(1));
            assert!(ring.iter().eq(deque.iter()));
            assert!(ring.iter().rev().eq(deque.iter().rev()));
        }
    }
}
