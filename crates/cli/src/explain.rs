use tcplab_lab::keys::{lookup, registry, Key, Lookup};

use crate::Failure;

/// Each personality's value of every knob, as the scenario file spells it.
fn personality_values() -> Vec<(&'static str, &'static str, toml::Table)> {
    tcplab_tcp::personality::PERSONALITIES
        .iter()
        .map(|(name, about)| {
            let cfg = tcplab_tcp::TcpConfig::personality(name).expect("every listed personality exists");
            let table = toml::Value::try_from(&cfg).ok().and_then(|v| v.as_table().cloned()).unwrap_or_default();
            (*name, *about, table)
        })
        .collect()
}

/// A knob's documentation, indented and wrapped at 100 columns.
fn print_wrapped(doc: &str) {
    let mut line = String::new();
    for word in doc.split_whitespace() {
        if line.len() + word.len() > 100 {
            println!("  {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    println!("  {line}");
}

fn show(v: Option<&toml::Value>) -> String {
    match v {
        Some(toml::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

/// The TCP knobs, one row per knob (per field of a table knob), one column per personality.
fn list_tcp() {
    let personalities = personality_values();
    let knobs = tcplab_tcp::config::KNOBS;
    println!("TCP knobs, set per host as client.tcp.KNOB or server.tcp.KNOB (`tcplab explain KNOB` for one):\n");
    let mut header = format!("{:<26}", "knob");
    for (name, _, _) in &personalities {
        header += &format!(" {name:<12}");
    }
    println!("{}", header.trim_end());
    for (k, _) in knobs {
        // A table of knobs (`cubic`, `rto_params`) gets one row per field, as `--set` spells it.
        let rows: Vec<(String, Vec<Option<&toml::Value>>)> = match personalities[0].2.get(*k) {
            Some(toml::Value::Table(first)) => first
                .keys()
                .map(|sub| {
                    let vals = personalities.iter().map(|(_, _, t)| t.get(*k).and_then(|v| v.get(sub))).collect();
                    (format!("{k}.{sub}"), vals)
                })
                .collect(),
            _ => vec![(k.to_string(), personalities.iter().map(|(_, _, t)| t.get(*k)).collect())],
        };
        for (name, vals) in rows {
            let mut line = format!("{name:<26}");
            for v in vals {
                line += &format!(" {:<12}", show(v));
            }
            println!("{}", line.trim_end());
        }
    }
    println!("\nPersonalities (client.stack / server.stack):");
    for (name, about, _) in &personalities {
        println!("  {name:<10} {about}");
    }
}

/// The knobs of every registered transport other than TCP (whose table above has a column per
/// personality), from the transport's `LabTransport` entry, with their defaults.
fn list_other_transports() {
    struct List;
    impl tcplab_lab::transport::WithTransport for List {
        type Output = ();
        fn with<T: tcplab_lab::LabTransport>(self) {
            let defaults = T::knob_defaults();
            let table = T::KNOB_TABLE;
            let kinds: Vec<String> = T::NAME
                .workloads()
                .iter()
                .map(|&k| format!("{:?}", tcplab_lab::scenario::full_kind_name(T::NAME, k)))
                .collect();
            println!(
                "\n{} knobs (test.kind = {}), set per host as client.{table}.KNOB or server.{table}.KNOB:\n",
                T::NAME.key().to_uppercase(),
                kinds.join(", ")
            );
            println!("{:<26} default", "knob");
            for (k, _) in T::KNOBS {
                println!("{:<26} {}", format!("{table}.{k}"), show(defaults.get(*k)));
            }
        }
    }
    for p in tcplab_lab::Protocol::all().into_iter().filter(|&p| p != tcplab_lab::Protocol::TCP) {
        tcplab_lab::transport::dispatch(p, List);
    }
}

/// The keys that are no transport's knobs: the top level, the path, the hosts' NICs, the test.
fn list_others() {
    println!("\nPath, host and test keys (`tcplab explain KEY` for one):\n");
    println!("{:<40} {:<26} default", "key", "type");
    for k in registry() {
        if tcplab_lab::Protocol::all().iter().any(|p| k.path.contains(&format!(".{}.", p.key()))) {
            continue;
        }
        let ty = if k.unit.is_empty() { k.ty.to_string() } else { format!("{} ({})", k.ty, k.unit) };
        println!("{}", format!("{:<40} {ty:<26} {}", k.path, k.default.short()).trim_end());
    }
}

/// `tcplab explain [KEY]`.
pub(crate) fn explain(knob: Option<&str>) -> Result<(), Failure> {
    let Some(query) = knob else {
        list_tcp();
        list_other_transports();
        list_others();
        return Ok(());
    };
    match lookup(query) {
        Lookup::One(key, under) => {
            one(key);
            if !under.is_empty() {
                println!("\n  keys of this table:");
                for k in under {
                    println!("    {:<40} {}", k.path, first_sentence(&k.doc));
                }
            }
            // `rate` is one key, but `nic_rate` is another a user asking for "rate" may mean.
            let word = query.trim();
            let related: Vec<&Key> = registry()
                .iter()
                .filter(|k| k.path != key.path && k.name() != word && k.name().split('_').any(|p| p == word))
                .filter(|_| !word.contains('.'))
                .collect();
            if !related.is_empty() {
                let names: Vec<&str> = related.iter().map(|k| k.path.as_str()).collect();
                println!("\n  see also: {}", names.join(", "));
            }
            Ok(())
        }
        Lookup::Ambiguous(keys) => {
            println!("{query:?} names {} keys; `tcplab explain PATH` for one:\n", keys.len());
            for k in keys {
                println!("  {:<40} {}", k.path, first_sentence(&k.doc));
            }
            Ok(())
        }
        Lookup::Mentions(keys) => {
            println!("Keys whose name or documentation mentions {query:?} (`tcplab explain KEY` for one):\n");
            for k in keys {
                println!("  {:<40} {}", k.path, first_sentence(&k.doc));
            }
            Ok(())
        }
        Lookup::Nothing => {
            let near = tcplab_lab::keys::suggest(query).map(|s| format!("did you mean {s}? ")).unwrap_or_default();
            Err(Failure::BadInput(format!(
                "{query}: no scenario key is named so or mentions it; {near}`tcplab explain` lists every key"
            )))
        }
    }
}

/// The first sentence of a doc, at most 100 characters.
fn first_sentence(doc: &str) -> String {
    let first = doc.split(". ").next().unwrap_or(doc).trim_end_matches('.');
    let short: String = first.chars().take(100).collect();
    if short.len() < first.len() {
        format!("{short}…")
    } else {
        short
    }
}

/// One key in full.
fn one(k: &Key) {
    let ty = if k.unit.is_empty() { k.ty.to_string() } else { format!("{}, {}", k.ty, k.unit) };
    println!("{}  ({ty})\n", k.path);
    if !k.doc.is_empty() {
        print_wrapped(&k.doc);
        println!();
    }
    match &k.default {
        tcplab_lab::keys::DefaultValue::PerStack(values) => {
            println!("  default by personality (stack):");
            for (p, v) in values {
                println!("    {p:<10} {v}");
            }
        }
        d => println!("  default    {}", d.line()),
    }
    if let Some(a) = tcplab_lab::keys::accepted(k) {
        println!("  accepted   {a}");
    }
    println!("  source     {}", k.source);
    if !k.is_table() && !k.path.contains("[]") {
        let path = k.concrete().into_iter().next().unwrap_or_default();
        println!(
            "  set        --set {path}=VALUE, or in the file under [{}]",
            path.rsplit_once('.').map_or("", |(p, _)| p)
        );
    }
}
