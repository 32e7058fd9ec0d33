//! `tcplab._native`: the lab's public API (scenario loading, the sweep plan, running it, the typed result
//! document and its writers) as a Python extension module. The Python package `tcplab` (python/tcplab/)
//! wraps it into `tcplab.run`, `tcplab.load` and `Result` with pandas DataFrames (docs/python.md).
//!
//! Nothing here computes a figure: a run is `tcplab_lab::sweep::run_plan`, as the CLI's; a saved document
//! is `tcplab_report::write_json`'s bytes, as `--json`'s; a sweep run point by point elsewhere (Ray) is
//! joined by `tcplab_lab::merge::merge_docs`, as `tcplab merge` joins shards. This module only moves
//! values across the language boundary and flattens documents into columns, walking the JSON generically
//! so that metrics the lab gains later become columns without a change here.

use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::IntoPyObjectExt;
use serde_json::Value;
use tcplab_lab::result::{ResultDoc, Shard};
use tcplab_lab::sweep::{self, Backend, PlanError, RepeatFlags, RunOptions};
use tcplab_lab::{Origin, Source, SHIPPED};

create_exception!(
    tcplab,
    ScenarioError,
    PyValueError,
    "Bad input: a scenario, an override, a sweep or an option. The message is the CLI's (file:line: key: what \
     is wrong; accepted: ...); the attributes `file`, `line`, `key`, `flag` and `message` hold its parts."
);
create_exception!(
    tcplab,
    RunError,
    PyRuntimeError,
    "A run that failed (the simulator or the Linux backend refused or stopped it); the message is the CLI's."
);

/// The largest scenario file read (as the CLI: a scenario is a few kilobytes of TOML).
const SCENARIO_LIMIT: u64 = 16 << 20;
/// The largest result document read by `load` (as `tcplab report`).
const RESULT_LIMIT: u64 = 1 << 30;

/// The name errors in a scenario given as a dict are reported against. Its lines are those of the TOML the
/// dict was written as, which the caller never saw: such an error names the key alone.
const DICT_SOURCE: &str = "<dict>";

fn scenario_error(py: Python<'_>, e: &tcplab_lab::ScenarioError) -> PyErr {
    let text = match &e.origin {
        Origin::File { file, line: Some(_) } if file == DICT_SOURCE => {
            let e = tcplab_lab::ScenarioError {
                origin: Origin::File { file: file.clone(), line: None },
                key: e.key.clone(),
                message: e.message.clone(),
            };
            e.to_string()
        }
        _ => e.to_string(),
    };
    let err = ScenarioError::new_err(text);
    let v = err.value(py);
    let (file, line, flag) = match &e.origin {
        Origin::File { file, .. } if file == DICT_SOURCE => (Some(file.clone()), None, None),
        Origin::File { file, line } => (Some(file.clone()), *line, None),
        Origin::Flag { flag } => (None, None, Some(format!("set {flag}"))),
        Origin::Sweep { flag } => (None, None, Some(format!("sweep {flag}"))),
        Origin::Cli { flag } => (None, None, Some(flag.clone())),
    };
    // Setting attributes on a fresh exception object cannot fail short of memory exhaustion.
    let _ = v.setattr("file", file);
    let _ = v.setattr("line", line);
    let _ = v.setattr("flag", flag);
    let _ = v.setattr("key", e.key.clone());
    let _ = v.setattr("message", e.message.clone());
    err
}

/// A `ScenarioError` that is not a scenario file's (an unknown name, a bad option value).
fn input_error(py: Python<'_>, message: String) -> PyErr {
    let err = ScenarioError::new_err(message.clone());
    let v = err.value(py);
    for attr in ["file", "line", "flag"] {
        let _ = v.setattr(attr, py.None());
    }
    let _ = v.setattr("key", "");
    let _ = v.setattr("message", message);
    err
}

fn plan_error(py: Python<'_>, arg: &str, e: PlanError) -> PyErr {
    match e {
        PlanError::Point(e) => scenario_error(py, &e),
        PlanError::Run(e) => RunError::new_err(format!("{arg}: {e}")),
    }
}

