//! Sweeps and repetitions: the `[sweep]` axes and `[repeat]` table of a scenario file, their flags
//! (`--sweep`, `--iterations`, `--confidence`), every point validated before anything runs, and the
//! run of a plan on a work-stealing pool (docs/sweeps.md).

use crate::error::{Origin, ScenarioError};
pub use crate::result::{main_metric, Axis, Repeat};
use crate::result::{toml_to_json, AxisOrigin};
use crate::result::{Confidence, EngineCounters, Metrics, Point, ResultDoc, RunError};
use crate::scenario::{load, Scenario, Source};

/// Point `p` from its iterations `runs` (in iteration order): the mean of every metric, the interval of the
/// main metric, the first iteration's connections, links, series and health (with how many iterations
/// were valid), the published figures compared.
pub fn combine_iterations(p: &PlanPoint, mut runs: Vec<Point>, rep: &Repeat) -> Result<Point, String> {
    let ci = rep.interval(&runs);
    let metric = main_metric(&runs[0].metrics).0;
    let metrics_json: Vec<serde_json::Value> =
        runs.iter().map(|r| serde_json::to_value(&r.metrics).unwrap_or_default()).collect();
    let mean: Metrics = serde_json::from_value(mean_json(&metrics_json))
        .map_err(|e| format!("the mean of the iterations' metrics: {e}"))?;
    let iterations = runs.len() as u32;
    // The Linux backend's health is the first iteration's, as its connections are: how many of the
    // iterations were valid is said beside it.
    let valid = runs.iter().filter(|r| r.health.as_ref().is_some_and(|h| h["valid"] == true)).count();
    let mut point = runs.swap_remove(0);
    if let Some(h) = point.health.as_mut().and_then(|h| h.as_object_mut()) {
        h.insert("iterations_valid".into(), valid.into());
    }
    point.params = p.params.clone();
    point.iterations = iterations;
    point.metrics = mean;
    point.iteration_stddev = (iterations > 1).then(|| stddev_json(&metrics_json));
    point.confidence = Some(Confidence {
        metric,
        level: rep.level,
        width: rep.width,
        interval: ci.map_or(0.0, |i| i.relative_width()),
        met: ci.is_some_and(|i| i.met(rep.width)),
    });
    point.compare_published(&p.scenario);
    Ok(point)
}

/// Repetition flags, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct RepeatFlags {
    /// `--iterations MAX[,MIN]`.
    pub iterations: Option<String>,
    /// `--confidence LEVEL,WIDTH`.
    pub confidence: Option<String>,
}

/// A scenario with its sweep and repetitions, validated: every point of a sweep of at most
/// [`FULL_CHECK`] points; of a larger one, the base and every axis value on a point of its own (the
/// others at their first value), the other points as each one starts (docs/sweeps.md § Large sweeps).
/// Points are built on demand ([`Plan::point`]), so a sweep of a million points plans at once.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario as the file and `--set` give it, before any sweep value.
    pub base: Scenario,
    pub axes: Vec<Axis>,
    /// `None`: one run per point, no interval.
    pub repeat: Option<Repeat>,
    /// Every point, when the sweep has at most [`FULL_CHECK`] points; else none (built by `point`).
    points: Vec<PlanPoint>,
    /// The cost of each point validated while planning (all of them, or the base and the axes' values,
    /// in that order).
    checked: Vec<crate::budget::PointEstimate>,
    /// The number of points: the product of the axes' lengths.
    total: usize,
    /// What a point is built from: the file's name and text, and the `--set` flags.
    name: String,
    text: String,
    overrides: Vec<String>,
    /// Validation's warnings over the checked points, each once.
    pub warnings: Vec<String>,
}

/// Sweeps of up to this many points are validated point by point before anything runs (about a second
/// at 100 us a point); larger ones by axis value, and each point as it starts.
pub const FULL_CHECK: usize = 10_000;

/// One point of a plan.
#[derive(Debug, Clone)]
pub struct PlanPoint {
    /// The coordinates: axis path → value, in axis order.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub scenario: Scenario,
}

const RANGE_HELP: &str =
    "accepted: an array of values ([false, true], [\"10mbit\", \"100mbit\"]) or an integer range \"A..=B\" or \"A..B\"";

/// An integer range `A..=B` or `A..B`; `None` if `t` is not written as one.
fn parse_range(t: &str) -> Option<Result<Vec<toml::Value>, String>> {
    let t = t.trim();
    let (a, b, inclusive) = if let Some((a, b)) = t.split_once("..=") {
        (a, b, true)
    } else {
        let (a, b) = t.split_once("..")?;
        (a, b, false)
    };
    let (a, b) = (a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?);
    let end = if inclusive { b } else { b - 1 };
    if end < a {
        return Some(Err(format!("{t:?} is an empty range")));
    }
    if end - a >= 100_000 {
        return Some(Err(format!("{t:?} has more than 100000 values")));
    }
    Some(Ok((a..=end).map(toml::Value::Integer).collect()))
}

/// The values of a `[sweep]` entry.
fn file_values(v: &toml::Value) -> Result<Vec<toml::Value>, String> {
    match v {
        toml::Value::Array(a) if a.is_empty() => Err(format!("an empty array; {RANGE_HELP}")),
        toml::Value::Array(a) => Ok(a.clone()),
        toml::Value::String(s) => match parse_range(s) {
            Some(r) => r,
            None => Err(format!("{s:?} is neither an array nor a range; {RANGE_HELP}")),
        },
        other => Err(format!("{other}: {RANGE_HELP}")),
    }
}

