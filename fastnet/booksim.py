"""BookSim2 configs in: read BookSim2's config language and map it onto a fastnet run config (docs/booksim.md).

BookSim2's language (src/config.l, src/config.y) is a list of `key = value;` statements; `//` starts a comment
to the end of the line. Values are integers, reals, bare strings (`uniform`, `../net.txt`, `-`) or `{a,b}`
lists. fastnet also accepts `/* ... */` comments and double-quoted strings. Every key BookSim2 leaves at its
default (src/booksim_config.cpp, commit 28f4329) is mapped from that default, so a BookSim2 config runs here
as BookSim2 would read it. A key that fastnet cannot honour stops the conversion with one `ConfigError` naming
the key and why.
"""

from __future__ import annotations

import math
import random
import re
import tomllib
from pathlib import Path
from typing import Any, Union

from .config import SECTIONS, vc_floor
from .registry import SWITCH_ALLOCATORS
from .errors import ConfigError

Value = Union[int, float, str, list["Value"]]

# BookSim2's defaults of the keys mapped below (src/booksim_config.cpp)
DEFAULTS: dict[str, Value] = {
    "topology": "torus", "k": 8, "n": 2, "c": 1, "routing_function": "none", "use_noc_latency": 1,
    "network_file": "", "x": 8, "y": 8, "xr": 1, "yr": 1,
    "num_vcs": 16, "vc_buf_size": 8,
    "routing_delay": 1, "vc_alloc_delay": 1, "sw_alloc_delay": 1, "st_prepare_delay": 0, "st_final_delay": 1,
    "credit_delay": 0, "internal_speedup": 1.0, "alloc_iters": 1, "input_speedup": 1, "wait_for_tail_credit": 0,
    "vc_allocator": "islip", "sw_allocator": "islip", "hold_switch_for_packet": 0,
    "traffic": "uniform", "injection_rate": 0.1, "injection_rate_uses_flits": 0, "packet_size": 1,
    "packet_size_rate": 1, "injection_process": "bernoulli", "burst_alpha": 0.5, "burst_beta": 0.5,
    "burst_r1": -1.0,
    "warmup_periods": 3, "sample_period": 1000, "seed": 0, "sim_type": "latency",
}

# Keys fastnet models only at one setting (BookSim2's default): the allowed values and why.
FIXED: dict[str, tuple[tuple[Value, ...], str]] = {
    "subnets": ((1,), "fastnet simulates one network"),
    "classes": ((1,), "fastnet has one traffic class"),
    "use_read_write": ((0,), "fastnet has no request/reply traffic"),
    "output_speedup": ((1,), "fastnet's crossbar has one output per port (its speedup is internal_speedup)"),
    "priority": (("none",), "fastnet's arbiters are round-robin, without packet priorities"),
    "arb_type": (("round_robin",), "fastnet's arbiters are round-robin"),
    "vc_busy_when_full": ((0,), "fastnet's VC allocator does not model it"),
    "vc_prioritize_empty": ((0,), "fastnet's VC allocation takes turns over free VCs, as BookSim2's at 0 "
                                  "(fastnet's own router.vc_choice = \"roomiest\" is closer to 1)"),
    "vc_priority_donation": ((0,), "fastnet has no packet priorities"),
    "vc_shuffle_requests": ((0,), "fastnet's VC allocator does not model it"),
    "speculative": ((0,), "fastnet does not allocate the switch speculatively"),
    "router": (("iq",), "fastnet models BookSim2's input-queued router"),
    "output_delay": ((0,), "fastnet's router has no output delay stage"),
    "noq": ((0,), "fastnet has no next-hop output queueing"),
    "output_buffer_size": ((-1,), "fastnet's output queue is bounded by credits (router.crossbar = \"flit\") or holds one "
                                  "packet (\"packet\")"),
    "buf_size": ((-1,), "fastnet's buffers are private per VC (vc_buf_size)"),
    "buffer_policy": (("private",), "fastnet's buffers are private per VC (vc_buf_size)"),
    "include_queuing": ((1,), "fastnet's packet latency always includes source queueing"),
    "sim_count": ((1,), "one run per config (fastnet sweep runs many)"),
    "measure_stats": ((1,), "fastnet measures every packet"),
    "link_failures": ((0,), "fastnet builds no failed links"),
    "channel_file": (("",), "fastnet sets channel latencies per link class, not from a file"),
}

# Keys with no effect on what fastnet simulates: output files, tracing, power, BookSim2's convergence tests
# (fastnet measures one fixed window), and settings of features the FIXED keys above keep switched off.
IGNORED = frozenset("""
    max_samples latency_thres warmup_thres acc_warmup_thres stopping_thres acc_stopping_thres pair_stats
    print_activity print_csv_results deadlock_warn_timeout viewer_trace watch_file watch_flits watch_packets
    watch_transactions watch_out stats_out injected_flits_out received_flits_out stored_flits_out sent_flits_out
    outstanding_credits_out ejected_flits_out active_packets_out used_credits_out free_credits_out max_credits_out
    sent_packets_out sim_power power_output_file tech_file channel_width channel_sweep
    H_INVD2 W_INVD2 H_DFQD1 W_DFQD1 H_ND2D1 W_ND2D1 H_SRAM W_SRAM Vdd R IoffSRAM IoffP IoffN Cg_pwr Cd_pwr Cgdl
    Cg Cd LAMBDA MetalPitch Rw Cw_gnd Cw_cpl wire_length
    vct perm_seed fail_seed in_ports out_ports
    spec_check_elig spec_check_cred spec_mask_by_reqs spec_sw_allocator private_bufs private_buf_size
    private_buf_start_vc private_buf_end_vc max_held_slots feedback_aging_scale feedback_offset class_priority
    batch_size batch_count max_outstanding_requests write_fraction
    read_request_begin_vc read_request_end_vc write_request_begin_vc write_request_end_vc read_reply_begin_vc
    read_reply_end_vc write_reply_begin_vc write_reply_end_vc read_request_subnet read_reply_subnet
    write_request_subnet write_reply_subnet read_request_size write_request_size read_reply_size write_reply_size
""".split())

