//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod csv;
pub mod flent;
pub mod html;
pub mod pcap;
pub mod plot;
pub mod render;
mod saved;
pub mod schema;

pub use saved::table_json;

use std::io::Write;
use std::path::Path;

use tcplab_lab::ResultDoc;

/// netperf's classic table for the test kind, one row per point, with units in the headers: the swept
/// values, the iterations' confidence notes, the CPU columns and the run health included. Rendered from the
/// document's JSON form ([`table_json`]), so that `tcplab report RESULT.json` prints what the run printed.
pub fn table(doc: &ResultDoc) -> String {
    table_json(&serde_json::to_value(doc).expect("a result document serializes"))
}

/// What the banner of a small-message stream adds: Nagle or NODELAY, and back to back or paced.
pub(crate) fn msg_banner_extra(nodelay: bool, interval: Option<String>) -> String {
    let nagle = if nodelay { "NODELAY" } else { "Nagle on" };
    match interval {
        Some(i) => format!(", {nagle}, one message every {i} per connection"),
        None => format!(", {nagle}, messages back to back"),
    }
}

/// The header of the small-message table, after the sweep columns' header `ph` (and `pad` under it).
pub(crate) fn msg_header(ph: &str, pad: &str) -> String {
    let mut out = format!(
        "{pad}Message  Messages   Elapsed  Messages     Time per message usec               One-way latency usec\n"
    );
    out += &format!("{pad}Size     delivered  Time     per sec      mean      p50       p99.9     max       mean      p50       p99       max\n");
    out + &format!("{ph}bytes               secs.\n\n")
}

/// Writes `doc` as pretty JSON to `path` ("-" for stdout). The file appears complete or not at all:
/// it is written to a temporary file beside the target and renamed into place.
pub fn write_json(doc: &ResultDoc, path: &str) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(doc).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(path, &text)
}

/// Writes `text` to `path` ("-" for stdout) through a temporary file renamed into place.
pub fn write_atomic(path: &str, text: &str) -> std::io::Result<()> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
    let target = Path::new(path);
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    // A temporary file is private (0600); a result is an ordinary file (0644, less the umask's bits
    // is the shell's business: we cannot read the umask without changing it).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}