/// The values of `--sweep PATH=VALUES`: a range, a TOML array, or comma-separated values (each a TOML
/// value, or taken as a string).
fn flag_values(t: &str) -> Result<Vec<toml::Value>, String> {
    let t = t.trim();
    if let Some(r) = parse_range(t) {
        return r;
    }
    if t.starts_with('[') {
        return match toml::from_str::<toml::Table>(&format!("v = {t}")).ok().and_then(|mut x| x.remove("v")) {
            Some(v) => file_values(&v),
            None => Err(format!("{t} is not a TOML array; {RANGE_HELP}, or values separated by commas")),
        };
    }
    if t.is_empty() {
        return Err(format!("no values; {RANGE_HELP}, or values separated by commas (false,true)"));
    }
    let items: Vec<&str> = t.split(',').map(str::trim).collect();
    if let Some(k) = items.iter().position(|s| s.is_empty()) {
        return Err(format!(
            "value {} of {} is empty; accepted values separated by single commas, each non-empty (1,2,3)",
            k + 1,
            items.len()
        ));
    }
    let vals: Vec<toml::Value> = items
        .into_iter()
        .map(|s| {
            toml::from_str::<toml::Table>(&format!("v = {s}"))
                .ok()
                .and_then(|mut x| x.remove("v"))
                .unwrap_or_else(|| toml::Value::String(s.to_string()))
        })
        .collect();
    if vals.is_empty() {
        return Err(format!("no values; {RANGE_HELP}, or values separated by commas (false,true)"));
    }
    Ok(vals)
}

/// Flattens `[sweep]` into (key parts, span of the key), in file order; `"test.burst" = ...` and
/// `test.burst = ...` (a dotted key, i.e. a nested table) both name `test.burst`.
type Entry = (Vec<String>, Option<std::ops::Range<usize>>);

fn flatten(prefix: &[String], item: &toml_edit::Item, out: &mut Vec<Entry>) {
    if let Some(t) = item.as_table_like() {
        for (k, child) in t.iter() {
            let span = t.key(k).and_then(|key| key.span());
            let mut path = prefix.to_vec();
            path.push(k.to_string());
            if child.is_table_like() {
                flatten(&path, child, out);
            } else {
                out.push((path, span));
            }
        }
    }
}

fn lookup<'a>(table: &'a toml::Table, parts: &[String]) -> Option<&'a toml::Value> {
    let mut v = table.get(parts.first()?)?;
    for p in &parts[1..] {
        v = v.as_table()?.get(p)?;
    }
    Some(v)
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads `[repeat]` from the file and applies the flags over it.
fn repeat_of(
    src: &Source,
    table: &toml::Table,
    doc: Option<&toml_edit::ImDocument<&str>>,
    flags: &RepeatFlags,
) -> Result<Option<Repeat>, ScenarioError> {
    let file_err = |key: &str, message: String| ScenarioError {
        origin: Origin::File {
            file: src.name.into(),
            line: doc.and_then(|d| crate::scenario::line_of(d, src.text, key)),
        },
        key: key.into(),
        message,
    };
    let mut r = None;
    if let Some(v) = table.get("repeat") {
        let t =
            v.as_table().ok_or_else(|| file_err("repeat", "accepted: a table { min, max, level, width }".into()))?;
        let mut rep = Repeat::DEFAULT;
        for (k, v) in t {
            let key = format!("repeat.{k}");
            match k.as_str() {
                "min" | "max" => {
                    let n = v
                        .as_integer()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or_else(|| file_err(&key, format!("{v}: accepted an integer from 1 to 1000")))?
                        as u32;
                    if k == "min" {
                        rep.min = n
                    } else {
                        rep.max = n
                    }
                }
                "level" => {
                    rep.level = v.as_float().filter(|l| *l > 0.5 && *l < 1.0).ok_or_else(|| {
                        file_err(&key, format!("{v}: accepted a fraction 0.5 < level < 1, e.g. 0.95 or 0.99"))
                    })?
                }
                "width" => {
                    rep.width = v
                        .as_float()
                        .filter(|w| *w > 0.0 && *w <= 1.0)
                        .ok_or_else(|| file_err(&key, format!("{v}: accepted a fraction 0 < width <= 1, e.g. 0.05")))?
                }
                _ => return Err(file_err(&key, "unknown key; accepted: `min`, `max`, `level`, `width`".into())),
            }
        }
        if rep.min > rep.max {
            return Err(file_err("repeat.min", format!("{} > max = {}: accepted min <= max", rep.min, rep.max)));
        }
        r = Some(rep);
    }
    let flag_err = |flag: &str, v: &str, message: &str| ScenarioError {
        origin: Origin::Cli { flag: format!("{flag} {v}") },
        key: String::new(),
        message: message.into(),
    };
    if let Some(it) = &flags.iterations {
        let bad = || flag_err("--iterations", it, "accepted MAX or MAX,MIN with 1 <= MIN <= MAX <= 1000 (netperf -i)");
        let mut parts = it.split(',').map(|p| p.trim().parse::<u32>());
        let max = parts.next().and_then(|p| p.ok()).ok_or_else(bad)?;
        let min = match parts.next() {
            Some(p) => p.map_err(|_| bad())?,
            None => max.min(r.unwrap_or(Repeat::DEFAULT).min),
        };
        if parts.next().is_some() || min < 1 || min > max || max > 1000 {
            return Err(bad());
        }
        let mut rep = r.unwrap_or(Repeat::DEFAULT);
        rep.max = max;
        rep.min = min;
        r = Some(rep);
    }
    if let Some(c) = &flags.confidence {
        let bad = |why: &str| {
            flag_err(
                "--confidence",
                c,
                &format!(
                    "accepted LEVEL,WIDTH: LEVEL a fraction 0.5 < LEVEL < 1 (0.95, 0.99) or a percentage (95%, \
                     99%), WIDTH a fraction of the mean 0 < WIDTH <= 1 (0.05) or a percentage (5%); {why}"
                ),
            )
        };
        let (l, w) = c.split_once(',').ok_or_else(|| bad("expected two values separated by a comma"))?;
        let number = |t: &str, what: &str| -> Result<f64, ScenarioError> {
            let t = t.trim();
            let (n, percent) = match t.strip_suffix('%') {
                Some(p) => (p.trim(), true),
                None => (t, false),
            };
            let x: f64 = n.parse().map_err(|_| bad(&format!("{what} {t:?} is not a number")))?;
            Ok(if percent { x / 100.0 } else { x })
        };
        // A bare 1.5 was once read as 1.5 %: a level is a fraction or says it is a percentage.
        let level = number(l, "LEVEL")?;
        if !(level > 0.5 && level < 1.0) {
            return Err(bad(&format!("LEVEL {} is outside (0.5, 1)", l.trim())));
        }
        let width = number(w, "WIDTH")?;
        if !(width > 0.0 && width <= 1.0) {
            return Err(bad(&format!("WIDTH {} is outside (0, 1]", w.trim())));
        }
        let mut rep = r.unwrap_or(Repeat::DEFAULT);
        rep.level = level;
        rep.width = width;
        r = Some(rep);
    }
    Ok(r)
}