/// The name errors are reported against and the text of a scenario given as a path, a shipped scenario's
/// name or TOML text, in that order (the CLI's rule, plus text).
#[pyfunction]
fn resolve(py: Python<'_>, scenario: &str) -> PyResult<(String, String)> {
    let looks_like_text = scenario.contains('\n') || scenario.contains('=');
    if !looks_like_text && Path::new(scenario).exists() {
        let text = tcplab_files::read_regular(Path::new(scenario), SCENARIO_LIMIT)
            .map_err(|e| input_error(py, format!("{scenario}: cannot read: {e}")))?;
        return Ok((scenario.to_string(), text));
    }
    if let Some(s) = SHIPPED.iter().find(|s| s.name == scenario) {
        return Ok((format!("scenarios/{}.toml", s.name), s.text.to_string()));
    }
    if looks_like_text {
        return Ok(("<string>".into(), scenario.to_string()));
    }
    let names: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
    Err(input_error(
        py,
        format!(
            "{scenario}: no such file, and not a shipped scenario; accepted: a path, TOML text, a dict, or a \
             shipped name: {}",
            names.join(", ")
        ),
    ))
}

/// The names of the shipped scenarios, as `tcplab list` prints them.
#[pyfunction]
fn shipped() -> Vec<&'static str> {
    SHIPPED.iter().map(|s| s.name).collect()
}

/// A JSON value (a Python dict, list or scalar as `json.dumps` writes it) as TOML: a table as a document,
/// anything else as a value (the `VALUE` of `--set PATH=VALUE`).
#[pyfunction]
fn json_to_toml(py: Python<'_>, json: &str, document: bool) -> PyResult<String> {
    let v: Value = serde_json::from_str(json).map_err(|e| input_error(py, format!("not JSON: {e}")))?;
    let t = toml::Value::try_from(&v)
        .map_err(|e| input_error(py, format!("{json}: not expressible in TOML ({e}); accepted: no None values")))?;
    if document {
        let table = match t {
            toml::Value::Table(t) => t,
            other => return Err(input_error(py, format!("{other}: accepted: a dict (the scenario's tables)"))),
        };
        toml::to_string(&table).map_err(|e| input_error(py, format!("cannot write as TOML: {e}")))
    } else {
        Ok(t.to_string())
    }
}

/// A scenario with its sweep and repetitions, every point validated (`tcplab_lab::sweep::Plan`).
#[pyclass(frozen, module = "tcplab._native")]
struct Plan {
    plan: sweep::Plan,
    /// What a Ray task rebuilds a point from: the scenario's name and text, the `set` overrides and the
    /// repetition flags.
    name: String,
    text: String,
    set: Vec<String>,
    iterations: Option<String>,
    confidence: Option<String>,
    backend: Backend,
}

#[pyfunction]
#[pyo3(signature = (name, text, set, sweep, iterations, confidence, backend))]
// The arguments are the CLI's flags, one each, as Python passes them.
#[allow(clippy::too_many_arguments)]
fn plan(
    py: Python<'_>,
    name: String,
    text: String,
    set: Vec<String>,
    sweep: Vec<String>,
    iterations: Option<String>,
    confidence: Option<String>,
    backend: &str,
) -> PyResult<Plan> {
    let backend = match backend {
        "sim" => Backend::Sim,
        "linux" => Backend::Linux,
        other => return Err(input_error(py, format!("backend {other:?}: accepted: \"sim\", \"linux\""))),
    };
    let flags = RepeatFlags { iterations: iterations.clone(), confidence: confidence.clone() };
    let src = Source { name: &name, text: &text };
    let mut p = py.allow_threads(|| sweep::plan(&src, &set, &sweep, &flags)).map_err(|e| scenario_error(py, &e))?;
    if backend == Backend::Linux {
        let (kernel, _) = tcplab_lab::sweep::plan_on_kernel(&p)
            .map_err(|e| input_error(py, format!("{name}: backend linux: {e}")))?;
        p = kernel;
    }
    Ok(Plan { plan: p, name, text, set, iterations, confidence, backend })
}

#[pymethods]
impl Plan {
    fn __len__(&self) -> usize {
        self.plan.len()
    }

