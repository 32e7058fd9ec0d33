//! Statistics from the kernel: `TCP_INFO` mapped to RFC 4898 names, and `/proc/net/netstat` and
//! `/proc/net/snmp` counters of one namespace.
//!
//! `struct tcp_info` is read by byte offset (include/uapi/linux/tcp.h), and a field the kernel did not
//! return (an older kernel returns a shorter struct) is absent from the result, not zero. RFC 4898 names
//! Linux has no source for (FastRetran, CongSignals, DupAcksIn, ...) are absent too.

use std::collections::BTreeMap;

/// RFC 4898 statistics of one connection, by name. Times in ms, sizes in bytes, counts as counts.
pub type Estats = BTreeMap<&'static str, f64>;

/// A raw `struct tcp_info` as returned by getsockopt.
#[derive(Debug, Clone)]
pub struct TcpInfo {
    buf: [u8; 512],
    len: usize,
}

impl TcpInfo {
    /// getsockopt(TCP_INFO) (Linux only).
    #[cfg(target_os = "linux")]
    pub fn read(fd: std::os::fd::RawFd) -> std::io::Result<TcpInfo> {
        let mut buf = [0u8; 512];
        let len = crate::sys::getsockopt_buf(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
        Ok(TcpInfo { buf, len })
    }

    #[cfg(test)]
    fn from_bytes(b: &[u8]) -> TcpInfo {
        let mut buf = [0u8; 512];
        buf[..b.len()].copy_from_slice(b);
        TcpInfo { buf, len: b.len() }
    }

    fn u8_at(&self, off: usize) -> Option<u64> {
        (off < self.len).then(|| self.buf[off] as u64)
    }
    fn u16_at(&self, off: usize) -> Option<u64> {
        (off + 2 <= self.len).then(|| u16::from_ne_bytes([self.buf[off], self.buf[off + 1]]) as u64)
    }
    fn u32_at(&self, off: usize) -> Option<u64> {
        (off + 4 <= self.len).then(|| u32::from_ne_bytes(self.buf[off..off + 4].try_into().unwrap()) as u64)
    }
    fn u64_at(&self, off: usize) -> Option<u64> {
        (off + 8 <= self.len).then(|| u64::from_ne_bytes(self.buf[off..off + 8].try_into().unwrap()))
    }

    /// `tcpi_options`: 1 timestamps, 2 SACK, 4 window scaling, 8 ECN.
    pub fn options(&self) -> Option<u64> {
        self.u8_at(5)
    }
    /// `tcpi_ca_state`: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss.
    pub fn ca_state(&self) -> Option<u64> {
        self.u8_at(1)
    }
    /// `tcpi_state`, spelled as RFC 9293 does (`ESTABLISHED`, `FIN-WAIT-2`, `TIME-WAIT`, ...).
    pub fn state(&self) -> Option<&'static str> {
        const NAMES: [&str; 12] = [
            "CLOSED", // 0 is not a Linux state; a socket never reports it
            "ESTABLISHED",
            "SYN-SENT",
            "SYN-RECEIVED",
            "FIN-WAIT-1",
            "FIN-WAIT-2",
            "TIME-WAIT",
            "CLOSED",
            "CLOSE-WAIT",
            "LAST-ACK",
            "LISTEN",
            "CLOSING",
        ];
        self.u8_at(0).and_then(|s| NAMES.get(s as usize).copied())
    }
    /// `tcpi_unacked`: segments sent and not yet acknowledged.
    pub fn unacked(&self) -> Option<u64> {
        self.u32_at(24)
    }
    pub fn total_retrans(&self) -> Option<u64> {
        self.u32_at(100)
    }
    pub fn snd_cwnd(&self) -> Option<u64> {
        self.u32_at(80)
    }
    /// tcpi_rtt, µs.
    pub fn rtt_us(&self) -> Option<u64> {
        self.u32_at(68)
    }
    pub fn min_rtt_us(&self) -> Option<u64> {
        self.u32_at(148)
    }
    pub fn bytes_received(&self) -> Option<u64> {
        self.u64_at(128)
    }
    pub fn bytes_acked(&self) -> Option<u64> {
        self.u64_at(120)
    }

