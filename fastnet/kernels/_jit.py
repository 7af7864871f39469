"""All numba options in one place. Kernels use `@jit`; helpers called inside loops use `@jit_inline`; the few
kernels that create arrays (the throughput models, the fault kernel) use `@jit_alloc`. All compile through
`_PrunedInlining`, numba's pipeline with an inlining pass that keeps the cold start short (below).

`@jit` kernels are compiled without numba's reference counting (NRT): they create no array and keep none, the
caller owns every array for the whole call. With it, numba calls NRT_incref/NRT_decref (never inlined) for every
array a helper receives or a tuple field it reads. `run_chunk` had cleared those counts itself, but the MPI kernel
it calls had not: on the 262,144-rank barrier, delivering a message cost 1,580 CPU cycles with them and 220
without, and the MPI stage 16.8 G cycles against 3.4 G (perf/README.md, "A million ranks").

An index in a kernel counts from the start only: numba's wraparound of an index below 0 is dropped in fastnet's
code (`_index_from_start`), `a[-1]` reads before the array.

numba's cache only checks the source file of the function it compiled, not the files of the functions it
inlined or the constants it froze: editing kernels/routing.py, or a code in registry.py, would leave a stale
cycle loop in the cache. So the cache lives in a directory named after a hash of every source file kernels are
built from: the folders that hold kernels and the modules whose constants they freeze (tests/test_imports.py
checks that every kernel lies in one). Set
FASTNET_NUMBA_CACHE=0 to compile without the cache, or NUMBA_CACHE_DIR to choose the directory yourself.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
import numba.extending
from llvmlite import binding as llvm
from llvmlite import ir as llvmir
from numba.core import cgutils, ir, itanium_mangler, postproc
from numba.core.analysis import compute_cfg_from_blocks, dead_branch_prune
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
from numba.core.compiler_machinery import register_pass
from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
from numba.core.ir_utils import build_definitions, find_const, get_definition, guard, simplify_CFG
from numba.core.untyped_passes import InlineInlinables
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: F401  (kernels' count of trailing zero bits)
from numba.np import arrayobj

CACHE = os.environ.get("FASTNET_NUMBA_CACHE", "1") != "0"
_PACKAGE = Path(__file__).resolve().parents[1]
HASHED_FOLDERS = ("kernels", "engine", "traffic", "build", "workloads", "mpi", "mpi/traces", "faults", "throughput")
HASHED_MODULES = ("registry.py", "units.py", "graph_input.py")  # constants the folders above take


def _source_hash() -> str:
    digest = hashlib.sha1()
    paths = [path for folder in HASHED_FOLDERS for path in sorted((_PACKAGE / folder).glob("*.py"))]
    for path in paths + [_PACKAGE / name for name in HASHED_MODULES]:
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _cache_dir() -> Path:
    """~/.cache/fastnet/numba-<hash> (created here), else the package's __pycache__ if that cannot be written.
    Creating it rather than testing whether ~/.cache exists keeps the choice the same in every process: on a
    fresh machine another library may create ~/.cache mid-run, and sweep workers started after it would
    otherwise look for their kernels in a different, empty cache."""
    folder = f"numba-{_source_hash()}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fastnet"
    try:
        (base / folder).mkdir(parents=True, exist_ok=True)
    except OSError:
        base = _PACKAGE / "__pycache__"
    return base / folder


if CACHE and not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = str(_cache_dir())

_OWN = itanium_mangler.PREFIX + "N" + itanium_mangler.mangle_identifier(__name__.split(".")[0])  # _ZN7fastnet
_numba_fix_integer_index = arrayobj.fix_integer_index


def _index_from_start(context, builder, idxty, idx, size):
    """An integer index into an array, in the code of a fastnet kernel: as it is. numba's own (for every other
    function) reads an index below 0 from the end, as Python does, which costs every access a compare, a select
    and the dimension's length, and the loop has so many arrays that the lengths live on the stack: a tenth to a
    quarter of a trace replay's time (perf/README.md, "Indices as they are"). No kernel indexes from the end; the
    tests run clean with NUMBA_BOUNDSCHECK=1, which would stop at an index below 0 (docs/developing.md)."""
    if idxty.signed and builder.function.name.startswith(_OWN):
        return context.cast(builder, idx, idxty, numba.types.intp)
    return _numba_fix_integer_index(context, builder, idxty, idx, size)


arrayobj.fix_integer_index = _index_from_start


PREFETCH = 8  # iterations ahead: the records a loop reads for one item are cache misses on a large network; the
# loops that prefetch ask for them this many items (and half as many for the ones found through them) in advance


@numba.extending.intrinsic
def prefetch(typingctx, ary, i):
    """Ask the CPU to start loading row i of a 2-D (or element i of a 1-D) C-contiguous array, for a loop that
    will read it a few iterations later: on a million-node network every packet, VC and port record is a cache
    miss, and a loop that only waits for one miss at a time is bound by memory latency. A hint: it never faults
    (an index past the end is harmless) and does nothing else."""
    if not isinstance(ary, numba.types.Array) or not isinstance(i, numba.types.Integer):
        return None

    def codegen(context, builder, sig, args):
        aryty = sig.args[0]
        a = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], sig.args[1], numba.types.intp)
        stride = cgutils.unpack_tuple(builder, a.strides, aryty.ndim)[0]
        addr = builder.add(builder.ptrtoint(a.data, stride.type), builder.mul(idx, stride))
        i8p = llvmir.IntType(8).as_pointer()
        i32 = llvmir.IntType(32)
        fnty = llvmir.FunctionType(llvmir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.inttoptr(addr, i8p), i32(0), i32(3), i32(1)])  # read, keep, data cache
        return context.get_dummy_value()

    return numba.types.none(ary, i), codegen


@numba.extending.intrinsic
def load_acquire(typingctx, ary, i):
    """ary[i] of an int64 array, read atomically with acquire order: a thread waiting on a flag another thread
    sets (kernels/crew.py) must see the store, and everything written before it, not a copy hoisted out of its
    loop."""
    if not isinstance(ary, numba.types.Array) or ary.dtype != numba.types.int64:
        return None

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], a, [args[1]])
        return builder.load_atomic(ptr, ordering="acquire", align=8)

    return numba.types.int64(ary, i), codegen


@numba.extending.intrinsic
def store_release(typingctx, ary, i, value):
    """ary[i] = value in an int64 array, atomically with release order: what this thread wrote before is seen by
    the thread that reads the value with load_acquire."""
    if not isinstance(ary, numba.types.Array) or ary.dtype != numba.types.int64:
        return None

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], a, [args[1]])
        value = context.cast(builder, args[2], sig.args[2], numba.types.int64)
        builder.store_atomic(value, ptr, ordering="release", align=8)
        return context.get_dummy_value()

    return numba.types.none(ary, i, value), codegen


@numba.extending.intrinsic
def sched_yield(typingctx):
    """Give the CPU to another thread (POSIX sched_yield): a thread that has waited long for another lets it run
    where there are more threads than cores."""
    def codegen(context, builder, sig, args):
        fnty = llvmir.FunctionType(llvmir.IntType(32), [])
        builder.call(cgutils.get_or_insert_function(builder.module, fnty, "sched_yield"), [])
        return context.get_dummy_value()

    return numba.types.none(), codegen


@numba.extending.intrinsic
def no_implementation(typingctx, code):
    """The last line of a dispatch on a code (`if routing == R_MIN: ... elif ...`), followed by a raise. Where the
    code is a constant of the kernel (fastnet/registry.py), the branches above are pruned and this call survives
    only if none of them takes the code: `_PruneThenInline` then refuses to compile, naming it, instead of the code
    falling through to some other variant. With a code known only at run time it does nothing."""
    if not isinstance(code, numba.types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return numba.types.none(code), codegen


# ---------------------------------------------------------------- inlining: the compile time of a cold start
# numba's own inlining pass fetches each `inline="always"` callee by running the whole untyped pipeline on it,
# inlining included, once per call site: a helper nested n levels deep is expanded once per path to it, and the
# cycle loop's routing alone took 40 of its 68 cold seconds. It also inlines everything before it prunes dead
# branches. The pass below inlines one level at a time (a callee comes back with its own calls not yet inlined)
# and prunes branches on constants before each level, so the cycle loop is compiled in seconds and a loop
# specialised on a constant (engine/loop.py cycle_loop's routing, workload, ...) never inlines, types or compiles
# the branches that constant rules out. Same IR in the end, for what survives; same machine code.


def _untyped_without_inlining(state):
    pm = DefaultPassBuilder.define_untyped_pipeline(state)
    pm.passes = [(p, d) for p, d in pm.passes if p is not InlineInlinables]
    return pm


class _Inliner(InlineWorker):
    """numba's InlineWorker, which runs the untyped pipeline on a callee at every call site (next_u64 at 17 of
    them in the default run: a fifth of a cold start's inlining), making each callee's IR once per process.
    inline_ir copies the IR before changing it; each use gets its own identity, so that two inlined copies of one
    callee name their variables apart, as numba's fresh IR does."""

    _made: dict = {}

    def run_untyped_passes(self, func, enable_ssa=False):  # noqa: D102 - numba's
        key = (func, enable_ssa)
        if key not in self._made:
            self._made[key] = super().run_untyped_passes(func, enable_ssa)
        self.flags.enable_ssa = enable_ssa  # as numba's sets it on the caller's flags
        made = self._made[key].copy()
        made.func_id = made.func_id.derive()
        return made


