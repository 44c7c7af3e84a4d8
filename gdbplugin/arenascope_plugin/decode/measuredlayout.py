"""TFLM's object layout where the firmware's DWARF does not describe TFLM's classes (its TFLM
library built without -g, as prebuilt vendor libraries are; or a class the link dropped): the
revision profile's layouts measured on real builds (tflm_profile.measured, decode/tflm_layouts.py),
used only once everything the firmware's DWARF still describes (the MicroInterpreter, TfLiteTensor,
TfLiteNode, ...) and every vtable's size agree with them. decode/tflm.py's era_of and layout call
it; no object is ever read by a layout that cannot be confirmed (TargetError says why and what to
do). No GDB import.
"""
import copy

from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.errors import TargetError

# What a user with a TFLM built without -g can do when no measured layout fits (every refusal here).
REMEDY = "Rebuild TFLM with -g (only -g: the code does not change), or add the arenascope agent (docs/agent.md)"


def differences(symbols: Symbols, entry: dict, limit: int = 4) -> tuple[list[str], int]:
    """(differences, facts confirmed) between a measured layout and what the firmware's DWARF
    still describes: each described role's size and members, and each vtable's size."""
    era = P.BY_ID[entry["era"]]
    diffs, confirmed = [], 0
    for role, size in entry["sizes"].items():
        cls = era.cls(role)
        if not cls:
            continue
        got = symbols.type_size(cls)
        if got is None:
            continue
        if got != size:
            diffs.append(f"sizeof({cls}) is {got} B, measured {size} B")
            continue
        confirmed += 1
        keys = {**entry["offsets"].get(role, {}), **{k: v[0] for k, v in entry["optional"].get(role, {}).items()}}
        names = {m: k for k in keys if (m := era.member(role, k))}
        found = symbols.members(cls, list(names)) or {}
        for name, key in names.items():
            if name not in found:
                if key in entry["offsets"].get(role, {}):
                    diffs.append(f"{cls} has no member {name}")
            elif found[name][0] != keys[key]:
                diffs.append(f"{cls}::{name} is at +{found[name][0]}, measured +{keys[key]}")
            else:
                confirmed += 1
    classes = P.vtable_classes(era)
    for cls, (_, size) in symbols.vtables(classes.values()).items():
        role = next(r for r, c in classes.items() if c == cls)
        want = entry["vtables"].get(role)
        if want is not None and size != want:
            diffs.append(f"vtable for {cls} is {size} B, measured {want} B")
        elif want is not None:
            confirmed += 1
    return diffs[:limit], confirmed


def era_of(symbols: Symbols, candidates: list[P.Era]) -> P.Era:
    """The one era among `candidates` whose measured layout for the firmware's ABI agrees with
    everything its DWARF still describes. TargetError, saying why for each, when none or several
    do: the layout cannot be confirmed, and the plugin reads no object by a guess."""
    abi = symbols.abi()
    fits, why = [], []
    for era in candidates:
        entry = P.measured(era, abi)
        if entry is None:
            why.append(f"{era.id}: not measured on {abi or 'this ABI'}")
            continue
        diffs, _ = differences(symbols, entry)
        if diffs:
            why.append(f"{era.id}: " + "; ".join(diffs))
        else:
            fits.append(era)
    if len(fits) == 1:
        return fits[0]
    classes = ", ".join(sorted({P.short(e.cls_of(r)) for e in candidates for r in (P.MICRO_ALLOCATOR,
                                                                                P.ARENA_ALLOCATOR, P.GRAPH)}))
    head = ("agentless mode: this firmware's TFLM library has no debug information (its DWARF declares "
            f"{classes} without describing them: TFLM built without -g, as prebuilt vendor libraries are)")
    if fits:
        raise TargetError(f"{head}, and the layouts arenascope measured for TFLM "
                          f"{' and '.join(e.id for e in fits)} both fit it: which TFLM it is cannot be told. "
                          + REMEDY)
    raise TargetError(f"{head}, and no layout arenascope measured fits it ({'; '.join(why)}; measured: "
                      f"{P.measured_list()}). " + REMEDY)


def fill(symbols: Symbols, lay, roles: list[str]) -> None:  # lay: a decode.tflm.Layout
    """Fills in `lay` the roles the firmware's DWARF does not describe (its TFLM library built
    without -g: the classes with vtables are only declared there; or a class the link dropped) from
    the era's layout measured on a real build for the firmware's ABI (tflm_profile.measured), once
    everything the DWARF still describes (the MicroInterpreter, TfLiteTensor, TfLiteNode, ...) and
    every vtable's size agree with it. TargetError otherwise: no object is read by a layout that
    cannot be confirmed."""
    era = lay.era
    undescribed = list(dict.fromkeys(era.cls(r) for r in roles if era.cls(r)))
    entry = P.measured(era, symbols.abi())
    what = (f"agentless mode: the firmware's debug information does not describe {', '.join(undescribed)} "
            f"({era.describe()}; TFLM's library built without -g, as prebuilt vendor libraries are, or the class "
            "not linked)")
    if entry is None:
        raise TargetError(f"{what}, and arenascope has no layout of this TFLM measured on {symbols.abi() or 'its ABI'} "
                          f"(measured: {P.measured_list()}). " + REMEDY)
    diffs, confirmed = differences(symbols, entry)
    missing = [era.cls(r) for r in roles if (r in P.SIZED and r not in entry["sizes"]) or
               (r in P.REQUIRED and r not in entry["offsets"])]
    if diffs or missing:
        raise TargetError(f"{what}, and arenascope's layout measured on TFLM {entry['measured_on']} does not fit "
                          f"it: {'; '.join(diffs + [f'it does not hold {c}' for c in missing])} (a TFLM between the "
                          "commits arenascope measured). " + REMEDY)
    entry = copy.deepcopy(entry)
    for role in roles:
        for table in ("offsets", "member_sizes"):
            if role in entry[table]:
                getattr(lay, table)[role] = entry[table][role]
        if role in entry["sizes"]:
            lay.sizes[role] = entry["sizes"][role]
    for role in P.OPTIONAL:  # the optional members of classes described only by the measurement
        if role not in lay.optional and role in entry["optional"] and symbols.type_size(era.cls(role) or "") is None:
            lay.optional[role] = dict(entry["optional"][role])
    for role in P.SIZED_IF_PRESENT:
        if role not in lay.sizes and role in entry["sizes"]:
            lay.sizes[role] = entry["sizes"][role]
    if P.ARENA_ALLOCATOR in roles:
        lay.saba_nonpersistent_base, lay.saba_persistent_base = entry["bases"]
    lay.measured, lay.undescribed, lay.confirmed = f"{entry['measured_on']} ({entry['abi']})", undescribed, confirmed