    /// The RFC 4898 names Linux has a source for (reference: the RFC 4898 → Linux table in
    /// docs/linux-backend.md). "≈" entries there are approximations and are documented as such.
    pub fn estats(&self) -> Estats {
        let mut e = Estats::new();
        let mut put = |name: &'static str, v: Option<f64>| {
            if let Some(v) = v {
                e.insert(name, v);
            }
        };
        let f = |v: Option<u64>| v.map(|x| x as f64);
        let ms = |v: Option<u64>| v.map(|x| x as f64 / 1000.0);
        let mss = self.u32_at(16);
        put("SegsOut", f(self.u32_at(136)));
        put("SegsIn", f(self.u32_at(140)));
        put("DataSegsOut", f(self.u32_at(156)));
        put("DataSegsIn", f(self.u32_at(152)));
        put("DataOctetsOut", f(self.u64_at(200)));
        put("SegsRetrans", f(self.u32_at(100)));
        put("OctetsRetrans", f(self.u64_at(208)));
        put("ThruOctetsAcked", f(self.u64_at(120)));
        put("ThruOctetsReceived", f(self.u64_at(128)));
        let rto = self.u16_at(240);
        let rto_rec = self.u16_at(242);
        put("Timeouts", f(rto_rec));
        put("SubsequentTimeouts", rto.zip(rto_rec).map(|(a, b)| a.saturating_sub(b) as f64));
        put("CurTimeoutCount", f(self.u8_at(2)));
        put("DSACKDups", f(self.u32_at(216)));
        put("CurMSS", f(mss));
        put("CurCwnd", self.u32_at(80).zip(mss).map(|(c, m)| (c * m) as f64));
        put("CurSsthresh", self.u32_at(76).filter(|&s| s < 0x7fff_ffff).zip(mss).map(|(s, m)| (s * m) as f64));
        let pipe = (|| Some(self.u32_at(24)? + self.u32_at(36)? - self.u32_at(28)? - self.u32_at(32)?))();
        put("PipeSize", pipe.zip(mss).map(|(p, m)| (p * m) as f64));
        put("SmoothedRTT", ms(self.u32_at(68)));
        put("RTTVar", ms(self.u32_at(72)));
        put("MinRTT", ms(self.u32_at(148)));
        put("CurRTO", ms(self.u32_at(8)));
        let busy = self.u64_at(168);
        let rwnd = self.u64_at(176);
        let sndbuf = self.u64_at(184);
        put("SndLimTimeRwin", ms(rwnd));
        put("SndLimTimeCwnd", (|| Some(busy?.saturating_sub(rwnd? + sndbuf?)))().map(|x| x as f64 / 1000.0));
        put("CurRwinRcvd", f(self.u32_at(228)));
        put("CurRwinSent", f(self.u32_at(232)));
        put("CurAppWQueue", f(self.u32_at(144)));
        put("RetranThresh", f(self.u32_at(88)));
        e
    }
}

/// Counters of `/proc/net/netstat` and `/proc/net/snmp` of one namespace, as "TcpExt.TCPTimeouts",
/// "Tcp.RetransSegs", "Ip.InReceives", ...
pub type NetCounters = BTreeMap<String, i64>;

/// Reads both files from the calling thread's namespace.
pub fn read_net_counters() -> std::io::Result<NetCounters> {
    let mut out = NetCounters::new();
    for file in ["/proc/thread-self/net/netstat", "/proc/thread-self/net/snmp"] {
        parse_proc_pairs(&std::fs::read_to_string(file)?, &mut out);
    }
    Ok(out)
}

/// Parses the header/value line pairs of /proc/net/netstat and /proc/net/snmp.
pub fn parse_proc_pairs(text: &str, out: &mut NetCounters) {
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks_exact(2) {
        let (Some((k1, names)), Some((k2, values))) = (pair[0].split_once(':'), pair[1].split_once(':')) else {
            continue;
        };
        if k1 != k2 {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse::<i64>() {
                out.insert(format!("{k1}.{n}"), v);
            }
        }
    }
}

/// `after - before` for every counter, leaving out the ones that did not change.
pub fn delta(before: &NetCounters, after: &NetCounters) -> NetCounters {
    after
        .iter()
        .filter_map(|(k, &v)| {
            let d = v - before.get(k).copied().unwrap_or(0);
            (d != 0).then(|| (k.clone(), d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netstat_pairs_parse_and_subtract() {
        let a = "TcpExt: SyncookiesSent TCPTimeouts\nTcpExt: 0 3\nIpExt: InNoRoutes\nIpExt: 1\n";
        let b = "TcpExt: SyncookiesSent TCPTimeouts\nTcpExt: 0 5\nIpExt: InNoRoutes\nIpExt: 1\n";
        let (mut x, mut y) = (NetCounters::new(), NetCounters::new());
        parse_proc_pairs(a, &mut x);
        parse_proc_pairs(b, &mut y);
        assert_eq!(x["TcpExt.TCPTimeouts"], 3);
        let d = delta(&x, &y);
        assert_eq!(d.len(), 1);
        assert_eq!(d["TcpExt.TCPTimeouts"], 2);
    }

    #[test]
    fn short_tcp_info_leaves_newer_fields_absent() {
        let mut b = vec![0u8; 104];
        b[16..20].copy_from_slice(&1448u32.to_ne_bytes()); // snd_mss
        b[80..84].copy_from_slice(&10u32.to_ne_bytes()); // snd_cwnd
        b[76..80].copy_from_slice(&0x7fff_ffffu32.to_ne_bytes()); // infinite ssthresh
        b[100..104].copy_from_slice(&4u32.to_ne_bytes());
        let e = TcpInfo::from_bytes(&b).estats();
        assert_eq!(e["CurCwnd"], 14480.0);
        assert_eq!(e["SegsRetrans"], 4.0);
        assert!(!e.contains_key("CurSsthresh"), "infinite ssthresh is absent");
        assert!(!e.contains_key("SegsOut"), "beyond the returned length: absent, not zero");
    }
}
