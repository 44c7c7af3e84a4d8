/*
 * arenascope: opt-in GDB auto-load of the plugin from the firmware's own ELF.
 *
 * What it does
 *   Each macro adds one entry to the ELF section `.debug_gdb_scripts`, which GDB reads when it
 *   loads the ELF (GDB manual, "The .debug_gdb_scripts section"; the entry kinds are binutils'
 *   include/gdb/section-scripts.h). An entry is one byte of kind, then NUL-terminated text:
 *     ARENASCOPE_GDB_AUTOLOAD()          kind 4 (SECTION_SCRIPT_ID_PYTHON_TEXT): an inline Python
 *                                        script, its first line its name ("arenascope"), that
 *                                        imports the pip-installed plugin and loads it
 *                                        (arenascope_plugin.gdb.load()); when GDB's Python cannot
 *                                        import it, it prints one line saying so and what to do.
 *     ARENASCOPE_GDB_SCRIPT_FILE(path)   kind 1 (SECTION_SCRIPT_ID_PYTHON_FILE): a script file GDB
 *                                        sources, e.g. "/path/to/arenascope/gdbplugin/arenascope.py"
 *                                        (a checkout, no install). A relative path is looked for in
 *                                        GDB's current directory, then along its source path
 *                                        (`directory`), never in the compilation directory.
 *   Use one of them once, at file scope, in a source file the firmware links directly (main.c; an
 *   object only in a static library is not linked unless something references it):
 *       #include "arenascope/gdb_autoload.h"
 *       ARENASCOPE_GDB_AUTOLOAD();
 *   or build the agent with -DARENASCOPE_EMBED_GDB_SCRIPT=1 (CMake: ARENASCOPE_EMBED_GDB_SCRIPT=ON),
 *   and src/arenascope_agent.c emits ARENASCOPE_GDB_AUTOLOAD() itself. The section's flags are "MS"
 *   (mergeable strings), so the same entry from several files is kept once.
 *
 * Cost: no flash, no RAM. The section is not allocated (no "a" flag): the linker places it, as
 *   an orphan, among the non-loaded sections (like .comment and .debug_*), outside every memory
 *   region and load segment, and --gc-sections keeps it (the linker does not collect non-allocated
 *   sections). Only the ELF grows, by the entry's bytes; the image written to flash is unchanged
 *   (tests/integration/test_python_package.py checks both with readelf). A linker script that
 *   names .debug_gdb_scripts must keep it non-allocated: `.debug_gdb_scripts 0 : { KEEP(*(.debug_gdb_scripts)) }`.
 *
 * GDB only runs it when the file is trusted: an inline entry when the ELF's path is under GDB's
 *   `auto-load safe-path`, a file entry when the script's path is. Add the folder in ~/.gdbinit
 *   or with -iex (`add-auto-load-safe-path DIR`); without it GDB prints its own warning ("auto-loading
 *   has been declined by your `auto-load safe-path'") and loads nothing. `info auto-load
 *   python-scripts` lists the entry and whether it was loaded. docs/gdb-commands.md, "Loading".
 *
 * GCC or Clang (basic asm at file scope). `%progbits`, not the manual's `@progbits`: `@` starts a
 * comment in ARM assembly.
 */
#ifndef ARENASCOPE_GDB_AUTOLOAD_H
#define ARENASCOPE_GDB_AUTOLOAD_H

#define ARENASCOPE_GDB_SCRIPTS_SECTION_ ".pushsection .debug_gdb_scripts, \"MS\", %progbits, 1\n"
/* One line of an inline script: the assembler turns the \n escape into the newline byte. */
#define ARENASCOPE_GDB_LINE_(text) ".ascii \"" text "\\n\"\n"

/* One assembler directive, one script line, per line: */
/* clang-format off */
/* kind 1: the Python script file at `path` (a string literal). */
#define ARENASCOPE_GDB_SCRIPT_FILE(path)                                                                               \
    __asm__(ARENASCOPE_GDB_SCRIPTS_SECTION_                                                                            \
            ".byte 1\n"                                                                                                \
            ".asciz \"" path "\"\n"                                                                                    \
            ".popsection\n")

/* kind 4: the inline loader of the installed package (pip install ./gdbplugin). */
#define ARENASCOPE_GDB_AUTOLOAD()                                                                                      \
    __asm__(ARENASCOPE_GDB_SCRIPTS_SECTION_                                                                            \
            ".byte 4\n"                                                                                                \
            ARENASCOPE_GDB_LINE_("arenascope")                                                                         \
            ARENASCOPE_GDB_LINE_("try:")                                                                               \
            ARENASCOPE_GDB_LINE_("    from arenascope_plugin import gdb as arenascope_gdb")                            \
            ARENASCOPE_GDB_LINE_("except ModuleNotFoundError as exc:")                                                 \
            ARENASCOPE_GDB_LINE_("    print('arenascope: the ELF asks for the plugin but GDB cannot import it ('"      \
                                 " + str(exc) + '): pip install ./gdbplugin, and for a venv start GDB with"            \
                                 " PYTHONPATH=VENV/lib/python3.11/site-packages (docs/gdb-commands.md)')")             \
            ARENASCOPE_GDB_LINE_("else:")                                                                              \
            ARENASCOPE_GDB_LINE_("    arenascope_gdb.load()")                                                          \
            ".byte 0\n"                                                                                                \
            ".popsection\n")
/* clang-format on */

#endif /* ARENASCOPE_GDB_AUTOLOAD_H */
