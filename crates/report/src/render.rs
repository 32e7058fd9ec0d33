//! Every file rendered from a result (`--csv`, `--plot`, `--report`, `--flent`), for `tcplab run` and
//! `tcplab report RESULT.json` alike: both hand over the result's JSON form, so a saved result renders
//! byte for byte as the run that wrote it did.

use std::path::PathBuf;

use serde_json::Value;

/// Which files to write; `None` writes none of that kind.
#[derive(Debug, Clone, Default)]
pub struct Renders {
    pub csv: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub flent: Option<PathBuf>,
    /// For the report's provenance.
    pub provenance: crate::html::Provenance,
}

impl Renders {
    pub fn any(&self) -> bool {
        self.csv.is_some() || self.plot.is_some() || self.report.is_some() || self.flent.is_some()
    }
}

/// Writes every file `r` asks for; returns notes on what was left out and why (a plot without data).
/// The error names the file that could not be written.
pub fn render(doc: &Value, r: &Renders) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    if doc["schema"] != "tcplab.result/1" {
        return Err(format!("not a tcplab.result/1 document (schema {})", doc["schema"]));
    }
    if let Some(dir) = &r.csv {
        crate::csv::write_dir(doc, dir).map_err(|e| format!("{}: cannot write: {e}", dir.display()))?;
    }
    if let Some(dir) = &r.plot {
        let (_, n) = crate::plot::write_dir(doc, dir).map_err(|e| format!("{}: cannot write: {e}", dir.display()))?;
        notes.extend(n);
    }
    if let Some(path) = &r.report {
        let page = crate::html::page(doc, &crate::table_json(doc), &r.provenance);
        crate::write_atomic(&path.to_string_lossy(), &page)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        if r.plot.is_none() {
            notes.extend(crate::plot::plots(doc).1);
        }
    }
    if let Some(path) = &r.flent {
        crate::flent::write(doc, path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    notes.dedup();
    Ok(notes)
}
