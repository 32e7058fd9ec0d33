use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A TCP sequence number: arithmetic modulo 2^32, compared by the sign of the 32-bit difference
/// (RFC 9293 §3.4, "the comparison of sequence numbers"). Only values less than 2^31 apart compare
/// meaningfully, which the window rules guarantee.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNumber(pub u32);

impl SeqNumber {
    /// Signed distance `self - other`, correct across wraparound.
    pub fn diff(self, other: SeqNumber) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    pub fn max(self, other: SeqNumber) -> SeqNumber {
        if self.diff(other) >= 0 {
            self
        } else {
            other
        }
    }
    pub fn min(self, other: SeqNumber) -> SeqNumber {
        if self.diff(other) <= 0 {
            self
        } else {
            other
        }
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &SeqNumber) -> Option<Ordering> {
        Some(self.diff(*other).cmp(&0))
    }
}

impl Add<u32> for SeqNumber {
    type Output = SeqNumber;
    fn add(self, n: u32) -> SeqNumber {
        SeqNumber(self.0.wrapping_add(n))
    }
}
impl AddAssign<u32> for SeqNumber {
    fn add_assign(&mut self, n: u32) {
        self.0 = self.0.wrapping_add(n);
    }
}
impl Sub for SeqNumber {
    type Output = u32;
    /// Bytes from `other` up to `self`; callers ensure `self` is not before `other`.
    fn sub(self, other: SeqNumber) -> u32 {
        debug_assert!(self.diff(other) >= 0, "{self} - {other} is negative");
        self.0.wrapping_sub(other.0)
    }
}

impl fmt::Debug for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_across_wraparound() {
        let a = SeqNumber(u32::MAX - 10);
        let b = a + 20;
        assert_eq!(b.0, 9);
        assert!(b > a);
        assert!(a < b);
        assert_eq!(b - a, 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(a.max(b), b);
        assert_eq!(a.min(b), a);
    }
}