/// Loads a scenario with its sweep and repetitions: the file's `[sweep]` axes, then `--sweep` flags (one
/// for a path the file sweeps replaces it in place), their cartesian product (the first axis varies
/// slowest), each point loaded through [`load`] with `overrides` and the point's values, so every point is
/// validated before anything runs.
pub fn plan(
    src: &Source,
    overrides: &[String],
    sweeps: &[String],
    repeat_flags: &RepeatFlags,
) -> Result<Plan, ScenarioError> {
    plan_with(src, overrides, sweeps, repeat_flags, false)
}

/// [`plan`]; with `no_sweep` (`--no-sweep`) the file's `[sweep]` is left out, so that a scenario that
/// sweeps runs its base point (`sweeps`, the `--sweep` flags, still add axes).
pub fn plan_with(
    src: &Source,
    overrides: &[String],
    sweeps: &[String],
    repeat_flags: &RepeatFlags,
    no_sweep: bool,
) -> Result<Plan, ScenarioError> {
    let base = load(src, overrides)?;
    // `load` accepted the text, so it is valid TOML.
    let table: toml::Table = toml::from_str(src.text).unwrap_or_default();
    let doc = toml_edit::ImDocument::parse(src.text).ok();
    let mut axes: Vec<Axis> = Vec::new();
    if let Some(d) = doc.as_ref().filter(|_| !no_sweep) {
        if let Some(item) = d.as_table().get("sweep") {
            let line = |span: Option<std::ops::Range<usize>>| {
                span.map(|s| src.text[..s.start.min(src.text.len())].matches('\n').count() + 1)
            };
            if !item.is_table_like() {
                return Err(ScenarioError {
                    origin: Origin::File { file: src.name.into(), line: line(item.span()) },
                    key: "sweep".into(),
                    message: "accepted: a table of \"key.path\" = values".into(),
                });
            }
            let mut entries = Vec::new();
            flatten(&[], item, &mut entries);
            let sweep = table.get("sweep").and_then(|s| s.as_table()).cloned().unwrap_or_default();
            for (parts, span) in entries {
                let path = parts.join(".");
                let at = line(span);
                let origin = AxisOrigin::File { file: src.name.into(), line: at };
                let v = lookup(&sweep, &parts).cloned().unwrap_or(toml::Value::Boolean(false));
                let values = file_values(&v).map_err(|message| ScenarioError {
                    origin: Origin::File { file: src.name.into(), line: at },
                    key: format!("sweep.{path}"),
                    message,
                })?;
                axes.push(Axis { path, values, origin });
            }
        }
    }
    for flag in sweeps {
        let bad = |message: String| ScenarioError {
            origin: Origin::Sweep { flag: flag.clone() },
            key: String::new(),
            message,
        };
        let (path, values) =
            flag.split_once('=').ok_or_else(|| bad("expected PATH=VALUES, e.g. test.burst=0..=14".into()))?;
        let path = path.trim().to_string();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(bad("expected a dotted key path before '=', e.g. client.tcp.nodelay=false,true".into()));
        }
        let values = flag_values(values).map_err(bad)?;
        let axis = Axis { path: path.clone(), values, origin: AxisOrigin::Flag(flag.clone()) };
        match axes.iter_mut().find(|a| a.path == path) {
            // Two flags on one path: which values were meant is not ours to guess.
            Some(Axis { origin: AxisOrigin::Flag(first), .. }) => {
                return Err(bad(format!(
                    "{path} is swept by --sweep {first} already; accepted one --sweep per path (list every \
                     value in one: {path}=A,B,C)"
                )))
            }
            // A flag on a path the file sweeps replaces the file's values, in place.
            Some(a) => *a = axis,
            None => axes.push(axis),
        }
    }
    if let Some(a) = axes.iter().find(|a| matches!(a.path.split('.').next(), Some("sweep" | "repeat"))) {
        return Err(axis_error(a, None, format!("{}: accepted: a key of the scenario (not sweep or repeat)", a.path)));
    }
    let total = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len())).filter(|&n| n <= 1_000_000);
    let Some(total) = total else {
        return Err(axis_error(&axes[0], None, "the sweep has more than 1000000 points".into()));
    };
    let repeat = repeat_of(src, &table, doc.as_ref(), repeat_flags)?.filter(|r| r.max > 1);
    let mut plan = Plan {
        base,
        axes,
        repeat,
        points: Vec::new(),
        checked: Vec::new(),
        total,
        name: src.name.to_string(),
        text: src.text.to_string(),
        overrides: overrides.to_vec(),
        warnings: Vec::new(),
    };
    let to_check: Vec<usize> = if total <= FULL_CHECK {
        (0..total).collect()
    } else {
        // Each value of each axis, with the other axes at their first value: point k·stride of axis k.
        let mut v = vec![0];
        let mut stride = total;
        for a in &plan.axes {
            stride /= a.values.len();
            v.extend((1..a.values.len()).map(|j| j * stride));
        }
        v
    };
    let mut warnings: Vec<String> = plan.base.warnings.clone();
    let mut points = Vec::new();
    for i in to_check {
        let p = plan.build(i)?;
        for w in &p.scenario.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        plan.checked.push(crate::budget::point(&p.scenario));
        // Only a sweep validated in full keeps its points; a larger one builds them as they run.
        if total <= FULL_CHECK {
            points.push(p);
        }
    }
    plan.warnings = warnings;
    plan.points = points;
    Ok(plan)
}

