//! A small sorted set of disjoint sequence ranges: the sender's SACK scoreboard (RFC 6675 §3) and the
//! receiver's out-of-order queue. Kept as a vector: the number of holes in a window is small, and a
//! vector that reached its size does not allocate again.

use tcplab_wire::SeqNumber;

#[derive(Debug, Clone, Default)]
pub struct RangeSet {
    /// Disjoint, non-adjacent `[start, end)` ranges in increasing order.
    ranges: Vec<(SeqNumber, SeqNumber)>,
}

impl RangeSet {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    pub fn clear(&mut self) {
        self.ranges.clear();
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (SeqNumber, SeqNumber)> + '_ {
        self.ranges.iter().copied()
    }

    /// Adds `[start, end)`; returns the number of bytes not already in the set.
    pub fn insert(&mut self, start: SeqNumber, end: SeqNumber) -> u32 {
        if end <= start {
            return 0;
        }
        // First range that ends at or after `start` (may touch it), by binary search (see `containing`).
        let i = self.ranges.partition_point(|r| r.1 < start);
        let mut new_start = start;
        let mut new_end = end;
        let mut covered = 0u32;
        let mut j = i;
        while j < self.ranges.len() && self.ranges[j].0 <= end {
            let (s, e) = self.ranges[j];
            covered += e.min(end) - s.max(start);
            new_start = new_start.min(s);
            new_end = new_end.max(e);
            j += 1;
        }
        let added = (end - start) - covered;
        if j == i {
            self.ranges.insert(i, (new_start, new_end));
        } else {
            self.ranges[i] = (new_start, new_end);
            // Most blocks meet one range (a SACK block reported again, grown at its right edge; a segment
            // that extends a queued run): nothing to drain, and an empty drain still costs its set-up.
            if j > i + 1 {
                self.ranges.drain(i + 1..j);
            }
        }
        added
    }

    /// Forgets everything below `seq`.
    pub fn trim_below(&mut self, seq: SeqNumber) {
        let drop = self.ranges.iter().take_while(|r| r.1 <= seq).count();
        if drop > 0 {
            self.ranges.drain(..drop);
        }
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < seq {
                first.0 = seq;
            }
        }
    }

    /// Removes and returns the first range if it starts at or below `seq` (the receiver's
    /// "pull contiguous data from the out-of-order queue").
    pub fn pop_if_starts_by(&mut self, seq: SeqNumber) -> Option<(SeqNumber, SeqNumber)> {
        if self.ranges.first().is_some_and(|r| r.0 <= seq) {
            Some(self.ranges.remove(0))
        } else {
            None
        }
    }

    /// The range containing `seq`, if any. A binary search: the receiver's SACK array asks this a dozen
    /// times for every segment out of order, and a loss-prone window holds dozens of ranges. (The ranges
    /// span less than half the sequence space, so `r.1 <= seq` is ordered over them wherever a range holds
    /// `seq`.)
    pub fn containing(&self, seq: SeqNumber) -> Option<(SeqNumber, SeqNumber)> {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        self.ranges.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// Bytes of the set inside `[a, b)`. The walk starts at the first range that ends past `a`, found by
    /// binary search as in [`RangeSet::containing`]: a SACK recovery asks on every ACK for the SACKed bytes
    /// above RFC 6675's IsLost boundary, a few ranges below SND.NXT, and a walk from the lowest range
    /// cost the whole scoreboard each time.
    pub fn bytes_within(&self, a: SeqNumber, b: SeqNumber) -> u32 {
        let first = self.ranges.partition_point(|r| r.1 <= a);
        let mut n = 0;
        for &(s, e) in &self.ranges[first..] {
            if s >= b {
                break;
            }
            let lo = s.max(a);
            let hi = e.min(b);
            if hi > lo {
                n += hi - lo;
            }
        }
        n
    }

    #[cfg(test)]
    pub fn total_bytes(&self) -> u64 {
        self.ranges.iter().map(|&(s, e)| (e - s) as u64).sum()
    }
}

/// The last few SACK blocks whose walk marked every segment wholly inside them SACKed (RACK's segments,
/// the rate sampler's records). Every ACK of a recovery repeats its SACK blocks, grown at the right edge,
/// and a walk over a whole block on each of them made a long recovery cost the square of its length: a
/// block that starts inside one already walked needs its walk only past that one's end.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WalkedBlocks {
    blocks: [Option<(SeqNumber, SeqNumber)>; 4],
    next: usize,
}

