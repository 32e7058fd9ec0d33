//! RDP's tables (docs/rdp.md): its transfer with Part C's counts, and its request/response test with the
//! sender's window. Registered in the parent's `TRANSPORT_TABLES`.

use tcplab_lab::result::Metrics;
use tcplab_lab::transport::rdp::RdpStreamMetrics;
use tcplab_lab::TestKind;

use super::{bytes, fx, latency_cells, latency_columns, Grid, Row, Tables};

/// The table of an RDP test.
pub(super) fn table(t: &Tables) -> String {
    match t.s().test.kind {
        TestKind::Rr => t.rdp_rr_table(),
        _ => t.rdp_table(),
    }
}

impl Tables<'_> {
    /// RDP request/response: request and response sizes, the client's max outstanding, elapsed, the
    /// transaction rate, the latency statistics and the data segments retransmitted (docs/rdp.md).
    fn rdp_rr_table(&self) -> String {
        let s = self.s();
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        let req = self.fixed(&["test.request"]);
        let rsp = self.fixed(&["test.response"]);
        let out = self.fixed(&["client.rdp.max_outstanding"]);
        if req {
            g.column(&["Request", "Size", "bytes"]);
        }
        if rsp {
            g.column(&["Resp.", "Size", "bytes"]);
        }
        if out {
            g.column(&["Max", "Out.", "segs"]);
        }
        g.column(&["Elapsed", "Time", "secs."]);
        g.column(&["Trans.", "Rate", "per sec"]);
        latency_columns(&mut g, "Latency usec/Tran", &["mean", "p50", "p99", "max"]);
        g.column(&["Retrans", "segs"]);
        let extra = self.extra_columns(
            &mut g,
            &[
                "transactions_per_s",
                "elapsed_s",
                "latency_us.mean",
                "latency_us.p50",
                "latency_us.p99",
                "latency_us.max",
                "retransmissions",
            ],
        );
        let max_out = s.client.config::<tcplab_rdp::RdpConfig>().map_or("-".into(), |r| r.max_outstanding.to_string());
        for p in &self.doc.points {
            let Metrics::Rr(m) = &p.metrics else { continue };
            let mut c = self.sweep_cells(p);
            if req {
                c.push(s.test.request.map_or("-".into(), bytes));
            }
            if rsp {
                c.push(s.test.response.map_or("-".into(), bytes));
            }
            if out {
                c.push(max_out.clone());
            }
            c.extend([fx(m.elapsed_s, 2), fx(m.transactions_per_s, 2)]);
            c.extend(latency_cells(&m.latency_us, &["mean", "p50", "p99", "max"]));
            c.push(m.retransmissions.to_string());
            c.extend(Self::extra_cells(p, &extra));
            g.rows.push(Row::Cells(c));
        }
        g.render()
    }

    /// The RDP transfer: message size, the sender's window, EACKs, elapsed, throughput, and Part C's counts
    /// (docs/rdp.md).
    fn rdp_table(&self) -> String {
        let s = self.s();
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        // An RDP test's scenario carries both hosts' resolved `rdp` knobs; the sender is the client, the
        // window and EACKs those the receiving server offers.
        let rdp = s.server.config::<tcplab_rdp::RdpConfig>();
        let msg = self.fixed(&["test.message"]);
        let out = self.fixed(&["server.rdp.max_outstanding"]) && rdp.is_some();
        let eack = self.fixed(&["server.rdp.eack"]) && rdp.is_some();
        if msg {
            g.column(&["Message", "Size", "bytes"]);
        }
        if out {
            g.column(&["Max", "Out.", "segs"]);
        }
        if eack {
            g.column(&["EACK", ""]);
        }
        g.column(&["Elapsed", "Time", "secs."]);
        g.column(&["Throughput", "10^6bits/sec"]);
        g.column(&["Messages", "delivered", ""]);
        g.column(&["Retrans", "segs"]);
        g.column(&["Dup.", "recvd", "segs"]);
        g.column(&["Data", "drops", "segs"]);
        g.column(&["Timeouts", ""]);
        let shown = [
            "throughput_bps",
            "elapsed_s",
            "messages_delivered",
            "retransmissions",
            "duplicates_received",
            "data_drops",
            "timeouts",
        ];
        let extra = self.extra_columns(&mut g, &shown);
        for p in &self.doc.points {
            let Some(m) = own_metrics(&p.metrics) else { continue };
            let mut c = self.sweep_cells(p);
            if msg {
                c.push(bytes(s.test.message));
            }
            if let (true, Some(r)) = (out, rdp) {
                c.push(r.max_outstanding.to_string());
            }
            if let (true, Some(r)) = (eack, rdp) {
                c.push(if r.eack { "on" } else { "off" }.into());
            }
            c.extend([fx(m.elapsed_s, 2), fx(m.throughput_bps / 1e6, 4)]);
            c.extend(
                [m.messages_delivered, m.retransmissions, m.duplicates_received, m.data_drops, m.timeouts]
                    .map(|n| n.to_string()),
            );
            c.extend(Self::extra_cells(p, &extra));
            g.rows.push(Row::Cells(c));
        }
        g.render()
    }
}

/// RDP's own metrics of a stream point (`Metrics::Own`), if the point has them.
fn own_metrics(m: &Metrics) -> Option<&RdpStreamMetrics> {
    match m {
        Metrics::Own(o) => o.get::<RdpStreamMetrics>(),
        _ => None,
    }
}