impl Plan {
    /// The number of points.
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Whether every point was validated while planning (a sweep of at most [`FULL_CHECK`] points).
    pub fn fully_checked(&self) -> bool {
        self.total <= FULL_CHECK
    }

    /// How many points were validated while planning.
    pub fn checked(&self) -> usize {
        self.checked.len()
    }

    /// Point `i` (row-major: the last axis varies fastest), validated. A point of a large sweep that was
    /// not checked while planning is loaded now, and its error reported at its axis values.
    /// Every point, built: for a backend that translates each point before it runs (the Linux backend,
    /// whose plans run one testbed per point and are small).
    pub fn all_points(&self) -> Result<Vec<PlanPoint>, ScenarioError> {
        (0..self.total).map(|i| self.point(i)).collect()
    }

    /// This plan with its base and every point replaced (each as another backend runs it): the points
    /// are then these, never rebuilt from the file.
    pub fn with_points(&self, base: Scenario, points: Vec<PlanPoint>) -> Plan {
        Plan { base, total: points.len(), points, ..self.clone() }
    }

    pub fn point(&self, i: usize) -> Result<PlanPoint, ScenarioError> {
        match self.points.get(i) {
            Some(p) => Ok(p.clone()),
            None => self.build(i),
        }
    }

    /// The indices of axis values of point `i`.
    fn coordinates(&self, i: usize) -> Vec<usize> {
        let mut idx = vec![0; self.axes.len()];
        let mut rest = i;
        for (k, a) in self.axes.iter().enumerate().rev() {
            idx[k] = rest % a.values.len();
            rest /= a.values.len();
        }
        idx
    }

    fn build(&self, i: usize) -> Result<PlanPoint, ScenarioError> {
        let idx = self.coordinates(i);
        let mut ov = self.overrides.clone();
        let mut params = serde_json::Map::new();
        let mut coords = Vec::new();
        for (a, &j) in self.axes.iter().zip(&idx) {
            let v = &a.values[j];
            ov.push(format!("{}={v}", a.path));
            params.insert(a.path.clone(), toml_to_json(v));
            coords.push(format!("{}={}", a.path, value_text(v)));
        }
        if self.axes.is_empty() {
            return Ok(PlanPoint { params, scenario: self.base.clone() });
        }
        let scenario = load(&Source { name: &self.name, text: &self.text }, &ov).map_err(|e| {
            let at = coords.join(", ");
            // An error in a swept value is reported at the axis, with the value.
            let culprit = self.axes.iter().zip(&idx).find(
                |(a, &j)| matches!(&e.origin, Origin::Flag { flag } if *flag == format!("{}={}", a.path, a.values[j])),
            );
            match culprit {
                Some((a, &j)) => axis_error(
                    a,
                    Some(&a.values[j]),
                    if e.key == a.path { e.message.clone() } else { format!("{}: {}", e.key, e.message) },
                ),
                None => ScenarioError { message: format!("at sweep point {at}: {}", e.message), ..e },
            }
        })?;
        Ok(PlanPoint { params, scenario })
    }

    /// Point `i`'s estimated engine events (crate::budget), to start the longest points first: a checked
    /// point's own estimate, else point 0's scaled by each axis's effect at `i`'s value (exact when each
    /// axis multiplies the cost, as duration, rate and connections do).
    pub fn point_cost(&self, i: usize) -> f64 {
        let all = &self.checked;
        if self.fully_checked() {
            return all.get(i).map_or(0.0, |e| e.events);
        }
        let Some(first) = all.first() else { return 0.0 };
        let mut cost = first.events;
        let mut at = 1;
        for (a, &j) in self.axes.iter().zip(&self.coordinates(i)) {
            if j > 0 && first.events > 0.0 {
                cost *= all.get(at + j - 1).map_or(1.0, |e| e.events / first.events);
            }
            at += a.values.len() - 1;
        }
        cost
    }

