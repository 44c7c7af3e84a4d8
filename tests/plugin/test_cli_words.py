"""The standalone tool words the pipeline's advice (remedy.Remedy) as its own options:
`set arena planner-path P` in GDB is `--planner P` there. Expected texts are written here from the
tool's --help (its option names)."""
import argparse

import pytest

from arenascope_plugin import cli, remedy, settings_table
from arenascope_plugin.acquire import planner
from arenascope_plugin.remedy import Remedy


def test_a_remedy_is_worded_per_front_end():
    planner_path, address = Remedy("planner-path", "/path/to/arenascope-plan"), Remedy("descriptor-address", show=True)
    text = f"or {planner_path:q}; check {address:q}"
    assert text == "or `set arena planner-path /path/to/arenascope-plan`; check `show arena descriptor-address`"
    with remedy.use(cli.tool_words):
        text = f"or {planner_path:q}; check {address:q}"
        assert text == "or `--planner /path/to/arenascope-plan`; check the --descriptor-address option"
        assert f"{Remedy('scan-range', 'START END'):q}" == "`--scan-range START END`"
        assert f"CPU cortex-m4: {Remedy('cpu')}" == "CPU cortex-m4: --cpu"
    assert f"{Remedy('scan-range', 'START END'):q}" == "`set arena scan-range START END`"  # GDB's again after


def test_every_remedy_the_pipeline_gives_names_a_setting_of_the_table():
    """Each Remedy(...) in the plugin's code names a setting the table has (so both front ends word it)."""
    import pathlib
    import re
    root = pathlib.Path(cli.__file__).parent
    named = {m.group(1) for f in root.rglob("*.py") for m in re.finditer(r"Remedy\(['\"]([\w-]+)['\"]", f.read_text())}
    assert {"planner-path", "stack-range", "scan-range", "descriptor-address", "model", "memory", "cpu", "kernels",
            "fault-sp", "stack-paint-pattern"} <= named
    assert named <= set(settings_table.BY_NAME)


def test_every_option_a_remedy_names_is_one_the_tool_has():
    ap = argparse.ArgumentParser()
    cli._common(ap)  # pylint: disable=protected-access
    flags = {s for a in ap._actions for s in a.option_strings}  # pylint: disable=protected-access
    for s in settings_table.TABLE:
        words, _ = cli.tool_words(Remedy(s.name, "X"))
        assert words.split()[0] in flags, words


def test_the_planner_not_found_error_reads_as_the_tools():
    with pytest.raises(planner.PlannerError) as exc, remedy.use(cli.tool_words):
        planner.run_planner(None, "model.tflite")
    text = str(exc.value)
    assert "`--planner /path/to/arenascope-plan`" in text and "set arena" not in text, text
