"""Built-in MPI programs (`[workload] kind = "mpi"`, `program = ...`), each a function of its parameters that
returns a `Trace` (calls.py), as a trace reader would:

| program | what every rank does, `iterations` times |
|---|---|
| `pingpong` | rank 0 sends `message_bytes` to rank 1, which sends them back (other ranks idle) |
| `barrier`, `bcast`, `reduce`, `allreduce`, `allgather`, `alltoall` | that collective of `message_bytes` on all ranks |
| `halo3d` | irecv and isend `message_bytes` with its 6 neighbours of a periodic 3-D process grid, waitall |
| `fft3d` | seed 003 §VII's Big FFT: a barrier, then per iteration the two transposes of a pencil-decomposed 3-D FFT (alltoallv on the row, then the column communicator of a 2-D process grid), each followed by a barrier |
| `sweep3d` | a KBA wavefront (SNAP, seed 003 §VII): for each of 8 octants, for each of `chunks` blocks, receive from the upstream x and y neighbours of a 2-D process grid, compute, send downstream |

`compute_cycles` of computation follows every iteration (sweep3d: every block).
"""

from __future__ import annotations

from typing import Any, Callable

from ..registry import Registry
from .calls import Call, Trace



def factor(n: int, dims: int) -> list[int]:
    """n ranks as a process grid of `dims` dimensions, as square as possible (MPI_Dims_create)."""
    out = [1] * dims
    rest = n
    for d in range(dims):
        left = dims - d
        best = 1
        f = 1
        while f ** left <= rest:
            if rest % f == 0:
                best = f
            f += 1
        out[d] = best
        rest //= best
    out[-1] *= rest
    return sorted(out, reverse=True)


def _compute(c: int) -> list[Call]:
    return [Call("compute", duration_cycles=c)] if c > 0 else []


def pingpong(n: int, p: dict[str, Any]) -> Trace:
    S, it = p["message_bytes"], p["iterations"]
    ranks: list[list[Call]] = [[] for _ in range(n)]
    for _ in range(it):
        ranks[0] += [Call("send", peer=1, bytes=S), Call("recv", peer=1, bytes=S)] + _compute(p["compute_cycles"])
        ranks[1] += [Call("recv", peer=0, bytes=S), Call("send", peer=0, bytes=S)] + _compute(p["compute_cycles"])
    return Trace(ranks)


def fanout(n: int, p: dict[str, Any]) -> Trace:
    """`root` sends `message_bytes` to every other rank in turn, `compute_cycles` apart, so that each message
    crosses an idle network when the gap exceeds its latency: the message to the k-th other rank is posted at
    cycle k x compute_cycles, and that rank's task_finish_cycle is when it arrived (seed 003 §IV-B's latency
    test: one node to every other node)."""
    S, root = p["message_bytes"], p["root"]
    ranks: list[list[Call]] = [[Call("recv", peer=root, bytes=S)] for _ in range(n)]
    ranks[root] = []
    for r in range(n):
        if r != root:
            ranks[root] += _compute(p["compute_cycles"]) + [Call("send", peer=r, bytes=S)]
    return Trace(ranks)


def collective_loop(kind: str) -> Callable[[int, dict[str, Any]], Trace]:
    def make(n: int, p: dict[str, Any]) -> Trace:
        calls: list[Call] = []
        for _ in range(p["iterations"]):
            calls += [Call(kind, bytes=p["message_bytes"], root=p["root"])] + _compute(p["compute_cycles"])
        # every rank runs this one list (nothing changes a Call after it is made): program.lower lowers it once,
        # and a million ranks cost a million references
        return Trace([calls] * n)
    return make