    /// What running the plan will cost on `threads` worker threads (crate::budget). A sweep validated
    /// point by point sums its points; a larger one scales the first point by each axis's mean effect
    /// (exact when each axis multiplies the cost, as duration, rate and connections do).
    pub fn estimate(
        &self,
        shard: Option<(u32, u32)>,
        threads: usize,
        out: crate::budget::Outputs,
    ) -> crate::budget::Estimate {
        use crate::budget::{combine, PointEstimate};
        let iterations = self.repeat.map_or(1, |r| r.max);
        let all = &self.checked;
        let max = |f: fn(&PointEstimate) -> f64| all.iter().map(f).fold(0.0, f64::max);
        let mut largest = PointEstimate {
            run_bytes: max(|e| e.run_bytes),
            series_numbers: max(|e| e.series_numbers),
            connections: max(|e| e.connections),
            ..PointEstimate::default()
        };
        let mean = if self.fully_checked() {
            let n = all.len().max(1) as f64;
            let sum = |f: fn(&PointEstimate) -> f64| all.iter().map(f).sum::<f64>() / n;
            PointEstimate {
                segments: sum(|e| e.segments),
                events: sum(|e| e.events),
                run_bytes: sum(|e| e.run_bytes),
                result_bytes: sum(|e| e.result_bytes),
                series_numbers: sum(|e| e.series_numbers),
                connections: sum(|e| e.connections),
            }
        } else {
            // checked[0] is point 0; then each axis's values 1.. in order.
            let first = all[0];
            let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 1.0 };
            let mut scale = [1.0f64; 4];
            let mut peak = [1.0f64; 3];
            let mut at = 1;
            for a in &self.axes {
                let n = a.values.len();
                let vals = &all[at..at + n - 1];
                at += n - 1;
                let mean_of = |f: fn(&PointEstimate) -> f64| {
                    (1.0 + vals.iter().map(|e| ratio(f(e), f(&first))).sum::<f64>()) / n as f64
                };
                let max_of =
                    |f: fn(&PointEstimate) -> f64| vals.iter().map(|e| ratio(f(e), f(&first))).fold(1.0, f64::max);
                scale[0] *= mean_of(|e| e.segments);
                scale[1] *= mean_of(|e| e.events);
                scale[2] *= mean_of(|e| e.result_bytes);
                scale[3] *= mean_of(|e| e.series_numbers);
                peak[0] *= max_of(|e| e.run_bytes);
                peak[1] *= max_of(|e| e.series_numbers);
                peak[2] *= max_of(|e| e.connections);
            }
            largest.run_bytes = largest.run_bytes.max(first.run_bytes * peak[0]);
            largest.series_numbers = largest.series_numbers.max(first.series_numbers * peak[1]);
            largest.connections = largest.connections.max(first.connections * peak[2]);
            PointEstimate {
                segments: first.segments * scale[0],
                events: first.events * scale[1],
                run_bytes: first.run_bytes,
                result_bytes: first.result_bytes * scale[2],
                series_numbers: first.series_numbers * scale[3],
                connections: first.connections,
            }
        };
        let points = match shard {
            Some((i, n)) => (0..self.total).filter(|p| p % n as usize == i as usize).count(),
            None => self.total,
        };
        combine(points as u64, &mean, &largest, iterations, threads, out)
    }
}

fn axis_error(a: &Axis, value: Option<&toml::Value>, message: String) -> ScenarioError {
    let message = match value {
        Some(v) => format!("value {}: {message}; the axis takes {}", value_text(v), values_list(&a.values)),
        None => message,
    };
    match &a.origin {
        AxisOrigin::File { file, line } => ScenarioError {
            origin: Origin::File { file: file.clone(), line: *line },
            key: format!("sweep.{}", a.path),
            message,
        },
        AxisOrigin::Flag(flag) => {
            ScenarioError { origin: Origin::Sweep { flag: flag.clone() }, key: a.path.clone(), message }
        }
    }
}

fn values_list(v: &[toml::Value]) -> String {
    let shown: Vec<String> = v.iter().take(8).map(value_text).collect();
    let more = if v.len() > 8 { format!(", … ({} values)", v.len()) } else { String::new() };
    format!("[{}{more}]", shown.join(", "))
}

/// Which backend runs a plan's points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Backend {
    /// The simulator: points in parallel.
    #[default]
    Sim,
    /// The kernel's TCP in network namespaces (crates/emu): one point at a time, each on a testbed of its
    /// own that is gone before the next starts (runs share the machine's CPU and would disturb each
    /// other's timing). The plan's points should be as the kernel runs them
    /// ([`crate::linux_backend::plan_on_kernel`]).
    Linux,
}

impl Backend {
    /// The name the result document records (`backend`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sim => "sim",
            Backend::Linux => "linux",
        }
    }
}

/// One run of a point's scenario on `backend`.
fn run_one(backend: Backend, s: &Scenario, seed: u64) -> Result<crate::result::PointRun, RunError> {
    match backend {
        Backend::Sim => crate::run::run_point(s, seed),
        Backend::Linux => crate::run::run_point_linux(s, seed, None)
            .map(|point| crate::result::PointRun { point, engine: EngineCounters::default() })
            .map_err(|e| RunError::Linux(e.to_string())),
    }
}

/// How to run a plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// `--seed`: replaces every point's scenario seed.
    pub seed: Option<u64>,
    /// Worker threads; 0: one per core.
    pub jobs: usize,
    /// `--shard i/n`: run only the points whose index is i modulo n.
    pub shard: Option<(u32, u32)>,
}

/// The most worker threads a plan runs on: four per core. Points are CPU-bound, so threads beyond the
/// cores only take turns on them, and each costs a stack and a process-table slot; `--jobs 100000` once
/// ran for minutes starting threads, and under a process limit the pool could not be built at all.
pub fn max_jobs() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The worker threads `jobs` gives (0: one per core, as rayon chooses), and a note when it was clamped
/// to [`max_jobs`].
pub fn effective_jobs(jobs: usize) -> (usize, Option<String>) {
    let max = max_jobs();
    if jobs > max {
        let cores = max / 4;
        (max, Some(format!("--jobs {jobs} clamped to {max} (4 per core, {cores} cores); results do not depend on it")))
    } else {
        (jobs, None)
    }
}

/// A pool of `jobs` threads, or of fewer when the system refuses that many (a process limit): results
/// do not depend on the number of threads, so half as many is tried, down to one, before giving up. The
/// threads a failed attempt started are still exiting when the next attempt starts, so each attempt
/// waits 20 ms first, and one thread is tried for half a second.
fn worker_pool(jobs: usize) -> Result<rayon::ThreadPool, RunError> {
    let mut n = jobs;
    let mut tries_at_one = 0;
    loop {
        match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => return Ok(pool),
            Err(e) if n == 1 && tries_at_one >= 25 => {
                return Err(RunError::Unsupported(format!(
                    "cannot start even one worker thread ({e}); a process or thread limit (ulimit -u) is too low"
                )))
            }
            Err(_) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                let tried = if n == 0 { std::thread::available_parallelism().map_or(1, |c| c.get()) } else { n };
                n = (tried / 2).max(1);
                if tried == 1 {
                    tries_at_one += 1;
                }
            }
        }
    }
}

