//! TUN devices: layer 3, no packet-information header, a virtio-net header in front of every packet
//! (`IFF_TUN | IFF_NO_PI | IFF_VNET_HDR`). With offloads on, the kernel hands over TCP super-packets
//! (GSO) of up to 64 KiB that the emulator splits into wire-size frames for the model.

/// Size of `struct virtio_net_hdr` (the default TUNSETVNETHDRSZ).
pub const VNET_HDR_LEN: usize = 10;
/// `virtio_net_hdr.gso_type` values.
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
pub const GSO_ECN: u8 = 0x80;

/// The device name used inside each namespace (names are per namespace, so both sides use it).
pub const DEVICE: &str = "tcplab0";

#[cfg(target_os = "linux")]
pub use os::open;

/// Device creation (Linux only).
#[cfg(target_os = "linux")]
mod os {
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};

    use crate::sys::cvt;

    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
    const IFF_TUN: libc::c_short = 0x0001;
    const IFF_NO_PI: libc::c_short = 0x1000;
    const IFF_VNET_HDR: libc::c_short = 0x4000;
    const TUN_F_CSUM: libc::c_uint = 0x01;
    const TUN_F_TSO4: libc::c_uint = 0x02;

    #[repr(C)]
    struct IfReq {
        name: [u8; 16],
        flags: libc::c_short,
        _pad: [u8; 22],
    }

    /// Creates TUN device `name` in the calling thread's network namespace; the fd is non-blocking.
    /// `gso`: accept checksum and TSO offload, so the kernel may pass super-packets.
    pub fn open(name: &str, gso: bool) -> io::Result<OwnedFd> {
        // SAFETY: path is a valid C string literal.
        let fd =
            cvt(unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
        // SAFETY: fd was just opened and is owned from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq { name: [0; 16], flags: IFF_TUN | IFF_NO_PI | IFF_VNET_HDR, _pad: [0; 22] };
        let n = name.len().min(15);
        req.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        use std::os::fd::AsRawFd;
        // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which `IfReq` lays out.
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) })?;
        let offload = if gso { TUN_F_CSUM | TUN_F_TSO4 } else { 0 };
        // SAFETY: TUNSETOFFLOAD takes the flags by value.
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, offload as libc::c_ulong) })?;
        Ok(fd)
    }
}

/// Counters of a device from `/proc/thread-self/net/dev` (read from inside its namespace).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DevStats {
    pub rx_packets: u64,
    pub rx_errors: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub tx_dropped: u64,
}

impl DevStats {
    /// Drops and errors the emulator cannot see: packets the kernel discarded on their way to or from us.
    pub fn hidden_drops(&self) -> u64 {
        self.rx_errors + self.rx_dropped + self.tx_errors + self.tx_dropped
    }
}

/// Parses the line for `dev` in a `/proc/net/dev` text.
pub fn parse_dev_stats(text: &str, dev: &str) -> Option<DevStats> {
    let line = text.lines().find(|l| l.trim_start().starts_with(&format!("{dev}:")))?;
    let v: Vec<u64> = line.split_once(':')?.1.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    if v.len() < 16 {
        return None;
    }
    Some(DevStats {
        rx_packets: v[1],
        rx_errors: v[2],
        rx_dropped: v[3],
        tx_packets: v[9],
        tx_errors: v[10],
        tx_dropped: v[11],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_stats_parse() {
        let text = "Inter-|   Receive                                                |  Transmit\n \
            face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n \
            lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
            tcplab0: 100 7 1 2 0 0 0 0 200 9 3 4 0 0 0 0\n";
        let s = parse_dev_stats(text, "tcplab0").unwrap();
        assert_eq!((s.rx_packets, s.rx_errors, s.rx_dropped), (7, 1, 2));
        assert_eq!((s.tx_packets, s.tx_errors, s.tx_dropped), (9, 3, 4));
        assert_eq!(s.hidden_drops(), 10);
    }
}