@register_pass(mutates_CFG=True, analysis_only=False)
class _PruneThenInline(InlineInlinables):
    """numba's inlining pass, one level per round, with dead branches pruned before each round (see above)."""

    _name = "fastnet_prune_then_inline"

    def run_pass(self, state):  # noqa: D102 - see the class
        worker = _Inliner(state.typingctx, state.targetctx, state.locals, state.pipeline, state.flags,
                          validator=callee_ir_validator)
        worker._compiler_pipeline = _untyped_without_inlining  # a callee's own calls wait for the next round
        func_ir = state.func_ir
        modified = _literal_arguments_as_constants(func_ir, state.args)
        while True:
            func_ir._definitions = build_definitions(func_ir.blocks)  # the pruning reads them (literals: above)
            dead_branch_prune(func_ir, state.args)
            func_ir._definitions = build_definitions(func_ir.blocks)
            inlined = False
            for block in list(func_ir.blocks.values()):
                for i, instr in enumerate(block.body):
                    if isinstance(instr, ir.Assign) and isinstance(instr.value, ir.Expr) and instr.value.op == "call":
                        # an empty work list: what the callee calls is inlined next round, after pruning
                        if guard(self._do_work, state, [], block, i, instr.value, worker):
                            inlined = True
                            break  # the block was split
            if not inlined:
                break
            modified = True
        if modified:  # the clean-up of numba's pass
            cfg = compute_cfg_from_blocks(func_ir.blocks)
            for dead in cfg.dead_nodes():
                del func_ir.blocks[dead]
            postproc.PostProcessor(func_ir).run()
            func_ir.blocks = simplify_CFG(func_ir.blocks)
        _refuse_unimplemented(func_ir)
        return True


