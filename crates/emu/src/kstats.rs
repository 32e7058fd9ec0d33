//! Statistics from the kernel: `TCP_INFO` mapped to RFC 4898 names, and `/proc/net/netstat` and
//! `/proc/net/snmp` counters of one namespace.
//!
//! `struct tcp_info` is read by byte offset (include/uapi/linux/tcp.h), and a field the kernel did not
//! return (an older kernel returns a shorter struct) is absent from the result, not zero. RFC 4898 names
//! Linux has no source for (FastRetran, CongSignals, DupAcksIn, ...) are absent too.
//!
//! A BBR socket also answers `TCP_CC_INFO` with `struct tcp_bbr_info` (include/uapi/linux/inet_diag.h,
//! filled by `bbr_get_info` in net/ipv4/tcp_bbr.c): its bandwidth estimate, minimum RTT and gains, read
//! beside `TCP_INFO` and reported under the simulator's names (`X_BbrBtlBw`, ...). The kernel keeps no
//! count of PROBE_RTT episodes; [`BbrSampler`] counts them from `TCP_CC_INFO` sampled over time, and
//! averages `tcpi_rtt` over time as the simulator's `X_SmoothedRTTMean`.

use std::collections::BTreeMap;

/// RFC 4898 statistics of one connection, by name. Times in ms, sizes in bytes, counts as counts.
pub type Estats = BTreeMap<&'static str, f64>;

/// A raw `struct tcp_info` as returned by getsockopt.
#[derive(Debug, Clone)]
pub struct TcpInfo {
    buf: [u8; 512],
    len: usize,
    /// `TCP_CC_INFO`, where the socket's congestion control is BBR.
    bbr: Option<BbrInfo>,
}

/// BBR's own figures (`struct tcp_bbr_info`): the bandwidth estimate in bytes per second (the kernel's
/// `bbr_bw` × MSS, in 64 bits as `bbr_bw_lo`/`bbr_bw_hi`), the minimum RTT in µs and the two gains in
/// BBR's fixed point (256 = 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BbrInfo {
    pub bw_bytes_per_s: u64,
    pub min_rtt_us: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
}

/// `BBR_UNIT`: a gain of 1.0.
const BBR_UNIT: u32 = 256;

impl BbrInfo {
    /// getsockopt(TCP_CC_INFO): `None` where the module fills no `tcp_bbr_info` (CUBIC and Reno answer
    /// nothing; Vegas and DCTCP answer structs of their own, told apart by the socket's module, not here).
    #[cfg(target_os = "linux")]
    pub fn read(fd: std::os::fd::RawFd) -> Option<BbrInfo> {
        let mut buf = [0u8; 64];
        let len = crate::sys::getsockopt_buf(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, &mut buf).ok()?;
        BbrInfo::from_bytes(&buf[..len.min(buf.len())])
    }

    /// The struct's five u32 fields in order; a shorter answer is no BBR information.
    pub fn from_bytes(b: &[u8]) -> Option<BbrInfo> {
        let u = |i: usize| b.get(4 * i..4 * i + 4).map(|x| u32::from_ne_bytes(x.try_into().unwrap()));
        Some(BbrInfo {
            bw_bytes_per_s: ((u(1)? as u64) << 32) | u(0)? as u64,
            min_rtt_us: u(2)?,
            pacing_gain: u(3)?,
            cwnd_gain: u(4)?,
        })
    }

    /// PROBE_RTT is the one mode with a cwnd gain of 1.0 (`bbr_update_gains`: STARTUP and DRAIN 2/ln 2,
    /// PROBE_BW 2, PROBE_RTT 1 with a pacing gain of 1), so the gains name the mode.
    pub fn in_probe_rtt(&self) -> bool {
        self.cwnd_gain == BBR_UNIT && self.pacing_gain == BBR_UNIT
    }

