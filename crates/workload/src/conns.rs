//! An application's connections, found by the id its host gave out.

use crate::ConnId;

/// The connections an application opened or accepted, in the order it took them, and where each id's
/// record lies. Ids are small integers the host hands out in order, so the index is a dense vector
/// (`u32::MAX`: not this application's): an event's connection is found with one load and one
/// comparison, no hashing per packet.
#[derive(Debug, Clone)]
pub(crate) struct ConnTable<C> {
    conns: Vec<C>,
    index: Vec<u32>,
}

impl<C> Default for ConnTable<C> {
    fn default() -> Self {
        ConnTable { conns: Vec::new(), index: Vec::new() }
    }
}

impl<C> ConnTable<C> {
    /// Where connection `c`'s record lies, if it is this application's. `u32::MAX` (not ours) lies past the
    /// end of the records: the one test against their number also spares the caller's bounds check.
    #[inline(always)]
    pub(crate) fn slot(&self, c: ConnId) -> Option<usize> {
        self.index.get(c.0 as usize).map(|&i| i as usize).filter(|&i| i < self.conns.len())
    }

    /// Where connection `c`'s record lies, `new()` appended for it if it had none.
    pub(crate) fn adopt(&mut self, c: ConnId, new: impl FnOnce() -> C) -> usize {
        if let Some(i) = self.slot(c) {
            return i;
        }
        let i = self.conns.len();
        if self.index.len() <= c.0 as usize {
            self.index.resize(c.0 as usize + 1, u32::MAX);
        }
        self.index[c.0 as usize] = i as u32;
        self.conns.push(new());
        i
    }
}

/// The records in the order they were adopted.
impl<C> std::ops::Deref for ConnTable<C> {
    type Target = [C];
    fn deref(&self) -> &[C] {
        &self.conns
    }
}

impl<C> std::ops::DerefMut for ConnTable<C> {
    fn deref_mut(&mut self) -> &mut [C] {
        &mut self.conns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_find_their_records_and_others_find_none() {
        let mut t = ConnTable::default();
        assert_eq!(t.slot(ConnId(0)), None);
        assert_eq!(t.adopt(ConnId(5), || 'a'), 0);
        assert_eq!(t.adopt(ConnId(2), || 'b'), 1);
        // Adopting again finds the record; the constructor is not called.
        assert_eq!(t.adopt(ConnId(5), || unreachable!()), 0);
        assert_eq!((t.slot(ConnId(5)), t.slot(ConnId(2))), (Some(0), Some(1)));
        // Ids below the highest one adopted that are not ours, and ids beyond the index.
        for other in [0, 1, 3, 4, 6, 1000, u32::MAX] {
            assert_eq!(t.slot(ConnId(other)), None, "id {other}");
        }
        assert_eq!(&t[..], &['a', 'b']);
    }
}
