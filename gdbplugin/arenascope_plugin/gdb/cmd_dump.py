"""`arena dump load FILE@ADDR ... [--registers FILE]`, `arena dump forget`: read a RAM dump instead
of the inferior (a post-mortem of a board that left only its RAM; docs/hardfault.md)."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.acquire import dumped
from arenascope_plugin.acquire.dump import DumpError
from arenascope_plugin.acquire.gdbtarget import GdbSymbols
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write


class DumpCommand(Sub):
    """Read a RAM dump instead of the target: a post-mortem from the dump and the ELF alone.
After `arena dump load`, arena info, check, fault, snapshot, regions, map, stack, whereis, plan
read the dump's bytes (the ELF's symbols and types still come from GDB's loaded file; no target
needs to be connected) and say so on their first line, until `arena dump forget`.
FILE@ADDR is a raw binary whose first byte was at ADDR (OpenOCD `dump_image`, GDB `dump binary
memory`, J-Link `savebin`); FILE.hex is Intel HEX (its addresses are inside). Give several for
several ranges; they must not overlap. --registers FILE: the core's registers at the crash, as
GDB's `info registers` printed them (or a JSON object {"pc": "0x...", ...}); without it they are
unknown and the fault comes from the agent's fault record in the dump. Reads outside the dump
are said to be unreadable. Nothing is written anywhere: the dump files are only read.

Usage: arena dump load FILE@ADDR|FILE.hex [...] [--registers FILE]
       arena dump forget     read the inferior again
       arena dump            what is loaded"""
    sub = "dump"

    def add_arguments(self, parser):
        parser.add_argument("action", nargs="?", default="status", choices=("load", "forget", "status"))
        parser.add_argument("files", nargs="*", metavar="FILE@ADDR", help="raw binaries at addresses, or .hex files")
        parser.add_argument("--registers", metavar="FILE", help="GDB's `info registers` output at the crash, or JSON")

    def run(self, args):
        if args.action != "load" and (args.files or args.registers):
            raise TargetError(f"`arena dump {args.action}` takes no files: `arena dump load FILE@ADDR ...`")
        if args.action == "forget":
            had = framework.loaded_dump() is not None
            framework.set_dump(None)
            write(["arena dump: forgotten; commands read the target again" if had else "arena dump: none loaded"])
            return
        if args.action == "status":
            found = framework.loaded_dump()
            write([f"arena dump: {found.banner}" if found else
                   "arena dump: none loaded; commands read the target (`arena dump load FILE@ADDR` reads a dump)"])
            return
        if not args.files:
            raise TargetError("give the dump: `arena dump load FILE@ADDR` (a raw binary and the address of its "
                              "first byte) or FILE.hex")
        progspace = gdb.current_progspace()
        if not (progspace and progspace.filename):
            raise TargetError("no ELF loaded: load the firmware's ELF first (`file fw.elf`): its symbols say what "
                              "the dump's bytes are")
        try:
            found = dumped.open_dump(args.files, args.registers, GdbSymbols())
        except DumpError as exc:
            before = framework.loaded_dump()
            raise TargetError(str(exc) + (f"; the dump loaded before is still what arena commands read "
                                          f"({before.reader.describe()}): `arena dump forget` drops it"
                                          if before is not None else "")) from None
        framework.set_dump(found)
        write([f"arena dump: loaded; {found.banner}"] + [f"arena dump: warning: {w}" for w in found.warnings]
              + ["arena dump: arena commands read it until `arena dump forget`"])
