//! packetdrill scripts against tcplab's TCP. A script (Google's packetdrill language: timed packets the
//! peer injects or the stack must send, system calls with their expected results, `%{ }%` assertions on
//! `tcp_info`) is parsed by [`parse`], its set-up commands are mapped to TCP knobs by [`sysctl`], and
//! [`sim`] runs it against one simulated endpoint, the "local" stack, with the script as the remote
//! peer, on virtual time. docs/packetdrill.md says what is supported and why each skip is one.

pub mod ast;
pub mod code;
pub mod interp;
#[cfg(target_os = "linux")]
pub mod kernel;
pub mod lex;
pub mod parse;
pub mod report;
pub mod sim;
pub mod sysctl;
