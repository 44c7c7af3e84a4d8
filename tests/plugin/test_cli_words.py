"""The standalone tool gives the pipeline's GDB advice as its own options (cli.for_the_tool):
`set arena planner-path P` is `--planner P` there. Expected texts are written here from the
tool's --help (cli._common's option names)."""
import argparse

import pytest

from arenascope_plugin import cli
from arenascope_plugin.acquire import planner


def test_settings_advice_becomes_the_tools_options():
    assert cli.for_the_tool("or `set arena planner-path /path/to/arenascope-plan`") == \
        "or `--planner /path/to/arenascope-plan`"
    assert cli.for_the_tool("check `show arena descriptor-address`, or `set arena descriptor-address ADDR`") == \
        "check the --descriptor-address option, or `--descriptor-address ADDR`"
    # GDB-only settings stay as they are (the tool has no option for them)
    assert cli.for_the_tool("`set arena scan-range START END`") == "`set arena scan-range START END`"


def test_every_option_named_is_one_the_tool_has():
    ap = argparse.ArgumentParser()
    cli._common(ap)  # pylint: disable=protected-access
    flags = {s for a in ap._actions for s in a.option_strings}  # pylint: disable=protected-access
    assert set(cli.OPTION_OF_SETTING.values()) <= flags


def test_the_planner_not_found_error_reads_as_the_tools():
    with pytest.raises(planner.PlannerError) as exc:
        planner.run_planner(None, "model.tflite")
    text = cli.for_the_tool(str(exc.value))
    assert "`--planner /path/to/arenascope-plan`" in text and "set arena" not in text, text
