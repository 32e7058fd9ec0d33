//! Explicit Congestion Notification for TCP (RFC 3168 §6.1): the handshake that turns it on, the sender's
//! ECT marking and its once-per-window reaction to ECN-Echo, and the receiver's echo of a CE mark until
//! the sender's CWR.
//!
//! Read RFC 3168 §5 (the IP field), §6.1.1 (ECN-setup SYN and SYN-ACK), §6.1.2 (the sender's reaction, CWR),
//! §6.1.3 (the receiver's ECE), §6.1.4–6.1.6 (no ECT on pure ACKs, retransmissions, window probes). The
//! Linux side is `tcp_ecn_send_syn`, `tcp_ecn_clear_syn`, `tcp_ecn_create_request`, `tcp_ecn_make_synack`,
//! `tcp_ecn_rcv_synack`, `tcp_ecn_send`, `tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`, `tcp_ecn_queue_cwr` and
//! `tcp_enter_cwr` (net/ipv4/tcp_input.c, tcp_output.c; the `tcp_ecn` and `tcp_ecn_fallback` sysctls in
//! Documentation/networking/ip-sysctl.rst). Where the two differ, the difference is a knob or is written down
//! here; docs/ecn.md has the whole account.
//!
//! The connection owns one [`EcnState`] and calls it at six points: the SYN or SYN-ACK it sends, the SYN
//! or SYN-ACK it receives, every reduction of its window, every segment it emits, every data segment it receives, and every ACK.
//! The congestion response itself (ssthresh, the CWR phase) stays in the connection, beside the other
//! reductions.

use serde::{Deserialize, Serialize};
use tcplab_wire::{EcnCodepoint, SeqNumber, TcpFlags, TcpSegment};

/// Whether a connection uses ECN, as Linux's `net.ipv4.tcp_ecn` decides it (see [`crate::TcpConfig::ecn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// `tcp_ecn = 0`: neither asks for ECN nor agrees to it.
    #[default]
    Off,
    /// `tcp_ecn = 1`: asks for ECN in its SYN and agrees when asked.
    On,
    /// `tcp_ecn = 2` (Linux's default since 2.6.31): agrees when the peer's SYN asks, never asks itself.
    Accept,
}

impl EcnMode {
    pub fn is_off(&self) -> bool {
        *self == EcnMode::Off
    }
    fn requests(self) -> bool {
        self == EcnMode::On
    }
    fn accepts(self) -> bool {
        self != EcnMode::Off
    }
}

/// What a segment about to be sent is, as ECN tells segments apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outgoing {
    /// Our SYN; `retransmit` when it is sent again.
    Syn {
        retransmit: bool,
    },
    SynAck,
    /// A segment whose payload is sent for the first time (RFC 3168 §6.1.2: may be ECT).
    NewData,
    /// A retransmission, a pure ACK, a window probe, a lone FIN: never ECT (§6.1.4–6.1.6).
    Other,
}

/// What the receiver's ACK policy should do about a data segment's ECN field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RcvVerdict {
    /// A CE mark began an echo, or a Not-ECT segment came after ECT ones (most likely a retransmission):
    /// Linux enters quick-ACK mode (`tcp_ecn_check_ce` → `tcp_enter_quickack_mode(sk, 2)`), "better not
    /// delay acks, sender can have a very low cwnd".
    pub quickack: bool,
    /// The segment carried data and CWR: Linux ACKs it at once (`tcp_ecn_accept_cwr`, ICSK_ACK_NOW), the
    /// sender's window having just been cut.
    pub ack_now: bool,
}

