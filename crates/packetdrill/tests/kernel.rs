//! The kernel backend (`--backend linux`): our scripts that state what Linux does pass against this
//! machine's kernel through the same interpreter and matcher as the simulator's, a changed expectation
//! fails at its line there too, and no namespace survives a run. Needs root and /dev/net/tun (skipped
//! with the reason otherwise; a failure under CI=true). Off Linux the file has no tests.

#[cfg(not(target_os = "linux"))]
tcplab_testkit::tests!();
#[cfg(target_os = "linux")]
tcplab_testkit::tests!(
    our_scripts_pass_on_the_kernel,
    a_changed_expectation_fails_on_the_kernel,
    a_global_sysctl_is_a_named_skip,
    no_namespace_survives
);

#[cfg(target_os = "linux")]
use on_linux::*;

#[cfg(target_os = "linux")]
mod on_linux {
    use std::path::Path;

    use tcplab_packetdrill::report::{run_text_on, BackendKind, ScriptReport};
    use tcplab_tcp::TcpConfig;
    use tcplab_testkit::{skip, Outcome};

    /// Scripts whose events are few and far apart, so that wall-clock timing holds on a busy machine.
    const SCRIPTS: &[&str] = &[
        "handshake-passive-options.pkt",
        "handshake-active-options.pkt",
        "close-active.pkt",
        "blocking-accept.pkt",
        "dsack-duplicate.pkt",
        "rst-received-econnreset.pkt",
    ];

    fn can_run() -> Outcome {
        match tcplab_packetdrill::kernel::unavailable() {
            None => Ok(()),
            Some(why) => Err(skip(format!("the kernel backend cannot run here: {why}"))),
        }
    }

    fn text(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join(name);
        std::fs::read_to_string(&p).expect("a script is readable")
    }

    /// Runs on the kernel; a timing error (the machine was busy: wall-clock time) is retried once.
    fn kernel(name: &str, text: &str) -> ScriptReport {
        let base = TcpConfig::personality("linux").expect("the linux personality exists");
        let r = run_text_on(BackendKind::Linux, name, text, &base);
        if r.status == "fail" && r.reason.as_deref().is_some_and(|m| m.starts_with("timing error")) {
            return run_text_on(BackendKind::Linux, name, text, &base);
        }
        r
    }

    pub fn our_scripts_pass_on_the_kernel() -> Outcome {
        can_run()?;
        for name in SCRIPTS {
            let r = kernel(name, &text(name));
            assert_eq!(r.status, "pass", "{name}: {:?} at line {:?}", r.reason, r.line);
        }
        Ok(())
    }

    pub fn a_changed_expectation_fails_on_the_kernel() -> Outcome {
        can_run()?;
        let name = "handshake-passive-options.pkt";
        let src = text(name);
        let lines: Vec<&str> = src.lines().collect();
        let i = lines.iter().position(|l| l.contains(" > S.")).expect("the script has a SYN-ACK");
        let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        changed[i] = changed[i].replace("wscale 8", "wscale 7");
        let r = kernel(name, &changed.join("\n"));
        assert_eq!(r.status, "fail", "{name} with wscale 7 still passes");
        assert_eq!(r.line, Some(i as u32 + 1), "{:?}", r.reason);
        assert!(r.reason.as_deref().is_some_and(|m| m.contains("bad outbound TCP options")), "{:?}", r.reason);
        Ok(())
    }

    pub fn a_global_sysctl_is_a_named_skip() -> Outcome {
        can_run()?;
        let src = "`sysctl -q net.ipv4.tcp_sack=1 vm.swappiness=10`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n";
        let base = TcpConfig::personality("linux").expect("the linux personality exists");
        let r = run_text_on(BackendKind::Linux, "x.pkt", src, &base);
        assert_eq!(r.status, "skip");
        assert!(r.reason.as_deref().is_some_and(|m| m.contains("vm.swappiness") && m.contains("per-namespace")));
        Ok(())
    }

    pub fn no_namespace_survives() -> Outcome {
        can_run()?;
        let _ = kernel("close-active.pkt", &text("close-active.pkt"));
        // Other tests of this file run at the same time: once they are done, none of the backend's
        // namespaces (`...-pd`) may be left.
        let ours = || -> Vec<String> {
            tcplab_emu::existing_namespaces().into_iter().filter(|n| n.ends_with("-pd")).collect()
        };
        let t = std::time::Instant::now();
        while !ours().is_empty() && t.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(ours().is_empty(), "namespaces left behind: {:?}", ours());
        Ok(())
    }
}