def halo3d(n: int, p: dict[str, Any]) -> Trace:
    X, Y, Z = factor(n, 3)
    S = p["message_bytes"]
    ranks = []
    for r in range(n):
        x, y, z = r % X, (r // X) % Y, r // (X * Y)
        peers = []
        for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
            peers.append((x + dx) % X + ((y + dy) % Y) * X + ((z + dz) % Z) * X * Y)
        calls: list[Call] = []
        for _ in range(p["iterations"]):
            reqs = []
            for i, q in enumerate(peers):  # the message from the -d neighbour carries tag d
                calls.append(Call("irecv", peer=q, tag=i ^ 1, bytes=S, request=i))
                reqs.append(i)
            for i, q in enumerate(peers):
                calls.append(Call("isend", peer=q, tag=i, bytes=S, request=6 + i))
                reqs.append(6 + i)
            calls.append(Call("waitall", requests=tuple(reqs)))
            calls += _compute(p["compute_cycles"])
        ranks.append(calls)
    return Trace(ranks)


def _split(N: int, p: int) -> list[int]:
    return [N * (i + 1) // p - N * i // p for i in range(p)]


def fft3d(n: int, p: dict[str, Any]) -> Trace:
    """Pencils of an N^3 complex-double grid (16 bytes a point, N = `grid`) on a pr x pc process grid: rank
    (a, b) holds y-slab a and z-slab b. The x->y transpose exchanges within row communicator b (ranks with the
    same b), the y->z transpose within column communicator a; the block to a peer is its share of the grid."""
    pr, pc = factor(n, 2)
    N = p["grid"]
    nx, ny, nz, ny2 = _split(N, pr), _split(N, pr), _split(N, pc), _split(N, pc)
    comms: dict[int, tuple[int, ...]] = {}
    for b in range(pc):
        comms[1 + b] = tuple(a + b * pr for a in range(pr))  # row communicator b: comm rank a
    for a in range(pr):
        comms[1 + pc + a] = tuple(a + b * pr for b in range(pc))  # column communicator a: comm rank b
    ranks = []
    for r in range(n):
        a, b = r % pr, r // pr
        # x-pencil (all x, y in Y_a, z in Z_b) -> y-pencils (x in X_k, all y, z in Z_b) of row b
        row_send = tuple(16 * nx[k] * ny[a] * nz[b] for k in range(pr))
        row_recv = tuple(16 * nx[a] * ny[k] * nz[b] for k in range(pr))
        # y-pencil (x in X_a, all y, z in Z_b) -> z-pencils (x in X_a, y in Y'_k, all z) of column a
        col_send = tuple(16 * nx[a] * ny2[k] * nz[b] for k in range(pc))
        col_recv = tuple(16 * nx[a] * ny2[b] * nz[k] for k in range(pc))
        calls: list[Call] = [Call("barrier")]
        for _ in range(p["iterations"]):
            calls.append(Call("alltoallv", comm=1 + b, send_counts=row_send, recv_counts=row_recv))
            calls += [Call("barrier")] + _compute(p["compute_cycles"])
            calls.append(Call("alltoallv", comm=1 + pc + a, send_counts=col_send, recv_counts=col_recv))
            calls += [Call("barrier")] + _compute(p["compute_cycles"])
        ranks.append(calls)
    return Trace(ranks, comms)


def sweep3d(n: int, p: dict[str, Any]) -> Trace:
    X, Y = factor(n, 2)
    S = p["message_bytes"]
    ranks = []
    for r in range(n):
        x, y = r % X, r // X
        calls: list[Call] = []
        for _ in range(p["iterations"]):
            for octant in range(8):
                dx = 1 if octant & 1 else -1
                dy = 1 if octant & 2 else -1
                up_x, up_y = x - dx, y - dy
                down_x, down_y = x + dx, y + dy
                for _ in range(p["chunks"]):
                    if 0 <= up_x < X:
                        calls.append(Call("recv", peer=up_x + y * X, tag=octant, bytes=S))
                    if 0 <= up_y < Y:
                        calls.append(Call("recv", peer=x + up_y * X, tag=octant, bytes=S))
                    calls += _compute(p["compute_cycles"])
                    if 0 <= down_x < X:
                        calls.append(Call("send", peer=down_x + y * X, tag=octant, bytes=S))
                    if 0 <= down_y < Y:
                        calls.append(Call("send", peer=x + down_y * X, tag=octant, bytes=S))
        ranks.append(calls)
    return Trace(ranks)


# The programs `workload.program` names, each a function (ranks, [workload] table) -> Trace.
PROGRAMS = Registry("MPI program")
PROGRAMS.add("pingpong", "rank 0 and rank 1 exchange a message, iterations times", make=pingpong)
PROGRAMS.add("fanout", "rank 0 sends to every other rank", make=fanout)
for _kind in ("barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"):
    PROGRAMS.add(_kind, f"MPI_{_kind.capitalize()}, iterations times, with compute between",
                 make=collective_loop(_kind))
PROGRAMS.add("halo3d", "a 3-D halo exchange with the six face neighbours", make=halo3d)
PROGRAMS.add("fft3d", "a 3-D FFT's transposes (all-to-alls in row and column communicators)", make=fft3d)
PROGRAMS.add("sweep3d", "a wavefront sweep over a 2-D process grid, eight octants", make=sweep3d)
ROOT_PROGRAMS = ("fanout", "bcast", "reduce")  # the programs `root` names a rank of


def generate(program: str, n_ranks: int, params: dict[str, Any]) -> Trace:
    """The Trace of a built-in program. Ranks that run the very same calls may share one list of the same Call
    objects (the collective programs do): copy a rank's calls before changing them."""
    return PROGRAMS[program].make(n_ranks, params)
