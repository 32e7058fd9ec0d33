//! The result document's versions (docs/outputs.md § From tcplab.result/1 to /2). Version 2 adds two
//! fields and changes none: `points[].links.directions` (every link direction's counters, named) and
//! `points[].links.queue_series` (queue length and sojourn time over time, with `test.series`). A /1
//! document reads as what it is and writes back unchanged; [`to_v1`] gives the /1 document of a /2 one.

use crate::result::{ResultDoc, SCHEMA_V1};

pub use crate::result::check_version;

/// The /1 document of `doc`: its schema /1, and /2's fields left out. Every other byte is the same, so
/// a reader of /1 reads it as before (the baseline test pins the shipped scenarios' /1 documents this
/// way).
pub fn to_v1(doc: &ResultDoc) -> ResultDoc {
    let mut v1 = doc.clone();
    v1.schema = SCHEMA_V1;
    for p in &mut v1.points {
        p.links.directions.clear();
        p.links.queue_series = None;
    }
    v1
}