/// The seed of iteration `k` of a run seeded `seed`: the seed itself for the first, so that a point's first
/// iteration is the run `tcplab run --set PATH=VALUE` gives; then `stream_seed(seed, 2⁴⁰ + k)`.
pub fn iteration_seed(seed: u64, k: u32) -> u64 {
    if k == 0 {
        seed
    } else {
        tcplab_sim::stream_seed(seed, (1 << 40) + k as u64)
    }
}

/// A point whose interval was not met after `max` iterations.
#[derive(Debug, Clone)]
pub struct Unmet {
    pub index: usize,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub confidence: Confidence,
}

/// The mean of each numeric leaf of the iterations' metrics. A leaf that is an integer in every
/// iteration (a count) stays an integer: the mean rounded to the nearest.
fn mean_json(vals: &[serde_json::Value]) -> serde_json::Value {
    use serde_json::Value;
    match &vals[0] {
        Value::Object(first) => {
            let mut out = serde_json::Map::new();
            for k in first.keys() {
                let sub: Vec<Value> = vals.iter().map(|v| v.get(k).cloned().unwrap_or(Value::Null)).collect();
                out.insert(k.clone(), mean_json(&sub));
            }
            Value::Object(out)
        }
        Value::Number(_) => {
            let n = vals.len() as f64;
            if vals.iter().all(|v| v.is_u64()) {
                let sum: u128 = vals.iter().map(|v| v.as_u64().unwrap_or(0) as u128).sum();
                let mean = (sum as f64 / n).round() as u64;
                Value::from(mean)
            } else {
                let mean = vals.iter().map(|v| v.as_f64().unwrap_or(0.0)).sum::<f64>() / n;
                serde_json::Number::from_f64(mean).map(Value::Number).unwrap_or(Value::Null)
            }
        }
        other => other.clone(),
    }
}

/// The sample standard deviation (n − 1) of each numeric leaf of the iterations' metrics (at least two),
/// in their shape; leaves that are not numbers (a distribution's points) are left out.
fn stddev_json(vals: &[serde_json::Value]) -> serde_json::Value {
    use serde_json::Value;
    match &vals[0] {
        Value::Object(first) => {
            let mut out = serde_json::Map::new();
            for k in first.keys() {
                let sub: Vec<Value> = vals.iter().map(|v| v.get(k).cloned().unwrap_or(Value::Null)).collect();
                let s = stddev_json(&sub);
                if !s.is_null() {
                    out.insert(k.clone(), s);
                }
            }
            Value::Object(out)
        }
        Value::Number(_) => {
            let xs: Vec<f64> = vals.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect();
            let (_, stddev) = crate::stats::mean_and_sample_stddev(&xs);
            serde_json::Number::from_f64(stddev).map(Value::Number).unwrap_or(Value::Null)
        }
        _ => Value::Null,
    }
}

/// Runs one point: its first `min` iterations in parallel, then one at a time until the interval of the
/// main metric is met or `max` is reached. Connections, links and series are the first iteration's. Also
/// returns the engine's counters summed over the iterations (for benchmarks).
fn run_plan_point(
    p: &PlanPoint,
    seed: u64,
    repeat: Option<Repeat>,
    backend: Backend,
) -> Result<(Point, EngineCounters), RunError> {
    use rayon::prelude::*;
    let Some(rep) = repeat else {
        let r = run_one(backend, &p.scenario, seed)?;
        let mut point = r.point;
        point.params = p.params.clone();
        point.compare_published(&p.scenario);
        return Ok((point, r.engine));
    };
    let mut engine = EngineCounters::default();
    let mut count = |e: EngineCounters| {
        engine.events += e.events;
        engine.data_segments += e.data_segments;
    };
    let first: Vec<Result<crate::result::PointRun, RunError>> =
        (0..rep.min).into_par_iter().map(|k| run_one(backend, &p.scenario, iteration_seed(seed, k))).collect();
    let mut runs = Vec::with_capacity(first.len());
    for r in first {
        let r = r?;
        count(r.engine);
        runs.push(r.point);
    }
    while !rep.done(&runs) {
        let r = run_one(backend, &p.scenario, iteration_seed(seed, runs.len() as u32))?;
        count(r.engine);
        runs.push(r.point);
    }
    let point = combine_iterations(p, runs, &rep).expect("the mean of metrics is metrics");
    Ok((point, engine))
}

