//! Round-trip time estimation and the retransmission timeout: the estimators shared with RDP live in
//! `crates/rtt` (`tcplab-rtt`); TCP uses them as they are.

pub use tcplab_rtt::*;
