// arenascope-plan: the arena budget of a .tflite model before flashing.
//   arenascope-plan MODEL.tflite          budget table
//   arenascope-plan --json MODEL.tflite   the same as JSON (what the GDB plugin reads)
//   arenascope-plan --version             the version (VERSION at the repository root)
// Exit status: as --help says (0 ok; 1 the model cannot be read or planned, or TFLM would reject
// it, the budget still printed; 2 bad usage; 3-6 the verdicts of --write-offline-plan,
// --arena-size and --elf: docs/arena-budget.md, "Exit status").
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ext/stdio_filebuf.h>

#include "arenascope/planner/elf_budget.h"
#include "arenascope/planner/gate.h"
#include "arenascope/planner/revisions.h"
#include "arenascope/planner/rewrite.h"
#include "arenascope/planner/two_arena.h"
#include "arenascope/planner/writers.h"
#include "arenascope/snapshot_limits.h"
#include "arenascope/write_whole.h"

#ifndef ARENASCOPE_VERSION  // the build defines it from VERSION; a compile outside CMake says so
#define ARENASCOPE_VERSION "unknown"
#endif

namespace {
using arenascope::planner::printable;

// --arena-size: ASCII decimal (no sign, no leading zero) or 0x hex, 1..2^32-1; 0 when it is not.
int64_t parse_arena_size(const char *text)
{
    const bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    if (!*digits || (!hex && digits[0] == '0') || std::strlen(digits) > 10) return 0;
    int64_t v = 0;
    for (const char *c = digits; *c; ++c) {
        int d;
        if (*c >= '0' && *c <= '9')
            d = *c - '0';
        else if (hex && *c >= 'a' && *c <= 'f')
            d = *c - 'a' + 10;
        else if (hex && *c >= 'A' && *c <= 'F')
            d = *c - 'A' + 10;
        else
            return 0;
        v = v * (hex ? 16 : 10) + d;
        if (v > 0xffffffffLL) return 0;
    }
    return v;
}

void usage(FILE *to)
{
    std::fprintf(
        to,
        "usage: arenascope-plan [--json | --header] [--snapshot FILE] [--target T] [--adapter]\n"
        "                       [--tflm 2026-08|2023-02|2022-09|2022-07|2022-03|auto]\n"
        "                       [--kernels reference|cmsis-nn] [--cpu CPU] [--margin PCT] [--arena-size N]\n"
        "                       [--persistent-size P --non-persistent-size N] [--search-budget N]\n"
        "                       MODEL.tflite\n"
        "       arenascope-plan --write-offline-plan OUT.tflite [--kernels K] [--cpu CPU] [--target T]\n"
        "                       [--adapter] [--margin PCT] [--search-budget N] MODEL.tflite\n"
        "       arenascope-plan --elf FW.elf [--json] [--bound F=N] [--calls C=D,...] MODEL.tflite\n"
        "       arenascope-plan --tflm list\n"
        "       arenascope-plan --version\n"
        "  Reads a TensorFlow Lite model and prints its tensors' lifetimes, TFLM's greedy memory\n"
        "  plan (the non-persistent head of the arena, byte for byte), a better plan and the lower\n"
        "  bound, then replays TFLM's allocations to predict the whole arena AllocateTensors needs.\n"
        "  --json   print the budget as JSON (schema \"%s\", docs/arena-budget.md)\n"
        "  --elf FW.elf  before flashing: the stack's worst case from the firmware's code, the RAM map and\n"
        "           the 1.5 x stack rule with this model's arena (the arenascope tool's `budget`, which it\n"
        "           runs; exit 6 when the stack can reach the arena; docs/stack-budget.md); --bound\n"
        "           FUNCTION=LEVELS and --calls CALLER=CALLEE,... are passed on to it\n"
        "  --header print a C header for firmware: the head plan as arenascope_region_t entries\n"
        "  --snapshot FILE  also write the predicted arena as an arenascope snapshot (the viewer's\n"
        "           input, docs/snapshot-schema.md): arenascope-viewer FILE shows it with no target\n"
        "  --target the ABI of the tail's structs: cortex-m (arm-none-eabi, 1-byte enums; the default),\n"
        "           riscv32 (RISC-V ILP32: TfLiteTensor 40 B), xtensa (ESP32's ILP32, as riscv32) or host\n"
        "           (x86-64)\n"
        "  --tflm REVISION  the TFLM the firmware links: 2026-08 (upstream 90b983c2, the default), 2023-02\n"
        "           (58aa9833f: Arduino, Edge Impulse), 2022-09 (59b39f6cb), 2022-07 (547f8aeab) or 2022-03\n"
        "           (5b3670d82); auto\n"
        "           assumes 2026-08 and says so; named, the output states it (\"tflm\" in --json). Older\n"
        "           revisions: only the kernels checked against their source are exact (docs/arena-budget.md)\n"
        "  --tflm list  print the revisions, one JSON object a line (id, commit, date, description)\n"
        "  --adapter  the firmware uses arenascope's TFLM adapter (its planner lives outside the arena)\n"
        "  --kernels  the kernels the firmware links: reference (the default) or cmsis-nn (TFLM built with\n"
        "           OPTIMIZED_KERNEL_DIR=cmsis_nn); CMSIS-NN's buffers depend on the CPU:\n"
        "  --cpu    cortex-m0|m0plus|m3|m23 (plain C), m4|m7|m33 (DSP), m55|m85 (MVE), with gcc's +nodsp or\n"
        "           +nomve, as arm-none-eabi-gcc's -mcpu implies them (default cortex-m4; a soft-float M55\n"
        "           build is cortex-m55+nomve; only read with --kernels cmsis-nn)\n"
        "  --margin percent added to the minimum arena for the recommended size (default 10, 0..100)\n"
        "  --arena-size N  replay TFLM's allocation in an arena of N bytes (decimal or 0x hex, 1..2^32-1;\n"
        "           its start 16-byte aligned): whether AllocateTensors succeeds, and if not the request that\n"
        "           fails, what TFLM prints, the allocator state it is left in, whether it returns an error,\n"
        "           crashes or hangs, and the shortfall (first in the table; \"replay\" in --json)\n"
        "  --persistent-size P --non-persistent-size N  TFLM's two-arena mode, MicroAllocator::Create(persistent,\n"
        "           P, non_persistent, N): the minimum of each buffer and whether AllocateTensors fits at these\n"
        "           sizes, else which buffer runs out first (\"two_arena\" in --json; --snapshot shows both)\n"
        "  --search-budget N  steps of work the search for a better plan may spend when the best\n"
        "           of orderings misses the lower bound (0..10^12, default %lld; 0: no search); the\n"
        "           same plan on every machine\n"
        "  --write-offline-plan OUT.tflite  write MODEL with the best plan found as TFLM's offline plan\n"
        "           (metadata \"OfflineMemoryAllocation\", replacing any it has, even a broken one; every\n"
        "           other byte kept; an existing OUT, or a link's target, is replaced) and print the head\n"
        "           and arena before and after; nothing is written when the minimum arena would not\n"
        "           shrink (exit status 3)\n"
        "exit status: 0 ok (with --arena-size or two arenas: the model fits); 1 unreadable model, one TFLM\n"
        "would reject, or output that cannot be written; 2 bad usage; 3 --write-offline-plan found no saving\n"
        "(nothing written); 4 the arena given is too small (AllocateTensors returns kTfLiteError); 5 it is\n"
        "too small and TFLM crashes, hangs or corrupts memory (docs/arena-budget.md, \"Exit status\")\n",
        arenascope::planner::kPlanSchema, static_cast<long long>(arenascope::planner::kSearchDefaultBudget));
}
using arenascope::write_whole;  // common/include/arenascope/write_whole.h: the one C++ file writer

// Passes bytes on up to `limit`, then only counts them: a snapshot over the viewer's byte limit
// (common/include/arenascope/snapshot_limits.h) is measured to its end, so its size can be told,
// without being written whole.
class CappedBuf : public std::streambuf {
public:
    CappedBuf(std::streambuf *to, uint64_t limit) : to_(to), limit_(limit) {}
    uint64_t count = 0;
    bool failed = false;

protected:
    std::streamsize xsputn(const char *s, std::streamsize n) override
    {
        if (!failed && count + static_cast<uint64_t>(n) <= limit_) failed = to_->sputn(s, n) != n;
        count += static_cast<uint64_t>(n);
        return n;
    }
    int_type overflow(int_type c) override
    {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        xsputn(&ch, 1);
        return c;
    }

private:
    std::streambuf *to_;
    uint64_t limit_;
};

struct OverLimit {
    uint64_t bytes;
};

// --snapshot: writes what emit prints (and a newline) to `path` whole, if it is within the byte
// limit; returns "" or why it could not write. Throws OverLimit (nothing written) past the limit.
std::string write_snapshot(const char *path, const std::function<void(std::ostream &)> &emit)
{
    uint64_t bytes = 0;
    const std::string failed = write_whole(path, [&](std::ostream &out) {
        CappedBuf cap(out.rdbuf(), arenascope::kMaxSnapshotBytes);
        std::ostream capped(&cap);
        emit(capped);
        capped << "\n";
        bytes = cap.count;
        if (bytes > arenascope::kMaxSnapshotBytes) throw OverLimit{bytes};
        if (cap.failed) out.setstate(std::ios::badbit);
    });
    return failed;
}

// --snapshot FILE: the full snapshot when it is within the viewer's limits (byte for byte what it
// always was), else the compact one (no whitespace, runs of tail allocations coalesced: docs/
// snapshot-schema.md "Compact snapshots"), else a refusal in the words the viewer refuses such a
// file with (snapshot_refusal). Returns the exit status: 0, 1 (not written) or 2 (refused).
int snapshot_file(const char *path, const arenascope::planner::Budget &budget,
                  const std::optional<arenascope::planner::TwoArenaBudget> &two)
{
    using arenascope::kMaxRegions;
    using arenascope::SnapshotLimit;
    const std::string shown = printable(path, false);
    auto refuse = [](const std::string &what, SnapshotLimit limit, uint64_t figure) {
        std::fprintf(stderr, "arenascope-plan: %s\n", arenascope::snapshot_refusal(what, limit, figure).c_str());
        return 2;
    };
    std::string failed;
    try {
        if (two) {  // two arenas: a document of their own, small beside the one arena's streamed regions
            const nlohmann::json doc = arenascope::planner::two_arena_snapshot(budget, *two);
            for (size_t i = 0; i < doc["arenas"].size(); ++i) {
                if (doc["arenas"][i]["regions"].size() > kMaxRegions)
                    return refuse(shown + ": $.arenas[" + std::to_string(i) + "].regions", SnapshotLimit::Regions,
                                  doc["arenas"][i]["regions"].size());
            }
            try {
                failed = write_snapshot(path, [&doc](std::ostream &out) {
                    out << doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
                });
            } catch (const OverLimit &) {
                failed = write_snapshot(path, [&doc](std::ostream &out) {
                    out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                });
            }
        } else {
            size_t regions = 0;
            const auto full = arenascope::planner::budget_snapshot_streamed(budget, false, &regions);
            bool compact = regions > kMaxRegions;
            if (!compact) {
                try {
                    failed = write_snapshot(path, [&full](std::ostream &out) { full.write(out); });
                } catch (const OverLimit &) {
                    compact = true;
                }
            }
            if (compact) {
                const auto small = arenascope::planner::budget_snapshot_streamed(budget, true, &regions);
                if (regions > kMaxRegions)
                    return refuse(shown + ": $.arenas[0].regions", SnapshotLimit::Regions, regions);
                failed = write_snapshot(path, [&small](std::ostream &out) { small.write(out, true); });
            }
        }
    } catch (const OverLimit &over) {
        return refuse(shown, SnapshotLimit::Bytes, over.bytes);
    }
    if (!failed.empty()) {
        std::fprintf(stderr, "arenascope-plan: cannot write the snapshot to %s: %s\n", shown.c_str(), failed.c_str());
        return 1;
    }
    return 0;
}

// --write-offline-plan: the rewrite, written whole (write_whole), then its table.
int write_offline_plan(const char *path, const char *out_path, const arenascope::planner::Abi &abi, int margin,
                       bool adapter, const arenascope::planner::KernelBuild &build, int64_t search_budget)
{
    std::error_code same_error;
    if (std::filesystem::equivalent(out_path, path, same_error)) {
        std::fprintf(stderr, "arenascope-plan: --write-offline-plan %s is the model itself: give another file name\n",
                     printable(out_path, false).c_str());
        return 2;
    }
    try {
        const auto r =
            arenascope::planner::rewrite_offline_plan(path, out_path, abi, margin, adapter, build, search_budget);
        if (!r.refused.empty()) {
            std::fprintf(stderr, "arenascope-plan: %s: %s\n", printable(path, false).c_str(),
                         printable(r.refused, false).c_str());
            return r.no_saving ? 3 : 1;
        }
        const std::string failed = write_whole(out_path, [&r](std::ostream &out) {
            out.write(reinterpret_cast<const char *>(r.bytes.data()), static_cast<std::streamsize>(r.bytes.size()));
        });
        if (!failed.empty()) {
            std::fprintf(stderr, "arenascope-plan: cannot write %s: %s\n", printable(out_path, false).c_str(),
                         failed.c_str());
            return 1;
        }
        std::cout << printable(arenascope::planner::rewrite_table(r, out_path), true);
        if (!std::cout.flush()) {
            std::fprintf(stderr, "arenascope-plan: wrote %s, but cannot print what it saved: %s\n",
                         printable(out_path, false).c_str(), std::strerror(errno));
            return 1;
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "arenascope-plan: %s\n", printable(e.what(), false).c_str());
        return 1;
    }
}
namespace plan = arenascope::planner;

// What the command line asks for.
struct Options {
    bool json = false, header = false;
    std::string target = "cortex-m";
    int margin = 10;
    bool adapter = false;
    const char *snapshot = nullptr, *offline_out = nullptr;
    int64_t search_budget = plan::kSearchDefaultBudget;
    int64_t arena_size = 0, persistent_size = 0, non_persistent_size = 0;
    const char *path = nullptr, *elf = nullptr;
    std::vector<std::pair<std::string, std::string>> elf_hints;  // --bound, --calls: for --elf's tool
    plan::KernelBuild build;
    bool cpu_given = false;
    const plan::TflmRevision *tflm = &plan::default_tflm_revision();
    bool tflm_given = false, tflm_assumed = false;
    bool two() const { return persistent_size || non_persistent_size; }  // two arenas
};

// What an option's reader returns, when not an exit status: the option is read (go on), or it is
// not one of the reader's.
constexpr int kGoOn = -1;
constexpr int kNotMine = -2;

// --tflm REVISION|auto|list.
int tflm_option(int argc, char **argv, int &i, Options &o)
{
    if (std::strcmp(argv[i], "--tflm")) return kNotMine;
    const std::string value = i + 1 < argc ? argv[i + 1] : "";
    if (value == "list") {
        std::cout << plan::tflm_revision_list_jsonl();
        return std::cout.flush() ? 0 : 1;
    }
    o.tflm_given = true;
    o.tflm_assumed = value == "auto";
    try {
        o.tflm = o.tflm_assumed ? &plan::default_tflm_revision() : &plan::tflm_revision(value);
    } catch (const std::invalid_argument &e) {
        if (value.empty())
            std::fprintf(stderr, "arenascope-plan: --tflm needs a TFLM revision: %s, auto or list\n",
                         plan::tflm_revision_ids().c_str());
        else
            std::fprintf(stderr, "arenascope-plan: %s\n", printable(e.what(), false).c_str());
        return 2;
    }
    ++i;
    return kGoOn;
}

// --target, --kernels and --cpu: the firmware's build.
int build_option(int argc, char **argv, int &i, Options &o)
{
    if (!std::strcmp(argv[i], "--target")) {
        if (i + 1 >= argc) {
            std::fprintf(stderr, "arenascope-plan: --target needs %s\n", plan::kTargets);
            return 2;
        }
        o.target = argv[++i];
        if (o.target != "cortex-m" && o.target != "riscv32" && o.target != "xtensa" && o.target != "host") {
            std::fprintf(stderr, "arenascope-plan: unknown target '%s': use %s\n", o.target.c_str(), plan::kTargets);
            return 2;
        }
        return kGoOn;
    }
    if (std::strcmp(argv[i], "--kernels") && std::strcmp(argv[i], "--cpu")) return kNotMine;
    const bool kernels = argv[i][2] == 'k';
    if (i + 1 >= argc) {
        std::fprintf(stderr, "arenascope-plan: %s needs %s\n", argv[i],
                     kernels ? "reference or cmsis-nn" : "a CPU such as cortex-m4");
        return 2;
    }
    const std::string value = argv[i + 1];
    if (value.find('/') != std::string::npos || value.find(".tflite") != std::string::npos) {
        std::fprintf(stderr, "arenascope-plan: %s needs %s before the model (got '%s')\n", argv[i],
                     kernels ? "reference or cmsis-nn" : "a CPU such as cortex-m4", printable(value, false).c_str());
        return 2;
    }
    try {
        if (kernels)
            o.build.set = plan::KernelBuild::set_named(argv[i + 1]);
        else
            o.build.cpu = plan::cpu_named(argv[i + 1]);
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "arenascope-plan: %s\n", printable(e.what(), false).c_str());
        return 2;
    }
    o.cpu_given = o.cpu_given || !kernels;
    ++i;
    return kGoOn;
}

