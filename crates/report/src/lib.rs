//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod csv;
pub mod flent;
pub mod html;
pub mod names;
pub mod pcap;
pub mod pcap_net;
pub mod plot;
mod plot_flows;
pub mod render;
mod saved;
pub mod schema;

pub use saved::table;

use std::io::Write;
use std::path::Path;

use tcplab_lab::ResultDoc;

/// Writes `doc` as pretty JSON to `path` ("-" for stdout) through [`write_atomic`].
/// The document is streamed, not built as one string first (a 600 s run sampled every 100 us is a
/// 1 GB document, which as a string doubled the run's memory).
pub fn write_json(doc: &ResultDoc, path: &str) -> std::io::Result<()> {
    fn stream(doc: &ResultDoc, to: impl Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, to);
        serde_json::to_writer_pretty(&mut w, doc).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
        w.flush()
    }
    if path == "-" {
        return stream(doc, std::io::stdout().lock());
    }
    let mut out = tcplab_files::Output::create(Path::new(path))?;
    stream(doc, &mut out)?;
    out.commit()
}

/// Writes `text` to `path` ("-" for stdout) with tcplab's one writer ([`tcplab_files::Output`]): a
/// regular file appears complete or not at all (a temporary beside it, renamed into place); a symbolic
/// link is followed and the file it names replaced, the link kept; a FIFO, a character device or a
/// descriptor path (`/dev/stdout`, `/dev/fd/N`) is written into; a directory is refused.
pub fn write_atomic(path: &str, text: &str) -> std::io::Result<()> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
    tcplab_files::write_file(Path::new(path), text.as_bytes())
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;

    /// A result written to a FIFO (as to /dev/null or /dev/stdout) goes through it and leaves the node a
    /// FIFO; a rename would have replaced it with a regular file.
    #[test]
    fn writing_to_a_fifo_keeps_the_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out");
        // mkfifo(1) is POSIX and in coreutils: its absence is a broken machine, not a skip.
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {} failed", fifo.display());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(fifo).unwrap().read_to_string(&mut text).unwrap();
                text
            })
        };
        super::write_atomic(&fifo.to_string_lossy(), "{\"a\": 1}\n").unwrap();
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        assert_eq!(reader.join().unwrap(), "{\"a\": 1}\n");
        // A directory is refused, not replaced.
        let err = super::write_atomic(&dir.path().to_string_lossy(), "x").unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
    }
}
