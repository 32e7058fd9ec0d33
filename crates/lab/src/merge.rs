//! `tcplab merge`: joins the documents of the shards of a sweep (`--shard i/n`) into the document the
//! whole run gives. Works on the typed result model: every shard is read as a [`ResultDoc`] (so a shard
//! whose points were damaged is refused, naming the field), and the whole is written by the same
//! serializer as a run's.

use serde_json::Value;

use crate::result::ResultDoc;

/// Joins `docs` (name, document read through the typed model), each a shard of the same run, into the
/// whole document: the first shard's fields without `shard`, and the points interleaved back into sweep
/// order (point j is shard j mod n's (j div n)-th). Every shard of the run must be there exactly once.
pub fn merge_docs(docs: Vec<(String, ResultDoc)>) -> Result<ResultDoc, String> {
    if docs.is_empty() {
        return Err("no documents to merge".into());
    }
    let mut parts = Vec::with_capacity(docs.len());
    for (name, doc) in docs {
        let shard = doc.shard.ok_or_else(|| {
            format!("{name}: not a shard (no `shard` field); merge the documents of `tcplab run --shard i/n`")
        })?;
        parts.push((name, shard, doc));
    }
    // What must be the same in every shard: the document without its points and shard.
    let run_of = |d: &ResultDoc| -> Value {
        serde_json::json!({
            "schema": d.schema, "tcplab": d.tcplab, "backend": d.backend, "seed": d.seed,
            "scenario": d.scenario, "sweep": d.sweep, "repeat": d.repeat,
        })
    };
    let (first_name, first, first_doc) = &parts[0];
    let first_run = run_of(first_doc);
    for (name, shard, doc) in &parts[1..] {
        if shard.count != first.count || shard.points != first.points {
            return Err(format!(
                "{name}: shard of {} points in {} shards, but {first_name} is of {} points in {}",
                shard.points, shard.count, first.points, first.count
            ));
        }
        if run_of(doc) != first_run {
            return Err(format!(
                "{name}: not from the same run as {first_name} (scenario, seed, sweep, repetitions or version differ)"
            ));
        }
    }
    let n = first.count;
    let total = first.points;
    let mut by_index: Vec<Option<usize>> = vec![None; n as usize];
    for (k, (name, shard, _)) in parts.iter().enumerate() {
        match by_index.get_mut(shard.index as usize) {
            Some(slot @ None) => *slot = Some(k),
            Some(Some(q)) => return Err(format!("{} and {name} are both shard {}/{n}", parts[*q].0, shard.index)),
            None => return Err(format!("{name}: shard {}/{n} is out of range", shard.index)),
        }
    }
    let missing: Vec<String> =
        by_index.iter().enumerate().filter(|(_, p)| p.is_none()).map(|(i, _)| format!("{i}/{n}")).collect();
    if !missing.is_empty() {
        return Err(format!("shards missing: {}", missing.join(", ")));
    }
    for (name, shard, doc) in &parts {
        let expect = (total as u64 + n as u64 - 1 - shard.index as u64) / n as u64;
        if doc.points.len() as u64 != expect {
            return Err(format!(
                "{name}: has {} points; shard {}/{n} of {total} has {expect}",
                doc.points.len(),
                shard.index
            ));
        }
    }
    let mut whole = parts[0].2.clone();
    whole.shard = None;
    whole.points = Vec::with_capacity(total);
    let mut iters: Vec<std::vec::IntoIter<crate::result::Point>> = vec![Vec::new().into_iter(); n as usize];
    for (_, shard, doc) in parts {
        iters[shard.index as usize] = doc.points.into_iter();
    }
    for j in 0..total {
        let point = iters[j % n as usize].next().expect("each shard's count was checked");
        whole.points.push(point);
    }
    whole.check()?;
    Ok(whole)
}

/// [`merge_docs`] of documents in their JSON form (name, value): each is read through the typed model
/// first, and an error names the document and the field.
pub fn merge(docs: &[(String, Value)]) -> Result<Value, String> {
    let typed = docs
        .iter()
        .map(|(name, v)| ResultDoc::from_value(v).map(|d| (name.clone(), d)).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let whole = merge_docs(typed)?;
    serde_json::to_value(&whole).map_err(|e| e.to_string())
}