/// One connection's ECN state (Linux `tp->ecn_flags`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EcnState {
    /// ECN is in use (TCP_ECN_OK). Before the handshake completes: our SYN asked for it.
    ok: bool,
    /// Sender: CWR goes on the next segment of new data (TCP_ECN_QUEUE_CWR, RFC 3168 §6.1.2).
    queue_cwr: bool,
    /// Receiver: a CE mark arrived and no CWR since; every segment sent carries ECE (TCP_ECN_DEMAND_CWR,
    /// RFC 3168 §6.1.3).
    demand_cwr: bool,
    /// Receiver: an ECT or CE data segment has arrived (TCP_ECN_SEEN).
    seen: bool,
    /// Sender: SND.NXT when ECE last reduced the window. ECE is not acted on again until something above
    /// it is acknowledged: the data sent with the CWR flag begins there, and until the receiver has it, it
    /// keeps echoing the old mark (Linux holds CA_CWR "until something *above* high_seq is ACKed").
    reduced_at: Option<SeqNumber>,
}

impl EcnState {
    /// ECN is in use on this connection (negotiated, or asked for while the handshake is under way).
    pub fn ok(&self) -> bool {
        self.ok
    }
    /// An ECT or CE data segment has arrived (tcp_info's `TCPI_OPT_ECN_SEEN`).
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// The flags our SYN carries. RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR. A SYN sent again goes
    /// without them (§6.1.1.1 allows it; Linux `tcp_ecn_clear_syn` under `tcp_ecn_fallback = 1`, its
    /// default), in case a middlebox drops ECN-setup SYNs; the answer decides (`on_syn_answer`).
    fn syn_flags(&mut self, mode: EcnMode, retransmit: bool) -> TcpFlags {
        if !retransmit {
            self.ok = mode.requests();
        }
        if self.ok && !retransmit {
            TcpFlags::ECE | TcpFlags::CWR
        } else {
            TcpFlags::default()
        }
    }

    /// The peer's SYN reached a listener: ECN when it is an ECN-setup SYN, we accept, and the SYN itself
    /// is not ECT (RFC 3168 §6.1.1 forbids ECT on SYNs; Linux `tcp_ecn_create_request` takes an ECT SYN
    /// for the work of a broken middlebox and declines).
    pub fn on_syn(&mut self, mode: EcnMode, seg: &TcpSegment) {
        let setup = seg.flags.contains(TcpFlags::ECE | TcpFlags::CWR);
        self.ok = mode.accepts() && setup && !seg.ecn.is_ect();
    }

    /// Our SYN was answered. A SYN-ACK keeps ECN when it has ECE without CWR (RFC 3168 §6.1.1; Linux
    /// `tcp_ecn_rcv_synack`: ECE with CWR is a reflected SYN, not an ECN-setup SYN-ACK); in a
    /// simultaneous open the peer's SYN must be an ECN-setup SYN (`tcp_ecn_rcv_syn`).
    pub fn on_syn_answer(&mut self, seg: &TcpSegment) {
        let ece = seg.flags.contains(TcpFlags::ECE);
        let cwr = seg.flags.contains(TcpFlags::CWR);
        self.ok = self.ok && ece && (cwr != seg.flags.ack());
    }

    /// Sets the IP ECN field and the ECE and CWR flags of a segment about to be sent.
    pub fn on_emit(&mut self, mode: EcnMode, seg: &mut TcpSegment, what: Outgoing) {
        seg.ecn = EcnCodepoint::NotEct;
        match what {
            Outgoing::Syn { retransmit } => seg.flags = seg.flags | self.syn_flags(mode, retransmit),
            // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE and not CWR; not ECT.
            Outgoing::SynAck => {
                if self.ok {
                    seg.flags = seg.flags | TcpFlags::ECE;
                }
            }
            Outgoing::NewData | Outgoing::Other => {
                if !self.ok {
                    return;
                }
                if what == Outgoing::NewData && seg.payload_len > 0 {
                    // §6.1.2: ECT(0) on new data, and CWR on the first new data after a reduction.
                    seg.ecn = EcnCodepoint::Ect0;
                    if std::mem::take(&mut self.queue_cwr) {
                        seg.flags = seg.flags | TcpFlags::CWR;
                    }
                }
                if self.demand_cwr {
                    seg.flags = seg.flags | TcpFlags::ECE; // §6.1.3, on every segment (Linux tcp_ecn_send)
                }
            }
        }
    }