    /// BBR's mode as the simulator numbers it (`X_BbrMode`: STARTUP 0, DRAIN 1, PROBE_BW 2, PROBE_RTT 3,
    /// Linux's `enum bbr_mode`), told by the gains `bbr_update_gains` sets, since `tcp_bbr_info` has no
    /// mode: STARTUP paces at `bbr_high_gain` (2.89), DRAIN at `bbr_drain_gain` (0.35), PROBE_RTT at 1.0
    /// with a cwnd gain of 1.0, PROBE_BW cycles 1.25, 0.75, 1.0 with a cwnd gain of 2. `None` before BBR's
    /// first bandwidth sample (no mode's gains are shown there, [`BbrSampler::observe`]).
    pub fn mode(&self) -> Option<u64> {
        if self.bw_bytes_per_s == 0 {
            return None;
        }
        Some(if self.pacing_gain > 2 * BBR_UNIT {
            0
        } else if self.pacing_gain < BBR_UNIT / 2 {
            1
        } else if self.in_probe_rtt() {
            3
        } else {
            2
        })
    }
}

/// The variables a connection's series may sample on the Linux backend: the RFC 4898 names
/// [`TcpInfo::estats`] maps from `TCP_INFO` and `TCP_CC_INFO` (BBR's, present on a BBR socket only), and
/// two the series reader adds: `X_BbrMode` ([`BbrInfo::mode`]) and `X_BbrProbeRttEpisodes` (so far, from
/// [`BbrSampler`]). The simulator keeps more; a scenario that asks the kernel for one of those is refused
/// by name (docs/linux-backend.md § Connections over time).
pub fn kernel_vars() -> Vec<&'static str> {
    let mut t = TcpInfo {
        buf: [0; 512],
        len: 512,
        bbr: Some(BbrInfo { bw_bytes_per_s: 1, min_rtt_us: 1, pacing_gain: 1, cwnd_gain: 1 }),
    };
    t.buf[16] = 1; // a non-zero MSS
    let mut v: Vec<&'static str> = t.estats().into_keys().collect();
    v.extend(["X_BbrMode", "X_BbrProbeRttEpisodes"]);
    v.sort_unstable();
    v
}

/// Reads a BBR socket every [`BbrSampler::INTERVAL_NS`] for what one reading at the connection's end
/// cannot give: its PROBE_RTT episodes (an episode lasts at least `bbr_probe_rtt_mode_ms`, 200 ms, so each
/// is seen), and its smoothed RTT averaged over time (`tcpi_rtt` moves within BBR's gain cycle).
#[derive(Debug, Clone, Copy, Default)]
pub struct BbrSampler {
    episodes: u64,
    inside: bool,
    seen_bbr: bool,
    next_ns: u64,
    srtt: RttTimeMean,
}

/// `tcpi_rtt` averaged over time as the simulator's `X_SmoothedRTTMean` is: each value weighted by how
/// long it held (until the reading that saw it change), from the first reading with a sample to the last
/// change.
#[derive(Debug, Clone, Copy, Default)]
struct RttTimeMean {
    /// The first change's instant, the latest value (µs) and the instant it was first seen, ns.
    first_ns: Option<u64>,
    last_ns: u64,
    value_us: u64,
    /// ∑ value × time held, µs·ns.
    integral: f64,
}

impl RttTimeMean {
    fn observe(&mut self, now_ns: u64, rtt_us: u64) {
        if rtt_us == 0 || (self.first_ns.is_some() && rtt_us == self.value_us) {
            return;
        }
        if self.first_ns.is_none() {
            self.first_ns = Some(now_ns);
        } else {
            self.integral += self.value_us as f64 * now_ns.saturating_sub(self.last_ns) as f64;
        }
        self.last_ns = now_ns;
        self.value_us = rtt_us;
    }

    fn mean_ms(&self) -> Option<f64> {
        let span = self.last_ns.saturating_sub(self.first_ns?) as f64;
        Some(if span > 0.0 { self.integral / span } else { self.value_us as f64 } / 1e3)
    }
}

impl BbrSampler {
    /// How often [`BbrSampler::sample`] reads the socket: 10 ms, a twentieth of the shortest PROBE_RTT.
    pub const INTERVAL_NS: u64 = 10_000_000;

    /// Reads `fd`'s `TCP_CC_INFO` and `tcpi_rtt` if [`Self::INTERVAL_NS`] has passed since the last read
    /// (`now_ns` on any monotonic clock).
    #[cfg(target_os = "linux")]
    pub fn sample(&mut self, fd: std::os::fd::RawFd, now_ns: u64) {
        if now_ns >= self.next_ns {
            self.next_ns = now_ns + Self::INTERVAL_NS;
            let info = BbrInfo::read(fd);
            if info.is_some() {
                let rtt = TcpInfo::read(fd).ok().and_then(|t| t.rtt_us());
                self.observe_rtt(now_ns, rtt.unwrap_or(0));
            }
            self.observe(info);
        }
    }

