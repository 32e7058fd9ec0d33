//! A sans-IO TCP. A [`Connection`] never reads a clock, touches a socket or draws from a global random
//! generator (its own stream, for probabilistic ACKs, is seeded by the caller): time
//! comes in as `now`, segments come in through [`Connection::on_segment`], segments go out through
//! [`Connection::poll_transmit`], and [`Connection::poll_timeout`] says when to call
//! [`Connection::on_timeout`] next. Payload bytes are counted, not carried.
//!
//! Read first: RFC 9293 (the protocol), RFC 1122 §4.2 (host requirements: delayed ACK, Nagle, SWS),
//! RFC 5681 (congestion control), RFC 6582 (NewReno), RFC 2018 and RFC 6675 (SACK and its loss recovery),
//! RFC 6298 (RTO), RFC 7323 (window scale, timestamps), RFC 3042 (limited transmit), RFC 3465 (ABC),
//! RFC 3168 (ECN), RFC 4898 (the statistics).

mod ack;
pub mod config;
pub mod congestion;
mod conn;
mod cwnd;
mod ecn;
pub mod estats;
mod pacing;
pub mod personality;
mod rack;
mod ranges;
mod recovery;
pub mod rtt;
pub mod sampler;
mod transport;

pub use config::{CongestionControlKind, EcnMode, InitialWindow, TcpConfig};
pub use conn::{reset_for, ConnError, Connection, State, TcpInfo, TxRoom, TCP_INFINITE_SSTHRESH};
pub use estats::Estats;

#[cfg(test)]
mod tests;
