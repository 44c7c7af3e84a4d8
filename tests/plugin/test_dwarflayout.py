"""dwarflayout's member locations (the DWARF walk itself is checked against GDB's layout on a real TFLM
ELF in tests/integration/test_agentless_tflm.py, when one is named)."""
from types import SimpleNamespace

import pytest

from arenascope_plugin.acquire import dwarflayout


def die(value):
    return SimpleNamespace(attributes={"DW_AT_data_member_location": SimpleNamespace(value=value)})


def test_member_locations_as_constants_and_as_dwarf2_expressions():
    assert dwarflayout._location(die(108)) == 108
    assert dwarflayout._location(die([0x23, 0x6C])) == 108               # DW_OP_plus_uconst 108
    assert dwarflayout._location(die([0x23, 0xE5, 0x8E, 0x26])) == 624485  # ULEB128, DWARF spec's example
    assert dwarflayout._location(SimpleNamespace(attributes={})) == 0
    with pytest.raises(dwarflayout.LayoutError):
        dwarflayout._location(die([0x10, 0x01]))                           # DW_OP_constu: not a member offset
