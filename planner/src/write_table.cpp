// The budget as a table for people (writers.h budget_table: what arenascope-plan prints), and
// printable, which makes text from the model safe for a terminal.
#include <cctype>
#include <cstdio>
#include <sstream>

#include "arenascope/planner/gate.h"
#include "arenascope/planner/writers.h"

namespace arenascope::planner {

std::string printable(std::string text, bool keep_newlines)
{
    // Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF) is kept,
    // but for the C0 and C1 controls and DEL; every other byte becomes '?', as --json's replace
    // handler turns it into U+FFFD, so that no name can drive the terminal.
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
    const auto cont = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(i) >= lo && byte(i) <= hi; };
    for (size_t i = 0; i < text.size();) {
        const unsigned u = byte(i);
        size_t n = 0;
        if (u < 0x80)
            n = 1;
        else if (u >= 0xC2 && u <= 0xDF && cont(i + 1))
            n = 2;
        else if (u >= 0xE0 && u <= 0xEF && cont(i + 1, u == 0xE0 ? 0xA0 : 0x80, u == 0xED ? 0x9F : 0xBF) && cont(i + 2))
            n = 3;
        else if (u >= 0xF0 && u <= 0xF4 && cont(i + 1, u == 0xF0 ? 0x90 : 0x80, u == 0xF4 ? 0x8F : 0xBF) &&
                 cont(i + 2) && cont(i + 3))
            n = 4;
        const bool control = (n == 1 && ((u < 0x20 && !(keep_newlines && u == '\n')) || u == 0x7f)) ||
                             (n == 2 && u == 0xC2 && byte(i + 1) <= 0x9F);  // U+0080..U+009F
        if (n == 0 || control) {
            out += '?';
            i += n ? n : 1;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

namespace {

std::string shape_str(const std::vector<int32_t> &shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}
}  // namespace

namespace {
// What the request that sets the minimum means, for someone who does not know TFLM's source.
std::string binding_in_words(const Step &s)
{
    switch (s.kind) {
    case Step::Kind::PlannerArena:
        return "while it plans the memory, TFLM needs working space for its planner (" + std::to_string(s.count) +
               " buffers x 40 B) in the free space between its allocation records and the tail: more room than the "
               "final head keeps.";
    case Step::Kind::ReserveHead:
        return "the planned head (tensors and scratch buffers) must fit below the persistent tail.";
    case Step::Kind::ResizeHead:
        return "the buffer of scratch-buffer requests at the start of the arena must fit below the tail.";
    case Step::Kind::Temp:
        return s.phase == Phase::Prepare
                   ? "an operator's Prepare needs temporary TfLiteTensors above the head, below the tail."
                   : "the allocation records TFLM builds while it plans must fit above the head, below the tail.";
    case Step::Kind::Persistent:
        return "the persistent tail must fit above the head: the arena is head + tail, plus the alignment padding "
               "of the tail's requests.";
    case Step::Kind::ResetTemp: break;
    }
    return "";
}
}  // namespace

namespace {
// --arena-size N: the answer first, then why, what TFLM prints and the state a debugger finds.
std::string at_size_table(const Budget &b, const ArenaAtSize &r)
{
    std::ostringstream out;
    char line[512];
    auto row = [&](int64_t offset, int64_t size, const std::string &what) {
        std::snprintf(line, sizeof line, "    %8lld %8lld  %s\n", static_cast<long long>(offset),
                      static_cast<long long>(size), printable(what).c_str());
        out << line;
    };
    std::string kind = outcome_name(r.outcome.kind);
    for (char &c : kind) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << "arena of " << r.arena_bytes << " bytes (--arena-size, " << b.abi.name << "): ";
    if (r.fits) {
        out << "FITS: AllocateTensors succeeds (the minimum arena is " << b.minimum.bytes << " B, "
            << r.arena_bytes - b.minimum.bytes << " B to spare)\n"
            << "  at " << r.arena_bytes << " B: tail " << r.tail_bytes << " B, head " << r.head_bytes
            << " B, arena_used_bytes() " << r.tail_bytes + r.head_bytes << " B\n";
    } else {
        out << "DOES NOT FIT: AllocateTensors fails"
            << (r.outcome.kind == Outcome::Kind::Error ? " and returns kTfLiteError" : "") << "; outcome: " << kind
            << "\n"
            << "  shortfall " << shortfall(b, r) << " B: the minimum arena is " << b.minimum.bytes << " B\n";
    }
    if (!b.minimum_exact())
        out << "  "
            << (b.kernels.rejected.empty()
                    ? "A FLOOR: some kernels are not modelled (below), so this is not TFLM's exact behaviour"
                    : "and TFLM rejects this model in Prepare whatever the size (below)")
            << "\n";
    if (r.failed) {
        const Step &s = b.arena.steps[r.failure.step];
        out << "  the first request that does not fit (step " << r.failure.step << "): " << phase_name(s.phase) << ": "
            << printable(s.what) << "\n    " << r.failure.kind << " request of " << r.failure.bytes << " B (alignment "
            << r.failure.align << "): " << r.failure.available << " B available, " << r.failure.missing
            << " B missing (" << s.source << ")\n";
    }
    if (!r.fits) {
        out << "  outcome: " << kind << ": " << printable(r.outcome.how) << "\n";
        if (r.outcome.stop != r.failure.step)
            out << "    (it stops at step " << r.outcome.stop << ": " << phase_name(b.arena.steps[r.outcome.stop].phase)
                << ": " << printable(b.arena.steps[r.outcome.stop].what) << ")\n";
        out << "  TFLM prints" << (r.outcome.log.empty() ? " nothing" : ":") << "\n";
        for (const std::string &l : r.outcome.log) out << "    " << printable(l) << "\n";
        out << "  the allocator where TFLM stops (offsets from the arena start): head_ " << r.state.head << ", temp_ "
            << r.state.temp << ", tail_ " << r.state.tail << " (nothing is rolled back)\n"
            << "  persistent requests made by then, in TFLM's order (offset, bytes, what):\n";
        for (size_t i = 0; i < r.offsets.size(); ++i)
            if (r.offsets[i] >= 0) row(r.offsets[i], b.arena.steps[i].bytes, b.arena.steps[i].what);
    } else {
        out << "  tail regions at " << r.arena_bytes << " B, in TFLM's order (offset, bytes, what):\n";
        for (const TailRegion &t : b.at_size_regions) row(t.offset, t.size, t.what);
    }
    return out.str();
}
}  // namespace

namespace {
// What TFLM rejects and what is not modelled: said before any figure.
void notices(std::ostream &out, const Budget &b)
{
    if (!b.kernels.rejected.empty()) {
        out << "\nTFLM WILL REJECT THIS MODEL in AllocateTensors:\n";
        for (const std::string &r : b.kernels.rejected) out << "  " << printable(r) << "\n";
    }
    if (!b.kernels.unmodelled.empty()) {
        out << "\nAPPROXIMATE: the scratch buffers these kernels request in Prepare are not modelled; every figure\n"
               "below leaves them out, so TFLM's head may be larger and its offsets different:\n";
        for (const std::string &u : b.kernels.unmodelled) out << "  " << printable(u) << "\n";
    }
    if (!b.kernels.unmodelled_data.empty() && b.kernels.rejected.empty()) {
        out << "\nA FLOOR: the Init/Prepare allocations of these kernels are not modelled, so the minimum arena and\n"
               "arena_used_bytes() below are floors, not TFLM's figures (measure arena_used_bytes() on the target):\n";
        for (const std::string &u : b.kernels.unmodelled_data) out << "  " << printable(u) << "\n";
    }
}

// The buffers TFLM plans in the head, one a line.
void buffers_table(std::ostream &out, const Budget &b)
{
    char line[512];
    out << "\nbuffers TFLM plans in the arena head, in planner id order. aligned = bytes rounded up to 16;\n"
           "scopes = first..last allocation scope using it (inclusive; operator i of subgraph 0 runs in\n"
           "scope i+1 when there is no control flow); tflm off / best off = offset from the arena start\n"
           "in TFLM's greedy plan / in the best plan found:\n";
    std::snprintf(line, sizeof line, "%4s  %-40s %-16s %-8s %8s %8s  %-9s %8s %8s\n", "id", "name", "shape", "type",
                  "bytes", "aligned", "scopes", "tflm off", "best off");
    out << line;
    for (const Buffer &buf : b.lifetimes.buffers) {
        std::string name = printable(buffer_name(b, buf));
        if (name.size() > 40) name = name.substr(0, 37) + "...";
        std::string shape = "-", type = "-";
        if (buf.tensor >= 0) {
            const Tensor &t = b.model.subgraphs[buf.subgraph].tensors[buf.tensor];
            shape = shape_str(t.shape);
            type = type_name(t.type);
        }
        const std::string life = std::to_string(buf.first) + ".." + std::to_string(buf.last);
        std::snprintf(line, sizeof line, "%4d  %-40s %-16s %-8s %8lld %8lld  %-9s %8lld %8lld\n", buf.id, name.c_str(),
                      shape.c_str(), type.c_str(), static_cast<long long>(buf.bytes), static_cast<long long>(buf.size),
                      life.c_str(), static_cast<long long>(b.greedy.offsets[buf.id]),
                      static_cast<long long>(b.best.offsets[buf.id]));
        out << line;
    }
}

// The head's size in each plan, against the lower bound.
void head_lines(std::ostream &out, const Budget &b)
{
    char line[512];
    const double frag = fragmentation_pct(b);
    out << "\nhead (non-persistent part of the arena), bytes"
        << (b.kernels.unmodelled.empty() ? "" : ", without the unmodelled scratch") << ":\n";
    std::snprintf(line, sizeof line, "  lower bound        %8lld  (live bytes in scope %d)\n",
                  static_cast<long long>(b.bound.bytes), b.bound.scope);
    out << line;
    std::snprintf(line, sizeof line,
                  "  TFLM greedy        %8lld  (%sfragmentation: %.1f %% of it above the lower bound)\n",
                  static_cast<long long>(b.greedy.head),
                  b.model.offline_offsets.empty() ? "" : "with the model's offline plan; ", frag);
    out << line;
    std::snprintf(line, sizeof line, "  best plan found    %8lld  (%s; %s)\n", static_cast<long long>(b.best.head),
                  best_how(b).c_str(), best_use(b).c_str());
    out << line;
}

// The persistent tail by category.
void tail_lines(std::ostream &out, const Budget &b)
{
    char line[512];
    out << "\npersistent tail (" << b.abi.name
        << "), by category: how many (requests, or elements of an array)\n"
           "and the bytes requested, before alignment:\n";
    for (const TailCategory &c : b.tail) {
        std::snprintf(line, sizeof line, "  %-44s %5d, %8lld B\n", c.category.c_str(), c.count,
                      static_cast<long long>(c.bytes));
        out << line;
    }
    std::snprintf(line, sizeof line, "  %-44s        %8lld B (arena end 16-byte aligned)\n", "tail with alignment",
                  static_cast<long long>(b.minimum.tail_bytes));
    out << line;
}

// The arena: arena_used_bytes(), the minimum, why, and the recommendation (none when TFLM rejects the model).
void arena_lines(std::ostream &out, const Budget &b)
{
    char line[512];
    const MinimumArena &m = b.minimum;
    const Step &binding = b.arena.steps[m.binding];
    out << "\narena (" << b.abi.name << ", TFLM" << (b.abi.tflm_given ? " " + std::string(b.abi.tflm->id) : "") << "'s "
        << b.build.describe() << ", "
        << (b.adapter ? "the planner outside the arena (arenascope's TFLM adapter)" : "a plain MicroInterpreter")
        << ", the arena's start\n16-byte aligned: declare it alignas(16)), bytes:\n";
    if (!b.kernels.rejected.empty()) {
        out << "  none: TFLM rejects this model (see above), so AllocateTensors never succeeds.\n";
        return;
    }
    std::snprintf(line, sizeof line, "  arena_used_bytes()  %8lld  %s\n", static_cast<long long>(m.arena_used_bytes),
                  b.minimum_exact()
                      ? "(TFLM reports it after AllocateTensors: head + tail, in an arena of a multiple of 16 B)"
                      : "(A FLOOR too: the kernels listed above add to it)");
    out << line;
    std::snprintf(line, sizeof line, "  minimum arena       %8lld  %s\n", static_cast<long long>(m.bytes),
                  b.minimum_exact() ? "(the smallest arena AllocateTensors succeeds in)"
                                    : "(A FLOOR: some kernels are not modelled, listed above)");
    out << line;
    out << "    why: " << binding_in_words(binding) << "\n"
        << "    the request that fails with one byte less: " << phase_name(binding.phase) << ": "
        << printable(binding.what) << "\n      (" << binding.source << ")\n";
    if (m.bytes > m.arena_used_bytes)
        out << "    AllocateTensors needs " << m.bytes - m.arena_used_bytes
            << " bytes more than arena_used_bytes() reports: sizing the arena from that figure fails.\n";
    std::snprintf(line, sizeof line, "  recommended         %8lld  (minimum + %d %% margin, rounded up to 16)\n",
                  static_cast<long long>(b.recommended), b.margin_pct);
    out << line;
}
}  // namespace

std::string budget_table(const Budget &b)
{
    return budget_table(b, gate(b));
}

std::string budget_table(const Budget &b, const Gate &verdict)
{
    std::ostringstream out;
    out << "arenascope-plan: " << b.model_path << " (" << b.model.file_bytes << " bytes, " << b.model.subgraphs.size()
        << " subgraph" << (b.model.subgraphs.size() == 1 ? "" : "s") << ")\n";
    out << gate_lines(b, verdict);  // what CI gates on, first (the exit status says the same)
    if (b.abi.tflm_given)
        out << "TFLM " << b.abi.tflm->id << " (upstream " << std::string(b.abi.tflm->commit).substr(0, 9) << ", "
            << b.abi.tflm->date << (b.abi.tflm_assumed ? "; assumed: --tflm auto" : "") << ")"
            << (b.abi.tflm->current ? "" : ": only the kernels checked against its source are exact") << "\n";
    out << "\n";
    if (b.at_size) out << at_size_table(b, *b.at_size) << "\n";
    for (size_t s = 0; s < b.model.subgraphs.size(); ++s) {
        const Subgraph &sg = b.model.subgraphs[s];
        out << "subgraph " << s << (sg.name.empty() ? "" : " '" + printable(sg.name) + "'") << ": " << sg.tensors.size()
            << " tensors, " << sg.operators.size() << " operators\n";
    }
    notices(out, b);
    buffers_table(out, b);
    head_lines(out, b);
    tail_lines(out, b);
    arena_lines(out, b);
    for (const std::string &w : b.lifetimes.warnings) out << "warning: " << printable(w) << "\n";
    return out.str();
}

}  // namespace arenascope::planner