// --json, --header, --adapter, --snapshot, --write-offline-plan, --elf, --bound and --calls.
int output_option(int argc, char **argv, int &i, Options &o)
{
    if (!std::strcmp(argv[i], "--json"))
        o.json = true;
    else if (!std::strcmp(argv[i], "--header"))
        o.header = true;
    else if (!std::strcmp(argv[i], "--adapter"))
        o.adapter = true;
    else if (!std::strcmp(argv[i], "--bound") || !std::strcmp(argv[i], "--calls")) {
        if (i + 1 >= argc || !argv[i + 1][0]) {
            std::fprintf(stderr, "arenascope-plan: %s needs %s (with --elf)\n", argv[i],
                         argv[i][2] == 'b' ? "FUNCTION=LEVELS" : "CALLER=CALLEE[,CALLEE]");
            return 2;
        }
        o.elf_hints.emplace_back(argv[i], argv[i + 1]);
        ++i;
    } else if (!std::strcmp(argv[i], "--elf")) {
        if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') {
            std::fprintf(stderr, "arenascope-plan: --elf needs the firmware's ELF, then the model\n");
            return 2;
        }
        o.elf = argv[++i];
    } else if (!std::strcmp(argv[i], "--snapshot")) {
        if (i + 1 >= argc || !argv[i + 1][0]) {
            std::fprintf(stderr, "arenascope-plan: --snapshot needs a file name\n");
            return 2;
        }
        o.snapshot = argv[++i];
    } else if (!std::strcmp(argv[i], "--write-offline-plan")) {
        if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') {
            std::fprintf(stderr, "arenascope-plan: --write-offline-plan needs the file to write, then the model\n");
            return 2;
        }
        if (o.offline_out) {
            std::fprintf(stderr, "arenascope-plan: --write-offline-plan given twice\n");
            return 2;
        }
        o.offline_out = argv[++i];
    } else
        return kNotMine;
    return kGoOn;
}

