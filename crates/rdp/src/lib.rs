//! A sans-IO RDP, the Reliable Data Protocol. An [`RdpConnection`] never reads a clock, touches I/O or
//! draws random numbers: time comes in as `now`, segments come in through [`RdpConnection::on_segment`]
//! and go out through [`RdpConnection::poll_transmit`], and [`RdpConnection::poll_timeout`] says when to
//! call [`RdpConnection::on_timeout`]. Data bytes are counted, not carried.
//!
//! Read first: RFC 908 (RDP, 1984) §3 (protocol operation), §4 (header), §5 (examples); RFC 1151 (version
//! 2, 1990) for its corrections. Where both are silent the choices are documented on [`RdpConfig`].
//!
//! Messages: one application send becomes one or more RDP segments (see [`RdpConnection::send`]); each
//! segment is one message, delivered whole.

pub mod config;
mod conn;
mod stats;
mod transport;

pub use config::{RdpConfig, RtoChoice, RttSampling, WindowPolicy};
pub use conn::{RdpConnection, State};
pub use stats::{RdpStats, RttRecord};

#[cfg(test)]
mod tests;
