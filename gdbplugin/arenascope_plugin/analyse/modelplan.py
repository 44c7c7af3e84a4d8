"""The planner tool run on the firmware's model (acquire/planner.py runs the tool itself): the
model's bytes (from the ELF file's own bytes, else target memory; or `set arena model FILE`,
checked against the target's bytes), the firmware's TFLM kernels and era as the planner's
arguments, and each plan kept per model, size and kernels so that a poller runs the planner once
per model, not once a refresh. Used by agentless mode (analyse/agentless.py), the naming of an
agent's regions (analyse/agentregions.py) and the fault's constructor note (analyse/faults.py).
No GDB here."""
import hashlib
import os

from arenascope_plugin import ports
from arenascope_plugin.acquire import elfinfo, planner
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.decode import kernels, tflm
from arenascope_plugin.errors import TargetError
from arenascope_plugin.remedy import Remedy


def _model_bytes(reader, symbols, address):
    """The model flatbuffer the interpreter's model_ points into (GetModel returns its root table,
    a few bytes into the buffer): the ELF data object that holds `address`, read from the ELF
    file's own bytes (pyelftools), or from target memory when the ELF has no bytes for it."""
    if not symbols.elf_path or not os.path.exists(symbols.elf_path):
        raise TargetError("agentless mode: the loaded ELF is not on disk, so the model's size is unknown: give the "
                          f"model file with {Remedy('model', 'FILE.tflite'):q}")
    # The symbol at the runtime address (a position-independent executable is relocated); the
    # ELF gives that symbol's size and bytes.
    named = symbols.name_at(address)
    if named is None:
        raise TargetError(f"agentless mode: no symbol of the ELF holds the model at {address:#x}: give the model "
                          f"file with {Remedy('model', 'FILE.tflite'):q}")
    name, into = named
    held = next(((n, z) for n, v, z, _ in elfinfo.data_objects(symbols.elf_path) if v == address - into), None) \
        if symbols.file_addresses else None
    try:
        size, data = symbols.object_bytes(held[0] if held else name)
    except ValueError as e:
        raise TargetError(f"agentless mode: the model at {address:#x} is in '{name}': {e}: give the model file with "
                          f"{Remedy('model', 'FILE.tflite'):q}") from None
    if data is not None:
        return name, data
    return name, reader.read(address - into, size)  # e.g. a model copied to RAM at run time


def _check_model_file(reader, path, model_addr):
    """TargetError unless the file holds the model the interpreter runs: its bytes from the
    buffer's start (the root table's offset before model_) equal the target's."""
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = f.read()
    except OSError as e:
        raise TargetError(f"{Remedy('model'):q}: cannot read {path}: {e.strerror}") from None
    if len(data) < 8:
        raise TargetError(f"{Remedy('model'):q}: {path} is not a TensorFlow Lite model ({len(data)} bytes)")
    root = int.from_bytes(data[:4], "little")
    n = min(len(data), 4096)
    try:
        same = reader.read(model_addr - root, n) == data[:n]
    except MemoryReadError:
        same = False
    if not same:
        raise TargetError(f"{Remedy('model'):q}: {path} is not the model the interpreter runs (its bytes differ from "
                          f"those at {model_addr - root:#x}): give the file the firmware was built with, or "
                          f"{Remedy('model', 'auto'):q} to read it from the ELF")



def kernel_build(symbols: Symbols, build: kernels.KernelBuild | None = None, kernels_setting: str = "auto",
                 cpu_setting: str = "auto") -> kernels.KernelBuild:
    """build, else the firmware's kernels and CPU as set (`set arena kernels`, `set arena cpu`) or
    read from the ELF (decode/kernels.py detect), kept with the symbols per setting so that a
    poller reads the ELF once."""
    if build is not None:
        return build
    key = ("kernel-build", kernels_setting, cpu_setting)
    if key not in symbols.memo:
        symbols.memo[key] = kernels.detect(symbols, kernels_setting, cpu_setting)
    return symbols.memo[key]


