#!/usr/bin/env python3
"""ns-3 side of the tcplab-vs-ns-3 performance comparison.

Builds one of three fixed workloads with the ns-3 3.44 python bindings
(PyPI package `ns3`, cppyy based), runs it, and prints one JSON line:

  {"name":..., "wall_s":..., "data_segments":..., "segments_per_s":...,
   "goodput_mbps":..., "peak_rss_bytes":..., ...extra fields...}

Python only *builds* the scenario.  Every per-packet action (TCP, queues,
links, error model, the segment counter) runs inside ns-3's compiled C++;
the segment counter is a tiny C++ function JIT-compiled by cppyy and hooked
to the sender NetDevice's "PhyTxEnd" trace source, so no Python code runs
per packet.

Usage:
  .venv/bin/python workloads.py --workload bulk-1g [--duration 60] [--no-count]

See README.md for the exact attribute values.
"""

import argparse
import json
import os
import resource
import sys
import time

WORKLOADS = {
    # name: (rate, one-way delay, flows, default duration [s], loss rate)
    "bulk-1g": ("1Gbps", "1ms", 1, 60.0, 0.0),
    "bulk-100m-loss": ("100Mbps", "10ms", 1, 60.0, 0.01),
    "flows-1000": ("10Gbps", "5ms", 1000, 10.0, 0.0),
}

SEGMENT_SIZE = 1448          # TCP payload bytes per segment (MSS with timestamps)
MTU = 1500                   # IP MTU of the point-to-point devices
QUEUE_PACKETS = 100          # drop-tail device queue, packets
SOCKET_BUFFER = 16 * 1024 * 1024
SERVER_PORT = 5000
DATA_MIN_BYTES = 100         # a packet larger than this at PhyTxEnd is a data segment