// --search-budget, --arena-size, --persistent-size, --non-persistent-size and --margin.
int number_option(int argc, char **argv, int &i, Options &o)
{
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    char *end = nullptr;
    if (!std::strcmp(argv[i], "--search-budget")) {
        const long long v = value ? std::strtoll(value, &end, 10) : -1;
        if (!value || !end || *end || end == value || v < 0 || v > 1000000000000LL) {
            std::fprintf(stderr, "arenascope-plan: --search-budget needs a count from 0 to 10^12 (steps of "
                                 "work)\n");
            return 2;
        }
        o.search_budget = v;
    } else if (!std::strcmp(argv[i], "--arena-size")) {
        o.arena_size = value ? parse_arena_size(value) : 0;
        if (!o.arena_size) {
            std::fprintf(stderr,
                         "arenascope-plan: --arena-size needs a size in bytes from 1 to 4294967295, decimal or hex "
                         "with 0x%s%s%s\n",
                         value ? " (got '" : "", value ? printable(value, false).c_str() : "", value ? "')" : "");
            return 2;
        }
    } else if (!std::strcmp(argv[i], "--persistent-size") || !std::strcmp(argv[i], "--non-persistent-size")) {
        const int64_t v = value ? parse_arena_size(value) : 0;
        if (!v) {
            std::fprintf(stderr,
                         "arenascope-plan: %s needs a size in bytes from 1 to 4294967295, decimal or hex "
                         "with 0x\n",
                         argv[i]);
            return 2;
        }
        (argv[i][2] == 'p' ? o.persistent_size : o.non_persistent_size) = v;
    } else if (!std::strcmp(argv[i], "--margin")) {
        const long v = value ? std::strtol(value, &end, 10) : -1;
        if (!value || !end || *end || end == value || v < 0 || v > 100) {
            std::fprintf(stderr, "arenascope-plan: --margin needs a percentage from 0 to 100\n");
            return 2;
        }
        o.margin = static_cast<int>(v);
    } else
        return kNotMine;
    ++i;
    return kGoOn;
}