    /// The sender reduced its window, for whatever cause (RFC 3168 §6.1.2: "for any reason"; Linux
    /// `tcp_init_cwnd_reduction` and `tcp_enter_loss` queue CWR alike): CWR goes on the next new data.
    pub fn on_window_reduced(&mut self) {
        if self.ok {
            self.queue_cwr = true;
        }
    }

    /// An acknowledgement arrived: true when it carries ECN-Echo (not a SYN-ACK's ECE; Linux
    /// `tcp_ecn_rcv_ecn_echo`).
    pub fn echoed(&self, seg: &TcpSegment) -> bool {
        self.ok && seg.flags.contains(TcpFlags::ECE) && !seg.flags.syn()
    }

    /// Whether an ECN-Echo with SND.UNA at `una` may reduce the window now: at most once per window of
    /// data (RFC 3168 §6.1.2), that is not until data sent after the last ECE reduction is acknowledged.
    pub fn may_react(&self, una: SeqNumber) -> bool {
        self.reduced_at.is_none_or(|at| una > at)
    }

    /// ECN-Echo reduced the window with SND.NXT at `nxt`.
    pub fn on_reduced(&mut self, nxt: SeqNumber) {
        self.reduced_at = Some(nxt);
    }

    /// A data segment arrived (`new_data`: some of it not received before). Returns the ACK policy's cue
    /// and whether it began an echo (RFC 4898 ECESent).
    pub fn on_data(&mut self, seg: &TcpSegment, new_data: bool) -> (RcvVerdict, bool) {
        let mut v = RcvVerdict::default();
        if !self.ok {
            return (v, false);
        }
        // §6.1.3: CWR ends the echo (Linux tcp_ecn_accept_cwr, before the CE test below, so that a CWR
        // segment that is itself CE-marked starts a new one).
        if seg.flags.contains(TcpFlags::CWR) {
            self.demand_cwr = false;
            v.ack_now = seg.payload_len > 0;
        }
        if !new_data {
            return (v, false);
        }
        let mut began = false;
        match seg.ecn {
            EcnCodepoint::NotEct => v.quickack = self.seen,
            EcnCodepoint::Ce => {
                if !self.demand_cwr {
                    self.demand_cwr = true;
                    v.quickack = true;
                    began = true;
                }
                self.seen = true;
            }
            EcnCodepoint::Ect0 | EcnCodepoint::Ect1 => self.seen = true,
        }
        (v, began)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(flags: TcpFlags, len: u32, ecn: EcnCodepoint) -> TcpSegment {
        TcpSegment { flags, payload_len: len, ecn, ..TcpSegment::default() }
    }

    #[test]
    fn ecn_setup_syn_then_plain_retransmissions() {
        let mut s = EcnState::default();
        let mut syn = seg(TcpFlags::SYN, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut syn, Outgoing::Syn { retransmit: false });
        assert!(syn.flags.contains(TcpFlags::ECE | TcpFlags::CWR));
        assert_eq!(syn.ecn, EcnCodepoint::NotEct, "RFC 3168 §6.1.1: a SYN is never ECT");
        let mut again = seg(TcpFlags::SYN, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut again, Outgoing::Syn { retransmit: true });
        assert_eq!(again.flags, TcpFlags::SYN, "tcp_ecn_fallback: the retransmitted SYN asks for nothing");
        assert!(s.ok(), "the SYN-ACK decides");
        s.on_syn_answer(&seg(TcpFlags::SYN | TcpFlags::ACK, 0, EcnCodepoint::NotEct));
        assert!(!s.ok());
    }

    #[test]
    fn a_syn_ack_with_ece_and_cwr_is_not_ecn_setup() {
        let mut s = EcnState::default();
        let mut syn = seg(TcpFlags::SYN, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut syn, Outgoing::Syn { retransmit: false });
        s.on_syn_answer(&seg(TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE | TcpFlags::CWR, 0, EcnCodepoint::NotEct));
        assert!(!s.ok());
    }

    #[test]
    fn an_ect_syn_is_declined() {
        let mut s = EcnState::default();
        s.on_syn(EcnMode::On, &seg(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR, 0, EcnCodepoint::Ect0));
        assert!(!s.ok());
        let mut s = EcnState::default();
        s.on_syn(EcnMode::Accept, &seg(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR, 0, EcnCodepoint::NotEct));
        assert!(s.ok());
        let mut s = EcnState::default();
        s.on_syn(EcnMode::Accept, &seg(TcpFlags::SYN | TcpFlags::ECE, 0, EcnCodepoint::NotEct));
        assert!(!s.ok(), "ECE alone is not an ECN-setup SYN");
    }

    #[test]
    fn cwr_rides_on_new_data_only_and_once() {
        let mut s = EcnState { ok: true, ..EcnState::default() };
        s.on_window_reduced();
        let mut ack = seg(TcpFlags::ACK, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut ack, Outgoing::Other);
        assert_eq!((ack.flags, ack.ecn), (TcpFlags::ACK, EcnCodepoint::NotEct));
        let mut rtx = seg(TcpFlags::ACK, 100, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut rtx, Outgoing::Other);
        assert_eq!((rtx.flags, rtx.ecn), (TcpFlags::ACK, EcnCodepoint::NotEct), "§6.1.5: no ECT on retransmissions");
        let mut data = seg(TcpFlags::ACK, 100, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut data, Outgoing::NewData);
        assert_eq!((data.flags, data.ecn), (TcpFlags::ACK | TcpFlags::CWR, EcnCodepoint::Ect0));
        let mut next = seg(TcpFlags::ACK, 100, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut next, Outgoing::NewData);
        assert_eq!((next.flags, next.ecn), (TcpFlags::ACK, EcnCodepoint::Ect0));
    }

    #[test]
    fn the_echo_lasts_until_cwr_and_a_marked_cwr_segment_starts_another() {
        let mut s = EcnState { ok: true, ..EcnState::default() };
        let (v, began) = s.on_data(&seg(TcpFlags::ACK, 100, EcnCodepoint::Ce), true);
        assert!(v.quickack && began);
        let (v, began) = s.on_data(&seg(TcpFlags::ACK, 100, EcnCodepoint::Ce), true);
        assert!(!v.quickack && !began, "one echo per episode");
        let mut ack = seg(TcpFlags::ACK, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut ack, Outgoing::Other);
        assert!(ack.flags.contains(TcpFlags::ECE));
        let (v, _) = s.on_data(&seg(TcpFlags::ACK | TcpFlags::CWR, 100, EcnCodepoint::Ect0), true);
        assert!(v.ack_now);
        let mut ack = seg(TcpFlags::ACK, 0, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::On, &mut ack, Outgoing::Other);
        assert!(!ack.flags.contains(TcpFlags::ECE));
        let (_, began) = s.on_data(&seg(TcpFlags::ACK | TcpFlags::CWR, 100, EcnCodepoint::Ce), true);
        assert!(began);
    }

    #[test]
    fn without_negotiation_nothing_changes() {
        let mut s = EcnState::default();
        s.on_window_reduced();
        let (v, began) = s.on_data(&seg(TcpFlags::ACK, 100, EcnCodepoint::Ce), true);
        assert_eq!((v, began), (RcvVerdict::default(), false));
        let mut data = seg(TcpFlags::ACK, 100, EcnCodepoint::NotEct);
        s.on_emit(EcnMode::Off, &mut data, Outgoing::NewData);
        assert_eq!((data.flags, data.ecn), (TcpFlags::ACK, EcnCodepoint::NotEct));
        assert!(!s.echoed(&seg(TcpFlags::ACK | TcpFlags::ECE, 0, EcnCodepoint::NotEct)));
    }
}