    /// Validation's warnings (file:line: key: ...), each once.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        let mut w = self.plan.warnings.clone();
        if self.backend == Backend::Linux {
            if let Ok((_, replaced)) = tcplab_lab::sweep::plan_on_kernel(&self.plan) {
                w.extend(tcplab_lab::linux_backend::replaced_warning(&replaced));
            }
        }
        w
    }

    /// The swept key paths, in axis order.
    #[getter]
    fn axes(&self) -> Vec<String> {
        self.plan.axes.iter().map(|a| a.path.clone()).collect()
    }

    /// Refuses a run over the lab's budget (2 GiB, 1 hour) unless `force`, as `tcplab run` does; returns the
    /// estimate as text.
    fn check_budget(&self, py: Python<'_>, jobs: usize, force: bool) -> PyResult<String> {
        let threads = match sweep::effective_jobs(jobs).0 {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let estimate = self.plan.estimate(None, threads, tcplab_lab::budget::Outputs { renders: false });
        if let (Some(why), false) = (estimate.over(&tcplab_lab::budget::BUDGET), force) {
            return Err(input_error(
                py,
                format!(
                    "{}: the run is estimated to need {why} ({estimate}); run it anyway with force=True, or make \
                     it smaller (docs/scenario.md § Limits and budget)",
                    self.name
                ),
            ));
        }
        Ok(estimate.to_string())
    }

    /// Runs every point here, in parallel on `jobs` threads (0: one per core), the GIL released:
    /// `tcplab_lab::sweep::run_plan_on`, the CLI's run. Returns the result and a warning per point whose
    /// confidence interval was not met. `progress(done, total)` is called as points finish.
    #[pyo3(signature = (seed, jobs, progress=None))]
    fn run(
        &self,
        py: Python<'_>,
        seed: Option<u64>,
        jobs: usize,
        progress: Option<PyObject>,
    ) -> PyResult<(NativeResult, Vec<String>)> {
        if self.backend == Backend::Linux {
            tcplab_emu::check_environment().map_err(|e| input_error(py, format!("backend linux: {e}")))?;
        }
        let (jobs, note) = sweep::effective_jobs(jobs);
        let opts = RunOptions { seed, jobs, shard: None };
        let report = |done: usize, total: usize| {
            if let Some(f) = &progress {
                Python::with_gil(|py| {
                    if let Err(e) = f.call1(py, (done, total)) {
                        e.write_unraisable(py, None);
                    }
                });
            }
        };
        let outcome = py.allow_threads(|| sweep::run_plan_on(&self.plan, opts, self.backend, &report));
        let (doc, _, _) = outcome.map_err(|e| plan_error(py, &self.name, e))?;
        let mut warnings: Vec<String> = note.into_iter().collect();
        warnings.extend(unmet_warnings(&doc));
        Ok((NativeResult::new(doc), warnings))
    }

    /// The repetitions of every point, `(min, max)`, or `None` for one run each.
    #[getter]
    fn repeat(&self) -> Option<(u32, u32)> {
        self.plan.repeat.map(|r| (r.min, r.max))
    }

    /// The task that runs iteration `k` of point `i` alone (for Ray): [`Plan::task`] with one run
    /// (`--iterations 1`) whose seed is the lab's for that iteration (`iteration_seed`).
    #[pyo3(signature = (i, k, seed=None))]
    fn iteration_task(&self, py: Python<'_>, i: usize, k: u32, seed: Option<u64>) -> PyResult<String> {
        let point_seed = match seed {
            Some(s) => s,
            None => self.plan.point(i).map_err(|e| scenario_error(py, &e))?.scenario.seed,
        };
        let mut t: Value = serde_json::from_str(&self.task(py, i, None)?).expect("a task is JSON");
        t["iterations"] = Value::from("1");
        t["confidence"] = Value::Null;
        t["seed"] = Value::from(sweep::iteration_seed(point_seed, k));
        Ok(t.to_string())
    }

    /// Whether the iterations run so far of point `i` (their one-run documents, in iteration order) are
    /// enough: the lab's rule, the main metric's interval met or `max` reached.
    fn iterations_done(&self, i: usize, runs: Vec<String>) -> PyResult<bool> {
        let Some(rep) = self.plan.repeat else { return Ok(true) };
        let runs = one_runs(i, &runs)?;
        Ok(rep.done(&runs))
    }

    /// Point `i` from its iterations' one-run documents, as the lab's point runner combines them (the
    /// mean of every metric, the interval, the first iteration's connections, series and links), as a
    /// one-point document for [`Plan::assemble`].
    fn combine(&self, py: Python<'_>, i: usize, runs: Vec<String>) -> PyResult<String> {
        let rep = self.plan.repeat.ok_or_else(|| input_error(py, "combine: the plan has no repetitions".into()))?;
        let p = self.plan.point(i).map_err(|e| scenario_error(py, &e))?;
        let first = ResultDoc::from_json(&runs[0]).map_err(|e| RunError::new_err(format!("point {i}: {e}")))?;
        let runs = one_runs(i, &runs)?;
        let mut point =
            sweep::combine_iterations(&p, runs, &rep).map_err(|e| RunError::new_err(format!("point {i}: {e}")))?;
        // A one-point document of no sweep, as a task's: `assemble` gives the point its params again.
        point.params.clear();
        let doc = ResultDoc { points: vec![point], ..first };
        serde_json::to_string(&doc).map_err(|e| RunError::new_err(e.to_string()))
    }

    /// The task that runs point `i` alone (for Ray): a JSON text that [`run_task`] takes. The point is
    /// rebuilt from the scenario's text with the `set` overrides and the point's swept values as further
    /// overrides, exactly as the plan builds it.
    #[pyo3(signature = (i, seed=None))]
    fn task(&self, py: Python<'_>, i: usize, seed: Option<u64>) -> PyResult<String> {
        if i >= self.plan.len() {
            return Err(input_error(py, format!("point {i}: the sweep has {} points", self.plan.len())));
        }
        if self.backend != Backend::Sim {
            return Err(input_error(py, "executor \"ray\": accepted only with backend \"sim\"".into()));
        }
        let mut overrides = self.set.clone();
        let mut rest = i;
        let mut swept = Vec::with_capacity(self.plan.axes.len());
        for a in self.plan.axes.iter().rev() {
            swept.push(format!("{}={}", a.path, a.values[rest % a.values.len()]));
            rest /= a.values.len();
        }
        overrides.extend(swept.into_iter().rev());
        Ok(serde_json::json!({
            "name": self.name, "text": self.text, "set": overrides, "iterations": self.iterations,
            "confidence": self.confidence, "seed": seed,
        })
        .to_string())
    }

    /// Joins the documents the tasks of every point returned (in point order) into the document of the
    /// whole run: each becomes the shard `i/n` of a run of `n` points, and `tcplab merge`'s
    /// `merge_docs` joins them, so the result is byte-identical to a run of the whole plan here.
    #[pyo3(signature = (docs, seed=None))]
    fn assemble(&self, py: Python<'_>, docs: Vec<String>, seed: Option<u64>) -> PyResult<NativeResult> {
        let n = self.plan.len();
        if docs.len() != n {
            return Err(RunError::new_err(format!("{} documents for a sweep of {n} points", docs.len())));
        }
        let merged = py.allow_threads(|| -> Result<ResultDoc, String> {
            let mut shards = Vec::with_capacity(n);
            for (i, text) in docs.iter().enumerate() {
                let one = ResultDoc::from_json(text).map_err(|e| format!("point {i}: {e}"))?;
                let mut point = one.points.into_iter().next().ok_or_else(|| format!("point {i}: no point"))?;
                // As the lab's point runner: the params, then the published figures compared at them.
                let p = self.plan.point(i).map_err(|e| e.to_string())?;
                point.params = p.params;
                point.compare_published(&p.scenario);
                shards.push((
                    format!("point {i}"),
                    ResultDoc {
                        schema: one.schema,
                        tcplab: one.tcplab,
                        backend: self.backend.name(),
                        seed: seed.unwrap_or(self.plan.base.seed),
                        scenario: self.plan.base.clone(),
                        sweep: (!self.plan.axes.is_empty()).then(|| self.plan.axes.clone()),
                        repeat: self.plan.repeat,
                        points: vec![point],
                        shard: Some(Shard { index: i as u32, count: n as u32, points: n }),
                    },
                ));
            }
            tcplab_lab::merge::merge_docs(shards)
        });
        merged.map(NativeResult::new).map_err(|e| RunError::new_err(format!("{}: merging the points: {e}", self.name)))
    }
}