# routing_function per topology (BookSim2 looks up `<routing_function>_<topology>`) -> fastnet [routing]
ROUTING: dict[str, dict[str, dict[str, Any]]] = {
    # ugal_dragonflynew: minimal when q_min <= 2 q_nonmin + 30 (fixed weights 1 and 2, its adaptive_threshold 30,
    # each queue its path's first port's credits in use): the queues alone (ugal_hops false), penalty 2; its
    # Valiant candidate a node drawn among all, minimal when in the source's group, else routed to that node's router
    "dragonflynew": {"min": {"algorithm": "min"},
                     "ugal": {"algorithm": "ugal_l", "ugal_vcs": "booksim", "threshold": 30.0, "penalty": 2.0,
                              "ugal_hops": False, "intermediate": "router"}},
    "torus": {"dim_order": {"algorithm": "dor"}, "min_adapt": {"algorithm": "adaptive"},
              "valiant": {"algorithm": "val"}},
    "mesh": {"dim_order": {"algorithm": "dor"}, "dor": {"algorithm": "dor"},
             "min_adapt": {"algorithm": "adaptive"}, "valiant": {"algorithm": "val"},
             # xy_yx_mesh: XY or YX drawn at the source router, each on its half of the VCs; adaptive_xy_yx_mesh:
             # the order whose first port has fewer credits in use (GetUsedCredit), ties at random
             "xy_yx": {"algorithm": "xy_yx"}, "adaptive_xy_yx": {"algorithm": "adaptive_xy_yx"}},
    "fattree": {"nca": {"algorithm": "updown", "up_port": "random"},
                "anca": {"algorithm": "updown", "up_port": "adaptive"}},
    "anynet": {"min": {"algorithm": "min", "min_path": "fixed", "vc_classes": "any"}},
    # flatfly_onchip.cpp: ran_min is dimension order (flatfly_outport: the lowest differing dimension first);
    # ugal decides at the source with threshold 2 (minimal when q_min*H_min <= q_val*H_val + 2) between the
    # dimension-order path and one through find_ran_intm's intermediate, phases on VC halves: as fastnet's
    "flatfly": {"ran_min": {"algorithm": "dor"}, "ugal": {"algorithm": "ugal_l", "threshold": 2.0},
                # valiant_flatfly: an intermediate among all routers, dimension order in each phase on VC halves,
                # a packet that meets its destination's router on the way to the intermediate stops there
                "valiant": {"algorithm": "val", "intermediate": "any"},
                # xyyx_flatfly, adaptive_xyyx_flatfly: xy_yx_mesh's two orders over flatfly_outport(_yx)
                "xyyx": {"algorithm": "xy_yx"}, "adaptive_xyyx": {"algorithm": "adaptive_xy_yx"},
                # ugal_xyyx_flatfly: ugal with XY or YX drawn at the source (RandomInt(1)) for the ports both
                # paths are judged by and for both phases; VC halves by order, each split again by phase
                "ugal_xyyx": {"algorithm": "ugal_l", "threshold": 2.0, "order": "xy_yx"}},
    # cmesh.cpp: dor_no_express is XY order over the mesh channels (cmesh_xy_no_express), every VC
    "cmesh": {"dor_no_express": {"algorithm": "dor"},
              # dor_cmesh (cmesh_xy): XY, an edge's express channel for a move of more than one router along it
              "dor": {"algorithm": "dor_express"},
              # xy_yx_no_express_cmesh: XY or YX over the mesh channels, drawn at the source, on VC halves
              "xy_yx_no_express": {"algorithm": "xy_yx"}},
    # fly.cpp with n = 1 is one k x k router: dest_tag takes the destination's port, every VC
    "fly": {"dest_tag": {"algorithm": "updown", "up_port": "random"}},
}

# routing functions that exist for a mapped topology but do not mean what the fastnet routing of that name does
NOT_MAPPED: dict[tuple[str, str], str] = {
    ("cmesh", "xy_yx"): "xy_yx_cmesh picks XY or YX order per packet on VC halves and takes an edge's express "
                        "channel as dor_cmesh does, a routing fastnet does not have; xy_yx_no_express and dor "
                        "map",
    ("flatfly", "ugal_pni"): "ugal_pni_flatfly is ugal_flatfly with each phase's VCs split again into k sets by the "
                             "destination's coordinate in the dimension after the hop's (its terminal index on a "
                             "last-dimension hop, its dimension-0 coordinate at injection; it needs k = c): "
                             "fastnet's VC classes follow a packet's phase and order, never its destination; ugal "
                             "maps (the same paths and phases, without that split)",
}

# BookSim2 traffic (src/traffic.cpp) -> fastnet traffic.pattern. Patterns are computed on BookSim2's node ids:
# where BookSim2 numbers nodes by their place on the chip (flatfly, cmesh: flatfly_transformation), the run sets
# traffic.numbering = "chip" (traffic/patterns.py translates every table to fastnet's ids)
BOOKSIM_PATTERNS = {"uniform": "uniform", "bitcomp": "bitcomp", "transpose": "transpose", "randperm": "permutation",
                    "tornado": "tornado", "bad_dragon": "group_adversarial", "shuffle": "shuffle", "bitrev": "bitrev",
                    "neighbor": "neighbor", "badperm_yarc": "badperm_yarc", "diagonal": "diagonal",
                    "asymmetric": "asymmetric", "taper64": "taper64", "hotspot": "hotspot", "background": "background"}
