"""Configs of the papers' experiments, shared by docs/gen_*.py, perf/workload_bench.py and the tests.

- `seed002(...)`: seed 002 §4's 32-node 8x4 torus / twisted torus (twist 4). INSEE's router is not described in
  the paper; assumed here: 4-byte phits, 16-phit packets, virtual cut-through, 4 packets of buffer per VC,
  random minimal routing with hop-indexed VCs, link latency 1, router delay 3, and FSIN's multiple
  consumption (`router.ejection = "multiple"`: a node takes packets from all its router's input ports at once;
  the paper names the single *injection* port as O2A's bottleneck and A2O's as contention at consumption that
  spreads into the network, which the twisted torus relieves). Both networks get the same
  router, 12 VCs per port (hop indexing needs 6 classes on the torus and 4 on the twisted torus; 12 splits
  evenly into both); `vcs="auto"` gives each only the classes it needs.
- `table4(...)`: seed 000's Table IV dragonfly (72 nodes: p = 2, a = 4, h = 2, 9 groups, palm-tree wiring as in
  FOGSim). 4 KB packets of 8 phits (512-byte phits, as coarse as FOGSim's reference runs' 8-phit packets); one
  phit per cycle, so t_c = 512 * 8 / link_gbps ns. Table IV's latencies (50 / 500 cycles local / global, 200
  router) are taken as nanoseconds at its 40 Gb/s, 5-byte-phit, 1 ns cycle, and kept in nanoseconds when the
  bandwidth changes; VCs 2 / 1 / 3 (local / global / injection; 4 / 2 / 3 for VAL); buffers 16 KB per local VC
  and 128 KB per global and injection VC; crossbar speedup 2; two allocator iterations.
- `fogsim_reference(...)`: the network of FOGSim's example config behind reference/fogsim/graph500_runs.csv
  (72-node dragonfly, 8-phit packets, local / global / crossbar delays 10 / 100 / 3 cycles). Its buffer sizes
  are not recorded; 64 phits (8 packets) per VC is assumed.
"""

from __future__ import annotations

from typing import Any


def seed002(topology: str, workload: dict[str, Any], seed: int = 1, vcs: int | str = 12) -> dict[str, Any]:
    topo = {"kind": "torus", "dims": [8, 4]} if topology == "torus" else \
        {"kind": "twisted_torus", "dims": [8, 4], "twist": 4}
    return {
        "topology": topo,
        "router": {"vcs": vcs, "buffer_phits": 64, "delay": 3, "ejection": "multiple"},
        "links": {"latency": 1},
        "routing": {"algorithm": "min"},
        "traffic": {"packet_phits": 16, "phit_bytes": 4},
        "sim": {"seed": seed},
        "workload": workload,
    }


TABLE4_PACKET_BYTES = 4096


def table4(scale: int = 26, query_time_ns: float = 1.5, link_gbps: float = 40.0, *, seed: int = 1,
           root_degree: int | str = "auto", variant: str = "paper", routing: str = "min",
           packet_phits: int = 8, alloc_iters: int = 2) -> dict[str, Any]:
    phit = TABLE4_PACKET_BYTES // packet_phits
    t_c = phit * 8 / link_gbps  # ns

    def cycles(ns: float, least: int = 1) -> int:
        return max(least, round(ns / t_c))

    val = routing == "val"
    return {
        "topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "arrangement": "palmtree"},
        "router": {"vcs": 4 if val else 2, "vcs_global": 2 if val else 1, "vcs_injection": 3,
                   "buffer_phits": 16384 // phit, "buffer_phits_global": 131072 // phit,
                   "buffer_phits_injection": 131072 // phit, "delay": cycles(200, 0), "speedup": 2.0,
                   "alloc_iters": alloc_iters},
        "links": {"latency_local": cycles(50), "latency_global": cycles(500), "latency_injection": cycles(50)},
        "routing": {"algorithm": routing},
        "traffic": {"packet_phits": packet_phits, "phit_bytes": phit},
        "sim": {"seed": seed},
        "workload": {"kind": "graph500", "variant": variant, "scale": scale, "edgefactor": 16, "coalescing": 256,
                     "query_time_ns": query_time_ns, "link_gbps": link_gbps, "root_degree": root_degree},
    }


def fogsim_reference(scale: int, query_time_cycles: float, *, seed: int = 1, root_degree: int = 2,
                     root_task: int = 60) -> dict[str, Any]:
    return {
        "topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "arrangement": "palmtree"},
        "router": {"buffer_phits": 64, "delay": 3},
        "links": {"latency_local": 10, "latency_global": 100},
        "traffic": {"packet_phits": 8, "phit_bytes": 512},
        "sim": {"seed": seed},
        "workload": {"kind": "graph500", "variant": "fogsim", "scale": scale, "edgefactor": 16, "coalescing": 256,
                     "cycle_ns": 1.0, "query_time_ns": float(query_time_cycles), "root_degree": root_degree,
                     "root_task": root_task},
    }