def _literal_arguments_as_constants(func_ir, arg_types) -> bool:
    """An integer argument typed as a literal (a constant of the caller passed to a kernel compiled apart, such as
    a stage's `crossbar`: numba compiles the callee for that literal) becomes that constant, so branches on it are
    pruned as on the caller's own constants; numba's pruning only resolves a literal argument compared with None."""
    changed = False
    for block in func_ir.blocks.values():
        for instr in block.body:
            if isinstance(instr, ir.Assign) and isinstance(instr.value, ir.Arg):
                ty = arg_types[instr.value.index]
                if isinstance(ty, (numba.types.IntegerLiteral, numba.types.BooleanLiteral)):
                    instr.value = ir.Const(ty.literal_value, instr.value.loc)
                    changed = True
    return changed


def _refuse_unimplemented(func_ir):
    """A `no_implementation(code)` call left after pruning, whose code is a constant: no branch implements it."""
    for block in func_ir.blocks.values():
        for instr in block.body:
            if not (isinstance(instr, ir.Assign) and isinstance(instr.value, ir.Expr) and instr.value.op == "call"):
                continue
            func = guard(get_definition, func_ir, instr.value.func)
            if getattr(func, "value", None) is not no_implementation or not instr.value.args:
                continue
            code = guard(find_const, func_ir, instr.value.args[0])
            if code is not None:
                raise numba.core.errors.CompilerError(
                    f"{func_ir.func_id.func_qualname}: code {code} has no implementation (no branch of the dispatch "
                    "takes it; fastnet/registry.py lists the codes)")


class _LinkedOnly(JITCodeLibrary):
    """The code of a kernel with no Python entry (`@jit_callee`, `@jit_stage`). numba links a callee's module into
    each caller's and compiles it there (LLVM inlines a stage), so the callee's own machine code never runs, and
    the caller's module passes optimise its code again. Here its module is left as numba's function passes leave
    it and no machine code is made: the JIT engine gets only its environment's global, which numba sets after
    compiling it or loading it from the cache. The stages' module passes took 1.5 s and their machine code 0.75 s
    of the default run's cold start (one core), 1.7 s of it on the chain route_head -> head_request -> allocate."""

    def _optimize_final_module(self):
        pass

    def _finalize_final_module(self):
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._codegen._add_module(self._environments())
        self._codegen._engine.finalize_object()
        self._finalized = True

    def serialize_using_object_code(self):  # noqa: D102 - numba's: an object file and the IR to link
        return self.name, "object", (self._codegen._tm.emit_object(self._environments()),
                                     self._get_module_for_linking().as_bitcode())

    def _environments(self):
        """A module defining only this library's environment globals (numba's, as numba declares them)."""
        module = self._codegen._create_empty_module(self.name + ".env")
        for gv in self._final_module.global_variables:
            if gv.name.startswith("_ZN08NumbaEnv"):
                env = llvmir.GlobalVariable(module, cgutils.voidptr_t, name=gv.name)
                env.linkage = "common"
                env.initializer = cgutils.get_null_value(env.type.pointee)
        return llvm.parse_assembly(str(module))