// The command line into `o`: kGoOn, or the exit status (usage errors, --help, --version, --tflm list).
int parse_args(int argc, char **argv, Options &o)
{
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        if (!options_done && !std::strcmp(argv[i], "--")) {
            options_done = true;
            continue;
        }
        if (options_done) {
            if (o.path) {
                std::fprintf(stderr, "arenascope-plan: one model at a time\n");
                return 2;
            }
            o.path = argv[i];
            continue;
        }
        int status = kNotMine;
        for (const auto option : {output_option, tflm_option, build_option, number_option})
            if ((status = option(argc, argv, i, o)) != kNotMine) break;
        if (status == kGoOn) continue;
        if (status != kNotMine) return status;
        if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (!std::strcmp(argv[i], "--version")) {
            std::printf("arenascope-plan %s\n", ARENASCOPE_VERSION);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            std::fprintf(stderr, "arenascope-plan: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (o.path) {
            std::fprintf(stderr, "arenascope-plan: one model at a time ('%s' and '%s')\n", o.path, argv[i]);
            return 2;
        }
        o.path = argv[i];
    }
    if (!o.path) {
        std::fprintf(stderr, "arenascope-plan: no model given\n");
        usage(stderr);
        return 2;
    }
    return kGoOn;
}

// --elf: the stack's worst case from the firmware (elf_budget.h), which takes few options.
int elf_budget(const Options &o)
{
    if (o.header || o.snapshot || o.offline_out || o.arena_size || o.two() || o.tflm_given || o.cpu_given ||
        o.build.set != plan::KernelBuild::Set::Reference || o.adapter || o.target != "cortex-m" || o.margin != 10) {
        std::fprintf(stderr, "arenascope-plan: --elf takes the model, --json, --bound and --calls only: the target, "
                             "the arena's size and place come from the ELF (docs/stack-budget.md)\n");
        return 2;
    }
    return plan::run_elf_budget(o.elf, o.path, o.json, o.elf_hints);
}