/// Why a plan's run stopped: a point of a large sweep that turned out invalid when it was built (exit
/// status 2, as any bad input), or a run that failed.
#[derive(Debug, Clone)]
pub enum PlanError {
    Point(ScenarioError),
    Run(RunError),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Point(e) => e.fmt(f),
            PlanError::Run(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PlanError {}

impl From<RunError> for PlanError {
    fn from(e: RunError) -> Self {
        PlanError::Run(e)
    }
}

/// Runs a plan into a result document, points in parallel on a work-stealing pool of `opts.jobs` threads
/// (byte-identical to a serial run). `progress(done, total)` is called as points finish. Also returns the
/// points whose interval was not met.
pub fn run_plan(
    plan: &Plan,
    opts: RunOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(ResultDoc, Vec<Unmet>), PlanError> {
    run_plan_counted(plan, opts, progress).map(|(doc, unmet, _)| (doc, unmet))
}

/// [`run_plan`], also returning the engine's counters summed over every run of the plan (`tcplab bench`).
/// Each point is built on the worker that runs it; after the first failure the points not yet started
/// are skipped, and the failure of the lowest index is reported.
pub fn run_plan_counted(
    plan: &Plan,
    opts: RunOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(ResultDoc, Vec<Unmet>, EngineCounters), PlanError> {
    run_plan_on(plan, opts, Backend::Sim, progress)
}

/// [`run_plan_counted`] on `backend`: the same document (`backend` names it), sweeps, repetitions and
/// shards alike; on the Linux backend one point and one iteration at a time (`opts.jobs` does not apply).
pub fn run_plan_on(
    plan: &Plan,
    opts: RunOptions,
    backend: Backend,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(ResultDoc, Vec<Unmet>, EngineCounters), PlanError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let indices: Vec<usize> = match opts.shard {
        Some((i, n)) => (0..plan.len()).filter(|p| p % n as usize == i as usize).collect(),
        None => (0..plan.len()).collect(),
    };
    let total = indices.len();
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let jobs = if backend == Backend::Linux { 1 } else { effective_jobs(opts.jobs).0 };
    let pool = worker_pool(jobs)?;
    // Longest first (LPT): each worker takes the next point of this order as it frees, so a long point
    // never starts last and holds up the end alone while the other cores idle. Ties keep the plan's order,
    // and so does one thread (the Linux backend's points run in the order the file gives).
    let mut order: Vec<usize> = (0..indices.len()).collect();
    if pool.current_num_threads() > 1 {
        let cost: Vec<f64> = indices.iter().map(|&i| plan.point_cost(i)).collect();
        order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]).then(a.cmp(&b)));
    }
    let next = AtomicUsize::new(0);
    type Outcome = Option<Result<(Point, EngineCounters), PlanError>>;
    let slots: Vec<std::sync::Mutex<Outcome>> = indices.iter().map(|_| std::sync::Mutex::new(None)).collect();
    pool.broadcast(|_| {
        while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            if failed.load(Ordering::Relaxed) {
                break;
            }
            let r = plan.point(indices[k]).map_err(PlanError::Point).and_then(|p| {
                let seed = opts.seed.unwrap_or(p.scenario.seed);
                run_plan_point(&p, seed, plan.repeat, backend).map_err(PlanError::Run)
            });
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            *slots[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
        }
    });
    let results: Vec<Outcome> = slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect();
    let mut engine = EngineCounters::default();
    let mut points = Vec::with_capacity(results.len());
    if let Some(e) = results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(e.clone());
    }
    for r in results.into_iter().flatten() {
        let (p, e) = r?;
        engine.events += e.events;
        engine.data_segments += e.data_segments;
        points.push(p);
    }
    let unmet = indices
        .iter()
        .zip(&points)
        .filter_map(|(&index, p)| {
            p.confidence.as_ref().filter(|c| !c.met).map(|c| Unmet {
                index,
                params: p.params.clone(),
                confidence: c.clone(),
            })
        })
        .collect();
    let doc = ResultDoc {
        schema: crate::result::SCHEMA,
        tcplab: env!("CARGO_PKG_VERSION").into(),
        backend: backend.name(),
        seed: opts.seed.unwrap_or(plan.base.seed),
        scenario: plan.base.clone(),
        sweep: (!plan.axes.is_empty()).then(|| plan.axes.clone()),
        repeat: plan.repeat,
        points,
        shard: opts.shard.map(|(index, count)| crate::result::Shard { index, count, points: plan.len() }),
    };
    Ok((doc, unmet, engine))
}