/// A warning per point whose confidence interval was not met after its iterations, read from the document
/// (its `confidence.met`), so that a run here and a sweep joined from Ray's tasks warn alike.
fn unmet_warnings(doc: &ResultDoc) -> Vec<String> {
    let mut out = Vec::new();
    for (i, p) in doc.points.iter().enumerate() {
        let Some(c) = p.confidence.as_ref().filter(|c| !c.met) else { continue };
        let at = if p.params.is_empty() { String::new() } else { format!(" {}", Value::Object(p.params.clone())) };
        out.push(format!(
            "point {i}{at}: {}% confidence interval of {} is {:.2}% of the mean after {} iterations, not within {:.2}%",
            c.level * 100.0,
            c.metric,
            c.interval * 100.0,
            p.iterations,
            c.width * 100.0
        ));
    }
    out
}

/// The single runs of point `i`, from their one-point documents.
fn one_runs(i: usize, docs: &[String]) -> PyResult<Vec<tcplab_lab::result::Point>> {
    docs.iter()
        .map(|d| {
            let doc = ResultDoc::from_json(d).map_err(|e| RunError::new_err(format!("point {i}: {e}")))?;
            doc.points.into_iter().next().ok_or_else(|| RunError::new_err(format!("point {i}: no point")))
        })
        .collect()
}

