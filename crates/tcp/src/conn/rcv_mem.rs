//! The receiver's memory as Linux 6.x accounts it (`rcv_mem_truesize`): every queued segment charged its
//! skb truesize against `sk_rcvbuf`, and memory turned into window by `scaling_ratio`
//! (`tcp_win_from_space`, include/net/tcp.h; net/ipv4/tcp_input.c `tcp_measure_rcv_mss`,
//! `tcp_grow_window`; net/ipv4/tcp_output.c `__tcp_select_window`).

/// Linux `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is a fraction of 256.
const RATIO_SCALE: u32 = 8;
/// Linux 6.11's `TCP_DEFAULT_SCALING_RATIO` (commit 697a6c8cec03): half the memory is window until a
/// segment is measured, so an unmeasured socket offers its SO_RCVBUF.
const DEFAULT_RATIO: u64 = 1 << (RATIO_SCALE - 1);
/// x86-64's `PAGE_SIZE`.
const PAGE: u64 = 4096;
/// `PAGE_ALLOC_COSTLY_ORDER`: the largest chunk `alloc_skb_with_frags` takes is 8 pages.
const COSTLY_ORDER: u32 = 3;
/// IPv4 and TCP headers that travel in the pages with the payload.
const HEADERS: u64 = 40;
/// The head of a paged skb: `SKB_TRUESIZE(NET_SKB_PAD)`, 64 bytes of headroom plus `struct sk_buff`
/// and `skb_shared_info` (256 + 320 on x86-64).
const HEAD_TRUESIZE: u64 = 64 + 256 + 320;

/// Receive memory and the window it allows, in bytes.
#[derive(Debug, Clone)]
pub(super) struct RcvMem {
    /// `sk_rcvbuf`: twice SO_RCVBUF.
    rcvbuf: u64,
    /// What each segment costs beyond its payload (`rcv_skb_overhead`).
    skb_overhead: u64,
    /// `sk_rmem_alloc` as last charged: the truesize of the segments held.
    rmem: u64,
    /// The payload bytes (unread in order, and out of order) that `rmem` pays for. Reads and holes
    /// filled over data already held release memory in proportion: a byte costs what the segments it
    /// came in cost on average, so the queue's segment boundaries need not be kept.
    held: u64,
    /// Bytes in the out-of-order queue.
    pub(super) ooo_bytes: u64,
    /// `tp->scaling_ratio`, in 256ths.
    ratio: u64,
    /// `tp->window_clamp`: the largest window offered.
    pub(super) window_clamp: u64,
}

impl RcvMem {
    pub(super) fn new(recv_buffer: u64, skb_overhead: u64) -> RcvMem {
        let rcvbuf = 2 * recv_buffer;
        RcvMem {
            rcvbuf,
            skb_overhead,
            rmem: 0,
            held: 0,
            ooo_bytes: 0,
            ratio: DEFAULT_RATIO,
            window_clamp: win_from_space(DEFAULT_RATIO, rcvbuf),
        }
    }

    /// `skb->truesize` of a segment of `len` payload bytes: the payload and `rcv_skb_overhead` while
    /// that fits a page; a larger one (a GRO or GSO packet, as a packetdrill script's `--mss` injects
    /// through tun) is a small head with the packet in whole pages (`tun_alloc_skb` →
    /// `alloc_skb_with_frags`: chunks of the largest order up to `PAGE_ALLOC_COSTLY_ORDER` whose size
    /// the rest of the packet reaches, each charged whole).
    pub(super) fn truesize(&self, len: u32) -> u64 {
        let linear = len as u64 + self.skb_overhead;
        if linear <= PAGE {
            return linear;
        }
        let mut rest = len as u64 + HEADERS;
        let mut order = COSTLY_ORDER;
        let mut pages = 0;
        while rest > 0 {
            while order > 0 && rest.next_multiple_of(PAGE) < PAGE << order {
                order -= 1;
            }
            let chunk = PAGE << order;
            pages += chunk;
            rest = rest.saturating_sub(chunk);
        }
        pages + HEAD_TRUESIZE
    }

    /// `tcp_win_from_space` with the current ratio.
    pub(super) fn win_from_space(&self, space: u64) -> u64 {
        win_from_space(self.ratio, space)
    }

    /// `sk_rmem_alloc` with `now_held` payload bytes still queued: what reads or overlaps released
    /// since the last charge comes off in proportion.
    pub(super) fn rmem(&self, now_held: u64) -> u64 {
        if now_held >= self.held {
            self.rmem
        } else {
            (self.rmem as u128 * now_held as u128 / self.held as u128) as u64
        }
    }

    /// Brings the charge in line with `now_held`, then charges a segment of `len` bytes that brought
    /// `new_bytes` not held before (`skb_set_owner_r`, or the delta of `tcp_try_coalesce`).
    pub(super) fn charge(&mut self, now_held: u64, len: u32, new_bytes: u64) {
        self.rmem = self.rmem(now_held);
        self.held = now_held.min(self.held);
        if new_bytes > 0 {
            self.rmem += self.truesize(len);
            self.held += new_bytes;
        }
    }

    /// `tcp_space`: the window the free memory allows (0 when overcommitted).
    pub(super) fn space(&self, now_held: u64) -> u64 {
        self.win_from_space(self.rcvbuf.saturating_sub(self.rmem(now_held)))
    }

    /// `tcp_full_space`: the window the whole memory allows.
    pub(super) fn full_space(&self) -> u64 {
        self.win_from_space(self.rcvbuf)
    }

    /// `tcp_measure_rcv_mss` when the peer's segment size estimate changes: the ratio becomes the
    /// segment's payload / truesize (at least 1/256), and if it moved the clamp follows the full space
    /// (`tcp_set_window_clamp`); returns the new clamp and whether it grew, for rcv_ssthresh.
    pub(super) fn measure(&mut self, len: u32) -> Option<(u64, bool)> {
        let ratio = ((len as u64) << RATIO_SCALE) / self.truesize(len).max(1);
        let ratio = ratio.clamp(1, 255);
        if ratio == self.ratio {
            return None;
        }
        self.ratio = ratio;
        let clamp = self.full_space();
        let grew = clamp > self.window_clamp;
        self.window_clamp = clamp;
        Some((clamp, grew))
    }

    /// `tcp_grow_window`'s check #2: the increase a segment of `len` bytes earns for rcv_ssthresh, 0
    /// when its truesize is too large a share of the window the largest buffer (`rmem_max`) could give
    /// (`__tcp_grow_window` halves both until the window is below rcv_ssthresh).
    pub(super) fn grow_incr(&self, len: u32, advmss: u32, rcv_mss: u32, rcv_ssthresh: u64, rmem_max: u64) -> u64 {
        let truesize = self.truesize(len);
        let incr = if self.win_from_space(truesize) <= len as u64 {
            2 * advmss as u64
        } else {
            let mut t = self.win_from_space(truesize) >> 1;
            let mut window = self.win_from_space(rmem_max) >> 1;
            let mut incr = 0;
            while rcv_ssthresh <= window {
                if t <= len as u64 {
                    incr = 2 * rcv_mss as u64;
                    break;
                }
                t >>= 1;
                window >>= 1;
            }
            incr
        };
        if incr == 0 {
            0
        } else {
            incr.max(2 * len as u64)
        }
    }
}

fn win_from_space(ratio: u64, space: u64) -> u64 {
    (space * ratio) >> RATIO_SCALE
}