// The options that do not go together: 2 (said on stderr), else kGoOn.
int check_combinations(const Options &o)
{
    const char *error = nullptr;
    if (!o.elf_hints.empty()) {
        std::fprintf(stderr, "arenascope-plan: %s goes with --elf (the stack's worst case from the firmware)\n",
                     o.elf_hints.front().first.c_str());
        return 2;
    }
    if (o.cpu_given && o.build.set != plan::KernelBuild::Set::CmsisNn)
        error = "--cpu goes with --kernels cmsis-nn (the reference kernels allocate the same on every CPU)";
    else if (o.build.set == plan::KernelBuild::Set::CmsisNn && o.target != "cortex-m")
        error = "--kernels cmsis-nn goes with --target cortex-m";
    else if (o.header && o.arena_size)
        error = "--arena-size goes with the table or --json, not --header";
    else if (o.two() && (!o.persistent_size || !o.non_persistent_size))
        error = "two arenas need both --persistent-size and --non-persistent-size";
    else if (o.two() && (o.header || o.adapter || o.arena_size))
        error = "--persistent-size/--non-persistent-size go with the table, --json or --snapshot, not with "
                "--header, --adapter or --arena-size (one arena)";
    if (!error) return kGoOn;
    std::fprintf(stderr, "arenascope-plan: %s\n", error);
    return 2;
}