    /// One reading: an episode begins where PROBE_RTT's gains appear after a reading without them. A
    /// reading with no bandwidth estimate yet is before BBR's first rate sample: 6.18 answers gains of
    /// 1.0 and 1.0 there (seen with `ss -ti` at connection start), which are no mode's.
    pub fn observe(&mut self, info: Option<BbrInfo>) {
        let Some(info) = info else { return };
        self.seen_bbr = true;
        let inside = info.in_probe_rtt() && info.bw_bytes_per_s > 0;
        if inside && !self.inside {
            self.episodes += 1;
        }
        self.inside = inside;
    }

    /// PROBE_RTT episodes entered so far (the readings made until now).
    pub fn episodes(&self) -> u64 {
        self.episodes
    }

    /// One reading of `tcpi_rtt` (µs; 0 before the first sample) at `now_ns`.
    pub fn observe_rtt(&mut self, now_ns: u64, rtt_us: u64) {
        self.srtt.observe(now_ns, rtt_us);
    }

    /// Adds `X_BbrProbeRttEpisodes` and `X_SmoothedRTTMean` to `e` where the socket was seen running BBR.
    pub fn put(&self, e: &mut Estats) {
        if self.seen_bbr {
            e.insert("X_BbrProbeRttEpisodes", self.episodes as f64);
            if let Some(ms) = self.srtt.mean_ms() {
                e.insert("X_SmoothedRTTMean", ms);
            }
        }
    }
}

impl TcpInfo {
    /// `TCP_CC_INFO`'s BBR figures read with it (a BBR socket only).
    pub fn bbr(&self) -> Option<BbrInfo> {
        self.bbr
    }