class _Flags(Flags):
    """A kernel's compile flags, whose copies (numba keeps one on its ConfigStack while compiling the kernel) are
    compared in one step. numba's overload templates find their compiled implementations by these flags, at every
    call to an overloaded function while typing and lowering (48,000 look-ups in a cold start of the default run),
    and flags hash to the same value whatever their options and compare by building a dict of every option: 2.2 s
    of the default run's 28 s of compiling (one core)."""

    __slots__ = ("_seen", "_key", "_hash")

    def __init__(self, copy_from=None):
        super().__init__(copy_from)
        self._seen, self._hash = None, super().__hash__()  # numba's hash: the options' names, the same for all

    def _options(self) -> tuple:
        """Every option's value, made again only if an option was set since (numba sets none on these copies)."""
        if self._seen != self._values:
            self._seen, self._key = dict(self._values), tuple(self.values().items())
        return self._key

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if isinstance(other, _Flags):
            return self._options() == other._options()
        return super().__eq__(other)


class _PrunedInlining(CompilerBase):
    """numba's nopython pipeline with `_PruneThenInline` in place of its inlining pass (numba's documented way
    to change a pipeline: `pipeline_class`), and the kernel's flags as `_Flags`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if type(self.state.flags) is Flags:
            self.state.flags = _Flags(self.state.flags)  # its copies are _Flags too (TargetConfig.copy)

    def define_pipelines(self):  # noqa: D102
        flags = self.state.flags
        if flags.no_cpython_wrapper and self.state.library is None:
            self.state.library = _LinkedOnly(self.state.targetctx.codegen(), self.state.func_id.func_qualname)
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        i = [p for p, _ in pm.passes].index(InlineInlinables)
        pm.passes[i] = (_PruneThenInline, pm.passes[i][1])
        pm.finalize()
        return [pm]


# No kernel's address is taken as a C function pointer: the cfunc wrapper numba builds for each is dropped.
_KERNEL = {"cache": CACHE, "nogil": True, "_nrt": False, "no_cfunc_wrapper": True, "pipeline_class": _PrunedInlining}

jit = numba.njit(**_KERNEL)


class _CalleeDispatcher(numba.core.registry.CPUDispatcher):
    """A kernel compiled without its Python entry point: called from Python it raises instead of crashing."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a @jit_callee kernel: call it from another kernel "
                        "(kernels/_jit.py)")


def jit_callee(func):
    """`@jit` for a kernel that only kernels call (a stage, a cold path kept out of its caller's body). numba builds
    a Python entry for every compiled function, unboxing each array of each NamedTuple argument; for the stages of
    the cycle loop that code was a tenth of a cold start's compile time, and nothing ever runs it. Nor its machine
    code: its callers compile it again where they link it (`_LinkedOnly`)."""
    dispatcher = numba.njit(**_KERNEL, no_cpython_wrapper=True)(func)
    dispatcher.__class__ = _CalleeDispatcher
    return dispatcher


def jit_stage(func):
    """`@jit_callee` for a stage of the cycle loop, run every cycle, or a helper that many places would inline, or
    one large enough that numba's time on its caller grows faster than their sizes (mpi/kernel.py: post, receive,
    run_rank and four more): compiled apart by numba (typed and lowered once, as a callee), then inlined by LLVM
    where it is called (`forceinline`). As a call, a stage is passed each array of the State as a dozen
    scalars: fire_events and traverse cost the replay of an application trace 1.4x its time as calls. Inlined
    by numba instead, MPI's `post` was typed and lowered at each of its eleven places: advance_mpi took 60 s to
    compile, 27 s with post and receive compiled apart, 12-15 s with the rest (perf/README.md, "A replay's first
    run"). numba compiles a callee again for each literal argument (a
    constant at the call), which a stage's `crossbar` wants (its branches are pruned); a helper's callers pass
    np.int64(...) around a constant so that one compilation serves them all."""
    dispatcher = numba.njit(**_KERNEL, no_cpython_wrapper=True, forceinline=True)(func)
    dispatcher.__class__ = _CalleeDispatcher
    return dispatcher

jit_alloc = numba.njit(cache=CACHE, nogil=True, pipeline_class=_PrunedInlining)

jit_parallel = numba.njit(cache=CACHE, nogil=True, parallel=True)

# Small helpers called inside hot loops are inlined at numba-IR level: a non-inlined call passes each array of
# its arguments as a dozen scalars and touches its reference count (UGAL's decision as a call cost 1.76x MIN's
# time per cycle, inlined 1.34x).
jit_inline = numba.njit(cache=CACHE, nogil=True, inline="always", pipeline_class=_PrunedInlining)