// The budget on stdout as --header, --json or the table.
void print_budget(const Options &o, const plan::Budget &budget, const std::optional<plan::TwoArenaBudget> &two,
                  const plan::Gate &verdict)
{
    if (o.header)
        std::cout << plan::budget_header(budget);
    else if (o.json) {
        // Large models' JSON has no whitespace (docs/arena-budget.md "Limits and scale").
        const bool compact = plan::json_is_compact(budget);
        if (two) {
            auto doc = plan::budget_json(budget);
            doc["two_arena"] = plan::two_arena_json(budget, *two);
            doc["gate"] = plan::gate_json(budget, verdict);
            std::cout << doc.dump(compact ? -1 : 1, ' ', false, nlohmann::json::error_handler_t::replace);
        } else {  // = budget_json().dump(1, ...), or dump(-1, ...) compact
            plan::budget_json_streamed(budget).write(std::cout, compact);
        }
        std::cout << "\n";
    } else {
        std::cout << printable(plan::budget_table(budget, verdict), true);
        if (two) std::cout << "\n" << printable(plan::two_arena_table(budget, *two), true);
    }
}

// The model's budget: the snapshot (--snapshot), then stdout; the exit status (gate.h).
int plan_model(const Options &o, const plan::Abi &abi)
{
    const char *path = o.path;
    const bool two = o.two();
    try {
        const auto budget = plan::make_budget(path, abi, o.margin, o.adapter, o.arena_size, o.build, o.search_budget);
        // Names come from the model and need not be UTF-8: replace bad bytes rather than fail.
        if (o.json && o.header) {
            std::fprintf(stderr, "arenascope-plan: --json or --header, not both\n");
            return 2;
        }
        if (o.snapshot) {
            // Never write over the model itself (the two paths swapped, or a link to it).
            std::error_code same_error;
            if (std::filesystem::equivalent(o.snapshot, path, same_error)) {
                std::fprintf(stderr,
                             "arenascope-plan: --snapshot %s is the model file itself: give another file name\n",
                             printable(o.snapshot, false).c_str());
                return 2;
            }
            std::optional<plan::TwoArenaBudget> split;
            if (two) split = plan::plan_two_arenas(budget, o.persistent_size, o.non_persistent_size);
            if (const int status = snapshot_file(o.snapshot, budget, split)) return status;
        }
        // the two buffers' replay, once (two-arena mode), and the verdict CI gates on (gate.h)
        std::optional<plan::TwoArenaBudget> two_budget;
        if (two) two_budget = plan::plan_two_arenas(budget, o.persistent_size, o.non_persistent_size);
        const plan::Gate verdict = plan::gate(budget, two_budget ? &*two_budget : nullptr);
        print_budget(o, budget, two_budget, verdict);
        if (!std::cout.flush()) {  // a full disk under `> plan.h` must not pass for a header
            std::fprintf(stderr, "arenascope-plan: cannot write the output: %s\n", std::strerror(errno));
            return 1;
        }
        if (!budget.kernels.rejected.empty()) {
            std::fprintf(stderr, "arenascope-plan: %s: TFLM would reject this model (%s)\n",
                         printable(path, false).c_str(), printable(budget.kernels.rejected.front(), false).c_str());
            return 1;
        }
        if (verdict.exit_status != plan::kExitFits) {  // said on stderr too, for a CI log
            std::fprintf(stderr, "arenascope-plan: %s: %s\n", verdict.verdict.c_str(),
                         printable(verdict.reason, false).c_str());
            return verdict.exit_status;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "arenascope-plan: %s\n", printable(e.what(), false).c_str());
        return 1;
    }
    return 0;
}
}  // namespace

