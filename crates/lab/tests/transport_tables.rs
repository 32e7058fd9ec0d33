//! The lab's tables gathered from the registered transports (issue #24 item 4, docs/architecture.md § How
//! to add a transport): the key registry, the limits table and the metric names are exactly the lab's own
//! rows and the rows each transport declares with its config (`crates/lab/src/host_transports/NAME.rs`),
//! with no orphan row on either side: a row bounds or documents a key that exists, a transport's rows
//! stay in its own table, and nothing about a transport lives outside its declaration.

use std::collections::BTreeSet;

use tcplab_lab::host_transports::{Registration, REGISTERED};
use tcplab_lab::keys::{registry, Key, LAB_UNITS};
use tcplab_lab::limits::{matches, table, LAB_LIMITS};
use tcplab_lab::result::metric_names;
use tcplab_lab::{load, Protocol, Source, TestKind};

const HOSTS: &str = "{client,server}";

/// The registry's keys of the transport's table on the client and server (not the copies a flow or a
/// network host makes of TCP's).
fn own_keys(r: &Registration) -> Vec<&'static Key> {
    let prefix = format!("{HOSTS}.{}.", r.table);
    registry().iter().filter(|k| k.path.starts_with(&prefix)).collect()
}

/// Whether `key` (a registry path, any spelling) lies in a registered transport's table, and which.
fn transport_of(key: &Key) -> Option<&'static Registration> {
    let mut parts = key.path.split('.');
    let (_, table) = (parts.next(), parts.next()?);
    REGISTERED.iter().find(|r| r.table == table)
}

#[test]
fn every_transport_name_is_registered_once_and_every_registration_is_a_transport() {
    let names: Vec<&str> = Protocol::all().iter().map(|p| p.key()).collect();
    let tables: Vec<&str> = REGISTERED.iter().map(|r| r.table).collect();
    assert_eq!(names, tables, "Protocol::all() and host_transports::REGISTERED name the same transports in order");
}

#[test]
fn the_limits_table_is_the_labs_rows_then_each_transports() {
    let want: Vec<&str> = LAB_LIMITS.iter().chain(REGISTERED.iter().flat_map(|r| r.limits)).map(|l| l.key).collect();
    let got: Vec<&str> = table().iter().map(|l| l.key).collect();
    assert_eq!(got, want);
    let unique: BTreeSet<&str> = got.iter().copied().collect();
    assert_eq!(unique.len(), got.len(), "a pattern appears twice in the limits table");
}

#[test]
fn a_transports_limits_bound_its_own_table_and_nothing_else_does() {
    for r in REGISTERED {
        assert!(!r.limits.is_empty(), "{}: no limits declared", r.table);
        for l in r.limits {
            assert!(
                l.key.starts_with(&format!("*.{}.", r.table)),
                "{}: the row {:?} bounds a key outside the transport's table",
                r.table,
                l.key
            );
            // A key the row bounds (`*` as a host) is bounded by no lab row and no other transport's.
            let sample = l.key.replace('*', "client");
            for other in
                LAB_LIMITS.iter().chain(REGISTERED.iter().filter(|o| o.table != r.table).flat_map(|o| o.limits))
            {
                assert!(!matches(other.key, &sample), "{sample} ({}) is matched by {:?} too", r.table, other.key);
            }
        }
    }
}

#[test]
fn no_limits_row_is_an_orphan() {
    // Every row bounds at least one key of the registry; a transport's rows only keys of its table.
    let keys: Vec<(String, &Key)> =
        registry().iter().flat_map(|k| k.concrete().into_iter().map(move |c| (c, k))).collect();
    for l in table() {
        let hits: Vec<&(String, &Key)> = keys.iter().filter(|(c, _)| matches(l.key, c)).collect();
        assert!(!hits.is_empty(), "the limits row {:?} bounds no key of the registry", l.key);
        if let Some(r) = REGISTERED.iter().find(|r| r.limits.iter().any(|x| x.key == l.key)) {
            for (c, k) in hits {
                assert!(
                    transport_of(k).is_some_and(|t| t.table == r.table),
                    "{}'s row {:?} bounds {c}, outside its table",
                    r.table,
                    l.key
                );
            }
        }
    }
}