def plan_for(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout, model_addr: int, planner_tool: str | None,
             model_setting: str = "", arena_size: int | None = None, plans: dict | None = None,
             build: kernels.KernelBuild | None = None) -> dict:
    """The planner's JSON for the model the interpreter runs: `set arena model FILE` (checked
    against the target's bytes), else the model's bytes from the ELF (or the target). plans: a
    dict the caller keeps, {(model's sha256, arena size, tool, kernels): JSON}, so that a poller
    runs the planner once per model and size, not once a refresh. build: the firmware's kernels
    (None: read from the ELF, kernel_build). The planner is told the firmware's TFLM era
    (`--tflm`, lay.era.id), so its replay is that era's."""
    # The firmware's kernels and its TFLM era: the planner replays that era's allocation sequence,
    # with the struct sizes of the ELF's architecture (its port; none for a host build).
    args = [*kernel_build(symbols, build).planner_args(), "--tflm", lay.era.id]
    port = ports.for_abi(symbols.abi())
    if model_setting in ("auto", '""', "''"):
        model_setting = ""
    if model_setting:
        _check_model_file(reader, model_setting, model_addr)
    try:
        if model_setting:
            return planner.run_planner(planner_tool, model_setting, planner.target_for(lay.pointer, port),
                                       arena_size=arena_size, build_args=args)[0]
        data = _model_bytes(reader, symbols, model_addr)[1]
        key = (hashlib.sha256(data).hexdigest(), arena_size, planner_tool, tuple(args), port and port.name)
        if plans is not None and key in plans:
            return plans[key]
        doc = planner.run_planner_on_bytes(planner_tool, data, lay.pointer, arena_size=arena_size, build_args=args,
                                           port=port)[0]
        if plans is not None:
            plans[key] = doc
        return doc
    except planner.PlannerError as e:
        raise TargetError(f"agentless mode: {e}") from None


MAX_MODEL_BYTES = 64 << 20  # a published model larger than this is not read over the link
_PLANS = {}       # (sha256 of a published model's bytes, kernel args) -> the planner's JSON for it
_ELF_MODELS = {}  # (ELF path, its mtime, address, size) -> the model's bytes the ELF file holds, or None


def _published_model_bytes(reader, symbols, a):
    """The bytes of the model an arena publishes: from the ELF file when the address starts one of
    its data objects (no target reads; the file is parsed once), else from target memory."""
    path = symbols.elf_path
    if path and os.path.exists(path) and symbols.file_addresses:
        key = (path, os.path.getmtime(path), a.model_addr, a.model_size)
        if key not in _ELF_MODELS:
            held = elfinfo.object_at(path, a.model_addr)
            data = elfinfo.object_bytes(path, held[0])[1] \
                if held is not None and held[1] == a.model_addr and held[2] >= a.model_size else None
            _ELF_MODELS[key] = data[:a.model_size] if data is not None else None
        if _ELF_MODELS[key] is not None:
            return _ELF_MODELS[key]
    return reader.read(a.model_addr, a.model_size)


def published_plan(reader, symbols, desc, a, planner_tool, build=None):
    """The planner's JSON for the model arena `a` publishes (arenascope_arena_set_model), planned
    once per distinct model. Raises planner.PlannerError, MemoryReadError, ValueError or OSError."""
    if a.model_size > MAX_MODEL_BYTES:
        raise ValueError(f"the published model size {a.model_size} B is implausible (more than "
                         f"{MAX_MODEL_BYTES >> 20} MiB)")
    data = _published_model_bytes(reader, symbols, a)
    args = kernel_build(symbols, build).planner_args()
    try:  # the TFLM the firmware links, when its DWARF tells (the agent's firmware need not have -g)
        args += ["--tflm", tflm.era_of(symbols).id]
    except TargetError:
        pass
    port = ports.for_abi(symbols.abi())
    key = (hashlib.sha256(data).hexdigest(), tuple(args), port and port.name)
    if key not in _PLANS:
        _PLANS[key] = planner.run_planner_on_bytes(planner_tool, data, desc.addr_size, build_args=args, port=port)[0]
    return _PLANS[key]