int main(int argc, char **argv)
{
    Options o;
    if (const int status = parse_args(argc, argv, o); status != kGoOn) return status;
    if (o.elf) return elf_budget(o);
    if (const int status = check_combinations(o); status != kGoOn) return status;
    // The target's sizes for the TFLM revision (revisions.h): --tflm names it in the output.
    plan::Abi abi = plan::abi_named(o.target, *o.tflm);
    abi.tflm_given = o.tflm_given;
    abi.tflm_assumed = o.tflm_assumed;
    if (o.tflm_assumed)
        std::fprintf(stderr, "arenascope-plan: --tflm auto: assuming TFLM %s (upstream %.9s, %s)\n", o.tflm->id,
                     o.tflm->commit, o.tflm->date);
    if (o.two() && !o.tflm->current) {  // two_arena.cpp models 90b983c2's two-arena allocators only
        std::fprintf(stderr,
                     "arenascope-plan: two arenas (--persistent-size/--non-persistent-size) are modelled for "
                     "TFLM %s only, not --tflm %s\n",
                     plan::default_tflm_revision().id, o.tflm->id);
        return 2;
    }
    if (o.offline_out) {
        if (o.json || o.header || o.snapshot || o.arena_size || o.two()) {
            std::fprintf(stderr, "arenascope-plan: --write-offline-plan goes alone (not with --json, --header, "
                                 "--snapshot, --arena-size or two arenas)\n");
            return 2;
        }
        return write_offline_plan(o.path, o.offline_out, abi, o.margin, o.adapter, o.build, o.search_budget);
    }
    return plan_model(o, abi);
}
