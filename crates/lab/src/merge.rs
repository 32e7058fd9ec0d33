//! `tcplab merge`: joins the documents of the shards of a sweep (`--shard i/n`) into the document the
//! whole run gives. Works on the JSON itself, so it needs nothing but the files.

use serde_json::{Map, Value};

/// Joins `docs` (name, parsed document), each a shard of the same run, into the whole document: the
/// first shard's fields without `shard`, and the points interleaved back into sweep order (point j is
/// shard j mod n's (j div n)-th). Every shard of the run must be there exactly once.
pub fn merge(docs: &[(String, Value)]) -> Result<Value, String> {
    if docs.is_empty() {
        return Err("no documents to merge".into());
    }
    struct Part<'a> {
        name: &'a str,
        index: u64,
        count: u64,
        total: u64,
        fields: &'a Map<String, Value>,
        points: &'a Vec<Value>,
    }
    let mut parts = Vec::new();
    for (name, doc) in docs {
        let fields = doc.as_object().ok_or_else(|| format!("{name}: not a result document (an object)"))?;
        if fields.get("schema").and_then(Value::as_str) != Some("tcplab.result/1") {
            return Err(format!("{name}: not a tcplab.result/1 document"));
        }
        let shard = fields.get("shard").ok_or_else(|| {
            format!("{name}: not a shard (no `shard` field); merge the documents of `tcplab run --shard i/n`")
        })?;
        let num = |k: &str| shard.get(k).and_then(Value::as_u64).ok_or_else(|| format!("{name}: shard.{k} missing"));
        let points =
            fields.get("points").and_then(Value::as_array).ok_or_else(|| format!("{name}: no `points` array"))?;
        parts.push(Part { name, index: num("index")?, count: num("count")?, total: num("points")?, fields, points });
    }
    let first = &parts[0];
    let same = |a: &Map<String, Value>, b: &Map<String, Value>| {
        let strip = |m: &Map<String, Value>| {
            m.iter()
                .filter(|(k, _)| *k != "points" && *k != "shard")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        strip(a) == strip(b)
    };
    for p in &parts[1..] {
        if p.count != first.count || p.total != first.total {
            return Err(format!(
                "{}: shard of {} points in {} shards, but {} is of {} points in {}",
                p.name, p.total, p.count, first.name, first.total, first.count
            ));
        }
        if !same(p.fields, first.fields) {
            return Err(format!(
                "{}: not from the same run as {} (scenario, seed, sweep, repetitions or version differ)",
                p.name, first.name
            ));
        }
    }
    let n = first.count;
    let mut by_index: Vec<Option<&Part>> = (0..n).map(|_| None).collect();
    for p in &parts {
        match by_index.get_mut(p.index as usize) {
            Some(slot @ None) => *slot = Some(p),
            Some(Some(q)) => return Err(format!("{} and {} are both shard {}/{n}", q.name, p.name, p.index)),
            None => return Err(format!("{}: shard {}/{n} is out of range", p.name, p.index)),
        }
    }
    let missing: Vec<String> =
        by_index.iter().enumerate().filter(|(_, p)| p.is_none()).map(|(i, _)| format!("{i}/{n}")).collect();
    if !missing.is_empty() {
        return Err(format!("shards missing: {}", missing.join(", ")));
    }
    let mut points = Vec::with_capacity(first.total as usize);
    for j in 0..first.total {
        let p = by_index[(j % n) as usize].expect("every shard is present");
        let point = p.points.get((j / n) as usize).ok_or_else(|| {
            format!(
                "{}: has {} points, but shard {}/{n} of {} points has more",
                p.name,
                p.points.len(),
                p.index,
                p.total
            )
        })?;
        points.push(point.clone());
    }
    for p in &parts {
        let expect = (first.total + n - 1 - p.index) / n;
        if p.points.len() as u64 != expect {
            return Err(format!(
                "{}: has {} points; shard {}/{n} of {} has {expect}",
                p.name,
                p.points.len(),
                p.index,
                p.total
            ));
        }
    }
    let mut out = Map::new();
    for (k, v) in first.fields {
        match k.as_str() {
            "shard" => {}
            "points" => {
                out.insert(k.clone(), Value::Array(std::mem::take(&mut points)));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Object(out))
}
