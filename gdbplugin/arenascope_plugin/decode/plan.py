"""The planner tool's JSON (schema acquire.planner.SCHEMA, docs/planner-schema.json) as a decode
Arena: the arena `arenascope-plan --snapshot` writes, so that `arena plan --model FILE` draws a
model's plan with the same chart as a target's (tests/plugin/test_plan_snapshot_parity.py)."""
from arenascope_plugin.acquire.planner import SCHEMA, PlannerError, printable
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Arena, Band, Region


def scratch_label(index: int, op: int | None = None, what: str | None = None) -> str:
    """A scratch buffer's label, as the planner names it: "scratch K (op N WHAT)" (the planner
    JSON's buffers[].name), "scratch K" when its request is not known."""
    return f"scratch {index}" + (f" (op {op} {what})" if op is not None else "")


def arena_from_plan(doc: dict) -> Arena:
    """The tool's predicted arena as an Arena, the one `arenascope-plan --snapshot` writes: the
    recommended size at base address 0 (a model has no target address); TFLM's greedy plan of the
    head as planned regions (offset = the buffer's offset, lifetime = its inclusive scopes, id its
    tensor or scratch index, as the agent publishes them), then every tail region where the
    replay puts it (named by its label, a variable tensor flagged). No canary band: a prediction
    has none. PlannerError when the document lacks what the schema promises."""
    try:
        return _arena_from_plan(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PlannerError(f"the planner's JSON does not follow \"{SCHEMA}\" ({type(e).__name__}: {e}): "
                           "rebuild arenascope-plan with this plugin") from None


def _arena_from_plan(doc):
    tensors = {(sg["index"], t["index"]): t for sg in doc["subgraphs"] for t in sg["tensors"]}
    main = doc["subgraphs"][0]
    bits = {name: bit for bit, name in abi.REGION_FLAGS.items()}
    regions: list[Region] = []
    for b in doc["buffers"]:
        t = tensors.get((b["subgraph"], b["tensor"])) if b["tensor"] >= 0 else None
        flags = bits["offline"] if b["offline"] else 0
        if t is not None and b["subgraph"] == 0:
            flags |= (bits["input"] if b["tensor"] in main["inputs"] else 0) | \
                (bits["output"] if b["tensor"] in main["outputs"] else 0)
        # A tensor by its name in the model (none: its index labels it); a scratch buffer by its label.
        name = (t["name"] or None) if t is not None else b["name"]
        regions.append(Region(index=len(regions), offset=b["offset"], size=b["size"],
                              id=b["tensor"] if b["tensor"] >= 0 else b["scratch"],
                              kind="scratch" if b["tensor"] < 0 else "tensor", flags=flags,
                              first_use=b["first"], last_use=b["last"], name=printable(name) if name else None,
                              shape=t["shape"] if t else None, dtype=t["type"] if t else None))
    for t in doc["tail"]["regions"]:
        regions.append(Region(index=len(regions), offset=t["offset"], size=t["size"],
                              id=t["tensor"] if t["tensor"] >= 0 else abi.ID_NONE, kind=t["kind"],
                              flags=bits["variable"] if t["tensor"] >= 0 else 0, first_use=abi.USE_NONE,
                              last_use=abi.USE_NONE, name=printable(t["what"])))
    head = doc["plans"]["tflm-greedy"]["head_bytes"]
    size = doc["arena"]["recommended_bytes"]
    no_band = Band(low_addr=0, high_addr=0, touched_lo=abi.NONE, touched_hi=abi.NONE)
    return Arena(index=0, base_addr=0, regions_addr=0, model_addr=0, size=size, head=head, temp=head,
                 tail=size - doc["tail"]["bytes"], model_size=doc["file_bytes"], canary=no_band, alignment=16,
                 region_count=len(regions), region_capacity=len(regions), flags=0, regions=regions)
