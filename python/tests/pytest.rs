//! The Python suite (python/tests/test_*.py) under `cargo test --workspace`: pytest runs against the extension
//! module this very build made (`lib_native.so`, put beside the package's Python sources in a temporary
//! directory as `tcplab/_native.abi3.so`), so the suite checks the code of the commit, not an older wheel,
//! and costs no second build. The `tcplab` binary built beside it (by `cargo test --workspace`, for the CLI's
//! own tests), or `$TCPLAB_BIN`, is the CLI the suite compares with; where there is none, those tests are
//! skipped with the reason (a failure under CI=true).
//!
//! The Python is `$TCPLAB_PYTHON`, else the venv `.ci/run` makes (/opt/tcplab-py), else `python3`; it
//! needs pandas and pytest (Ray for the Ray tests). Without them the test is ignored with the reason, a
//! failure under CI=true (tcplab-testkit). docs/python.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use tcplab_testkit::{skip, Outcome};

const INSTALL: &str = "python3 -m venv /opt/tcplab-py && /opt/tcplab-py/bin/pip install pandas pytest ray matplotlib \
                       (or set TCPLAB_PYTHON to a Python that has them; docs/python.md)";

/// The first Python that imports pandas and pytest.
fn python() -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    let candidates: Vec<PathBuf> = match std::env::var_os("TCPLAB_PYTHON") {
        Some(p) => vec![p.into()],
        None => vec!["/opt/tcplab-py/bin/python".into(), "python3".into()],
    };
    for py in candidates {
        let ok = Command::new(&py).args(["-c", "import pandas, pytest"]).output();
        match ok {
            Ok(o) if o.status.success() => return Ok(py),
            Ok(o) => tried.push(format!(
                "{}: {}",
                py.display(),
                String::from_utf8_lossy(&o.stderr).trim().lines().last().unwrap_or("")
            )),
            Err(e) => tried.push(format!("{}: {e}", py.display())),
        }
    }
    Err(tried.join("; "))
}

/// The directory cargo writes this profile's artifacts to (`target/debug`): this test's binary is in its
/// `deps/`.
fn artifacts() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent().and_then(Path::parent).expect("target/PROFILE/deps/TEST").to_path_buf()
}

fn python_suite() -> Outcome {
    let py = python().map_err(|why| skip(format!("no Python with pandas and pytest ({why}): {INSTALL}")))?;
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = artifacts();
    // In deps/, where this build put it (cargo copies a cdylib up to target/PROFILE only for `cargo build`).
    let lib = ["lib_native.so", "lib_native.dylib"]
        .iter()
        .map(|n| dir.join("deps").join(n))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("the extension module was not built in {}", dir.display()));
    // The package as maturin lays it out: the Python sources and the module, in a directory of its own
    // (not python/, whose tcplab/ has no module and would shadow it).
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let pkg = tmp.path().join("tcplab");
    std::fs::create_dir(&pkg).unwrap();
    for entry in std::fs::read_dir(here.join("tcplab")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "py" || e == "pyi") || p.file_name().is_some_and(|n| n == "py.typed") {
            std::fs::copy(&p, pkg.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(&lib, pkg.join("_native.abi3.so")).unwrap();
    let started = std::time::Instant::now();
    let status = Command::new(&py)
        .args([
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-W",
            "error::pytest.PytestUnraisableExceptionWarning",
        ])
        .arg(here.join("tests"))
        .current_dir(tmp.path())
        .env("PYTHONPATH", tmp.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("TCPLAB_BIN", std::env::var_os("TCPLAB_BIN").unwrap_or_else(|| dir.join("tcplab").into()))
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .status()
        .unwrap_or_else(|e| panic!("{}: cannot run pytest: {e}", py.display()));
    println!("pytest: {:.1} s with {}", started.elapsed().as_secs_f64(), py.display());
    assert!(status.success(), "pytest failed ({status}); its report is above");
    Ok(())
}

tcplab_testkit::main!(python_suite);
