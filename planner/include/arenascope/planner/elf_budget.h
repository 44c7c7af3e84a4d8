// arenascope-plan --elf FW.elf MODEL: the stack's worst case and the RAM map before flashing.
// What an ELF means (its code, sections, symbols) is the GDB plugin's (gdbplugin/), so the planner
// runs the plugin's standalone tool, `arenascope budget --elf FW.elf --model MODEL --planner SELF
// [--json]` (docs/stack-budget.md), in its own place: its output and its exit status are the
// answer (0 the rule holds; 4, 5 the arena (this planner's gate); 6 the stack can reach the arena).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace arenascope::planner {

// Where the `arenascope` tool is, first found of: $ARENASCOPE_TOOL; beside this program (an
// install); ../../gdbplugin/arenascope from it (this repository's build tree); `arenascope` on PATH.
// "" when none is found. self: this program's path (/proc/self/exe).
std::string find_arenascope_tool(const std::string &self);

// The argument vector run_elf_budget executes (tool first); hints: the user's --bound and --calls,
// as (option, value) pairs, passed on as given.
std::vector<std::string> elf_budget_argv(const std::string &tool, const std::string &self, const std::string &elf,
                                         const std::string &model, bool json,
                                         const std::vector<std::pair<std::string, std::string>> &hints);

// Replaces this process with the tool (execv); returns only when that fails, with exit status 2
// after saying why on stderr.
int run_elf_budget(const std::string &elf, const std::string &model, bool json,
                   const std::vector<std::pair<std::string, std::string>> &hints);

}  // namespace arenascope::planner