/// Runs one task of [`Plan::task`] (on a Ray worker): the point's scenario planned alone (the file's
/// `[sweep]` left out, its `[repeat]` kept), run with every iteration, the GIL released. Returns the
/// one-point result document as compact JSON.
#[pyfunction]
#[pyo3(signature = (task, jobs=0))]
fn run_task(py: Python<'_>, task: &str, jobs: usize) -> PyResult<String> {
    let t: Value = serde_json::from_str(task).map_err(|e| input_error(py, format!("not a tcplab task: {e}")))?;
    let text_of = |k: &str| t[k].as_str().map(String::from);
    let (Some(name), Some(text)) = (text_of("name"), text_of("text")) else {
        return Err(input_error(py, "not a tcplab task: no name or text".into()));
    };
    let set: Vec<String> =
        t["set"].as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect();
    let flags = RepeatFlags { iterations: text_of("iterations"), confidence: text_of("confidence") };
    let seed = t["seed"].as_u64();
    let src = Source { name: &name, text: &text };
    let outcome = py.allow_threads(|| {
        let plan = sweep::plan_with(&src, &set, &[], &flags, true).map_err(PlanError::Point)?;
        sweep::run_plan(&plan, RunOptions { seed, jobs: sweep::effective_jobs(jobs).0, shard: None }, &|_, _| {})
    });
    let (doc, _) = outcome.map_err(|e| plan_error(py, &name, e))?;
    serde_json::to_string(&doc).map_err(|e| RunError::new_err(e.to_string()))
}

/// A result document, typed (`ResultDoc`) and as JSON.
#[pyclass(frozen, module = "tcplab._native")]
struct NativeResult {
    doc: ResultDoc,
    value: Value,
}

impl NativeResult {
    fn new(doc: ResultDoc) -> NativeResult {
        let value = serde_json::to_value(&doc).unwrap_or(Value::Null);
        NativeResult { doc, value }
    }

    fn point(&self, i: usize) -> PyResult<&Value> {
        let n = self.doc.points.len();
        self.value["points"].get(i).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("point {i}: the result has {n} points (0 to {})", n - 1))
        })
    }
}

/// Reads a saved result document (`tcplab run --json`) through the typed model, as `tcplab report` does.
#[pyfunction]
fn load(py: Python<'_>, path: &str) -> PyResult<NativeResult> {
    let text = tcplab_files::read_regular(Path::new(path), RESULT_LIMIT)
        .map_err(|e| PyOSError::new_err(format!("{path}: cannot read: {e}")))?;
    let doc = ResultDoc::from_json(&text).map_err(|e| input_error(py, format!("{path}: {e}")))?;
    Ok(NativeResult::new(doc))
}

/// Columns: names in order of first appearance, and each column's values (`None` where a row lacks it).
type Columns = (Vec<String>, Vec<Vec<Value>>);

/// Rows of (name, value) pairs as columns.
fn columns(rows: Vec<Vec<(String, Value)>>) -> Columns {
    let mut names: Vec<String> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for r in &rows {
        for (k, _) in r {
            if !index.contains_key(k) {
                index.insert(k.clone(), names.len());
                names.push(k.clone());
            }
        }
    }
    let mut cols = vec![vec![Value::Null; rows.len()]; names.len()];
    for (i, r) in rows.into_iter().enumerate() {
        for (k, v) in r {
            cols[index[&k]][i] = v;
        }
    }
    (names, cols)
}

/// Flattens a JSON value into (dotted.key, scalar) pairs, depth first, in the document's order: objects by
/// key (`latency_us.p99`), arrays of objects by index (`flows.0.throughput_bps`); arrays of numbers (a
/// latency CDF) are left out: they have tables of their own.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| flatten(&join(k), x, out)),
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => {
            a.iter().enumerate().for_each(|(i, x)| flatten(&join(&i.to_string()), x, out))
        }
        Value::Array(_) => {}
        other => out.push((prefix.to_string(), other.clone())),
    }
}

fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    match v {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_py_any(py),
            (None, Some(u)) => u.into_py_any(py),
            _ => n.as_f64().unwrap_or(f64::NAN).into_py_any(py),
        },
        Value::String(s) => s.into_py_any(py),
        // A swept value that is a table or an array (`path.up.loss`): its JSON text, one cell.
        other => other.to_string().into_py_any(py),
    }
}

/// Columns as (names, list of Python lists), for `pandas.DataFrame(dict(zip(names, lists)))`.
fn columns_to_py(py: Python<'_>, (names, cols): Columns) -> PyResult<(Vec<String>, Vec<PyObject>)> {
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        let items = c.iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?;
        out.push(PyList::new(py, items)?.into_any().unbind());
    }
    Ok((names, out))
}