DIGIT_PATTERNS = ("tornado", "neighbor", "badperm_yarc")  # parameters (k, n, xr), each defaulting to the key

MIN_MEASURE: int = SECTIONS["sim"]["measure"][0]  # fastnet's default measurement window (10,000 cycles)


NO_KIND = {
    "qtree": "the quad tree has no fastnet kind yet",
    "tree4": "the tree4 network has no fastnet kind yet",
}


# ---------------------------------------------------------------- reading the language

_STATEMENT = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*("[^"\n]*"|\{(?:[^{}]|\{[^{}]*\})*\}|[^\s;]+)\s*;')
_INT = re.compile(r"-?[0-9]+")
_REAL = re.compile(r"-?(?:[0-9]*\.[0-9]+|(?:[0-9]*\.)?[0-9]+[eE][+-]?[0-9]+)")


def strip_comments(text: str) -> str:
    """Replace `//` line comments and `/* */` block comments by spaces (newlines kept for line numbers)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    return re.sub(r"//[^\n]*", blank, text)


def value(raw: str) -> Value:
    """A BookSim2 value: integer, real, `{a,b}` list, "quoted" or bare string."""
    raw = raw.strip()
    if _INT.fullmatch(raw):
        return int(raw)
    if _REAL.fullmatch(raw):
        return float(raw)
    if raw.startswith("{") and raw.endswith("}"):  # a list, its items perhaps lists ({{1,4}}: one class's)
        return [value(x) for x in _top_level(raw[1:-1]) if x.strip()]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1]
    return raw


def parse(text: str, source: str = "config") -> dict[str, Value]:
    """Parse BookSim2 config text into {key: value}; a later statement overrides an earlier one."""
    body = strip_comments(text)
    out: dict[str, Value] = {}
    pos = 0
    while True:
        while pos < len(body) and body[pos].isspace():
            pos += 1
        if pos == len(body):
            return out
        m = _STATEMENT.match(body, pos)
        if m is None:
            line = body.count("\n", 0, pos) + 1
            snippet = body[pos:].split("\n", 1)[0].strip()
            raise ConfigError("config", f"{source} line {line}: expected `key = value;`, got {snippet!r}")
        out[m.group(1)] = value(m.group(2))
        pos = m.end()


def looks_like_booksim(text: str) -> bool:
    """True for text that is not TOML and starts (after comments) with a BookSim2 `key = value;` statement; a
    later syntax error is then reported by `parse` with its line."""
    try:
        tomllib.loads(text)
        return False
    except tomllib.TOMLDecodeError:
        return _STATEMENT.match(strip_comments(text).lstrip()) is not None


def is_booksim_file(path: str | Path) -> bool:
    p = Path(path)
    try:
        return p.is_file() and looks_like_booksim(p.read_text())
    except (OSError, UnicodeDecodeError):
        return False


def is_override(item: str) -> bool:
    """A `--set key=value` without a section: a BookSim2 key (as on BookSim2's own command line)."""
    return "=" in item and "." not in item.split("=", 1)[0]


def read_file(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Read a BookSim2 config file, apply `key=value` overrides, and return the fastnet config it maps to."""
    p = Path(path)
    try:
        book = parse(p.read_text(), str(p))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("config", f"cannot read {p} ({e})") from None
    for item in overrides:
        key, raw = item.split("=", 1)
        book.update(parse(f"{key.strip()} = {raw.strip()};", "--set"))
    return to_fastnet(book, p.parent)


# ---------------------------------------------------------------- mapping

def _int(b: dict[str, Value], key: str, lo: int) -> int:
    v = b[key]
    if not isinstance(v, int) or v < lo:
        raise ConfigError(key, f"must be an integer >= {lo} (got {v!r})")
    return v


def _flag(b: dict[str, Value], key: str) -> bool:
    v = b[key]
    if v not in (0, 1) or isinstance(v, float):
        raise ConfigError(key, f"must be 0 or 1 (got {v!r})")
    return v == 1


def _number(b: dict[str, Value], key: str) -> float:
    v = b[key]
    if isinstance(v, list) and len(v) == 1:
        v = v[0]
    if isinstance(v, list):
        raise ConfigError(key, f"fastnet has one traffic class: give one value, not {len(v)} (got {v!r})")
    if not isinstance(v, (int, float)):
        raise ConfigError(key, f"must be a number (got {v!r})")
    return v


def _string(b: dict[str, Value], key: str) -> str:
    v = b[key]
    if not isinstance(v, str):
        raise ConfigError(key, f"must be a name (got {v!r})")
    return v


def check_keys(given: dict[str, Value]) -> None:
    """Refuse keys BookSim2 does not have, and settings fastnet does not model."""
    for key, v in given.items():
        if key in DEFAULTS or key in IGNORED:
            continue
        if key in FIXED:
            allowed, why = FIXED[key]
            if v not in allowed:
                only = " or ".join(str(a) if a != "" else "empty" for a in allowed)
                raise ConfigError(key, f"only {only} maps to fastnet: {why} (got {v!r})")
            continue
        raise ConfigError(key, "not a BookSim2 key fastnet knows (docs/booksim.md lists them)")


def to_fastnet(given: dict[str, Value], base_dir: Path = Path(".")) -> dict[str, dict[str, Any]]:
    """Map parsed BookSim2 keys (BookSim2's defaults for the rest) to an unresolved fastnet config."""
    b = {**DEFAULTS, **given}
    topology, links = _topology(b, base_dir)  # first: an unmapped topology is the error to report
    # BookSim2's sources write a flit after the network has read its inputs for the cycle: it reaches the router
    # a cycle later than the injection channel's latency says (ejected flits take the channel's latency)
    node = links.get("latency_injection", links["latency"])
    links["latency_injection"], links["latency_ejection"] = node + 1, node
    check_keys(given)
    topo = str(b["topology"])
    routing = _routing(b, topo)
    router = _router(b, topo, routing)
    if router.get("vcs", 0) % 2 and topo in ("torus", "mesh", "flatfly"):  # BookSim2's VC halves (by dateline,
        routing["vc_classes"] = "halves"  # order or phase) share the middle VC of an odd number
    traffic = _traffic(b, topo)
    sim = _sim(b, given)
    floor = vc_floor(router["crossbar"], router["speedup"], traffic["packet_phits"])  # sim._buffers' check, in its keys
    if router["buffer_phits"] < floor and router["crossbar"] == "packet":
        raise ConfigError("vc_buf_size", f"with hold_switch_for_packet = 1 a VC must hold one packet, vc_buf_size >= "
                                         f"packet_size (got {router['buffer_phits']} < {floor}): "
                                         "fastnet's held crossbar is virtual cut-through (smaller buffers map with "
                                         "hold_switch_for_packet = 0)")
    if router["buffer_phits"] < floor:
        raise ConfigError("vc_buf_size", f"fastnet's flit crossbar moves ceil(internal_speedup) flits of a packet "
                                         f"a cycle, credit for each: a VC must hold {floor} (got "
                                         f"{router['buffer_phits']}); or lower internal_speedup")
    return {"topology": topology, "router": router, "links": links, "routing": routing, "traffic": traffic,
            "sim": sim}


def _topology(b: dict[str, Value], base_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """fastnet [topology] and [links] for BookSim2's topology (its channel latencies included)."""
    topo = _string(b, "topology")
    if topo in NO_KIND:
        raise ConfigError("topology", f"{topo}: {NO_KIND[topo]}")
    if topo not in ROUTING:
        raise ConfigError("topology", f"{topo!r} is not a BookSim2 topology fastnet maps "
                                      f"({', '.join(ROUTING)} are)")
    if topo not in ("anynet", "flatfly", "cmesh") and b["c"] != 1:
        raise ConfigError("c", f"BookSim2's {topo} has one node per router and ignores c (got {b['c']!r})")
    if topo == "dragonflynew":
        k = _int(b, "k", 1)
        if b["n"] != 1:
            raise ConfigError("n", f"BookSim2's dragonflynew supports only n = 1 (got {b['n']!r})")
        # DRAGON_LATENCY (src/networks/dragonfly.cpp): local channels 10 cycles, global 100; injection 1
        return ({"kind": "dragonfly", "p": k, "a": 2 * k, "h": k, "arrangement": "consecutive"},
                {"latency": 1, "latency_local": 10, "latency_global": 100})
    if topo in ("torus", "mesh"):
        k, n = _int(b, "k", 2), _int(b, "n", 1)
        noc = _int(b, "use_noc_latency", 0)
        latency = 2 if topo == "torus" and noc else 1  # use_noc_latency: torus links 2 cycles, mesh links 1
        return {"kind": topo, "dims": [k] * n, "p": 1}, {"latency": latency, "latency_injection": 1}
    if topo == "fattree":
        return {"kind": "fattree", "k": _int(b, "k", 2), "n": _int(b, "n", 1)}, {"latency": 1}
    if topo == "flatfly":
        return _flatfly(b)
    if topo == "cmesh":
        return _cmesh(b)
    if topo == "fly":
        k, n = _int(b, "k", 2), _int(b, "n", 1)
        if n != 1:
            raise ConfigError("n", f"BookSim2's {k}-ary {n}-fly injects at its first stage and ejects at its last; "
                                   "fastnet attaches each node to one router, so only n = 1 (one k x k router) maps")
        return {"kind": "fattree", "k": k, "n": 1}, {"latency": 1}  # a k-ary 1-tree: one switch with k nodes
    return _anynet(b, base_dir)


def _cmesh(b: dict[str, Value]) -> tuple[dict[str, Any], dict[str, Any]]:
    """BookSim2's cmesh (src/networks/cmesh.cpp): a k x k mesh of routers with c = 4 nodes each (an xr x yr block
    of the chip's grid of nodes) and express channels between the edge routers k/2 apart, as fastnet's mesh with
    `express`. With use_noc_latency (its default) a mesh channel is cX = c/n cycles long and an express channel
    cY * k/2, i.e. k/2 mesh channels; injection and ejection channels 1 cycle."""
    k, n, c = _int(b, "k", 2), _int(b, "n", 1), _int(b, "c", 1)
    x, y, xr, yr = (_int(b, key, 1) for key in ("x", "y", "xr", "yr"))
    if n != 2 or c != 4 or c != xr * yr or x != y or xr != yr:
        raise ConfigError("c" if n == 2 else "n", f"BookSim2's cmesh asserts n = 2, c = 4 = xr * yr, x = y and "
                                                  f"xr = yr (n = {n}, c = {c}, xr = {xr}, yr = {yr}, x = {x}, y = {y})")
    if k % 2:
        raise ConfigError("k", f"BookSim2's cmesh pairs edge routers k/2 apart by express channels: k must be even "
                               f"(got {k})")
    if not _int(b, "use_noc_latency", 0):
        return {"kind": "mesh", "dims": [k, k], "p": c, "express": 1}, {"latency": 1, "latency_injection": 1}
    return {"kind": "mesh", "dims": [k, k], "p": c, "express": k // 2}, {"latency": c // n, "latency_injection": 1}


def flatfly_injection_lengths(xr: int, yr: int) -> list[int]:
    """The lengths BookSim2's flatfly gives the channels of a router's xr x yr nodes (FlatFlyOnChip::_BuildNet:
    1, plus the node's distance beyond 1 from the router's centre in x and in y)."""
    out = []
    yleng, xleng = -(yr // 2), -(xr // 2)
    for _ in range(yr):
        for _ in range(xr):
            if yleng == 0 and yr % 2 == 0:
                yleng += 1
            if xleng == 0 and xr % 2 == 0:
                xleng += 1
            out.append(1 + max(abs(yleng) - 1, 0) + max(abs(xleng) - 1, 0))
            yleng += 1
            if yleng > yr // 2:
                yleng = -(yr // 2)
                xleng += 1
    return out


def _flatfly(b: dict[str, Value]) -> tuple[dict[str, Any], dict[str, Any]]:
    """BookSim2's flatfly (src/networks/flatfly_onchip.cpp) as a hyperx with trunking 1: k^n routers, every
    dimension fully connected, c = xr*yr nodes per router, the same port order. With use_noc_latency (its
    default) the routers lie on an x by y grid and a channel is as long as the distance it spans: xr*|dx| +
    yr*|dy| cycles, which is the hyperx's distance_latency with links.latency = xr when n = 2 and x = y = k."""
    k, n, c = _int(b, "k", 2), _int(b, "n", 1), _int(b, "c", 1)
    x, y, xr, yr = (_int(b, key, 1) for key in ("x", "y", "xr", "yr"))
    if n > 4:
        raise ConfigError("n", f"BookSim2's flatfly builds at most 4 dimensions (got {n})")
    for key, got, want in (("y", y, x), ("yr", yr, xr), ("c", c, xr * yr)):
        if got != want:
            raise ConfigError(key, f"BookSim2's flatfly asserts x = y, xr = yr and c = xr * yr (x = {x}, y = {y}, "
                                   f"xr = {xr}, yr = {yr}, c = {c})")
    topology: dict[str, Any] = {"kind": "hyperx", "dims": [k] * n, "trunking": 1, "p": c}
    if not _int(b, "use_noc_latency", 0):
        return topology, {"latency": 1}  # every channel 1 cycle
    if n != 2 or x != k:
        raise ConfigError("use_noc_latency", f"BookSim2's flatfly makes a channel xr*|dx| + yr*|dy| cycles long "
                          f"on an x by y grid of routers, a distance fastnet's hyperx expresses for n = 2 and "
                          f"x = y = k (got n = {n}, x = {x}, k = {k}); use_noc_latency = 0 maps any n")
    inject = sorted(set(flatfly_injection_lengths(xr, yr)))
    if len(inject) > 1:
        raise ConfigError("xr", f"BookSim2's flatfly gives the nodes of a router channels of {inject} cycles with "
                                f"xr = {xr}; fastnet has one injection latency (xr <= 3 gives every node 1)")
    topology["distance_latency"] = True
    return topology, {"latency": xr, "latency_injection": inject[0]}


def _anynet(b: dict[str, Value], base_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    name = _string(b, "network_file")
    if not name:
        raise ConfigError("network_file", "anynet needs a network file")
    path = Path(name)
    if not path.is_absolute() and not path.is_file():
        path = base_dir / name  # BookSim2 opens it from the working directory; also look next to the config
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("network_file", f"cannot read {name} ({e})") from None
    edges, nodes, router_lat, node_lat = parse_anynet(text)
    return anynet_topology(edges, nodes, router_lat, node_lat)


def parse_anynet(text: str) -> tuple[set[tuple[int, int]], dict[int, int], dict[tuple[int, int], int],
                                     dict[int, int]]:
    """BookSim2's anynet file (src/networks/anynet.cpp): each line `router R` or `node N` followed by what it
    connects to, `router R2 [latency]` and `node N2 [latency]`. Router links are bidirectional, their latency
    per direction (1 unless given); a node's latency holds both ways.
    Returns (undirected router edges, node -> router, (u, v) -> latency, node -> latency)."""
    edges: set[tuple[int, int]] = set()
    nodes: dict[int, int] = {}
    router_lat: dict[tuple[int, int], int] = {}
    node_lat: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        where = f"line {number}"
        if len(words) < 2 or words[0] not in ("router", "node") or not words[1].isdigit():
            raise ConfigError("network_file", f"{where}: expected `router <id> ...` or `node <id> ...`")
        head_type, head = words[0], int(words[1])
        i = 2
        while i < len(words):
            kind = words[i]
            if kind not in ("router", "node") or i + 1 >= len(words) or not words[i + 1].isdigit():
                raise ConfigError("network_file", f"{where}: expected `router <id>` or `node <id>` at {kind!r}")
            other = int(words[i + 1])
            i += 2
            lat = 1
            if i < len(words) and words[i].isdigit():
                lat = int(words[i])
                i += 1
            if head_type == "node" and kind == "node":
                raise ConfigError("network_file", f"{where}: cannot connect node {head} to node {other}")
            if head_type == "router" and kind == "router":
                if other == head:
                    raise ConfigError("network_file", f"{where}: router {head} is linked to itself")
                edges.add((min(head, other), max(head, other)))
                router_lat[(head, other)] = lat
                continue
            node, router = (other, head) if head_type == "router" else (head, other)
            if nodes.get(node, router) != router:
                raise ConfigError("network_file", f"{where}: node {node} is connected to routers {nodes[node]} "
                                                  f"and {router}")
            nodes[node] = router
            node_lat[node] = lat
    return edges, nodes, router_lat, node_lat


def anynet_topology(edges: set[tuple[int, int]], nodes: dict[int, int], router_lat: dict[tuple[int, int], int],
                    node_lat: dict[int, int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """fastnet's graph kind for an anynet network: p nodes on every router, router r holding nodes r*p..r*p+p-1,
    one latency for every router link and one for every node link."""
    routers = sorted({r for e in edges for r in e} | set(nodes.values()))
    if not nodes or routers != list(range(len(routers))):
        raise ConfigError("network_file", "routers must be numbered 0, 1, ... and nodes attached to them")
    per: dict[int, list[int]] = {r: [] for r in routers}
    for node, r in nodes.items():
        per[r].append(node)
    counts = sorted({len(v) for v in per.values()})
    if len(counts) != 1:
        raise ConfigError("network_file", f"routers have {counts[0]} to {counts[-1]} nodes; fastnet's graph kind "
                                          "needs the same number of nodes on every router")
    p = counts[0]
    for r, ns in per.items():
        if sorted(ns) != list(range(r * p, r * p + p)):
            raise ConfigError("network_file", f"router {r} holds nodes {sorted(ns)}; fastnet numbers the nodes of "
                                              f"router r as r*{p} .. r*{p}+{p - 1}: renumber them so")
    lats = {router_lat.get((u, v), 1) for u, v in edges} | {router_lat.get((v, u), 1) for u, v in edges}
    if len(lats) > 1:
        raise ConfigError("network_file", f"router channel latencies differ ({sorted(lats)}, both directions "
                                          "counted, 1 where not given); fastnet's graph kind has one")
    node_lats = set(node_lat.values())
    if len(node_lats) > 1:
        raise ConfigError("network_file", f"node channel latencies differ ({sorted(node_lats)}); fastnet has one")
    links: dict[str, Any] = {"latency": lats.pop() if lats else 1}
    injection = node_lats.pop()
    if injection != links["latency"]:
        links["latency_injection"] = injection
    return {"kind": "graph", "edges": [list(e) for e in sorted(edges)], "p": p}, links


def _routing(b: dict[str, Value], topo: str) -> dict[str, Any]:
    name = _string(b, "routing_function")
    if name == "none":
        raise ConfigError("routing_function", "not set: BookSim2 needs one (its default, none, names none)")
    mapped = ROUTING[topo]
    if (topo, name) in NOT_MAPPED:
        raise ConfigError("routing_function", f"{name} on {topo} is not mapped: {NOT_MAPPED[topo, name]}")
    if name not in mapped:
        raise ConfigError("routing_function", f"{name} on {topo} has no fastnet equivalent; mapped here: "
                                              + ", ".join(mapped))
    return dict(mapped[name])


def _allocator(b: dict[str, Value], key: str) -> tuple[str, int]:
    """BookSim2's `vc_allocator` or `sw_allocator` (src/allocators/allocator.cpp NewAllocator): a name with an
    optional parameter, `islip(3)` (iterations) or `separable_input_first(round_robin)` (the arbiter). (the name,
    which is fastnet's router.vc_choice or router.allocator, the iterations). The IQRouter builds its allocators
    without the config, so iterations come from the parameter alone: `alloc_iters` changes nothing there."""
    text = str(b[key]).replace(" ", "")
    name, _, param = text.partition("(")
    param = param.rstrip(")")
    if name not in SWITCH_ALLOCATORS:
        raise ConfigError(key, f"{b[key]!r} does not map: fastnet's allocators are "
                               + " and ".join(SWITCH_ALLOCATORS.names))
    if name == "islip" and param:
        if not param.isdigit() or int(param) < 1 or (key == "vc_allocator" and int(param) != 1):
            raise ConfigError(key, f"{b[key]!r} does not map: islip(n) takes iterations, n >= 1 for the switch "
                                   "allocator and 1 for the VC allocator (fastnet's does one)")
        return name, int(param)
    if param and param != "round_robin":
        raise ConfigError(key, f"{b[key]!r} does not map: a separable allocator's arbiters are round-robin here")
    return name, 1


def _crossbar(b: dict[str, Value], speedup: float) -> str:
    """BookSim2 moves flits: without hold_switch_for_packet its packets share the crossbar flit by flit into
    unbounded output queues (fastnet's "flit" crossbar); with it a packet holds its input and output to the tail,
    which fastnet's "packet" crossbar does into a one-packet output queue: the same only at speedup 1."""
    hold = _int(b, "hold_switch_for_packet", 0)
    if hold > 1:
        raise ConfigError("hold_switch_for_packet", f"must be 0 or 1 (got {hold})")
    if hold and speedup > 1:
        raise ConfigError("hold_switch_for_packet", "1 with internal_speedup > 1 is not mapped: fastnet's held "
                                                    "crossbar feeds a one-packet output queue, BookSim2's an "
                                                    "unbounded one (use 0, or internal_speedup = 1)")
    return "packet" if hold else "flit"


def _router(b: dict[str, Value], topo: str, routing: dict[str, Any]) -> dict[str, Any]:
    vc_choice = _allocator(b, "vc_allocator")[0]  # fastnet has BookSim2's VC and switch allocators, by their names
    allocator, iters = _allocator(b, "sw_allocator")
    stages = sum(_int(b, key, 0) for key in ("routing_delay", "vc_alloc_delay", "sw_alloc_delay",
                                             "st_prepare_delay", "st_final_delay"))
    speedup = _number(b, "internal_speedup")
    if not 1 <= speedup <= 64:  # BookSim2 takes fractions below 1 (its pipeline then skips cycles); fastnet's
        # crossbar is never slower than its links
        raise ConfigError("internal_speedup", f"only 1 to 64 maps to fastnet's router.speedup (got {speedup})")
    # BookSim2 steps its whole router pipeline internal_speedup times a cycle (Router::Evaluate), so a stage of one
    # cycle takes 1/speedup of one: its router delay is the stages over the speedup
    delay = math.ceil(stages / speedup)
    router: dict[str, Any] = {"buffer_phits": _int(b, "vc_buf_size", 1), "delay": delay, "speedup": float(speedup),
                              "alloc_iters": iters, "credit_delay": _int(b, "credit_delay", 0),
                              "allocator": allocator, "crossbar": _crossbar(b, speedup), "vc_choice": vc_choice}
    if _int(b, "input_speedup", 1) > 1:  # (BookSim2's defaults are fastnet's: left out of the converted config)
        router["input_speedup"] = b["input_speedup"]
    if _flag(b, "wait_for_tail_credit"):
        router["wait_for_tail_credit"] = True
    vcs = _int(b, "num_vcs", 1)
    if routing.get("order") == "xy_yx" and vcs % 4:
        raise ConfigError("num_vcs", f"BookSim2's ugal_xyyx_flatfly splits the VCs in halves by order, each in halves "
                                     f"by phase, disjoint only for a multiple of 4 VCs (got {vcs})")
    if topo != "dragonflynew":
        router["vcs"] = vcs  # fastnet splits a port's VCs among the routing's classes as BookSim2 does
        return router
    # BookSim2's dragonflynew routings fix the VC by phase (min: 0 before the global hop, 1 after; ugal: 0-2),
    # which fastnet's "auto" VC layout reproduces; extra VCs are used only where packets are injected (at random)
    need = 3 if routing["algorithm"] == "ugal_l" else 2
    if routing["algorithm"] == "ugal_l" and vcs != 3:
        raise ConfigError("num_vcs", f"BookSim2's ugal_dragonflynew needs exactly 3 VCs (got {vcs})")
    if vcs < need:
        raise ConfigError("num_vcs", f"BookSim2's min_dragonflynew uses VCs 0 and 1: it needs >= 2 (got {vcs})")
    if vcs > need:
        router["vcs_injection"] = vcs
    return router


def _top_level(text: str) -> list[str]:
    """`text` split at the commas outside braces (the last piece kept even when empty)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def split_params(text: str) -> list[str]:
    """A pattern's or injection process's parameters as BookSim2's tokenize_str (src/config_utils.cpp) reads them:
    a text that does not start with `{` is one parameter (`tornado(4,2)` is k = 4 alone: atoi stops at the comma);
    `{4,2}` is the list 4, 2, split at the commas and closing braces outside nested braces, so `hotspot({{0,9},{1}})`
    is nodes {0,9} and rates {1}, while `hotspot({0,9},{1})` is node 0 at rate 9."""
    text = text.strip()
    if not text or text[0] != "{":
        return [text] if text else []
    values, start, nested = [], 1, 0
    for curr in range(1, len(text)):
        ch = text[curr]
        if ch == "{":
            nested += 1
        elif ch == "}" and nested:
            nested -= 1
        elif ch in ",}" and not nested:
            if curr > start:
                values.append(text[start:curr])
            start = curr + 1
    return values


_ATOI, _ATOF = r"[-+]?\d+", r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"  # what C's atoi and atof read


def _leading(token: str, field: str, what: str, number: str = _ATOI) -> str:
    """The number at the start of `token`, as C's atoi and atof read it (they stop at the first other character);
    a token that does not start with one is refused rather than read as 0."""
    m = re.match(r"\s*(" + number + ")", token)
    if m is None:
        raise ConfigError(field, f"{what}: expected a number (got {token!r})")
    return m.group(1)


def _ints(token: str, what: str) -> list[int]:
    """BookSim2's tokenize_int: a list in braces, else the one integer at the start of the token."""
    token = token.strip()
    parts = split_params(token) if token.startswith("{") else [token]
    return [int(_leading(t, "traffic", what)) for t in parts]


def _pattern(b: dict[str, Value], topo: str) -> dict[str, Any]:
    """traffic.* of BookSim2's `traffic`, a name with its parameters in parentheses (TrafficPattern::New)."""
    raw = b["traffic"]
    if not isinstance(raw, str):
        raise ConfigError("traffic", f"must be a pattern name (got {raw!r})")
    m = re.fullmatch(r"([A-Za-z_0-9]+)(?:\((.*)\))?", raw)
    name = m.group(1) if m else raw
    if name not in BOOKSIM_PATTERNS:
        raise ConfigError("traffic", f"{raw!r} has no fastnet pattern; mapped: " + ", ".join(BOOKSIM_PATTERNS))
    params = split_params(m.group(2) or "") if m else []
    out: dict[str, Any] = {"pattern": BOOKSIM_PATTERNS[name]}
    if topo in ("flatfly", "cmesh") and b["c"] != 1:
        out["numbering"] = "chip"  # flatfly_transformation, CMesh::NodeToRouter
    if name in DIGIT_PATTERNS:
        k, n, xr = (_ints(params[i], name)[0] if len(params) > i else _int(b, key, 1)
                    for i, key in enumerate(("k", "n", "xr")))
        out["digits"] = [xr * k, n]
    elif name == "bad_dragon":
        if topo != "dragonflynew":
            raise ConfigError("traffic", f"BookSim2's bad_dragon (a random node of the next group) is defined on "
                                         f"dragonflynew; not mapped on {topo}")
        got = [_ints(x, name)[0] for x in params[:2]]
        if got != [b["k"], b["n"]][:len(got)]:
            raise ConfigError("traffic", f"bad_dragon{tuple(got)}: groups of another dragonfly than k = {b['k']}, "
                                         f"n = {b['n']} are not mapped")
    elif name == "hotspot":
        nodes = _ints(params[0], name) if params else [-1]
        rates = _ints(params[1], name) if len(params) > 1 else [1]
        rates = (rates + [rates[-1]] * len(nodes))[:len(nodes)]
        if min(rates) < 1:
            raise ConfigError("traffic", f"hotspot rates must be >= 1 (got {rates})")
        # -1: a random node (BookSim2 draws it when the pattern is made); here from the run's seed
        rng = random.Random(b["seed"] if isinstance(b["seed"], int) else 0)
        nodes = [v if v >= 0 else rng.randrange(_node_count(b)) for v in nodes]
        # every packet to a hotspot, each as likely as its rate (a node listed r times)
        out.update(hotspot_fraction=1.0, hotspot_nodes=[v for v, r in zip(nodes, rates) for _ in range(r)])
    elif name == "background":
        out["exclude"] = _ints(params[0], name) if params else []
    return out


def _node_count(b: dict[str, Value]) -> int:
    k, n = _int(b, "k", 1), _int(b, "n", 1)
    topo = b["topology"]
    if topo == "dragonflynew":
        return k * 2 * k * (2 * k * k + 1)
    if topo in ("flatfly", "cmesh"):
        return _int(b, "c", 1) * k ** n
    if topo == "fly":
        return k ** n
    if topo == "fattree":
        return k ** n
    if topo in ("torus", "mesh"):
        return k ** n
    raise ConfigError("traffic", f"hotspot(-1) draws a random node: give the node on {topo}")


def _traffic(b: dict[str, Value], topo: str) -> dict[str, Any]:
    traffic = _pattern(b, topo)
    name = traffic["pattern"]
    # BookSim2 reads packet_size and packet_size_rate per class (a list: one entry per class, the last repeated);
    # one class's entry is a size or a list of sizes ({{1,4}}), drawn each as likely as its rate
    sizes, rates = (_class0(b[key]) for key in ("packet_size", "packet_size_rate"))
    for key, got in (("packet_size", sizes), ("packet_size_rate", rates)):
        if not got or not all(isinstance(v, int) and v >= 1 for v in got):
            raise ConfigError(key, f"must be integers >= 1, one per size (got {b[key]!r})")
    rates = (rates + [rates[-1]] * len(sizes))[:len(sizes)]  # BookSim2 repeats the last rate
    size = max(sizes)
    mean = sum(s * r for s, r in zip(sizes, rates)) / sum(rates)
    rate = _number(b, "injection_rate")
    flits = _int(b, "injection_rate_uses_flits", 0)
    load = rate if flits else rate * mean  # fastnet's load is phits (flits) per node per cycle
    if not 0 < load <= 1:
        unit = "flits" if flits else f"packets x packet_size {size} ="
        raise ConfigError("injection_rate", f"{rate} {unit} {load:g} flits/node/cycle; fastnet's load must be in "
                                            "(0, 1]")
    # BookSim2's uniform draws the source itself too, and its randperm keeps fixed points
    if len(sizes) > 1:
        traffic.update(packet_sizes=sizes, packet_size_rates=rates)
    traffic.update(_injection(b))
    return {**traffic, "load": load, "packet_phits": size, "to_self": name in ("uniform", "permutation")}


def _injection(b: dict[str, Value]) -> dict[str, Any]:
    """injection_process (src/injection.cpp): bernoulli, or on_off with (alpha, beta, r1) from its parameters or
    burst_alpha, burst_beta, burst_r1 (exactly one negative: it follows from the rate)."""
    raw = b["injection_process"]
    m = re.fullmatch(r"([A-Za-z_]+)(?:\((.*)\))?", raw) if isinstance(raw, str) else None
    if m is None or m.group(1) not in ("bernoulli", "on_off"):
        raise ConfigError("injection_process", f"{raw!r} does not map: bernoulli and on_off do")
    if m.group(1) == "bernoulli":
        return {}
    params = split_params(m.group(2) or "")
    if len(params) > 3:
        raise ConfigError("injection_process", "on_off's initial states (a 4th parameter) are not mapped: fastnet "
                                               "draws each node's first state at random, as BookSim2 without it")
    out = {"injection": "on_off"}
    for i, key in enumerate(("burst_alpha", "burst_beta", "burst_r1")):
        try:
            out[key] = (float(_leading(params[i], "injection_process", "on_off", _ATOF)) if len(params) > i
                        else float(_number(b, key)))  # atof, as BookSim2 reads it
        except ValueError:
            raise ConfigError("injection_process", f"on_off parameters are numbers (got {params})") from None
    return out


def _class0(v: Value) -> list[Value]:
    """The first class's entry of a per-class BookSim2 value, as a list (fastnet models one class)."""
    if isinstance(v, list):
        v = v[0] if v else []
    return v if isinstance(v, list) else [v]


def _sim(b: dict[str, Value], given: dict[str, Value]) -> dict[str, Any]:
    period = _int(b, "sample_period", 1)
    warmups = _int(b, "warmup_periods", 0)
    if warmups == 0:
        raise ConfigError("warmup_periods", "0 makes BookSim2 warm up until its statistics settle; fastnet "
                                            "warms up for a fixed time: give warmup_periods >= 1")
    # BookSim2 measures sample after sample until three in a row agree (at least 3 sample periods); fastnet
    # measures one fixed window: one sample period, but never shorter than fastnet's default window
    sim: dict[str, Any] = {"warmup": warmups * period, "measure": max(period, MIN_MEASURE)}
    kind = b["sim_type"]
    if kind == "throughput":  # BookSim2 then measures accepted traffic only: no drain of the measured packets
        sim["drain"] = 0
    elif kind != "latency":
        raise ConfigError("sim_type", f"{kind!r} does not map: latency (warm-up, a window, a drain) and throughput "
                                      "(the same without the drain) do; batch has no fastnet equivalent")
    if "seed" in given:  # absent: fastnet's default seed (BookSim2's seed 0 names a stream of BookSim2's RNG)
        seed = given["seed"]
        if seed == "time":
            raise ConfigError("seed", "time (a new seed every run) does not map: give an integer; fastnet runs "
                                      "are reproducible")
        if not isinstance(seed, int) or seed < 0:
            raise ConfigError("seed", f"must be an integer >= 0 (got {seed!r})")
        sim["seed"] = seed
    return sim
