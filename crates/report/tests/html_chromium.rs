//! `--report`: the page is self-contained and complete, and a real headless browser (Debian's
//! `chromium`) loads it without console errors into a screenshot that is not blank. Without `chromium`
//! on the PATH the browser tests are reported as ignored, with the reason, except under `CI=true`, where
//! they fail (docs/testing.md).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use tcplab_report::html::{page, Provenance};
use tcplab_testkit::{need_tool, Outcome};

/// Loads `html` in headless chromium; returns the screenshot's distinct colours and chromium's stderr.
fn screenshot(html: &Path, size: &str) -> (usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={size}"))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {stderr}");
    if let Ok(d) = std::env::var("TCPLAB_SCREENSHOT_DIR") {
        std::fs::copy(&shot, Path::new(&d).join(html.file_name().unwrap()).with_extension("png")).unwrap();
    }
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("chromium wrote the screenshot"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    (colours.len(), stderr)
}

fn console_errors(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("Uncaught") || l.contains("ERROR:CONSOLE")).collect()
}

fn report() -> String {
    let (doc, v) = run(&bulk(LOGVARS));
    let prov = Provenance { command_line: vec!["tcplab".into(), "run".into(), "x y.toml".into()], result_file: None };
    page(&v, &tcplab_report::table(&doc), &prov)
}

fn the_page_is_self_contained_and_has_every_part() {
    let (doc, _) = run(&bulk(LOGVARS));
    let html = report();
    // No network, no scripts: nothing is fetched.
    for bad in ["<script", "http://", "https://", "<link", "src=", "@import", "url("] {
        let hits: Vec<_> =
            html.match_indices(bad).map(|(i, _)| &html[i.saturating_sub(40)..(i + 60).min(html.len())]).collect();
        // SVG's xmlns attributes name a namespace, not a resource.
        assert!(hits.iter().all(|h| h.contains("xmlns")), "{bad}: {hits:?}");
    }
    // The three connection time series and, since queue series came with the series, the bottleneck's
    // backlog and sojourn time: five plots, inline.
    assert_eq!(html.matches("<svg").count(), 5, "the five time-series plots, inline");
    // The table as the terminal shows it (escaped), the scenario as run, every end's counters.
    assert!(html.contains(&tcplab_report::html::esc(&tcplab_report::table(&doc))));
    assert!(html.contains("Scenario as run (TOML)"));
    assert!(html.contains("name = &quot;bulk-test&quot;"));
    assert_eq!(html.matches("<th>#").count(), 4, "a column per connection end");
    let segs_retrans: u64 = doc.points[0].connections.iter().map(|c| c.estats["SegsRetrans"].as_u64().unwrap()).sum();
    assert!(segs_retrans > 0);
    assert!(html.contains("<tr><th>SegsRetrans</th>"));
    assert!(html.contains(&format!("<dt>seed</dt><dd>{}</dd>", doc.seed)));
    assert!(html.contains("<code>tcplab run &#39;x y.toml&#39;</code>"));
    assert!(html.trim_end().ends_with("</html>"));
}

fn chromium_renders_the_page_without_console_errors_and_not_blank() -> Outcome {
    need_tool("chromium", "install Debian's chromium")?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    tcplab_report::write_atomic(&file.to_string_lossy(), &report()).unwrap();
    let (colours, stderr) = screenshot(&file, "1280,2000");
    assert!(console_errors(&stderr).is_empty(), "console errors: {stderr}");
    assert!(colours > 20, "{colours} distinct colours: the screenshot looks blank");
    Ok(())
}

fn the_checks_catch_a_broken_page_and_a_blank_one() -> Outcome {
    need_tool("chromium", "install Debian's chromium")?;
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><script>throw new Error('boom')</script></body></html>").unwrap();
    let (colours, stderr) = screenshot(&bad, "400,300");
    assert_eq!(console_errors(&stderr).len(), 1, "{stderr}");
    assert!(colours <= 2, "a blank page has {colours} colours");
    Ok(())
}

tcplab_testkit::tests!(
    the_page_is_self_contained_and_has_every_part,
    chromium_renders_the_page_without_console_errors_and_not_blank,
    the_checks_catch_a_broken_page_and_a_blank_one,
);
