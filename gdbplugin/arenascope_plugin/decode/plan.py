"""The planner tool's JSON (schema acquire.planner.SCHEMA) as a decode Arena, so that `arena plan
--model FILE` draws a model's plan with the same chart as a target's."""
from arenascope_plugin.acquire.planner import SCHEMA, PlannerError, printable
from arenascope_plugin.decode.descriptor import Arena, Region


def arena_from_plan(doc):
    """The tool's TFLM-greedy plan as an Arena of planned regions: offset = the buffer's offset in
    the head, lifetime = its inclusive scopes, head = TFLM's head. Base address 0: a model has no
    target address. PlannerError when the document lacks what the schema promises."""
    try:
        return _arena_from_plan(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PlannerError(f"the planner's JSON does not follow \"{SCHEMA}\" ({type(e).__name__}: {e}): "
                           "rebuild arenascope-plan with this plugin") from None


def _arena_from_plan(doc):
    tensors = {(sg["index"], t["index"]): t for sg in doc["subgraphs"] for t in sg["tensors"]}
    regions = []
    for b in doc["buffers"]:
        t = tensors.get((b["subgraph"], b["tensor"])) if b["tensor"] >= 0 else None
        regions.append(Region(index=len(regions), offset=b["offset"], size=b["size"], id=b["id"],
                              kind="scratch" if b["tensor"] < 0 else "tensor", flags=0,
                              first_use=b["first"], last_use=b["last"], name=printable(b["name"]),
                              shape=t["shape"] if t else None, dtype=t["type"] if t else None))
    head = doc["plans"]["tflm-greedy"]["head_bytes"]
    return Arena(index=0, base_addr=0, regions_addr=0, model_addr=0, size=head, head=head, temp=head, tail=head,
                 model_size=doc["file_bytes"], canary=None, alignment=16, region_count=len(regions),
                 region_capacity=len(regions), flags=0, regions=regions)