    /// getsockopt(TCP_INFO) (Linux only).
    #[cfg(target_os = "linux")]
    pub fn read(fd: std::os::fd::RawFd) -> std::io::Result<TcpInfo> {
        let mut buf = [0u8; 512];
        let len = crate::sys::getsockopt_buf(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
        Ok(TcpInfo { buf, len, bbr: BbrInfo::read(fd) })
    }

    #[cfg(test)]
    fn from_bytes(b: &[u8]) -> TcpInfo {
        let mut buf = [0u8; 512];
        buf[..b.len()].copy_from_slice(b);
        TcpInfo { buf, len: b.len(), bbr: None }
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
        // BBR's figures under the simulator's names and units (bytes/s, ms, gains as fractions); with
        // them the pacing and delivery rates (`tcpi_pacing_rate`, `tcpi_delivery_rate`, bytes/s), which
        // the simulator reports for a BBR sender only.
        if let Some(b) = self.bbr {
            put("X_BbrBtlBw", Some(b.bw_bytes_per_s as f64));
            put("X_BbrMinRTT", Some(b.min_rtt_us as f64 / 1000.0));
            put("X_BbrPacingGain", Some(b.pacing_gain as f64 / BBR_UNIT as f64));
            put("X_BbrCwndGain", Some(b.cwnd_gain as f64 / BBR_UNIT as f64));
            // ~0 is "no rate yet" (`sk_pacing_rate` starts unlimited until the first RTT sample).
            put("X_PacingRate", f(self.u64_at(104).filter(|&r| r != u64::MAX)));
            put("X_DeliveryRate", f(self.u64_at(160)));
        }
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
        assert!(!e.contains_key("X_BbrBtlBw"), "no TCP_CC_INFO: no BBR figures");
    }

    fn bbr(pacing_gain: u32, cwnd_gain: u32) -> Option<BbrInfo> {
        let mut b = Vec::new();
        for v in [1_250_000u32, 0, 20_310, pacing_gain, cwnd_gain] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        BbrInfo::from_bytes(&b)
    }

    /// `struct tcp_bbr_info` in order, and the modes told by their gains: an episode counts once however
    /// many readings fall inside it, a reading without TCP_CC_INFO changes nothing.
    #[test]
    fn probe_rtt_episodes_counted_from_the_gains() {
        let b = bbr(256, 256).unwrap();
        assert_eq!((b.bw_bytes_per_s, b.min_rtt_us), (1_250_000, 20_310));
        assert!(b.in_probe_rtt());
        assert!(BbrInfo::from_bytes(&[0u8; 16]).is_none(), "shorter than tcp_bbr_info");
        let mut c = BbrSampler::default();
        let mut e = Estats::new();
        c.put(&mut e);
        assert!(e.is_empty(), "never seen running BBR: no count");
        let (startup, drain, probe_bw_up, cruise, probe_rtt) = (739, 88, 320, 256, 256);
        let mut before_first_sample = bbr(256, 256);
        before_first_sample.as_mut().unwrap().bw_bytes_per_s = 0;
        c.observe(before_first_sample);
        for (p, g) in [(startup, 739), (drain, 739), (probe_bw_up, 512), (cruise, 512), (probe_rtt, 256)] {
            c.observe(bbr(p, g));
        }
        c.observe(None);
        for (p, g) in [(probe_rtt, 256), (cruise, 512), (192, 512), (probe_rtt, 256), (probe_rtt, 256), (cruise, 512)] {
            c.observe(bbr(p, g));
        }
        c.put(&mut e);
        assert_eq!(e["X_BbrProbeRttEpisodes"], 2.0);
        assert!(!e.contains_key("X_SmoothedRTTMean"), "no tcpi_rtt read: no mean");
        let mut t = TcpInfo::from_bytes(&[0u8; 232]);
        t.bbr = bbr(320, 512);
        let e = t.estats();
        assert_eq!(
            (e["X_BbrBtlBw"], e["X_BbrMinRTT"], e["X_BbrPacingGain"], e["X_BbrCwndGain"]),
            (1.25e6, 20.31, 1.25, 2.0)
        );
    }

    /// The mode told by the gains `bbr_update_gains` sets (739/739 STARTUP, 88/739 DRAIN, a cycle of
    /// 320, 192 and 256 with 512 PROBE_BW, 256/256 PROBE_RTT), none before the first bandwidth sample; and
    /// the names a series may ask the kernel for.
    #[test]
    fn bbr_mode_from_the_gains() {
        let mode = |p, g| bbr(p, g).unwrap().mode();
        assert_eq!(
            [mode(739, 739), mode(88, 739), mode(320, 512), mode(192, 512), mode(256, 512)],
            [Some(0), Some(1), Some(2), Some(2), Some(2)]
        );
        assert_eq!(mode(256, 256), Some(3));
        let mut before = bbr(256, 256).unwrap();
        before.bw_bytes_per_s = 0;
        assert_eq!(before.mode(), None);
        let v = kernel_vars();
        for name in ["CurCwnd", "CurSsthresh", "SmoothedRTT", "X_BbrMode", "X_BbrProbeRttEpisodes", "X_PacingRate"] {
            assert!(v.contains(&name), "{name}: {v:?}");
        }
        assert!(!v.contains(&"X_SmoothedRTTMean"), "a figure of the whole run, not a reading");
    }

    /// `tcpi_rtt` averaged over time: each value weighted until the reading that saw it change, from the
    /// first reading with a sample to the last change; zeros (no sample yet) and repeats add nothing.
    #[test]
    fn srtt_time_mean_weights_each_value_by_how_long_it_held() {
        let mut c = BbrSampler::default();
        c.observe(bbr(256, 512));
        let ms = 1_000_000u64;
        for (t, rtt) in [(0, 0), (10, 20_000), (20, 20_000), (30, 30_000), (60, 20_000), (70, 20_000), (90, 20_000)] {
            c.observe_rtt(t * ms, rtt);
        }
        let mut e = Estats::new();
        c.put(&mut e);
        // 20 ms for 20 ms, 30 ms for 30 ms, over the 50 ms from the first sample to the last change.
        assert!((e["X_SmoothedRTTMean"] - 26.0).abs() < 1e-9, "{}", e["X_SmoothedRTTMean"]);
        let mut one = BbrSampler::default();
        one.observe(bbr(256, 512));
        one.observe_rtt(5 * ms, 41_300);
        let mut e = Estats::new();
        one.put(&mut e);
        assert_eq!(e["X_SmoothedRTTMean"], 41.3, "a single reading is its own mean");
    }
}
