"""The planner tool (arenascope-plan --json, docs/arena-budget.md) run on a model file or on a
model's bytes: its JSON document. Parsing models, lifetimes and plans is the C++ tool's alone;
decode/plan.py maps its JSON onto regions, present/budget.py puts it in words."""
import json
import os
import subprocess
import tempfile

from arenascope_plugin import paths
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.remedy import Remedy

SCHEMA = "arenascope-plan/2"   # planner/include/arenascope/planner/writers.h kPlanSchema
TIMEOUT_S = 60
# The most JSON the plugin reads from the tool (bytes): json.loads holds about 10 x that in
# objects. The tool prints a large model's JSON compact, about 3.0 KB an operator (304 MB for a
# 100,000-operator chain; docs/arena-budget.md "Limits and scale"), so this is about 130,000
# operators.
MAX_PLAN_JSON_BYTES = 384 << 20

# The roles of the planner's tail regions the plugin acts on (the JSON's tail.regions[].role,
# one of docs/planner-schema.json's $defs/tail_role): match on these, never on the label "what".
ROLE_ARENA_ALLOCATOR = "arena-allocator"                 # SingleArenaBufferAllocator
ROLE_MEMORY_PLANNER = "memory-planner"                   # GreedyMemoryPlanner
ROLE_MICRO_ALLOCATOR = "micro-allocator"                 # MicroAllocator
ROLE_BUILTIN_DATA_ALLOCATOR = "builtin-data-allocator"   # MicroBuiltinDataAllocator
ROLE_BUILTIN_DATA = "builtin-data"                       # an operator's builtin options (node.builtin_data)
ROLE_OP_DATA = "op-data"                                 # a kernel's OpData (node.user_data)
ROLE_KERNEL_BUFFER = "kernel-buffer"                     # a kernel's persistent buffer (e.g. CMSIS-NN's kernel sums)
# What MicroAllocator::Create allocates in the MicroInterpreter's constructor.
CONSTRUCTOR_ROLES = (ROLE_ARENA_ALLOCATOR, ROLE_MEMORY_PLANNER, ROLE_MICRO_ALLOCATOR)
# Tail objects whose every word is a pointer TFLM set (micro_allocator.h SubgraphAllocations,
# ScratchBufferHandle, the interpreter's TfLiteTensor* arrays).
POINTER_ARRAY_ROLES = ("subgraph-allocations", "scratch-handles", "input-tensor-array", "output-tensor-array")


class PlannerError(ArenascopeError):
    """The planner tool is missing, failed, or printed something that is not its JSON."""


def printable(text: object) -> str:
    """Text from a model (names of tensors and custom operators can hold any character) as one
    terminal line: control characters, newlines included, become '?', as the tool's table does."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def run_planner(tool: str | None, model_path: str | os.PathLike[str], target: str = "cortex-m",
                margin_pct: float | None = None, arena_size: int | None = None,
                build_args: list[str] | tuple[str, ...] = ()) -> tuple[dict, str | None]:
    """Runs `tool --json --target TARGET [--margin PCT] [--arena-size N] [BUILD_ARGS] model_path`
    (build_args: the kernels' options, e.g. ["--kernels", "cmsis-nn", "--cpu", "cortex-m55"],
    decode/kernels.py KernelBuild.planner_args); returns
    (document, error). error is the tool's message when it printed a budget but also said TFLM
    would reject the model (exit status 1 with JSON); an arena_size too small (exit status 4 or 5)
    is no error: the document's `replay` and `gate` say what TFLM does. arena_size: also replay TFLM's allocation
    at that many bytes (the document's `replay`, docs/arena-budget.md)."""
    if not tool:
        raise PlannerError("the planner tool arenascope-plan was not found (`pip install` does not bring it): "
                           "build it (bash tools/build.sh) and put it on PATH or "
                           f"{Remedy('planner-path', '/path/to/arenascope-plan'):q}")
    try:
        # Model names need not be UTF-8: never let a byte of them break the command.
        margin = ["--margin", str(margin_pct)] if margin_pct is not None else []
        if arena_size is not None:
            margin += ["--arena-size", str(arena_size)]
        # stdout to a file: its size is known before a byte of it is read (MAX_PLAN_JSON_BYTES)
        with tempfile.TemporaryFile(prefix="arenascope-plan-") as out:
            r = subprocess.run([tool, "--json", "--target", target, *margin, *build_args, "--", model_path],
                               stdout=out, stderr=subprocess.PIPE,
                               encoding="utf-8", errors="replace", timeout=TIMEOUT_S, check=False)
            size = os.fstat(out.fileno()).st_size
            if size > MAX_PLAN_JSON_BYTES:
                raise PlannerError(f"{tool} printed {size} bytes of JSON for {model_path}, more than the "
                                   f"{MAX_PLAN_JSON_BYTES >> 20} MiB the plugin reads (acquire/planner.py "
                                   "MAX_PLAN_JSON_BYTES): read this model's plan with arenascope-plan's table, "
                                   "or its --json with a tool of your own")
            out.seek(0)
            r.stdout = out.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise PlannerError(f"cannot run {tool}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise PlannerError(f"{tool} did not finish in {TIMEOUT_S} s on {model_path}") from None
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    message = printable(lines[0]).replace("arenascope-plan: ", "", 1) if lines else ""
    try:
        doc = json.loads(r.stdout) if r.stdout.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        if r.returncode in (1, 2) and message and r.stderr.startswith("arenascope-plan: "):
            # The tool's own error (1: the model; 2: the options, e.g. --kernels cmsis-nn with
            # --target host): it names the file or the option and the problem.
            raise PlannerError(message)
        said = f": {message}" if message else ""
        if r.returncode < 0:  # a signal: the planner itself broke
            raise PlannerError(f"{tool} {paths.ended(r.returncode)} on {model_path}{said}: a bug of arenascope-plan "
                               f"(run it by hand on the model to see it, and report it)")
        raise PlannerError(f"{tool} is not arenascope-plan (it printed no \"{SCHEMA}\" plan and "
                           f"{paths.ended(r.returncode)}{said}): {Remedy('planner-path', 'auto'):q}, or the path "
                           "of build/planner/arenascope-plan")
    # 1: TFLM would reject the model; 4 and 5 are the gate's answer for an arena_size too small
    # (planner/include/arenascope/planner/gate.h), which the document's `replay` holds: no error
    return doc, (message if r.returncode == 1 else None)


def target_for(pointer_bytes: int, port=None) -> str:
    """The planner's --target: the architecture port's (the ELF's: riscv32's 4-byte enums give
    TFLM other struct sizes than Arm's), else by pointer size (4: cortex-m, 8: host)."""
    if port is not None:
        return port.planner_target
    return "cortex-m" if pointer_bytes == 4 else "host"


def run_planner_on_bytes(tool: str | None, data: bytes, pointer_bytes: int, arena_size: int | None = None,
                         build_args: list[str] | tuple[str, ...] = (), port=None) -> tuple[dict, str | None]:
    """run_planner on a model held in memory (read from an ELF or a target), for the ABI of the
    port's architecture (else of a target with pointer_bytes-byte pointers); the temporary file is
    always removed."""
    f = tempfile.NamedTemporaryFile(prefix="arenascope-model-", suffix=".tflite", delete=False)
    try:
        f.write(data)
        f.close()
        return run_planner(tool, f.name, target_for(pointer_bytes, port), arena_size=arena_size,
                           build_args=build_args)
    finally:
        f.close()
        os.unlink(f.name)
