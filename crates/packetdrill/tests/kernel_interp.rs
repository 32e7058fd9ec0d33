//! The interpreter's rules that Google's packetdrill was measured against on this kernel (docs/packetdrill.md
//! § packetdrill itself on this kernel), checked on the kernel backend: an inbound packet larger than
//! `--mss` goes in as a GSO packet (its segment size is what TCP measures), the `%{ }%` blocks see
//! SO_MEMINFO's `SK_MEMINFO_*` values, a packet of a connection no longer under test is ignored, and the
//! device takes TSO as packetdrill's does (the kernel's GSO packets are seen whole unless the script turns
//! TSO off).
//! Needs root and /dev/net/tun (skipped with the reason otherwise; a failure under CI=true). Off Linux
//! the file has no tests.

#[cfg(not(target_os = "linux"))]
tcplab_testkit::tests!();
#[cfg(target_os = "linux")]
tcplab_testkit::tests!(
    a_packet_larger_than_mss_goes_in_as_gso_on_the_kernel,
    sk_meminfo_is_read_on_the_kernel,
    an_earlier_connections_reset_is_ignored_on_the_kernel,
    the_device_takes_tso_as_packetdrills_does
);

#[cfg(target_os = "linux")]
use on_linux::*;

#[cfg(target_os = "linux")]
use crate::common;

#[cfg(target_os = "linux")]
mod on_linux {
    use std::path::Path;

    use super::common::HANDSHAKE;

    use tcplab_packetdrill::report::{run_text_on, BackendKind, ScriptReport};
    use tcplab_tcp::TcpConfig;
    use tcplab_testkit::{skip, Outcome};

    fn can_run() -> Outcome {
        match tcplab_packetdrill::kernel::unavailable() {
            None => Ok(()),
            Some(why) => Err(skip(format!("the kernel backend cannot run here: {why}"))),
        }
    }

    /// Runs on the kernel; a timing error (wall-clock time on a busy machine) is retried, at most twice.
    fn kernel(name: &str, text: &str) -> ScriptReport {
        let base = TcpConfig::personality("linux").expect("the linux personality exists");
        let mut r = run_text_on(BackendKind::Linux, name, text, &base);
        for _ in 0..2 {
            if !(r.status == "fail" && r.reason.as_deref().is_some_and(|m| m.starts_with("timing error"))) {
                break;
            }
            r = run_text_on(BackendKind::Linux, name, text, &base);
        }
        r
    }

    pub fn a_packet_larger_than_mss_goes_in_as_gso_on_the_kernel() -> Outcome {
        can_run()?;
        let name = "gro-packet-rcv-mss.pkt";
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(name);
        let text = std::fs::read_to_string(&p).expect("the script is readable");
        let r = kernel(name, &text);
        assert_eq!(r.status, "pass", "{name}: {:?} at line {:?}", r.reason, r.line);
        // Without `--mss` the 9000 bytes go in as one plain packet, and the kernel measures its length
        // (clamped to advmss): the vnet header is what made the difference.
        let plain: String = text.lines().filter(|l| !l.starts_with("--mss")).collect::<Vec<_>>().join("\n");
        let r = kernel(name, &plain);
        assert_eq!(r.status, "fail", "{name} without --mss still passes");
        assert!(r.reason.as_deref().is_some_and(|m| m.contains("value: 1460")), "{:?}", r.reason);
        Ok(())
    }

    pub fn sk_meminfo_is_read_on_the_kernel() -> Outcome {
        can_run()?;
        // SO_RCVBUF 10000 is an sk_rcvbuf of 20000 (sk_setsockopt doubles it), which SO_MEMINFO reports.
        let text = format!(
            "{HANDSHAKE}   +0 setsockopt(4, SOL_SOCKET, SO_RCVBUF, [10000], 4) = 0\n   +0 %{{ assert \
             SK_MEMINFO_RCVBUF == 20000, SK_MEMINFO_RCVBUF }}%\n"
        );
        let r = kernel("meminfo.pkt", &text);
        assert_eq!(r.status, "pass", "{:?} at line {:?}", r.reason, r.line);
        let wrong = text.replace("== 20000", "== 10000");
        let r = kernel("meminfo.pkt", &wrong);
        assert_eq!(r.status, "fail");
        assert!(r.reason.as_deref().is_some_and(|m| m.contains("value: 20000")), "{:?}", r.reason);
        Ok(())
    }

    pub fn an_earlier_connections_reset_is_ignored_on_the_kernel() -> Outcome {
        can_run()?;
        let text = two_connections();
        let r = kernel("two.pkt", &text);
        assert_eq!(r.status, "pass", "{:?} at line {:?}", r.reason, r.line);
        Ok(())
    }

    /// close() with unread data resets the first connection (a packet the script does not expect, sent
    /// while that connection is still the one under test would fail it); here the listener is closed too
    /// and a second one accepts a new connection, whose SYN-ACK is the next packet the script expects.
    fn two_connections() -> String {
        format!(
            "{HANDSHAKE}   +0 < P. 1:1001(1000) ack 1 win 257\n   +0 > . 1:1(0) ack 1001\n   +0 close(4) = 0\n   \
             +0 close(3) = 0\n{}",
            HANDSHAKE.replace("`../common/defaults.sh`\n", "").replace("    0 socket", "   +0 socket")
        )
    }

    pub fn the_device_takes_tso_as_packetdrills_does() -> Outcome {
        can_run()?;
        let write = format!("{HANDSHAKE}   +0 write(4, ..., 2000) = 2000\n");
        let whole = format!("{write}   +0 > P. 1:2001(2000) ack 1\n");
        let split = format!("{write}   +0 > . 1:1001(1000) ack 1\n   +0 > P. 1001:2001(1000) ack 1\n");
        let r = kernel("whole.pkt", &whole);
        assert_eq!(r.status, "pass", "{:?} at line {:?}", r.reason, r.line);
        // One GSO packet on the device: a script that writes its segments one by one fails, as under
        // packetdrill, at the first of them.
        let r = kernel("split.pkt", &split);
        assert_eq!(r.status, "fail", "the segments of a GSO packet matched one by one");
        assert_eq!(r.line, Some(11), "{:?}", r.reason);
        // With TSO off the kernel segments before the device: the segments match, and so does the whole
        // packet (the matcher joins segments up to the script's packet).
        let off =
            |t: &str| t.replacen("`../common/defaults.sh`", "`../common/defaults.sh\nethtool -K tun0 tso off`", 1);
        for (name, text) in [("split-off.pkt", off(&split)), ("whole-off.pkt", off(&whole))] {
            let r = kernel(name, &text);
            assert_eq!(r.status, "pass", "{name}: {:?} at line {:?}", r.reason, r.line);
        }
        Ok(())
    }
}
