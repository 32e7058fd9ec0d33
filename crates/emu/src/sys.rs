//! Thin wrappers over the few system calls the backend makes. Everything unsafe lives here.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `Err(last OS error)` when a libc call returned -1.
pub fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in nanoseconds since the epoch (for pcap timestamps only).
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time (user + system) of the calling thread, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Moves the calling thread into the network namespace bound at `path` (`/run/netns/NAME`).
pub fn setns_net(path: &str) -> io::Result<()> {
    let f = std::fs::File::open(path)?;
    // SAFETY: a valid namespace fd; CLONE_NEWNET checks its type.
    cvt(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// Sets the calling thread's timer slack to 1 ns so timers fire when asked, not up to 50 µs later.
pub fn set_timer_slack_1ns() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Tries SCHED_FIFO at `prio` for the calling thread; true when granted.
pub fn try_sched_fifo(prio: i32) -> bool {
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: pid 0 is the calling thread; `p` is valid.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Unmounts and removes a namespace bind mount, as `ip netns del` does.
pub fn remove_netns_mount(path: &str) -> io::Result<()> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    unsafe {
        libc::umount2(c.as_ptr(), libc::MNT_DETACH);
    }
    std::fs::remove_file(path)
}

/// A CLOCK_MONOTONIC timerfd armed at absolute instants.
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall; the fd is owned from here on.
        let fd = cvt(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        // SAFETY: fd was just created and is not owned elsewhere.
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Arms the timer at monotonic instant `at_ns` (0 disarms).
    pub fn set_abs(&self, at_ns: u64) -> io::Result<()> {
        let v = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at_ns / 1_000_000_000) as _, tv_nsec: (at_ns % 1_000_000_000) as _ },
        };
        // SAFETY: valid fd and itimerspec.
        cvt(unsafe { libc::timerfd_settime(self.0.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &v, std::ptr::null_mut()) })?;
        Ok(())
    }

    pub fn drain(&self) {
        let mut b = [0u8; 8];
        // SAFETY: reads at most 8 bytes into `b`.
        unsafe { libc::read(self.0.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
    }

    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// An epoll set over a few fds, each registered for input with its fd as the token.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fd was just created.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add_in(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
        // SAFETY: valid epoll fd, fd and event.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1 forever); returns how many fds are ready (EINTR counts as 0).
    pub fn wait(&self, timeout_ms: i32) -> io::Result<usize> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 4];
        // SAFETY: `evs` has room for 4 events.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 4, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(0) } else { Err(e) };
        }
        Ok(n as usize)
    }
}

/// `read(2)` into `buf`; `Ok(None)` when it would block.
pub fn read_nb(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some(n as usize))
}

/// `write(2)` of a whole datagram (a TUN write is all or nothing).
pub fn write_all(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    loop {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Sets an integer socket option.
pub fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: passes a pointer to a c_int with its size.
    cvt(unsafe {
        libc::setsockopt(fd, level, name, (&v as *const libc::c_int).cast(), std::mem::size_of::<libc::c_int>() as _)
    })?;
    Ok(())
}

/// Reads a socket option into `buf`; returns the length the kernel wrote.
pub fn getsockopt_buf(fd: RawFd, level: libc::c_int, name: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is valid for `len` bytes.
    cvt(unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr().cast(), &mut len) })?;
    Ok(len as usize)
}

/// Sets a socket option from bytes (TCP_CONGESTION takes a name).
pub fn setsockopt_bytes(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &[u8]) -> io::Result<()> {
    // SAFETY: `v` is valid for its length.
    cvt(unsafe { libc::setsockopt(fd, level, name, v.as_ptr().cast(), v.len() as _) })?;
    Ok(())
}

/// An epoll set whose entries carry a caller's token and the events asked for (edge- or level-triggered).
pub struct EpollSet(OwnedFd);

impl EpollSet {
    pub fn new() -> io::Result<EpollSet> {
        // SAFETY: plain syscall.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fd was just created.
        Ok(EpollSet(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: valid epoll fd, fd and event.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1 forever) and fills `out`; returns how many (EINTR counts as 0).
    pub fn wait(&self, out: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: `out` has room for `out.len()` events.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), out.as_mut_ptr(), out.len() as i32, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(0) } else { Err(e) };
        }
        Ok(n as usize)
    }
}

/// The pending error of a socket (SO_ERROR), 0 when none.
pub fn socket_error(fd: RawFd) -> io::Result<i32> {
    let mut b = [0u8; 4];
    getsockopt_buf(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// The local and remote ports of a connected IPv4 socket.
pub fn socket_ports(fd: RawFd) -> io::Result<(u16, u16)> {
    let port = |peer: bool| -> io::Result<u16> {
        // SAFETY: an all-zero sockaddr_in is valid.
        let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let p = (&mut sa as *mut libc::sockaddr_in).cast();
        // SAFETY: `sa` has room for `len` bytes.
        cvt(unsafe {
            if peer {
                libc::getpeername(fd, p, &mut len)
            } else {
                libc::getsockname(fd, p, &mut len)
            }
        })?;
        Ok(u16::from_be(sa.sin_port))
    };
    Ok((port(false)?, port(true)?))
}
