#include "arenascope/planner/elf_budget.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace arenascope::planner {

namespace {

bool executable(const std::filesystem::path &p)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_arenascope_tool(const std::string &self)
{
    if (const char *env = std::getenv("ARENASCOPE_TOOL"); env && *env)
        return executable(env) ? std::string(env) : std::string();
    const std::filesystem::path dir = std::filesystem::path(self).parent_path();
    for (const auto &candidate : {dir / "arenascope", dir / ".." / ".." / "gdbplugin" / "arenascope"})
        if (executable(candidate)) return candidate.lexically_normal().string();
    if (const char *path = std::getenv("PATH")) {
        const std::string all = path;
        for (size_t start = 0; start <= all.size();) {
            const size_t end = all.find(':', start);
            const std::string part = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!part.empty() && executable(std::filesystem::path(part) / "arenascope"))
                return (std::filesystem::path(part) / "arenascope").string();
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    return "";
}

std::vector<std::string> elf_budget_argv(const std::string &tool, const std::string &self, const std::string &elf,
                                         const std::string &model, bool json,
                                         const std::vector<std::pair<std::string, std::string>> &hints)
{
    std::vector<std::string> out = {tool, "budget", "--elf", elf, "--model", model, "--planner", self};
    for (const auto &[option, value] : hints) {
        out.push_back(option);
        out.push_back(value);
    }
    if (json) out.push_back("--json");
    return out;
}

int run_elf_budget(const std::string &elf, const std::string &model, bool json,
                   const std::vector<std::pair<std::string, std::string>> &hints)
{
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    const std::string tool = find_arenascope_tool(self);
    if (tool.empty()) {
        std::fprintf(stderr, "arenascope-plan: --elf needs the arenascope tool (gdbplugin/arenascope in the "
                             "repository, or `arenascope` on PATH after pip install ./gdbplugin; ARENASCOPE_TOOL "
                             "names it): it reads the ELF\n");
        return 2;
    }
    const std::vector<std::string> args = elf_budget_argv(tool, self, elf, model, json, hints);
    std::vector<char *> argv;
    for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    ::execv(tool.c_str(), argv.data());
    std::fprintf(stderr, "arenascope-plan: cannot run %s: %s\n", tool.c_str(), std::strerror(errno));
    return 2;
}

}  // namespace arenascope::planner
