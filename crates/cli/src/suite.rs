//! The flags of `tcplab run` for sweeps, repetitions, parallel points and shards; the progress bar; and
//! `tcplab merge` (docs/sweeps.md).

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Sweep, repetition and scale-out flags of `run` (and `check`, which validates every point).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SuiteArgs {
    /// Sweep a scenario key: PATH=VALUES, VALUES a range (0..=14), a TOML array ([false,true]) or
    /// values separated by commas (10mbit,100mbit). Repeatable: the points are the cartesian product.
    #[arg(long = "sweep", value_name = "PATH=VALUES")]
    pub sweep: Vec<String>,
    /// Leave out the scenario file's [sweep]: run its base point (with --sweep, only the flags' axes).
    #[arg(long)]
    pub no_sweep: bool,
    /// Repetitions per point (netperf -i): MAX or MAX,MIN.
    #[arg(long, value_name = "MAX[,MIN]")]
    pub iterations: Option<String>,
    /// Confidence interval of the main metric (netperf -I): LEVEL,WIDTH, e.g. 0.99,0.05 or 99%,5%.
    #[arg(long, value_name = "LEVEL,WIDTH")]
    pub confidence: Option<String>,
    /// Worker threads for points and iterations (default: one per core); results do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Run only every n-th point, starting at point i (0 <= i < n); join the shards with `tcplab merge`.
    #[arg(long, value_name = "i/n")]
    pub shard: Option<String>,
}

impl SuiteArgs {
    pub fn repeat_flags(&self) -> tcplab_lab::sweep::RepeatFlags {
        tcplab_lab::sweep::RepeatFlags { iterations: self.iterations.clone(), confidence: self.confidence.clone() }
    }

    /// Refuses what `--pcap` cannot trace: more than one run (a sweep's points, a point's iterations, a
    /// shard). `--iterations 1` is one run, also over a scenario's own `[repeat]`.
    pub fn single_run(&self, plan: &tcplab_lab::sweep::Plan) -> Result<(), String> {
        if self.shard.is_some() || !plan.axes.is_empty() {
            return Err("--pcap: accepted only for a single run (no sweep or --shard; --no-sweep runs a \
                        scenario's base point)"
                .into());
        }
        match plan.repeat {
            Some(r) if r.max > 1 && self.iterations.is_none() && self.confidence.is_none() => Err(format!(
                "--pcap: the scenario's [repeat] runs each point up to {} times; add --iterations 1 to trace one run",
                r.max
            )),
            Some(r) if r.max > 1 => {
                Err("--pcap: accepted only for a single run (--iterations 1, no --confidence)".into())
            }
            _ => Ok(()),
        }
    }
}

/// What the progress bar counts: the points of a sweep, or, for a single point, the simulated time of its
/// run against the test's duration (`of`; `None` when the test ends by a message count, not a duration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    Points(usize),
    Simulated { of: Option<tcplab_units::Duration> },
}

impl Measure {
    /// Points for a sweep; the simulated time for a single point.
    pub fn of(plan: &tcplab_lab::sweep::Plan) -> Measure {
        if plan.len() != 1 {
            return Measure::Points(plan.len());
        }
        // A single point is the base scenario with the sweep's one value on each axis, if any.
        match plan.point(0) {
            Ok(p) => {
                let t = &p.scenario.test;
                let by_messages = t.messages.is_some() && t.duration == tcplab_lab::scenario::MESSAGES_LIMIT;
                Measure::Simulated { of: (!by_messages).then_some(t.duration) }
            }
            Err(_) => Measure::Points(1),
        }
    }
}

/// The bar's message for a single run: simulated time against the duration, in seconds.
pub fn simulated_message(simulated: tcplab_units::Duration, of: Option<tcplab_units::Duration>) -> String {
    let s = simulated.as_nanos() as f64 * 1e-9;
    match of {
        Some(d) => format!("{s:.1}s of {:.1}s simulated", d.as_nanos() as f64 * 1e-9),
        None => format!("{s:.1}s simulated"),
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal, not `quiet`, and the run is still
/// going after a second.
pub struct Progress {
    bar: Option<Arc<Mutex<ProgressBar>>>,
    /// Whether the bar counts points (else simulated time, which a thread follows).
    points: bool,
    /// Set when the run is over, so that the thread following the simulated time stops.
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Progress {
    pub fn new(measure: Measure, quiet: bool) -> Progress {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if quiet || !std::io::stderr().is_terminal() || measure == Measure::Points(0) {
            return Progress { bar: None, points: true, done };
        }
        let (len, template) = match measure {
            Measure::Points(n) => (n as u64, "{elapsed_precise} [{bar:40}] {pos}/{len} points, eta {eta}"),
            // Milliseconds of simulated time; a run without a known end shows no bar.
            Measure::Simulated { of: Some(d) } => {
                (d.as_millis().max(1), "{elapsed_precise} [{bar:40}] {msg}, eta {eta}")
            }
            Measure::Simulated { of: None } => (0, "{elapsed_precise} {msg}"),
        };
        let bar = ProgressBar::with_draw_target((len > 0).then_some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        let bar = Arc::new(Mutex::new(bar));
        let later = Arc::clone(&bar);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if let Ok(b) = later.lock() {
                if !b.is_finished() {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.enable_steady_tick(Duration::from_millis(200));
                }
            }
        });
        if let Measure::Simulated { of } = measure {
            // The engine publishes its time only while watched (tcplab_sim::progress): nothing is paid
            // when no bar is shown.
            let (bar, done) = (Arc::clone(&bar), Arc::clone(&done));
            std::thread::spawn(move || {
                let watch = tcplab_sim::progress::watch();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let t = watch.simulated();
                    if let Ok(b) = bar.lock() {
                        b.set_position(t.as_millis().min(b.length().unwrap_or(u64::MAX)));
                        b.set_message(simulated_message(t, of));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
        Progress { bar: Some(bar), points: matches!(measure, Measure::Points(_)), done }
    }

    /// `done` points of the sweep have finished.
    pub fn set(&self, done: usize) {
        if let Some(b) = &self.bar {
            if let (true, Ok(b)) = (self.points, b.lock()) {
                b.set_position(done as u64);
            }
        }
    }

    pub fn finish(&self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(b) = &self.bar {
            if let Ok(b) = b.lock() {
                b.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_run_counts_simulated_seconds() {
        let d = |ms| tcplab_units::Duration::from_millis(ms);
        assert_eq!(simulated_message(d(12_345), Some(d(30_000))), "12.3s of 30.0s simulated");
        assert_eq!(simulated_message(d(500), None), "0.5s simulated");
        let one = |text: &str| {
            let src = tcplab_lab::Source { name: "t", text };
            tcplab_lab::sweep::plan(&src, &[], &[], &Default::default()).unwrap()
        };
        let bulk = tcplab_lab::SHIPPED.iter().find(|s| s.name == "bulk-10m").unwrap().text;
        assert_eq!(Measure::of(&one(bulk)), Measure::Simulated { of: Some(d(30_000)) });
        let rdp = tcplab_lab::SHIPPED.iter().find(|s| s.name == "rdp-loopback").unwrap().text;
        assert_eq!(Measure::of(&one(rdp)), Measure::Simulated { of: None });
        let rr = tcplab_lab::SHIPPED.iter().find(|s| s.name == "rr-dsl").unwrap().text;
        assert_eq!(Measure::of(&one(rr)), Measure::Points(14));
    }
}
