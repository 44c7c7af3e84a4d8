"""tools/footprint.py's budgets (issue 39): every core the agent supports has its architecture's
budget, the Cortex-M4's is the one the single-core check enforces, and docs/agent.md states each."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("footprint", ROOT / "tools" / "footprint.py")
footprint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(footprint)


def test_every_core_has_its_architectures_budget_and_the_docs_state_it():
    assert set(footprint.ARCH) == set(footprint.CORES)
    assert set(footprint.ARCH.values()) == set(footprint.BUDGETS)
    assert footprint.BUDGETS["ARMv7E-M"][0] == (footprint.FLASH_BUDGET, footprint.RAM_BUDGET)
    doc = (ROOT / "docs" / "agent.md").read_text()
    for arch, ((flash, ram), (fflash, fram)) in footprint.BUDGETS.items():
        assert f"| {arch} | {flash} / {ram} | {fflash} / {fram} |" in doc, arch
