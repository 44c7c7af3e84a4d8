"""The verdict kinds live once (analyse/verdicts.py): the snapshot schema's enums are that
registry, and no module spells a kind as a string literal of its own (issue 33)."""
import json
import pathlib
import re

from arenascope_plugin.analyse import verdicts

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())


def _enums(node, found):
    if isinstance(node, dict):
        kind = node.get("properties", {}).get("kind", {})
        if "enum" in kind and "headline" in node.get("properties", {}):
            found.append(kind["enum"])
        for v in node.values():
            _enums(v, found)
    elif isinstance(node, list):
        for v in node:
            _enums(v, found)
    return found


def test_the_schemas_enums_are_the_registry():
    fault_kinds, tflm_kinds = _enums(SCHEMA["properties"]["fault"], []), _enums(SCHEMA["properties"]["tflm"], [])
    assert fault_kinds == [list(verdicts.KINDS)]
    assert tflm_kinds == [list(verdicts.POSTMORTEM)]
    assert len(set(verdicts.KINDS)) == len(verdicts.KINDS)


def test_no_module_spells_a_kind_itself():
    plugin = ROOT / "gdbplugin" / "arenascope_plugin"
    spelled = re.compile("|".join(re.escape(f'"{k}"') for k in verdicts.KINDS if k not in ("none", "unknown")))
    offenders = [f"{p.relative_to(plugin)}:{n}" for p in plugin.rglob("*.py") if p.name != "verdicts.py"
                 for n, line in enumerate(p.read_text().splitlines(), 1) if spelled.search(line)]
    assert not offenders, offenders


def test_every_check_rule_is_in_the_registry_and_documented():
    """The rules the plugin's Check()s and the planner's snapshot name are verdicts.RULES, and the
    snapshot's docs list each one."""
    plugin = ROOT / "gdbplugin" / "arenascope_plugin"
    used = {m for p in plugin.rglob("*.py") for m in re.findall(r'Check\("([a-z-]+)"', p.read_text())}
    used |= {m for p in (ROOT / "planner" / "src").glob("*.cpp")
             for m in re.findall(r'\{"rule", "([a-z-]+)"\}', p.read_text())}
    used |= {m for p in plugin.rglob("*.py") for m in re.findall(r'"rule": "([a-z-]+)"', p.read_text())}
    assert used and used <= set(verdicts.RULES), sorted(used - set(verdicts.RULES))
    assert set(verdicts.RULES) <= used, sorted(set(verdicts.RULES) - used)  # no rule the code never writes
    doc = (ROOT / "docs" / "snapshot-schema.md").read_text()
    missing = [r for r in verdicts.RULES if f"`{r}`" not in doc]
    assert not missing, missing
