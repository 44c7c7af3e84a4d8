"""docs/agent-abi.md is the layout users read: its tables must say what the golden fixture says."""
import re

from harness import ABI, ROOT

SECTIONS = {"Header": "descriptor", "Descriptor end": "descriptor_end", "Band": "band", "Arena entry": "arena",
            "Region entry": "region"}


def doc_tables():
    text = (ROOT / "docs" / "agent-abi.md").read_text()
    tables = {}
    for heading, body in re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        key = next((v for k, v in SECTIONS.items() if heading.startswith(k)), None)
        if key is None:
            continue
        rows = re.findall(r"^\| (\d+) \| (\d+) \| [^|]+ \| ([^|]+) \| (\w+) \|", body, re.M)
        tables[key] = [(int(a), int(b), t.strip(), f) for a, b, t, f in rows]
    return tables


def test_every_field_in_the_docs_has_the_fixture_offsets_and_type():
    tables = doc_tables()
    assert set(tables) == set(SECTIONS.values())
    for type_name, rows in tables.items():
        declared = ABI["types"][type_name]
        assert [f for *_, f in rows] == [f for f, _ in declared], type_name
        for (off4, off8, doc_type, field), (_, fixture_type) in zip(rows, declared, strict=True):
            assert off4 == ABI["layouts"]["4"][type_name][field], f"{type_name}.{field} (addr 4)"
            assert off8 == ABI["layouts"]["8"][type_name][field], f"{type_name}.{field} (addr 8)"
            assert doc_type == fixture_type, f"{type_name}.{field} type"


def test_the_fault_record_table_has_the_fixture_offsets_types_and_sizes():
    text = (ROOT / "docs" / "agent-abi.md").read_text()
    heading, body = next((h, b) for h, b in re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
                         if h.startswith("Fault record"))
    fixture = ABI["fault_record"]
    assert heading.endswith(f"version {fixture['version']}"), heading
    rows = re.findall(r"^\| (\d+) \| (\d+) \| ([^|]+) \| ([^|]+) \| (\w+) \|", body, re.M)
    assert [f for *_, f in rows] == [f for f, _ in fixture["fields"]]
    sizes = {"u16": "2", "u32": "4", "u32[8]": "32", "addr": "addr"}
    for (off4, off8, size, doc_type, field), (_, fixture_type) in zip(rows, fixture["fields"], strict=True):
        assert int(off4) == fixture["layouts"]["4"][field], f"{field} (addr 4)"
        assert int(off8) == fixture["layouts"]["8"][field], f"{field} (addr 8)"
        assert doc_type.strip() == fixture_type and size.strip() == sizes[fixture_type], field
    for addr_size in ("4", "8"):
        assert f"**{fixture['layouts'][addr_size]['_size']} bytes**" in body


def test_readme_and_docs_links_resolve_and_ci_runs_the_readmes_test_command():
    import re
    docs = [ROOT / "README.md", ROOT / "viewer" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [(d.name, link) for d in docs for link in re.findall(r"\]\(([^)#\s]+)", d.read_text())
              if not link.startswith("http") and not (d.parent / link).exists()]
    assert not broken, broken
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^(bash tools/\w+\.sh)\s", readme, re.M)
    assert commands[:2] == ["bash tools/demo.sh", "bash tools/test.sh"], commands
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1].strip() == "exec bash tools/test.sh"
    for page in ("user-guide.md", "architecture.md", "agent-abi.md", "snapshot-schema.md", "hardfault.md",
                 "arena-budget.md"):
        assert f"docs/{page}" in readme, page
