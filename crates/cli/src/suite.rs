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
    /// Confidence interval of the main metric (netperf -I): LEVEL,WIDTH, e.g. 0.99,0.05 or 99,5%.
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

    /// Whether a plain single run is asked for (what `--pcap` needs).
    pub fn is_plain(&self) -> bool {
        self.sweep.is_empty() && self.iterations.is_none() && self.confidence.is_none() && self.shard.is_none()
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal, not `quiet`, and the run is still
/// going after a second.
pub struct Progress {
    bar: Option<Arc<Mutex<ProgressBar>>>,
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() || total == 0 {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} points, eta {eta}") {
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
        Progress { bar: Some(bar) }
    }

    pub fn set(&self, done: usize) {
        if let Some(b) = &self.bar {
            if let Ok(b) = b.lock() {
                b.set_position(done as u64);
            }
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            if let Ok(b) = b.lock() {
                b.finish_and_clear();
            }
        }
    }
}