/// A long table (time, end, variable, value) from `columns` (the first is the time, `t_s`) and `rows`.
fn long_rows(cols: &[Value], rows: &[Value], end: &str, out: &mut [Vec<Value>; 4]) {
    let names: Vec<&str> = cols.iter().map(|c| c.as_str().unwrap_or("")).collect();
    for r in rows {
        let Some(r) = r.as_array() else { continue };
        let t = r.first().cloned().unwrap_or(Value::Null);
        for (j, name) in names.iter().enumerate().skip(1) {
            out[0].push(t.clone());
            out[1].push(Value::String(end.to_string()));
            out[2].push(Value::String(name.to_string()));
            out[3].push(r.get(j).cloned().unwrap_or(Value::Null));
        }
    }
}

fn long_columns(out: [Vec<Value>; 4]) -> Columns {
    (["t_s", "end", "variable", "value"].map(String::from).to_vec(), out.to_vec())
}

/// A long table (`t_s`, `key`, `variable`, `value`) from a series stored by column, as `queue_series` and
/// `flow_series` are: one time axis `t_s` shared by every entry, and per entry (a link direction, a flow)
/// its name and its variables, each an array with one value per instant. Rows go entry by entry, then
/// variable by variable, then instant by instant: the document's order.
fn long_by_column<'a>(
    key: &str,
    t: &[Value],
    entries: impl Iterator<Item = (Value, Vec<(String, &'a Value)>)>,
) -> Columns {
    let mut out: [Vec<Value>; 4] = Default::default();
    for (name, vars) in entries {
        for (variable, values) in vars {
            let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
            for (k, t) in t.iter().enumerate() {
                out[0].push(t.clone());
                out[1].push(name.clone());
                out[2].push(Value::String(variable.clone()));
                out[3].push(values.get(k).cloned().unwrap_or(Value::Null));
            }
        }
    }
    (["t_s", key, "variable", "value"].map(String::from).to_vec(), out.to_vec())
}

/// The link directions of a point: `links.directions` (`tcplab.result/2`), each `{direction, from, to,
/// counters}`; in a /1 document, which has none, `up` and `down` are the only directions (the migration
/// rule of docs/outputs.md), their ends not recorded.
fn directions(links: &Value) -> Vec<(Value, Value, Value, &Value)> {
    if let Some(d) = links.get("directions").and_then(Value::as_array) {
        return d
            .iter()
            .map(|d| (d["direction"].clone(), d["from"].clone(), d["to"].clone(), &d["counters"]))
            .collect();
    }
    ["up", "down"]
        .into_iter()
        .filter_map(|name| links.get(name).map(|c| (Value::from(name), Value::Null, Value::Null, c)))
        .collect()
}

#[pymethods]
impl NativeResult {
    /// The document as `tcplab run --json` writes it: pretty JSON and a final newline.
    fn json(&self) -> PyResult<String> {
        let mut s = serde_json::to_string_pretty(&self.doc).map_err(|e| RunError::new_err(e.to_string()))?;
        s.push('\n');
        Ok(s)
    }

    /// Writes the document with the CLI's writer (`--json`): the same bytes, the file complete or not at all.
    fn save(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        py.allow_threads(|| tcplab_report::write_json(&self.doc, path))
            .map_err(|e| PyOSError::new_err(format!("{path}: cannot write: {e}")))
    }

    /// The netperf-style table `tcplab run` prints.
    fn table(&self) -> String {
        tcplab_report::table(&self.doc)
    }

    fn __len__(&self) -> usize {
        self.doc.points.len()
    }

    /// A warning per point whose confidence interval was not met (`confidence.met` false), worded as a
    /// local run's.
    fn unmet_warnings(&self) -> Vec<String> {
        unmet_warnings(&self.doc)
    }

    /// One row per point: the swept values (`params`), `iterations`, every metric flattened, and the
    /// confidence interval's fields (`confidence.interval`, ...) with repetitions.
    fn points(&self, py: Python<'_>) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let axes: Vec<&str> = self.doc.sweep.iter().flatten().map(|a| a.path.as_str()).collect();
        let rows = self.value["points"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let mut row: Vec<(String, Value)> =
                    axes.iter().map(|a| (a.to_string(), p["params"].get(*a).cloned().unwrap_or(Value::Null))).collect();
                row.push(("iterations".into(), p["iterations"].clone()));
                flatten("", &p["metrics"], &mut row);
                // A `[dumbbell]` point: what its stream flows got together (`flows` has each flow's).
                if let Some(a) = p.get("aggregate") {
                    flatten("aggregate", a, &mut row);
                }
                if let Some(c) = p.get("confidence") {
                    flatten("confidence", c, &mut row);
                }
                row
            })
            .collect();
        columns_to_py(py, columns(rows))
    }

    /// One row per connection end: `end` (its index in the document), `side`, `protocol`, `state`, then
    /// every statistic of `estats` by its RFC 4898 name.
    fn connections(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let p = self.point(i)?;
        let rows = p["connections"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(k, c)| {
                let mut row = vec![("end".to_string(), Value::from(k))];
                for (key, v) in c.as_object().into_iter().flatten() {
                    flatten(if key == "estats" { "" } else { key }, v, &mut row);
                }
                row
            })
            .collect();
        columns_to_py(py, columns(rows))
    }

    /// The flows of a `[dumbbell]` point, one row per flow: with `i`, point `i`'s (the flow's fields
    /// flattened: `flow`, `kind`, `stack`, `congestion_control`, `base_rtt_ms`, `goodput_bps`, ...,
    /// `latency_us.p99`); without, every point's, each row led by `point` and the point's swept values.
    #[pyo3(signature = (i=None))]
    fn flows(&self, py: Python<'_>, i: Option<usize>) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let axes: Vec<&str> = self.doc.sweep.iter().flatten().map(|a| a.path.as_str()).collect();
        let points: Vec<(usize, &Value)> = match i {
            Some(i) => vec![(i, self.point(i)?)],
            None => self.value["points"].as_array().into_iter().flatten().enumerate().collect(),
        };
        let mut rows = Vec::new();
        for (k, p) in points {
            for f in p["flows"].as_array().into_iter().flatten() {
                let mut row = Vec::new();
                if i.is_none() {
                    row.push(("point".to_string(), Value::from(k)));
                    row.extend(
                        axes.iter().map(|a| (a.to_string(), p["params"].get(*a).cloned().unwrap_or(Value::Null))),
                    );
                }
                flatten("", f, &mut row);
                rows.push(row);
            }
        }
        columns_to_py(py, columns(rows))
    }

    /// `series` in long form: `t_s`, `end` (`sender`: the first sending connection), `variable`, `value`.
    fn series(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let p = self.point(i)?;
        let mut out: [Vec<Value>; 4] = Default::default();
        if let Some(s) = p.get("series") {
            let cols = s["columns"].as_array().map(Vec::as_slice).unwrap_or_default();
            let rows = s["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
            long_rows(cols, rows, "sender", &mut out);
        }
        columns_to_py(py, long_columns(out))
    }

    /// `logvars` in long form: `t_s`, `end` (`ID-SIDE`, as the CSV files name them: `0-client`),
    /// `variable`, `value`.
    fn logvars(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let p = self.point(i)?;
        let mut out: [Vec<Value>; 4] = Default::default();
        if let Some(lv) = p.get("logvars") {
            let cols = lv["columns"].as_array().map(Vec::as_slice).unwrap_or_default();
            for e in lv["ends"].as_array().into_iter().flatten() {
                let side = e["side"].as_str().unwrap_or("");
                let end = format!("{}-{side}", e["id"]);
                let rows = e["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
                long_rows(cols, rows, &end, &mut out);
            }
        }
        columns_to_py(py, long_columns(out))
    }

    /// One row per link direction (`links.directions`; `up` and `down` in a /1 document): `direction`,
    /// `from`, `to`, then its counters (`frames_in`, ..., `qdisc.sojourn_mean_ms` on the generic path).
    fn links(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let p = self.point(i)?;
        let rows = directions(&p["links"])
            .into_iter()
            .map(|(direction, from, to, counters)| {
                let mut row = vec![("direction".to_string(), direction), ("from".into(), from), ("to".into(), to)];
                flatten("", counters, &mut row);
                row
            })
            .collect();
        columns_to_py(py, columns(rows))
    }

    /// One row per host NIC (`links.nic_client`, `links.nic_server`): `host` (`client`, `server`), its
    /// transmit queue's counters, and with an `mtu` the host's IP fragmentation counters (`ip_client`,
    /// `ip_server`) as `ip.*`.
    fn nics(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let links = &self.point(i)?["links"];
        let rows = ["client", "server"]
            .into_iter()
            .filter_map(|host| {
                let nic = links.get(format!("nic_{host}"))?;
                let mut row = vec![("host".to_string(), Value::from(host))];
                flatten("", nic, &mut row);
                if let Some(ip) = links.get(format!("ip_{host}")) {
                    flatten("ip", ip, &mut row);
                }
                Some(row)
            })
            .collect();
        columns_to_py(py, columns(rows))
    }

    /// `links.queue_series` in long form: `t_s`, `direction`, `variable` (`backlog_packets`,
    /// `backlog_bytes`, `sojourn_ms`), `value`. No rows without one.
    fn queue_series(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let qs = &self.point(i)?["links"]["queue_series"];
        let t = qs["t_s"].as_array().map(Vec::as_slice).unwrap_or_default();
        let entries = qs["directions"].as_array().into_iter().flatten().map(|d| {
            let vars = d
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| *k != "direction")
                .map(|(k, v)| (k.clone(), v))
                .collect();
            (d["direction"].clone(), vars)
        });
        columns_to_py(py, long_by_column("direction", t, entries))
    }

    /// `flow_series` in long form: `t_s`, `flow` (its index), `variable` (the flow's `metric`:
    /// `goodput_mbps`, `latency_ms`), `value`. No rows without one.
    fn flow_series(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let fs = &self.point(i)?["flow_series"];
        let t = fs["t_s"].as_array().map(Vec::as_slice).unwrap_or_default();
        let entries = fs["flows"].as_array().into_iter().flatten().map(|f| {
            let metric = f["metric"].as_str().unwrap_or("value").to_string();
            (f["flow"].clone(), vec![(metric, &f["values"])])
        });
        columns_to_py(py, long_by_column("flow", t, entries))
    }

    /// `rtt_samples` in long form: `sample` (the measurement's index), `t_s`, `end` (`sender`, the end
    /// `series` follows), `variable` (`rtt_ms`, `taken`, `SmoothedRTT`, `CurRTO`), `value`. No rows
    /// without them.
    fn rtt_samples(&self, py: Python<'_>, i: usize) -> PyResult<(Vec<String>, Vec<PyObject>)> {
        let rs = &self.point(i)?["rtt_samples"];
        let cols = rs["columns"].as_array().map(Vec::as_slice).unwrap_or_default();
        let rows = rs["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
        let mut out: [Vec<Value>; 4] = Default::default();
        let mut sample = Vec::new();
        for (k, r) in rows.iter().enumerate() {
            let before = out[0].len();
            long_rows(cols, std::slice::from_ref(r), "sender", &mut out);
            sample.extend(std::iter::repeat_n(Value::from(k), out[0].len() - before));
        }
        let (mut names, mut data) = long_columns(out);
        names.insert(0, "sample".into());
        data.insert(0, sample);
        columns_to_py(py, (names, data))
    }

    /// What `--plot` draws, before drawing (`tcplab_report::plot::charts`), for matplotlib: a JSON list of
    /// charts (`name`, `title`, `x_label`, `y_label`, `lines`, `x_categories`, `log_x`, `y_range`, `band`,
    /// `point`), each line with its `label`, `x`, `y`, `dashed`, `markers`, `errors` (x, low, high),
    /// `published` and `colour` (the SVG's), and the notes on what was not drawn.
    fn charts(&self) -> (String, Vec<String>) {
        let (charts, notes) = tcplab_report::plot::charts(&self.value);
        let list: Vec<Value> = charts
            .iter()
            .map(|(name, c)| {
                let lines: Vec<Value> = c
                    .lines
                    .iter()
                    .zip(tcplab_report::plot::colours(c))
                    .map(|(l, rgb)| {
                        serde_json::json!({
                            "label": l.label,
                            "x": l.points.iter().map(|p| p.0).collect::<Vec<_>>(),
                            "y": l.points.iter().map(|p| p.1).collect::<Vec<_>>(),
                            "dashed": l.dashed,
                            "markers": l.markers,
                            "errors": l.errors.iter().map(|e| [e.0, e.1, e.2]).collect::<Vec<_>>(),
                            "published": l.published,
                            "colour": format!("#{:02x}{:02x}{:02x}", rgb.0, rgb.1, rgb.2),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "name": name, "title": c.title, "x_label": c.x_label, "y_label": c.y_label, "lines": lines,
                    "x_categories": c.x_categories, "log_x": c.log_x, "y_range": c.y_range, "band": c.band,
                    "point": c.point,
                })
            })
            .collect();
        (Value::Array(list).to_string(), notes)
    }

    /// The plots `--plot` draws: (name, title, SVG text) each, and notes on what was not drawn.
    fn plots(&self) -> (Vec<(String, String, String)>, Vec<String>) {
        let (plots, notes) = tcplab_report::plot::plots(&self.value);
        (plots.into_iter().map(|p| (p.name, p.title, p.svg)).collect(), notes)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Plan>()?;
    m.add_class::<NativeResult>()?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(shipped, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_task, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    Ok(())
}