impl WalkedBlocks {
    /// Where the walk for the block `[left, right)` may start: a segment that ends by the sequence number
    /// returned either starts below `left`, so the block does not cover it whole, or lies wholly inside a
    /// block walked before, so it is SACKed already.
    pub fn walk_from(&self, left: SeqNumber, right: SeqNumber) -> SeqNumber {
        let mut from = left;
        for &(l, r) in self.blocks.iter().flatten() {
            if l <= left && left <= r && r.min(right) > from {
                from = r.min(right);
            }
        }
        from
    }

    /// The block `[left, right)` was walked: every segment wholly inside it is SACKed now.
    pub fn walked(&mut self, left: SeqNumber, right: SeqNumber) {
        self.blocks[self.next] = Some((left, right));
        self.next = (self.next + 1) % self.blocks.len();
    }

    /// SND.UNA moved to `una`: a segment that it acknowledged in part starts at `una` now, and may lie
    /// wholly inside a block that `una` passed without being SACKed; those blocks are forgotten.
    pub fn on_cumulative_ack(&mut self, una: SeqNumber) {
        for b in self.blocks.iter_mut() {
            if b.is_some_and(|(l, _)| una > l) {
                *b = None;
            }
        }
    }

    /// The SACK marks were dropped.
    pub fn clear(&mut self) {
        *self = WalkedBlocks::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: u32) -> SeqNumber {
        SeqNumber(v)
    }

    #[test]
    fn insert_merges_and_counts_new_bytes() {
        let mut r = RangeSet::default();
        assert_eq!(r.insert(s(10), s(20)), 10);
        assert_eq!(r.insert(s(30), s(40)), 10);
        assert_eq!(r.insert(s(15), s(35)), 10);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(s(10), s(40))]);
        assert_eq!(r.insert(s(20), s(25)), 0);
        assert_eq!(r.insert(s(40), s(45)), 5); // adjacent ranges join
        assert_eq!(r.iter().count(), 1);
        assert_eq!(r.insert(s(0), s(5)), 5);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(s(0), s(5)), (s(10), s(45))]);
        assert_eq!(r.bytes_within(s(3), s(12)), 4);
        r.trim_below(s(12));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(s(12), s(45))]);
    }

    #[test]
    fn works_across_wraparound() {
        let mut r = RangeSet::default();
        let base = SeqNumber(u32::MAX - 100);
        r.insert(base + 50, base + 150);
        r.insert(base + 200, base + 300);
        assert_eq!(r.total_bytes(), 200);
        assert_eq!(r.iter().last().map(|r| r.1), Some(base + 300));
        assert_eq!(r.containing(base + 120), Some((base + 50, base + 150)));
        r.trim_below(base + 160);
        assert_eq!(r.iter().next(), Some((base + 200, base + 300)));
    }

    proptest::proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u32..200, 0u32..40), 1..40)) {
            let mut r = RangeSet::default();
            let mut bits = [false; 256];
            for (start, len) in ops {
                let added = r.insert(s(start), s(start + len));
                let mut want = 0;
                for b in &mut bits[start as usize..(start + len) as usize] {
                    if !*b { want += 1; *b = true; }
                }
                proptest::prop_assert_eq!(added, want);
            }
            proptest::prop_assert_eq!(r.total_bytes(), bits.iter().filter(|b| **b).count() as u64);
            for (a, b) in [(0, 256), (0, 17), (13, 14), (37, 120), (120, 37), (150, 256), (199, 240)] {
                let want = bits[a.min(b)..b].iter().filter(|b| **b).count() as u32;
                proptest::prop_assert_eq!(r.bytes_within(s(a as u32), s(b as u32)), want);
            }
            for (i, &b) in bits.iter().enumerate() {
                let held = r.containing(s(i as u32));
                proptest::prop_assert_eq!(held.is_some(), b);
                proptest::prop_assert!(held.is_none_or(|(l, e)| l <= s(i as u32) && s(i as u32) < e));
            }
            let v: Vec<_> = r.iter().collect();
            for w in v.windows(2) {
                proptest::prop_assert!(w[0].1 < w[1].0, "disjoint and non-adjacent");
            }
        }
    }
}
