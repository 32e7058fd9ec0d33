//! The transports the lab runs, behind one trait. A transport implements [`LabTransport`] once: which
//! test kinds run it, how a point runs on the simulator (its spec, its statistics mapped to metrics), and
//! what its packets need to be written to a trace. Each transport's implementation is its module here
//! (`transport/NAME.rs`), registered by one line in the crate root (`register_transports!` in lib.rs),
//! which gives [`dispatch`] its arm and `crate::host_transports::REGISTERED` its config (docs/architecture.md
//! § How to add). What the scenario layer knows of a transport (its keys, limits, metric names, test keys)
//! is declared by its config, below the scenario (`crate::host_transports`).
//!
//! This module sits above the backends (`sim_backend`, `topology`; a transport's own backend lies in its
//! module, `transport/NAME/backend.rs`) and below the run path (`crate::run`), which is generic over the
//! trait: no backend depends on it.

use tcplab_sim::Probe;
use tcplab_wire::codec::Ipv4Payload;

use crate::host_transports::{OwnMetrics, Registration, TransportConfig};
use crate::result::{PointRun, RunError};
use crate::scenario::{Protocol, Scenario};

pub mod rdp;
pub mod tcp;
#[cfg(test)]
pub(crate) mod toy;

pub use rdp::Rdp;
pub use tcp::Tcp;

/// A transport protocol as the lab runs it.
pub trait LabTransport {
    /// The sans-IO endpoint the simulator runs; its segments are what a packet trace sees, each written as
    /// an IPv4 datagram by its [`Ipv4Payload`] encoding (no trace writer branches on the protocol).
    type Conn: tcplab_transport::Transport<Segment: Ipv4Payload>;
    /// The protocol's name in results (`connections[].protocol`).
    const PROTOCOL: &'static str = <Self::Conn as tcplab_transport::Transport>::PROTOCOL;

    /// The transport's knobs as a host carries them (`Host::config::<T::Config>()`), registered in
    /// `crate::host_transports::REGISTERED`: the host has no field per transport.
    type Config: TransportConfig;

    /// The transport's name in scenario files (`test.transport`, its config's table), which [`dispatch`]
    /// maps to it.
    const NAME: Protocol = Protocol::named(<Self::Config as TransportConfig>::TABLE);

    /// The metrics of the workloads whose figures are the transport's own (`Metrics::Own`): how a result
    /// document's reader recognizes them (a field only they have) and reads them back
    /// (`crate::result::strict_metrics` of the transport's type).
    const OWN_METRICS: &'static [OwnMetrics] = &[];

    /// The host's table of the transport's knobs in scenario files (`client.KNOB_TABLE.KNOB`).
    const KNOB_TABLE: &'static str = <Self::Config as TransportConfig>::TABLE;
    /// Every knob of the transport's config: (name, doc comment), from its crate (`tcplab explain`).
    const KNOBS: &'static [(&'static str, &'static str)] = <Self::Config as TransportConfig>::KNOBS;

    /// The config's defaults as a scenario file spells them, knob → value (`tcplab explain`).
    fn knob_defaults() -> toml::Table;

    /// Whether a test whose transport is `p` runs this transport.
    fn runs(p: Protocol) -> bool {
        p == Self::NAME
    }
    /// Why the packets of `s` cannot be written to a packet trace, if they cannot (a header too small
    /// for the simulator's ports), said after `--pcap: `.
    fn untraceable(_s: &Scenario) -> Option<String> {
        None
    }
    /// How a packet trace of `s` encodes the segments (the protocol's open choices); by default the
    /// encoding's own default.
    fn trace_codec(_s: &Scenario) -> Codec<Self> {
        Default::default()
    }
    /// One point of `s` on the simulator with `seed`; `probe`, a packet trace of the caller's, is told
    /// every packet event. `s` is a test of a kind this transport [`runs`](LabTransport::runs).
    fn run_point(s: &Scenario, seed: u64, probe: Option<&mut dyn Probe<Self::Conn>>) -> Result<PointRun, RunError>;
}

/// The packet trace encoding's choices for the segments of `T`.
pub type Codec<T> = <Segment<T> as Ipv4Payload>::Codec;
/// The segment type of the transport `T`.
pub type Segment<T> = <<T as LabTransport>::Conn as tcplab_transport::Transport>::Segment;

/// Calls back with the transport a test kind runs: [`dispatch`]'s caller, generic over the transport.
pub trait WithTransport {
    type Output;
    fn with<T: LabTransport>(self) -> Self::Output;
}

/// The transport named `p`, handed to `w` (the crate root's registration: one arm per registered
/// transport, in `crate::host_transports::REGISTERED`'s order).
pub fn dispatch<W: WithTransport>(p: Protocol, w: W) -> W::Output {
    crate::dispatch_registered(p, w)
}

/// What the lab below the run path knows of the transport `T`: its config's declarations and its own
/// metrics (the crate root registers each transport with this).
pub const fn registration<T: LabTransport>() -> Registration {
    Registration { own_metrics: T::OWN_METRICS, ..Registration::of::<T::Config>() }
}