def rss_bytes():
    # ru_maxrss is KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def show_config(ns, client, cdev):
    """Print the attribute values in force (read back from live objects)."""
    tcp = client.GetObject[ns.TcpL4Protocol]()
    print("TcpL4Protocol:", file=sys.stderr)
    for n in ("SocketType", "RecoveryType"):
        v = ns.TypeIdValue()
        tcp.GetAttribute(n, v)
        print("  %s = %s" % (n, v.Get().GetName()), file=sys.stderr)
    dev = cdev.GetObject[ns.PointToPointNetDevice]()
    q = dev.GetQueue()
    print("client device: Mtu=%d TxQueue=%s MaxSize=%s" % (
        dev.GetMtu(), q.GetInstanceTypeId().GetName(), q.GetMaxSize().__str__()), file=sys.stderr)
    tcl = client.GetObject[ns.TrafficControlLayer]()
    print("client root queue disc: %s" % ("none" if not tcl.GetRootQueueDiscOnDevice(cdev) else "present"),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    ap.add_argument("--duration", type=float, default=None,
                    help="simulated seconds (default: 60 for bulk-*, 10 for flows-1000)")
    ap.add_argument("--no-count", action="store_true",
                    help="do not hook the PhyTxEnd counter (data_segments is then null)")
    ap.add_argument("--send-size", type=int, default=65536,
                    help="BulkSendApplication SendSize in bytes (default 65536)")
    ap.add_argument("--stagger-us", type=float, default=10.0,
                    help="flows-1000: flow i starts at i*stagger microseconds (default 10)")
    ap.add_argument("--recovery", choices=["prr", "classic"], default="prr",
                    help="TcpL4Protocol::RecoveryType: TcpPrrRecovery (ns-3 default) or TcpClassicRecovery")
    ap.add_argument("--progress", type=float, default=0.0, metavar="SIM_S",
                    help="print sim time / wall time / events to stderr every SIM_S simulated seconds")
    ap.add_argument("--seed", type=int, default=1, help="ns-3 RngSeedManager seed (run is 1)")
    ap.add_argument("--show-config", action="store_true",
                    help="print the effective TCP/queue attribute values to stderr")
    args = ap.parse_args()

    rate, delay, nflows, default_dur, loss = WORKLOADS[args.workload]
    duration = default_dur if args.duration is None else args.duration

    t_import0 = time.perf_counter()
    from ns import ns  # noqa: E402  (slow: cppyy parses all ns-3 headers)
    cppyy = ns.cppyy
    cppyy.cppdef(r"""
    #include <chrono>
    #include <cstdio>
    namespace tcplab_bench {
      static uint64_t g_data = 0;
      static uint64_t g_all = 0;
      static uint32_t g_min = 100;
      static uint64_t g_tcdrop = 0;
      void OnTcDrop(ns3::Ptr<const ns3::Packet> p) { ++g_tcdrop; }
      void HookTcDrop(ns3::Ptr<ns3::Node> n)
      {
        n->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", ns3::MakeCallback(&OnTcDrop));
      }
      uint64_t TcDrops() { return g_tcdrop; }
      void OnPhyTxEnd(ns3::Ptr<const ns3::Packet> p)
      {
        ++g_all;
        if (p->GetSize() > g_min) { ++g_data; }
      }
      void Hook(ns3::Ptr<ns3::NetDevice> dev, uint32_t minBytes)
      {
        g_min = minBytes;
        dev->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&OnPhyTxEnd));
      }
      uint64_t Data() { return g_data; }
      // --progress: every `step` simulated seconds print sim time, wall time
      // since the first tick, and events so far to stderr (one C++ event per
      // step, so it does not perturb the measurement).
      static std::chrono::steady_clock::time_point g_t0;
      static ns3::Time g_step;
      void Tick()
      {
        double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_t0).count();
        std::fprintf(stderr, "progress sim_s=%.1f wall_s=%.3f events=%llu data_segments=%llu\n",
                     ns3::Simulator::Now().GetSeconds(), w,
                     (unsigned long long)ns3::Simulator::GetEventCount(),
                     (unsigned long long)g_data);
        ns3::Simulator::Schedule(g_step, &Tick);
      }
      void StartProgress(double stepSeconds)
      {
        g_step = ns3::Seconds(stepSeconds);
        g_t0 = std::chrono::steady_clock::now();
        ns3::Simulator::Schedule(g_step, &Tick);
      }
      uint64_t All() { return g_all; }
    }
    """)
    bench = cppyy.gbl.tcplab_bench
    import_s = time.perf_counter() - t_import0
    rss_after_import = rss_bytes()

    t_setup0 = time.perf_counter()

    # ---- global defaults -------------------------------------------------
    ns.RngSeedManager.SetSeed(args.seed)
    ns.RngSeedManager.SetRun(1)
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    recovery = {"prr": ns.TcpPrrRecovery, "classic": ns.TcpClassicRecovery}[args.recovery]
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(recovery.GetTypeId()))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_SIZE))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUFFER))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUFFER))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))

    # ---- topology: client --p2p-- server ---------------------------------
    nodes = ns.NodeContainer()
    nodes.Create(2)
    client, server = nodes.Get(0), nodes.Get(1)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(MTU))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                 ns.QueueSizeValue(ns.QueueSize("%dp" % QUEUE_PACKETS)))
    devs = p2p.Install(nodes)
    cdev, sdev = devs.Get(0), devs.Get(1)

    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    ifaces = addr.Assign(devs)
    # Ipv4AddressHelper::Assign installs a default pfifo_fast (1000 p) queue
    # disc; remove it so the only queue is the 100-packet drop-tail device queue.
    ns.TrafficControlHelper().Uninstall(devs)

    if loss > 0.0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorUnit", ns.EnumValue[ns.RateErrorModel.ErrorUnit](
            ns.RateErrorModel.ERROR_UNIT_PACKET))
        em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
        # data direction only: errors on the server's (receiver's) device
        sdev.SetAttribute("ReceiveErrorModel", ns.PointerValue(em))

    # ---- applications ----------------------------------------------------
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory",
        ns.InetSocketAddress(ns.Ipv4Address.GetAny(), SERVER_PORT).ConvertTo())
    sink_apps = sink_helper.Install(server)
    sink_apps.Start(ns.Seconds(0.0))
    sink_apps.Stop(ns.Seconds(duration))

    dst = ns.InetSocketAddress(ifaces.GetAddress(1), SERVER_PORT).ConvertTo()
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", dst)
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))  # unlimited
    bulk.SetAttribute("SendSize", ns.UintegerValue(args.send_size))
    apps = bulk.Install(ns.NodeContainer(client)) if nflows == 1 else None
    if nflows == 1:
        apps.Start(ns.Seconds(0.0))
        apps.Stop(ns.Seconds(duration))
    else:
        for i in range(nflows):
            a = bulk.Install(ns.NodeContainer(client))
            a.Start(ns.MicroSeconds(int(round(i * args.stagger_us))))
            a.Stop(ns.Seconds(duration))

    if not args.no_count:
        bench.Hook(cdev, DATA_MIN_BYTES)

    # Loss events at the bottleneck: with no queue disc the TC layer drops a
    # packet when the device queue is full (stopped); those never reach the
    # DropTailQueue, so count them via TrafficControlLayer::TcDrop (C++, only
    # fires on a drop).
    bench.HookTcDrop(client)

    if args.show_config:
        show_config(ns, client, cdev)

    ns.Simulator.Stop(ns.Seconds(duration))
    setup_s = time.perf_counter() - t_setup0

    # ---- run -------------------------------------------------------------
    if args.progress > 0:
        bench.StartProgress(args.progress)
    t_run0 = time.perf_counter()
    ns.Simulator.Run()
    run_s = time.perf_counter() - t_run0

    events = int(ns.Simulator.GetEventCount())
    rx_bytes = int(sink_apps.Get(0).GetObject[ns.PacketSink]().GetTotalRx())
    queue = cdev.GetObject[ns.PointToPointNetDevice]().GetQueue()
    q_drops = int(queue.GetTotalDroppedPackets())
    q_enq = int(queue.GetTotalReceivedPackets())
    data_segments = None if args.no_count else int(bench.Data())
    all_tx = None if args.no_count else int(bench.All())

    # wall_s is the time spent inside Simulator::Run() only: the Python
    # import (cppyy parsing ns-3 headers) and the scenario construction
    # (dominated by cppyy JIT-instantiating templates) are reported
    # separately as import_s and setup_s.
    wall_s = run_s
    out = {
        "name": args.workload,
        "wall_s": round(wall_s, 3),
        "data_segments": data_segments,
        "segments_per_s": (round(data_segments / wall_s, 1) if data_segments is not None else None),
        "goodput_mbps": round(rx_bytes * 8 / duration / 1e6, 3),
        "peak_rss_bytes": rss_bytes(),
        # extras
        "simulator": "ns-3 3.44 (PyPI ns3 3.44.post0, cppyy bindings)",
        "sim_duration_s": duration,
        "setup_s": round(setup_s, 3),
        "run_s": round(run_s, 3),
        "import_s": round(import_s, 3),
        "rss_after_import_bytes": rss_after_import,
        "events": events,
        "events_per_s": round(events / run_s, 1) if run_s > 0 else None,
        "client_tx_packets": all_tx,
        "client_queue_enqueued": q_enq,
        "client_queue_drops": q_drops,
        "client_tc_drops": int(bench.TcDrops()),
        "recovery": args.recovery,
        "rx_bytes": rx_bytes,
        "flows": nflows,
        "counted": not args.no_count,
    }
    ns.Simulator.Destroy()
    print(json.dumps(out), flush=True)
    # skip cppyy/cling teardown (can be slow and is not part of the measurement)
    os._exit(0)


if __name__ == "__main__":
    main()
