//! Every file rendered from a result (`--csv`, `--plot`, `--report`, `--flent`), for `tcplab run` and
//! `tcplab report RESULT.json` alike: both hand over the typed document (a saved one read back through
//! `ResultDoc::from_json`), so a saved result renders byte for byte as the run that wrote it did. The plots
//! and the HTML page take the document's JSON form, serialized here.

use std::path::PathBuf;

use serde_json::Value;
use tcplab_lab::ResultDoc;

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
pub fn render(doc: &ResultDoc, r: &Renders) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    if !r.any() {
        return Ok(notes);
    }
    let json: Value = serde_json::to_value(doc).map_err(|e| e.to_string())?;
    if let Some(dir) = &r.csv {
        crate::csv::write_dir(doc, dir).map_err(|e| format!("{}: cannot write: {e}", dir.display()))?;
    }
    if let Some(dir) = &r.plot {
        let (_, n) = crate::plot::write_dir(&json, dir).map_err(|e| format!("{}: cannot write: {e}", dir.display()))?;
        notes.extend(n);
    }
    if let Some(path) = &r.report {
        let page = crate::html::page(&json, &crate::table(doc), &r.provenance);
        crate::write_atomic(&path.to_string_lossy(), &page)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        if r.plot.is_none() {
            notes.extend(crate::plot::plots(&json).1);
        }
    }
    if let Some(path) = &r.flent {
        crate::flent::write(doc, path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    notes.dedup();
    Ok(notes)
}