#[test]
fn a_transports_keys_are_its_table_its_knobs_and_their_fields() {
    // The host's tables are the lab's own (`host`) and the registered transports'.
    let host_tables: BTreeSet<&str> =
        registry().iter().filter(|k| k.parent() == HOSTS && k.is_table()).map(|k| k.name()).collect();
    let want: BTreeSet<&str> = REGISTERED.iter().map(|r| r.table).chain(["host"]).collect();
    assert_eq!(host_tables, want);
    for r in REGISTERED {
        let d = &r.keys;
        let table = registry().iter().find(|k| k.path == format!("{HOSTS}.{}", r.table)).expect("the table's row");
        assert_eq!((table.doc.as_str(), table.source.split(',').next()), (d.doc, Some(d.config.0)));
        let keys = own_keys(r);
        let knobs: Vec<&str> = keys.iter().filter(|k| k.parent() == table.path).map(|k| k.name()).collect();
        let declared: Vec<&str> = r.knobs.iter().map(|(n, _)| *n).collect();
        assert_eq!(knobs, declared, "{}: the registry's knobs are the crate's KNOBS, in order", r.table);
        // A knob with fields is declared nested, and a declared nested knob has fields.
        let with_fields: BTreeSet<&str> =
            keys.iter().filter(|k| k.parent() != table.path).map(|k| k.parent().rsplit('.').next().unwrap()).collect();
        let nested: BTreeSet<&str> = d.nested.iter().map(|(k, _, _)| *k).collect();
        assert_eq!(with_fields, nested, "{}: the knobs with fields", r.table);
        for (knob, _) in d.optional {
            assert!(declared.contains(knob), "{}: optional {knob} is no knob", r.table);
        }
        // Units: each declared one names a knob or a nested field and is what the registry shows.
        for (name, unit) in d.units {
            let named: Vec<&&Key> = keys.iter().filter(|k| k.name() == *name).collect();
            assert!(!named.is_empty(), "{}: the unit row {name:?} names no knob", r.table);
            assert!(named.iter().all(|k| k.unit == *unit), "{}: {name}'s unit", r.table);
        }
        for k in &keys {
            let declared = d.units.iter().find(|(n, _)| *n == k.name()).map_or("", |(_, u)| u);
            assert_eq!(k.unit, declared, "{}: a unit not from the transport's declaration", k.path);
        }
    }
    // The lab's units name lab keys only.
    for (name, unit) in LAB_UNITS {
        let named: Vec<&Key> = registry().iter().filter(|k| k.name() == *name).collect();
        assert!(!named.is_empty(), "the lab's unit row {name:?} names no key");
        for k in named {
            assert!(transport_of(k).is_none(), "{}: a lab unit on a transport's knob", k.path);
            assert_eq!(k.unit, *unit, "{}", k.path);
        }
    }
}

#[test]
fn metric_names_are_the_transports_declaration_and_the_cpu_models() {
    for (p, r) in Protocol::all().iter().zip(REGISTERED) {
        let mut runs: Vec<TestKind> = Vec::new();
        for kind in TestKind::ALL {
            let Some(declared) = (r.metric_names)(kind.key()) else { continue };
            runs.push(kind);
            let text = format!(
                "name = \"m\"\n[path.up]\nrate = \"10mbit\"\n[client.host]\ncpu = {{ cores = 1 }}\n\
                 [server.host]\ncpu = {{ cores = 1 }}\n[test]\nkind = \"{}_{}\"\nduration = \"1s\"\n",
                p.key(),
                kind.key()
            );
            let s = load(&Source { name: "m.toml", text: &text }, &[]).unwrap_or_else(|e| panic!("{e}"));
            let names = metric_names(&s).expect("a workload the transport runs has metric names");
            let (own, cpu) = names.split_at(declared.len());
            assert_eq!(own, declared.as_slice(), "{}_{}", p.key(), kind.key());
            assert_eq!(!cpu.is_empty(), r.cpu_model, "{}_{}: the CPU figures", p.key(), kind.key());
            assert!(cpu.iter().all(|n| n.starts_with("cpu_util_percent.") || n.starts_with("service_demand_")));
        }
        assert_eq!(runs, p.workloads(), "{}: the workloads with metric names are those the transport runs", p.key());
    }
}

#[test]
fn a_transports_statistics_and_series_columns_are_declared_and_plain() {
    for r in REGISTERED {
        let vars = (r.stats_vars)();
        assert!(!vars.is_empty(), "{}: no statistics of a connection end", r.table);
        // `client.VAR.mean` is a sampled variable's statistic: a statistic's own name has no dot.
        assert!(vars.iter().all(|v| !v.contains('.')), "{}: {vars:?}", r.table);
        assert!(r.stats_hint.starts_with(", or client.VAR / server.VAR"), "{}: {}", r.table, r.stats_hint);
        assert_eq!(r.series_columns.first(), Some(&"t_s"), "{}: a series starts with its time", r.table);
    }
}