/// Parses `--shard i/n` (0 <= i < n).
pub fn parse_shard(t: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--shard {t}: accepted i/n with 0 <= i < n, e.g. 0/4 (Slurm: $SLURM_ARRAY_TASK_ID/4)");
    let (i, n) = t.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// A plan as the kernel runs it: every point through [`on_kernel`](crate::linux_backend::on_kernel), or every value the plan sets that the
/// kernel cannot honour, at once. A value refused at sweep points is named at its axis (the `[sweep]` entry
/// or the `--sweep` flag) with the values refused; a swept personality is refused (the kernel is one stack:
/// every point would run the same TCP). Also returns the personalities' defaults the kernel replaces, over
/// every point.
pub fn plan_on_kernel(
    plan: &Plan,
) -> Result<(Plan, Vec<crate::linux_backend::Replaced>), crate::linux_backend::LinuxError> {
    // The Linux backend sits below the sweep (the sweep runs its points through `crate::run`).
    use crate::linux_backend::{in_file_order, on_kernel, refusals, LinuxError, Refusal, Replaced};
    // Each refusal with the values refused under it (a swept key is refused at several points).
    let mut refused: Vec<(Refusal, Vec<String>)> = Vec::new();
    let mut add = |r: Refusal| match refused
        .iter_mut()
        .find(|(o, _)| o.origin == r.origin && o.key == r.key && o.reason == r.reason)
    {
        Some((_, values)) => {
            if !values.contains(&r.value) {
                values.push(r.value)
            }
        }
        None => {
            let value = r.value.clone();
            refused.push((r, vec![value]))
        }
    };
    for a in &plan.axes {
        let distinct = a.values.iter().any(|v| *v != a.values[0]);
        if (a.path == "client.stack" || a.path == "server.stack") && distinct {
            add(Refusal {
                origin: Some(a.origin()),
                key: axis_key(a),
                value: a.values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "),
                reason: "the Linux backend runs the kernel's own TCP at every point: a personality only gives \
                         defaults, which the kernel replaces (every point would run the same stack)"
                    .into(),
            });
        }
    }
    let mut replaced: Vec<Replaced> = Vec::new();
    let all = plan.all_points().map_err(LinuxError::Point)?;
    let mut points = Vec::with_capacity(all.len());
    for p in &all {
        for r in refusals(&p.scenario) {
            // A value a sweep gave is named at its axis.
            let axis = plan.axes.iter().find(|a| {
                matches!(&r.origin, Some(Origin::Flag { flag })
                    if flag.strip_prefix(&format!("{}=", a.path)).is_some_and(|v| a.values.iter().any(|x| x.to_string() == v)))
            });
            match axis {
                Some(a) => add(Refusal { origin: Some(a.origin()), key: axis_key(a), ..r }),
                None => add(r),
            }
        }
        let (scenario, rep) = on_kernel(&p.scenario);
        for r in rep {
            if !replaced.contains(&r) {
                replaced.push(r);
            }
        }
        points.push(PlanPoint { params: p.params.clone(), scenario });
    }
    if !refused.is_empty() {
        let mut refused: Vec<Refusal> =
            refused.into_iter().map(|(r, values)| Refusal { value: values.join(", "), ..r }).collect();
        in_file_order(&mut refused);
        return Err(LinuxError::Refused(refused));
    }
    let base = on_kernel(&plan.base).0;
    Ok((plan.with_points(base, points), replaced))
}

/// The key an axis is named by: `sweep.PATH` in a file, `PATH` for a `--sweep` flag (which the origin shows).
fn axis_key(a: &Axis) -> String {
    match a.origin() {
        Origin::File { .. } => format!("sweep.{}", a.path),
        _ => a.path.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item 7 of issue 22: `--jobs` beyond four per core is clamped, with a note; 0 and small values pass.
    #[test]
    fn jobs_are_clamped_to_four_per_core() {
        let max = max_jobs();
        assert!(max >= 4);
        assert_eq!(effective_jobs(0), (0, None));
        assert_eq!(effective_jobs(max), (max, None));
        let (n, note) = effective_jobs(100_000);
        assert_eq!(n, max);
        assert!(note.unwrap().starts_with(&format!("--jobs 100000 clamped to {max}")));
        assert_eq!(worker_pool(3).unwrap().current_num_threads(), 3);
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(parse_range("0..=3").unwrap().unwrap().len(), 4);
        assert_eq!(parse_range("2..4").unwrap().unwrap(), vec![toml::Value::Integer(2), toml::Value::Integer(3)]);
        assert!(parse_range("10mbit").is_none());
        assert!(parse_range("3..=1").unwrap().is_err());
        let v = flag_values("false,true").unwrap();
        assert_eq!(v, vec![toml::Value::Boolean(false), toml::Value::Boolean(true)]);
        let v = flag_values("10mbit, 100mbit").unwrap();
        assert_eq!(v[1], toml::Value::String("100mbit".into()));
        assert_eq!(flag_values("[1, 2]").unwrap().len(), 2);
    }

    /// A repeated point's spread between runs: each numeric leaf's sample standard deviation, in the
    /// metrics' shape; a figure equal in every run has none, and a distribution's points are left out.
    #[test]
    fn the_spread_between_iterations_is_each_leafs_sample_stddev() {
        let runs = [
            serde_json::json!({"t": {"mean": 10.0, "cdf": [[1.0, 0.5]]}, "n": 7}),
            serde_json::json!({"t": {"mean": 12.0, "cdf": [[2.0, 0.5]]}, "n": 7}),
            serde_json::json!({"t": {"mean": 14.0, "cdf": [[3.0, 0.5]]}, "n": 7}),
        ];
        // mean 12, squares 4 + 0 + 4 over n − 1 = 2: 2.
        assert_eq!(stddev_json(&runs), serde_json::json!({"t": {"mean": 2.0}, "n": 0.0}));
    }

    /// Item 11 of issue 22: an empty item is refused, not dropped.
    #[test]
    fn empty_items_are_refused() {
        assert!(flag_values("1,,2").unwrap_err().contains("value 2 of 3 is empty"));
        assert!(flag_values("1,2,").unwrap_err().contains("value 3 of 3 is empty"));
        assert!(flag_values("").unwrap_err().contains("no values"));
    }

    const BULK: &str = "name = \"b\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\n\
                        kind = \"tcp_stream\"\nduration = \"1s\"\n";

    /// Item 8: a sweep beyond FULL_CHECK points is planned by axis value, its points built on demand
    /// exactly as a sweep validated in full builds them, and a combination no single value shows invalid
    /// is found when its point is built, reported at the point's values.
    #[test]
    fn large_sweeps_are_planned_lazily() {
        let src = Source { name: "b.toml", text: BULK };
        let sweeps: Vec<String> =
            ["test.start_spread=[\"1ms\",\"900ms\"]", "test.duration=[\"1s\",\"500ms\"]", "seed=1..=2501"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let started = std::time::Instant::now();
        let p = plan(&src, &[], &sweeps, &RepeatFlags::default()).unwrap();
        assert_eq!(p.len(), 2 * 2 * 2501);
        assert!(!p.fully_checked());
        assert_eq!(p.checked(), 1 + 1 + 1 + 2500);
        assert!(started.elapsed().as_secs_f64() < 10.0);
        // Point 2501 + 5: spread 1ms, duration 500ms, seed 6: the scenario --set gives for those values.
        let built = p.point(2501 + 5).unwrap();
        let sets: Vec<String> =
            ["test.start_spread=\"1ms\"", "test.duration=\"500ms\"", "seed=6"].iter().map(|s| s.to_string()).collect();
        assert_eq!(built.scenario, load(&src, &sets).unwrap());
        assert_eq!(built.params["test.duration"], serde_json::json!("500ms"));
        // The same two axes alone are validated point by point, and refused before anything runs.
        assert!(plan(&src, &[], &sweeps[..2], &RepeatFlags::default()).is_err());
        // spread 900ms with duration 500ms: each value is valid alone, the pair is not.
        let e = p.point(3 * 2501).unwrap_err();
        let e = e.to_string();
        assert!(e.starts_with("--sweep test.start_spread=") && e.contains("value 900ms"), "{e}");
        assert!(e.contains("accepted less than test.duration (500ms)"), "{e}");
        let est = p.estimate(None, 2, crate::budget::Outputs::default());
        assert_eq!(est.points, 10_004);
    }

    #[test]
    fn means_keep_counts_integral() {
        let a = serde_json::json!({"x": 1.0, "n": 3, "l": {"p": 2.0}});
        let b = serde_json::json!({"x": 2.0, "n": 4, "l": {"p": 4.0}});
        assert_eq!(mean_json(&[a, b]), serde_json::json!({"x": 1.5, "n": 4, "l": {"p": 3.0}}));
    }

    #[test]
    fn shards() {
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("4/4").is_err() && parse_shard("x").is_err() && parse_shard("0/0").is_err());
    }
}
