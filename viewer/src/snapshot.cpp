// arenascope viewer: snapshot loader with validation; see snapshot.h.
#include "snapshot.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bounded_json.h"
#include "text.h"

namespace arenascope {
namespace {

using nlohmann::json;

struct LoadError {
    std::string message;
};

// What the reader streamed past the DOM (bounded_json.h): the regions, each arena's live bytes
// and the fault's damaged regions, with the first error found in each (thrown where the DOM's
// validation reaches that array, so the order of the messages is the document's checks' order).
struct ArenaStream {
    std::vector<Region> regions;
    std::size_t region_count = 0;
    std::string regions_error;
    std::vector<uint64_t> live_bytes;
    std::size_t live_count = 0;
    std::string live_error;
};
std::string clip_utf8(std::string s, std::size_t max);

struct Streamed {
    std::vector<ArenaStream> arenas;  // by index in $.arenas
    std::vector<uint64_t> damaged;    // $.fault.damaged_regions: each unsigned entry ...
    std::string damaged_bad;          // ... up to the first that is not one (its JSON), if any
    std::string tflm_error;           // a limit passed inside $.tflm: it is left out (null)
    std::string tasks_error;          // likewise $.tasks
};

std::string type_name(const json &j)
{
    return j.is_null() ? "null" : j.type_name();
}

const json &member(const json &obj, const char *key, const std::string &path)
{
    if (!obj.is_object()) {
        throw LoadError{fmt::format("{}: expected an object, found {}", path, type_name(obj))};
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
        throw LoadError{fmt::format("{}.{}: missing", path, key)};
    }
    return *it;
}

uint64_t u64(const json &obj, const char *key, const std::string &path)
{
    const json &v = member(obj, key, path);
    if (!v.is_number_integer()) {
        throw LoadError{fmt::format("{}.{}: expected a non-negative integer, found {}", path, key,
                                    v.is_number() ? v.dump() : type_name(v))};
    }
    if (v.is_number_unsigned()) {
        return v.get<uint64_t>();
    }
    const int64_t s = v.get<int64_t>();
    if (s < 0) {
        throw LoadError{fmt::format("{}.{}: expected a non-negative integer, found {}", path, key, s)};
    }
    return static_cast<uint64_t>(s);
}

std::optional<uint64_t> opt_u64(const json &obj, const char *key, const std::string &path)
{
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return std::nullopt;
    }
    return u64(obj, key, path);
}

int64_t i64(const json &obj, const char *key, const std::string &path)
{
    const json &v = member(obj, key, path);
    if (!v.is_number_integer()) {
        throw LoadError{fmt::format("{}.{}: expected an integer, found {}", path, key, type_name(v))};
    }
    return v.get<int64_t>();
}

std::optional<int> opt_scope(const json &obj, const char *key, const std::string &path)
{
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return std::nullopt;
    }
    // -1: TFLM plans a tensor no operator produces nor consumes with lifetime -1..-1
    // (micro_allocation_info.cc; the planner's warnings name it): planned, never live.
    const int64_t v = i64(obj, key, path);
    if (v < -1 || v > static_cast<int64_t>(kMaxScopes)) {
        throw LoadError{fmt::format("{}.{}: scope {} outside -1..{}", path, key, v, kMaxScopes)};
    }
    return static_cast<int>(v);
}

double number(const json &obj, const char *key, const std::string &path)
{
    const json &v = member(obj, key, path);
    if (!v.is_number()) {
        throw LoadError{fmt::format("{}.{}: expected a number, found {}", path, key, type_name(v))};
    }
    return v.get<double>();
}

bool boolean(const json &obj, const char *key, const std::string &path)
{
    const json &v = member(obj, key, path);
    if (!v.is_boolean()) {
        throw LoadError{fmt::format("{}.{}: expected true or false, found {}", path, key, type_name(v))};
    }
    return v.get<bool>();
}

std::string string(const json &obj, const char *key, const std::string &path, bool nullable = false)
{
    auto it = obj.find(key);
    if (nullable && (it == obj.end() || it->is_null())) {
        return {};
    }
    const json &v = member(obj, key, path);
    if (!v.is_string()) {
        throw LoadError{fmt::format("{}.{}: expected a string, found {}", path, key, type_name(v))};
    }
    return v.get<std::string>();
}

const json &array(const json &obj, const char *key, const std::string &path, std::size_t max)
{
    const json &v = member(obj, key, path);
    if (!v.is_array()) {
        throw LoadError{fmt::format("{}.{}: expected an array, found {}", path, key, type_name(v))};
    }
    if (v.size() > max) {
        throw LoadError{
            fmt::format("{}.{}: {} entries, more than the {} this viewer accepts", path, key, v.size(), max)};
    }
    return v;
}

// Version 3's fault registers: `arch`, `registers` [{name, value, meaning}], `fault_address`
// {register, value} or null.
void fault_registers(const json &fj, const std::string &fp, Fault &f)
{
    f.arch = string(fj, "arch", fp).substr(0, 32);
    const json &regs = array(fj, "registers", fp, 64);
    for (std::size_t i = 0; i < regs.size(); i++) {
        const std::string rp = fmt::format("{}.registers[{}]", fp, i);
        if (!regs[i].is_object()) throw LoadError{fmt::format("{}: expected an object", rp)};
        f.registers.push_back({string(regs[i], "name", rp).substr(0, 32), opt_u64(regs[i], "value", rp),
                               string(regs[i], "meaning", rp).substr(0, 1024)});
    }
    if (auto it = fj.find("fault_address"); it == fj.end()) {
        throw LoadError{fmt::format("{}.fault_address: missing", fp)};
    } else if (!it->is_null()) {
        const std::string ap = fp + ".fault_address";
        if (!it->is_object()) throw LoadError{fmt::format("{}: expected an object or null", ap)};
        f.fault_address = FaultRegister{string(*it, "register", ap).substr(0, 32), u64(*it, "value", ap), ""};
    }
}

// Version 2's fault: Cortex-M's registers as fields (cfsr, hfsr, mmfar, bfar null unless valid,
// exc_return with exc_return_text), turned into version 3's list.
void fault_registers_v2(const json &fj, const std::string &fp, Fault &f)
{
    f.arch = "cortex-m";
    const std::optional<uint64_t> cfsr = opt_u64(fj, "cfsr", fp), hfsr = opt_u64(fj, "hfsr", fp);
    const std::optional<uint64_t> mmfar = opt_u64(fj, "mmfar", fp), bfar = opt_u64(fj, "bfar", fp);
    const std::optional<uint64_t> exc = opt_u64(fj, "exc_return", fp);
    if (cfsr) f.registers.push_back({"CFSR", cfsr, ""});
    if (hfsr) f.registers.push_back({"HFSR", hfsr, ""});
    if (mmfar) f.registers.push_back({"MMFAR", mmfar, "the faulting address (MMARVALID)"});
    if (bfar) f.registers.push_back({"BFAR", bfar, "the faulting address (BFARVALID)"});
    if (exc) f.registers.push_back({"EXC_RETURN", exc, string(fj, "exc_return_text", fp, true).substr(0, 1024)});
    if (bfar)
        f.fault_address = FaultRegister{"BFAR", bfar, ""};
    else if (mmfar)
        f.fault_address = FaultRegister{"MMFAR", mmfar, ""};
}

std::optional<Touched> touched(const json &obj, const char *key, const std::string &path)
{
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return std::nullopt;
    }
    const std::string p = path + "." + key;
    return Touched{u64(*it, "offset", p), u64(*it, "size_bytes", p)};
}

Band band(const json &v, const std::string &path)
{
    Band b;
    if (v.is_null()) {
        return b;
    }
    b.present = true;
    b.low_addr = u64(v, "low_addr", path);
    b.high_addr = u64(v, "high_addr", path);
    b.size_bytes = u64(v, "size_bytes", path);
    if (b.high_addr < b.low_addr || b.high_addr - b.low_addr != b.size_bytes) {
        throw LoadError{fmt::format("{}: low {:#x}, high {:#x} and size {} B disagree", path, b.low_addr, b.high_addr,
                                    b.size_bytes)};
    }
    b.offset = opt_u64(v, "offset", path).value_or(0);
    b.measured = boolean(v, "measured", path);
    b.intact_bytes = opt_u64(v, "intact_bytes", path);
    b.touched = touched(v, "touched", path);
    if ((b.intact_bytes && *b.intact_bytes > b.size_bytes) ||
        (b.touched && (b.touched->offset > b.size_bytes || b.touched->size_bytes > b.size_bytes - b.touched->offset))) {
        throw LoadError{fmt::format("{}: intact or touched bytes do not fit its {} B", path, b.size_bytes)};
    }
    return b;
}

// A region's own fields; where it lies in its arena is checked by in_arena (the arena's fields
// may follow its regions in the file).
Region region(const json &v, const std::string &path)
{
    Region r;
    r.index = static_cast<int>(u64(v, "index", path));
    if (auto it = v.find("id"); it != v.end() && !it->is_null()) {
        r.id = i64(v, "id", path);
    }
    r.kind = string(v, "kind", path);
    if (r.kind != "tensor" && r.kind != "scratch" && r.kind != "persistent" && r.kind != "metadata") {
        throw LoadError{fmt::format("{}.kind: unknown kind \"{}\"", path, r.kind)};
    }
    r.offset = u64(v, "offset", path);
    r.address = u64(v, "address", path);
    r.size_bytes = u64(v, "size_bytes", path);
    r.first_use = opt_scope(v, "first_use", path);
    r.last_use = opt_scope(v, "last_use", path);
    if (r.first_use && r.last_use && *r.last_use < *r.first_use) {
        throw LoadError{fmt::format("{}: last_use {} before first_use {}", path, *r.last_use, *r.first_use)};
    }
    for (const auto &f : array(v, "flags", path, 8)) {
        if (f.is_string()) {
            r.flags.push_back(f.get<std::string>());
        }
    }
    r.label = string(v, "label", path);
    // A compact snapshot's coalesced run of tail allocations (docs/snapshot-schema.md): its label
    // says "N x what"; absent: one allocation.
    if (auto it = v.find("count"); it != v.end() && !it->is_null()) {
        r.count = u64(v, "count", path);
        if (r.count == 0) throw LoadError{fmt::format("{}.count: 0, a region stands for at least 1 allocation", path)};
    }
    if (auto it = v.find("name"); it != v.end() && it->is_string()) {
        r.name = it->get<std::string>();
    }
    if (auto it = v.find("dtype"); it != v.end() && it->is_string()) {
        r.dtype = it->get<std::string>();
    }
    if (auto it = v.find("shape"); it != v.end() && it->is_array() && it->size() <= 8) {
        for (const auto &d : *it) {
            if (d.is_number_integer()) {
                r.shape.push_back(d.get<int64_t>());
            }
        }
    }
    return r;
}

void in_arena(const Region &r, const std::string &path, const Arena &a)
{
    if (r.address != a.base_addr + r.offset) {
        throw LoadError{fmt::format("{}: address {:#x} is not the arena base {:#x} + offset {}", path, r.address,
                                    a.base_addr, r.offset)};
    }
    if (r.offset > a.size_bytes || r.size_bytes > a.size_bytes - r.offset) {
        throw LoadError{
            fmt::format("{}: +{} ({} B) is outside the arena's {} B", path, r.offset, r.size_bytes, a.size_bytes)};
    }
}

// The arena's place and its head, temp and tail (each within the arena, as TFLM lays them out).
void arena_layout(const json &v, const std::string &path, Arena &a)
{
    a.index = static_cast<int>(u64(v, "index", path));
    a.base_addr = u64(v, "base_addr", path);
    a.size_bytes = u64(v, "size_bytes", path);
    if (a.size_bytes == 0 || a.size_bytes > (1ull << 32)) {
        throw LoadError{fmt::format("{}.size_bytes: {} B is not an arena size", path, a.size_bytes)};
    }
    if (a.base_addr > UINT64_MAX - a.size_bytes) {
        throw LoadError{fmt::format("{}: base {:#x} + size {} B runs past the end of the address space", path,
                                    a.base_addr, a.size_bytes)};
    }
    a.head_bytes = u64(v, "head_bytes", path);
    a.temp_bytes = u64(v, "temp_bytes", path);
    a.tail_offset = u64(v, "tail_offset", path);
    a.tail_bytes = u64(v, "tail_bytes", path);
    if (a.head_bytes > a.size_bytes || a.temp_bytes > a.size_bytes || a.tail_offset > a.size_bytes) {
        throw LoadError{fmt::format("{}: head {}, temp {} or tail {} is beyond the arena's {} B", path, a.head_bytes,
                                    a.temp_bytes, a.tail_offset, a.size_bytes)};
    }
    if (a.temp_bytes < a.head_bytes || a.tail_bytes != a.size_bytes - a.tail_offset) {
        throw LoadError{fmt::format("{}: temp {} below head {}, or tail_bytes {} not size - tail_offset", path,
                                    a.temp_bytes, a.head_bytes, a.tail_bytes)};
    }
}

// The arena's regions, streamed out of the DOM (ArenaStream), each within the arena.
void arena_regions(const json &v, const std::string &path, ArenaStream &streamed, Arena &a)
{
    array(v, "regions", path, kMaxRegions);     // its entries were streamed: an empty array in the DOM
    if (streamed.region_count > kMaxRegions) {  // the planner refuses to write it in these words
        throw LoadError{snapshot_refusal(path + ".regions", SnapshotLimit::Regions, streamed.region_count)};
    }
    if (!streamed.regions_error.empty()) {
        throw LoadError{streamed.regions_error};
    }
    for (std::size_t i = 0; i < streamed.regions.size(); i++) {
        in_arena(streamed.regions[i], fmt::format("{}.regions[{}]", path, i), a);
    }
    a.regions = std::move(streamed.regions);
}

// The arena's plan: its scopes' live bytes (streamed, as the regions) and lower bound, none of them
// more than all head regions together, and no region used past the plan's scopes.
void arena_plan(const json &v, const std::string &path, ArenaStream &streamed, Arena &a)
{
    const std::string pp = path + ".plan";
    const json &plan = member(v, "plan", path);
    a.plan.scopes = static_cast<int>(u64(plan, "scopes", pp));
    if (static_cast<std::size_t>(a.plan.scopes) > kMaxScopes) {
        throw LoadError{fmt::format("{}.scopes: {} scopes, more than {}", pp, a.plan.scopes, kMaxScopes)};
    }
    array(plan, "live_bytes", pp, kMaxScopes);  // streamed, as the regions
    if (streamed.live_count != static_cast<std::size_t>(a.plan.scopes)) {
        throw LoadError{fmt::format("{}.live_bytes: {} values for {} scopes", pp, streamed.live_count, a.plan.scopes)};
    }
    if (!streamed.live_error.empty()) {
        throw LoadError{streamed.live_error};
    }
    a.plan.live_bytes = std::move(streamed.live_bytes);
    a.plan.lower_bound_bytes = u64(plan, "lower_bound_bytes", pp);
    // -1 when the lower bound is set by a buffer no operator uses (lifetime -1..-1).
    const int64_t lb_scope = i64(plan, "lower_bound_scope", pp);
    if (lb_scope < -1 || lb_scope > static_cast<int64_t>(kMaxScopes)) {
        throw LoadError{fmt::format("{}.lower_bound_scope: scope {} outside -1..{}", pp, lb_scope, kMaxScopes)};
    }
    a.plan.lower_bound_scope = static_cast<int>(lb_scope);
    uint64_t head_regions = 0;  // no scope can hold more live bytes than all head regions together
    for (const Region &r : a.regions) {
        if (r.kind == "tensor" || r.kind == "scratch") head_regions += r.size_bytes;
        if (r.last_use && *r.last_use >= a.plan.scopes) {
            throw LoadError{fmt::format("{}.regions[{}]: last_use {} is past the plan's {} scopes", path, r.index,
                                        *r.last_use, a.plan.scopes)};
        }
    }
    for (std::size_t i = 0; i < a.plan.live_bytes.size(); i++) {
        if (a.plan.live_bytes[i] > head_regions) {
            throw LoadError{fmt::format("{}.live_bytes[{}]: {} B, more than all head regions together ({} B)", pp, i,
                                        a.plan.live_bytes[i], head_regions)};
        }
    }
    if (a.plan.lower_bound_bytes > head_regions) {
        throw LoadError{fmt::format("{}.lower_bound_bytes: {} B, more than all head regions together ({} B)", pp,
                                    a.plan.lower_bound_bytes, head_regions)};
    }
}

Arena arena(const json &v, const std::string &path, ArenaStream &streamed)
{
    Arena a;
    arena_layout(v, path, a);
    a.alignment_bytes = u64(v, "alignment_bytes", path);
    a.tflm_figures = boolean(v, "tflm_figures", path);
    a.used_bytes = u64(v, "used_bytes", path);
    a.peak_bytes = u64(v, "peak_bytes", path);
    a.headroom_bytes = i64(v, "headroom_bytes", path);
    a.headroom_pct = number(v, "headroom_pct", path);
    a.minimum_arena_bytes = opt_u64(v, "minimum_arena_bytes", path);
    a.headroom_is_upper_estimate = boolean(v, "headroom_is_upper_estimate", path);
    a.moved_from = opt_u64(v, "moved_from", path);
    a.in_memory = clip_utf8(string(v, "in_memory", path, true), kMaxMemoryName);
    a.apart_from_stack = v.contains("apart_from_stack") && boolean(v, "apart_from_stack", path);
    a.free_band = band(member(v, "free_band", path), path + ".free_band");
    if (a.free_band.present &&
        (a.free_band.low_addr < a.base_addr || a.free_band.high_addr > a.base_addr + a.size_bytes)) {
        throw LoadError{fmt::format("{}.free_band: {:#x}-{:#x} is outside the arena", path, a.free_band.low_addr,
                                    a.free_band.high_addr)};
    }
    a.damage = touched(v, "damage", path);
    if (a.damage && (a.damage->offset > a.size_bytes || a.damage->size_bytes > a.size_bytes - a.damage->offset)) {
        throw LoadError{
            fmt::format("{}.damage: +{} ({} B) is outside the arena", path, a.damage->offset, a.damage->size_bytes)};
    }
    arena_regions(v, path, streamed, a);
    arena_plan(v, path, streamed, a);
    return a;
}

// "live" (`arena live`): null or absent in every other snapshot.
std::optional<Live> live(const json &root)
{
    auto it = root.find("live");
    if (it == root.end() || it->is_null()) {
        return std::nullopt;
    }
    const std::string p = "$.live";
    if (!it->is_object()) {
        throw LoadError{fmt::format("{}: expected an object or null, found {}", p, type_name(*it))};
    }
    const json &v = *it;
    Live l;
    l.reader = string(v, "reader", p);
    l.captured_at_unix_s = number(v, "captured_at_unix_s", p);
    l.refresh_index = u64(v, "refresh_index", p);
    if (l.refresh_index < 1) {
        throw LoadError{fmt::format("{}.refresh_index: 0, refreshes count from 1", p)};
    }
    l.refresh_hz = number(v, "refresh_hz", p);
    if (l.refresh_hz < 0) {
        throw LoadError{fmt::format("{}.refresh_hz: {}, expected a rate >= 0", p, l.refresh_hz)};
    }
    l.bytes_last_refresh = u64(v, "bytes_last_refresh", p);
    const std::string link = string(v, "link", p);
    if (link != "ok" && link != "lost" && link != "untrusted") {
        throw LoadError{fmt::format("{}.link: \"{}\" is not \"ok\", \"lost\" or \"untrusted\"", p, link.substr(0, 40))};
    }
    l.link_lost = link == "lost";
    l.link_untrusted = link == "untrusted";
    l.link_error = string(v, "link_error", p, true).substr(0, 4096);
    const json &history = array(v, "history", p, kMaxHistoryPoints);
    l.history.reserve(history.size());
    for (std::size_t i = 0; i < history.size(); i++) {
        const std::string hp = fmt::format("{}.history[{}]", p, i);
        const json &h = history[i];
        LivePoint pt;
        pt.t_unix_s = number(h, "t_unix_s", hp);
        pt.used_bytes = u64(h, "used_bytes", hp);
        pt.stack_peak_bytes = opt_u64(h, "stack_peak_bytes", hp);
        if (auto g = h.find("gap_bytes"); g != h.end() && !g->is_null()) {
            pt.gap_bytes = i64(h, "gap_bytes", hp);
        }
        l.history.push_back(pt);
    }
    return l;
}

// A string cut to `max` bytes at a UTF-8 character boundary, with "..." after it when cut.
std::string clip_utf8(std::string s, std::size_t max)
{
    if (s.size() <= max) return s;
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) n--;  // not inside a character
    s.resize(n);
    return s + "...";
}

// A string member cut to kMaxTaskTextBytes; "" when absent or null.
std::string task_text(const json &obj, const char *key, const std::string &path)
{
    return clip_utf8(string(obj, key, path, true), kMaxTaskTextBytes);
}

std::vector<std::string> task_lines(const json &obj, const char *key, const std::string &path)
{
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    for (const auto &line : array(obj, key, path, kMaxTaskLines)) {
        if (!line.is_string()) throw LoadError{fmt::format("{}.{}: expected strings", path, key)};
        out.push_back(clip_utf8(line.get<std::string>(), kMaxTaskTextBytes));
    }
    return out;
}

bool opt_boolean(const json &obj, const char *key, const std::string &path)
{
    auto it = obj.find(key);
    return it != obj.end() && !it->is_null() && boolean(obj, key, path);
}

RtosTask task(const json &v, const std::string &p)
{
    RtosTask t;
    t.name = task_text(v, "name", p);
    t.state = task_text(v, "state", p);
    t.tcb_addr = u64(v, "tcb_addr", p);
    if (auto it = v.find("priority"); it != v.end() && !it->is_null()) t.priority = i64(v, "priority", p);
    t.low_addr = u64(v, "low_addr", p);
    t.high_addr = opt_u64(v, "high_addr", p);
    if (t.high_addr && *t.high_addr < t.low_addr) {
        throw LoadError{fmt::format("{}: high_addr {:#x} below low_addr {:#x}", p, *t.high_addr, t.low_addr)};
    }
    t.sp = opt_u64(v, "sp", p);
    t.sp_live = opt_boolean(v, "sp_live", p);
    t.hwm_addr = opt_u64(v, "hwm_addr", p);
    t.never_used_bytes = opt_u64(v, "never_used_bytes", p);
    t.peak_bytes = opt_u64(v, "peak_bytes", p);
    t.peak_is_lower_bound = opt_boolean(v, "peak_is_lower_bound", p);
    t.overflowed = opt_boolean(v, "overflowed", p);
    t.below = task_text(v, "below", p);
    t.room_bytes = opt_u64(v, "room_bytes", p);
    t.required_room_bytes = opt_u64(v, "required_room_bytes", p);
    t.problems = task_lines(v, "problems", p);
    return t;
}

// "tasks" (the RTOS's tasks), absent or null without one. A malformed one is left out and said.
std::optional<RtosTasks> tasks(const json &root)
{
    auto it = root.find("tasks");
    if (it == root.end() || it->is_null()) return std::nullopt;
    const std::string p = "$.tasks";
    if (!it->is_object()) throw LoadError{fmt::format("{}: expected an object or null, found {}", p, type_name(*it))};
    RtosTasks ts;
    ts.kernel = task_text(*it, "kernel", p);
    ts.current_tcb = opt_u64(*it, "current_tcb", p);
    ts.problems = task_lines(*it, "problems", p);
    const json &list = array(*it, "list", p, kMaxTasks);
    for (std::size_t i = 0; i < list.size(); i++) ts.list.push_back(task(list[i], fmt::format("{}.list[{}]", p, i)));
    return ts;
}

// The tflm member's text, counted as it is read: each string cut to kMaxTflmLineBytes, all of them
// together at most kMaxTflmTextBytes (p, the member's path, says where the limit was passed).
struct TflmText {
    std::string p;
    std::size_t text_bytes = 0;

    std::string counted(std::string s)
    {
        s = clip_utf8(std::move(s), kMaxTflmLineBytes);
        text_bytes += s.size();
        if (text_bytes > kMaxTflmTextBytes) {
            throw LoadError{
                fmt::format("{}: more than {} KiB of text, more than this viewer draws", p, kMaxTflmTextBytes >> 10)};
        }
        return s;
    }
    std::string str(const json &obj, const char *key, const std::string &path, bool nullable = false)
    {
        return counted(string(obj, key, path, nullable));
    }
    std::vector<std::string> lines(const json &obj, const char *key, const std::string &path)
    {
        std::vector<std::string> out;
        const json &a = array(obj, key, path, kMaxTflmLines);
        for (std::size_t i = 0; i < a.size(); i++) {
            if (!a[i].is_string()) {
                throw LoadError{fmt::format("{}.{}[{}]: expected a string, found {}", path, key, i, type_name(a[i]))};
            }
            out.push_back(counted(a[i].get<std::string>()));
        }
        return out;
    }
};

// value when it is one of allowed, else a LoadError naming them.
std::string one_of(const std::string &value, const std::string &path, std::initializer_list<const char *> allowed)
{
    std::string names;
    for (const char *a : allowed) {
        if (value == a) return value;
        names += std::string(names.empty() ? "" : ", ") + a;
    }
    throw LoadError{fmt::format("{}: \"{}\" is not one of {}", path, clip_utf8(value, 40), names)};
}

// The tflm member's "allocator" (at path ap): an object of at most 16 addresses. Only its soundness
// is kept.
void check_tflm_allocator(const json &a, const std::string &ap)
{
    if (!a.is_object()) {
        throw LoadError{fmt::format("{}: expected an object or null, found {}", ap, type_name(a))};
    }
    if (a.size() > 16) {
        throw LoadError{fmt::format("{}: {} members, more than the 16 this viewer accepts", ap, a.size())};
    }
    for (const auto &m : a.items()) {
        const json &x = m.value();
        if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<int64_t>() >= 0)) {  // an address
            throw LoadError{fmt::format("{}.{}: expected an address (a non-negative integer), found {}", ap,
                                        clip_utf8(m.key(), 40), x.is_number() ? x.dump() : type_name(x))};
        }
    }
}

// One of the tflm member's verdicts (at path vp), with the objects it says were smashed.
TflmVerdict tflm_verdict(const json &v, const std::string &vp, TflmText &text)
{
    TflmVerdict d;
    d.kind = one_of(string(v, "kind", vp), vp + ".kind",
                    {"stack-into-arena", "allocation-failed", "failure-ignored", "tflm-damaged"});
    d.headline = text.str(v, "headline", vp);
    d.evidence = text.lines(v, "evidence", vp);
    const json &smashed = array(v, "smashed", vp, kMaxTflmSmashed);
    for (std::size_t k = 0; k < smashed.size(); k++) {
        const std::string sp = fmt::format("{}.smashed[{}]", vp, k);
        TflmSmashed o;
        o.name = text.str(smashed[k], "name", sp);
        o.addr = u64(smashed[k], "addr", sp);
        o.size = u64(smashed[k], "size", sp);
        o.why = text.str(smashed[k], "why", sp);
        d.smashed.push_back(std::move(o));
    }
    return d;
}

// "tflm" (agentless mode: the post-mortem), null or absent otherwise. Every string is cut to
// kMaxTflmLineBytes, and all of them together may hold kMaxTflmTextBytes: the panel wraps them
// every frame. The caller shows the rest of the snapshot when this throws.
std::optional<Tflm> tflm(const json &root)
{
    auto it = root.find("tflm");
    if (it == root.end() || it->is_null()) {
        return std::nullopt;
    }
    const std::string p = "$.tflm";
    if (!it->is_object()) {
        throw LoadError{fmt::format("{}: expected an object or null, found {}", p, type_name(*it))};
    }
    const json &v = *it;
    TflmText text{p};
    Tflm t;
    t.interpreter_addr = opt_u64(v, "interpreter_addr", p);
    t.condition = one_of(string(v, "condition", p), p + ".condition",
                         {"allocated", "smashed", "not-started", "unfinished", "unknown"});
    t.meaning = text.str(v, "meaning", p);
    t.evidence = text.lines(v, "evidence", p);
    t.arena_symbol = text.str(v, "arena_symbol", p, true);
    if (auto a = v.find("allocator"); a != v.end() && !a->is_null()) {
        check_tflm_allocator(*a, p + ".allocator");
        t.allocator_sound = true;
    }
    const json &objects = array(v, "objects", p, kMaxTflmObjects);
    for (std::size_t i = 0; i < objects.size(); i++) {
        const std::string op = fmt::format("{}.objects[{}]", p, i);
        TflmObject o;
        o.name = text.str(objects[i], "name", op);
        o.addr = u64(objects[i], "addr", op);
        o.size_bytes = u64(objects[i], "size_bytes", op);
        o.sound = boolean(objects[i], "sound", op);
        o.problems = text.lines(objects[i], "problems", op);
        t.objects.push_back(std::move(o));
    }
    const json &verdicts = array(v, "verdicts", p, kMaxTflmVerdicts);
    for (std::size_t i = 0; i < verdicts.size(); i++) {
        t.verdicts.push_back(tflm_verdict(verdicts[i], fmt::format("{}.verdicts[{}]", p, i), text));
    }
    return t;
}

Snapshot header(const json &root)
{
    const std::string path = "$";
    Snapshot s;
    s.version = static_cast<int>(u64(root, "version", path));
    if (s.version < kOldestSnapshotVersion || s.version > kSnapshotVersion) {
        throw LoadError{fmt::format("$.version: snapshot version {}, this viewer reads versions {} to {}; use the "
                                    "viewer from the same arenascope version as the plugin",
                                    s.version, kOldestSnapshotVersion, kSnapshotVersion)};
    }
    const json &src = member(root, "source", path);
    s.elf = string(src, "elf", "$.source", true);
    s.located_by = string(src, "located_by", "$.source", true);
    if (s.located_by == "model") {  // arenascope-plan --snapshot: a model's predicted arena, no target
        s.model = string(src, "model", "$.source");
        s.target = string(src, "target", "$.source");
    }
    s.time = string(src, "time", "$.source", true);
    s.dump = string(src, "dump", "$.source", true);
    s.descriptor_address = u64(src, "descriptor_address", "$.source");
    s.addr_size = static_cast<int>(u64(src, "addr_size", "$.source"));
    const json &state = member(root, "state", path);
    s.invokes = u64(state, "invokes", "$.state");
    s.in_invoke = boolean(state, "in_invoke", "$.state");
    s.measured = boolean(state, "measured", "$.state");
    s.measured_by = string(state, "measured_by", "$.state", true);
    return s;
}

// "stack": the main stack's figures, and its worst case from the ELF when known.
Stack stack(const json &root)
{
    const std::string path = "$";
    Snapshot s;
    const json &st = member(root, "stack", path);
    s.stack.low_addr = u64(st, "low_addr", "$.stack");
    s.stack.high_addr = u64(st, "high_addr", "$.stack");
    s.stack.size_bytes = u64(st, "size_bytes", "$.stack");
    if (s.stack.high_addr < s.stack.low_addr) {
        throw LoadError{"$.stack: high_addr below low_addr"};
    }
    s.stack.sp = opt_u64(st, "sp", "$.stack");
    s.stack.hwm_addr = opt_u64(st, "hwm_addr", "$.stack");
    s.stack.peak_bytes = opt_u64(st, "peak_bytes", "$.stack");
    if (auto it = st.find("peak_is_lower_bound"); it != st.end() && it->is_boolean()) {
        s.stack.peak_is_lower_bound = it->get<bool>();
    }
    if (s.stack.hwm_addr && (*s.stack.hwm_addr > s.stack.high_addr ||
                             (*s.stack.hwm_addr < s.stack.low_addr && !s.stack.peak_is_lower_bound))) {
        throw LoadError{fmt::format("$.stack.hwm_addr: {:#x} is outside the stack {:#x}-{:#x}", *s.stack.hwm_addr,
                                    s.stack.low_addr, s.stack.high_addr)};
    }
    s.stack.arena_end_addr = opt_u64(st, "arena_end_addr", "$.stack");
    s.stack.room_bytes = opt_u64(st, "room_bytes", "$.stack");
    s.stack.required_room_bytes = opt_u64(st, "required_room_bytes", "$.stack");
    s.stack.source = string(st, "source", "$.stack");
    s.stack.in_memory = clip_utf8(string(st, "in_memory", "$.stack", true), kMaxMemoryName);
    s.stack.overflowed = boolean(st, "overflowed", "$.stack");
    s.stack.rule_factor = number(st, "rule_factor", "$.stack");
    if (auto it = st.find("predicted"); it != st.end() && !it->is_null()) {
        const std::string pp = "$.stack.predicted";
        s.stack.predicted_worst_bytes = u64(*it, "worst_bytes", pp);
        s.stack.predicted_thread_bytes = u64(*it, "thread_bytes", pp);
        s.stack.predicted_is_floor = boolean(*it, "is_floor", pp);
        const json &path = array(*it, "path", pp, kMaxPredictedPath);
        for (std::size_t i = 0; i < path.size(); i++) {
            if (!path[i].is_string()) {
                throw LoadError{fmt::format("{}.path[{}]: expected a string, found {}", pp, i, type_name(path[i]))};
            }
            s.stack.predicted_path.push_back(clip_utf8(path[i].get<std::string>(), kMaxFunctionName));
        }
    }
    return s.stack;
}

// "ram_map" (arena budget's RAM map, optional) and "checks".
void ram_map_and_checks(const json &root, Snapshot &s)
{
    const std::string path = "$";
    if (auto it = root.find("ram_map"); it != root.end() && !it->is_null()) {
        const json &areas = array(root, "ram_map", path, kMaxRamMap);
        for (std::size_t i = 0; i < areas.size(); i++) {
            const std::string ap = fmt::format("$.ram_map[{}]", i);
            RamArea r{u64(areas[i], "low_addr", ap), u64(areas[i], "high_addr", ap),
                      clip_utf8(string(areas[i], "what", ap), kMaxFunctionName), string(areas[i], "kind", ap)};
            if (r.high_addr < r.low_addr) throw LoadError{ap + ": high_addr below low_addr"};
            s.ram_map.push_back(std::move(r));
        }
    }
    const json &checks = array(root, "checks", path, kMaxChecks);
    auto verdict = [](const std::string &v, const std::string &p) {
        if (v != "PASS" && v != "WARN" && v != "FAIL") {
            throw LoadError{fmt::format("{}: verdict \"{}\" is not PASS, WARN or FAIL", p, v)};
        }
        return v;
    };
    for (std::size_t i = 0; i < checks.size(); i++) {
        const std::string p = fmt::format("$.checks[{}]", i);
        s.checks.push_back({string(checks[i], "rule", p), verdict(string(checks[i], "verdict", p), p + ".verdict"),
                            string(checks[i], "reason", p)});
    }
    s.verdict = verdict(string(root, "verdict", path), "$.verdict");
}

// "fault" (not null): the exception, its registers, its verdicts and the damaged regions (indices
// into the first arena's regions, streamed).
Fault fault(const json &fj, const Snapshot &s, const Streamed &streamed)
{
    const std::string fp = "$.fault";
    Fault f;
    f.exception = string(fj, "exception", fp, true);
    f.source = string(fj, "source", fp);
    if (s.version >= 3)
        fault_registers(fj, fp, f);
    else
        fault_registers_v2(fj, fp, f);
    f.pc_where = string(fj, "pc_where", fp, true);
    f.lr_where = string(fj, "lr_where", fp, true);
    f.stale = boolean(fj, "stale", fp);
    const json &verdicts = array(fj, "verdicts", fp, kMaxTflmVerdicts);
    for (std::size_t i = 0; i < verdicts.size(); i++) {
        const std::string vp = fmt::format("{}.verdicts[{}]", fp, i);
        FaultVerdict d;
        // The kind is shown nowhere but through its headline: one this viewer does not know (a
        // newer plugin's) is kept as text, not a reason to refuse the snapshot.
        d.kind = string(verdicts[i], "kind", vp).substr(0, 64);
        d.headline = string(verdicts[i], "headline", vp).substr(0, 4096);
        for (const auto &line : array(verdicts[i], "evidence", vp, 64)) {
            if (!line.is_string()) throw LoadError{fmt::format("{}.evidence: expected strings", vp)};
            d.evidence.push_back(line.get<std::string>().substr(0, 4096));
        }
        f.verdicts.push_back(std::move(d));
    }
    for (const char *key : {"bits", "causes", "notes"}) {
        std::vector<std::string> &dst = std::string(key) == "bits"     ? f.bits
                                        : std::string(key) == "causes" ? f.causes
                                                                       : f.notes;
        for (const auto &line : array(fj, key, fp, 64)) {
            if (!line.is_string()) throw LoadError{fmt::format("{}.{}: expected strings", fp, key)};
            dst.push_back(line.get<std::string>().substr(0, 4096));
        }
    }
    const std::size_t n_regions = s.arenas.empty() ? 0 : s.arenas[0].regions.size();
    array(fj, "damaged_regions", fp, kMaxRegions);  // streamed
    for (const uint64_t i : streamed.damaged) {
        if (i >= n_regions) {
            throw LoadError{fmt::format("{}.damaged_regions: {} is not a region index (0..{})", fp, i, n_regions)};
        }
        f.damaged_regions.push_back(int(i));
    }
    if (!streamed.damaged_bad.empty()) {
        throw LoadError{
            fmt::format("{}.damaged_regions: {} is not a region index (0..{})", fp, streamed.damaged_bad, n_regions)};
    }
    return f;
}

// The post-mortem and the RTOS tasks: each left out when malformed, and said.
void optional_parts(const json &root, const Streamed &streamed, Snapshot &s)
{
    // The post-mortem is one more reading of the target: a malformed one is left out and said so
    // (the status line), and the map, the figures and the fault are still shown.
    try {
        if (!streamed.tflm_error.empty()) throw LoadError{streamed.tflm_error};
        s.tflm = tflm(root);
    } catch (const LoadError &e) {
        s.tflm_error = e.message;
    } catch (const std::exception &e) {
        s.tflm_error = fmt::format("$.tflm: {}", e.what());
    }
    // The RTOS's tasks, likewise: one more reading, left out when malformed.
    try {
        if (!streamed.tasks_error.empty()) throw LoadError{streamed.tasks_error};
        s.tasks = tasks(root);
    } catch (const LoadError &e) {
        s.tasks_error = e.message;
    } catch (const std::exception &e) {
        s.tasks_error = fmt::format("$.tasks: {}", e.what());
    }
}

Snapshot snapshot(const json &root, Streamed &streamed)
{
    const std::string path = "$";
    if (!root.is_object()) {
        throw LoadError{fmt::format("$: expected a snapshot object, found {}", type_name(root))};
    }
    if (string(root, "schema", path) != "arenascope.snapshot") {
        throw LoadError{"$.schema: not an arenascope snapshot"};
    }
    Snapshot s = header(root);
    const json &arenas = array(root, "arenas", path, kMaxArenas);
    for (std::size_t i = 0; i < arenas.size(); i++) {
        if (streamed.arenas.size() <= i) streamed.arenas.resize(i + 1);  // an arena without regions
        s.arenas.push_back(arena(arenas[i], fmt::format("$.arenas[{}]", i), streamed.arenas[i]));
    }
    s.stack = stack(root);
    s.guard = band(member(root, "guard", "$"), "$.guard");
    ram_map_and_checks(root, s);
    if (auto it = root.find("fault"); it != root.end() && !it->is_null()) s.fault = fault(*it, s, streamed);
    s.live = live(root);
    optional_parts(root, streamed, s);
    return s;
}

// An error message safe to print and draw on one line: a parse error quotes the bytes it read,
// which may not be UTF-8, and a JSON path quotes keys, whose "\u0000" or "\n" decode to control
// characters (a NUL cut the message short, a newline broke its line, an ESC would drive the
// terminal). Bytes that are not UTF-8 (text.h's utf8_at), the C0 controls, DEL and the C1
// controls (U+0080..U+009F) become \xNN, each byte.
std::string printable(const std::string &s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const Utf8 u = utf8_at(s, i);
        if (u.ok && !(u.cp < 0x20 || (u.cp >= 0x7F && u.cp <= 0x9F))) {
            out.append(s, i, u.length);
        } else {
            for (std::size_t k = 0; k < u.length; k++) {
                out += fmt::format("\\x{:02X}", static_cast<unsigned char>(s[i + k]));
            }
        }
        i += u.length;
    }
    return out;
}

// A place whose value is left out (null) when it passes a limit: error gets the message, its
// path the snapshot's ("$.snapshot.tflm" -> "$.tflm").
JsonPlace left_out_when_malformed(std::vector<std::string> pattern, std::string &error,
                                  const std::vector<std::string> &prefix)
{
    JsonPlace p;
    p.pattern = std::move(pattern);
    p.on_error = [&error, strip = prefix.empty() ? 0 : 2 + prefix[0].size()](const std::string &m) {
        error = strip && m.size() > strip ? "$" + m.substr(strip) : m;
    };
    return p;
}

// The places of a snapshot the reader streams past the DOM or skips (bounded_json.h), for a
// snapshot at prefix (a file: the root; a live message: "snapshot"). Paths in messages are the
// snapshot's ("$.arenas[0]..."), as the DOM's validation gives them.
std::vector<JsonPlace> places(Streamed &st, const std::vector<std::string> &prefix)
{
    auto at = [&prefix](std::initializer_list<const char *> tail) {
        std::vector<std::string> p = prefix;
        p.insert(p.end(), tail.begin(), tail.end());
        return p;
    };
    auto arena = [&st](const std::vector<std::size_t> &ix) -> ArenaStream & {
        if (ix.at(0) >= kMaxArenas) {
            throw LoadError{fmt::format("$.arenas: more than the {} entries this viewer accepts", kMaxArenas)};
        }
        if (st.arenas.size() <= ix[0]) st.arenas.resize(ix[0] + 1);
        return st.arenas[ix[0]];
    };
    std::vector<JsonPlace> out(6);
    out[0].pattern = at({"arenas", "[]", "regions"});
    // Counted to the end, kept up to kMaxRegions: past it the arena is refused with the count
    // (snapshot_refusal), as the planner refuses to write it; an entry takes 2 bytes at least.
    out[0].max_entries = kMaxSnapshotBytes / 2;
    out[0].on_start = [arena](const std::vector<std::size_t> &ix) {
        ArenaStream &a = arena(ix);
        a.regions.clear();
        a.region_count = 0;
        a.regions_error.clear();
    };
    out[0].on_entry = [arena](const std::vector<std::size_t> &ix, std::size_t i, json &&e, const std::string &) {
        ArenaStream &a = arena(ix);
        a.region_count = i + 1;
        if (!a.regions_error.empty() || i >= kMaxRegions) return;  // the first error is the one told
        const std::string path = fmt::format("$.arenas[{}].regions[{}]", ix[0], i);
        try {
            a.regions.push_back(region(e, path));
        } catch (const LoadError &err) {
            a.regions_error = err.message;
        } catch (const std::exception &err) {
            a.regions_error = fmt::format("{}: {}", path, err.what());
        }
    };
    out[1].pattern = at({"arenas", "[]", "plan", "live_bytes"});
    out[1].max_entries = kMaxScopes;
    out[1].on_start = [arena](const std::vector<std::size_t> &ix) {
        ArenaStream &a = arena(ix);
        a.live_bytes.clear();
        a.live_count = 0;
        a.live_error.clear();
    };
    out[1].on_entry = [arena](const std::vector<std::size_t> &ix, std::size_t i, json &&e, const std::string &) {
        ArenaStream &a = arena(ix);
        a.live_count = i + 1;
        if (!a.live_error.empty()) return;
        if (!e.is_number_unsigned() && !(e.is_number_integer() && e.get<int64_t>() >= 0)) {
            a.live_error = fmt::format("$.arenas[{}].plan.live_bytes[{}]: expected a non-negative integer", ix[0], i);
            return;
        }
        a.live_bytes.push_back(e.get<uint64_t>());
    };
    out[2].pattern = at({"fault", "damaged_regions"});
    out[2].max_entries = kMaxRegions;
    out[2].on_start = [&st](const std::vector<std::size_t> &) {
        st.damaged.clear();
        st.damaged_bad.clear();
    };
    out[2].on_entry = [&st](const std::vector<std::size_t> &, std::size_t, json &&e, const std::string &) {
        if (!st.damaged_bad.empty()) return;
        if (e.is_number_unsigned()) {
            st.damaged.push_back(e.get<uint64_t>());
        } else {
            st.damaged_bad = clip_utf8(e.dump(), 40);
        }
    };
    out[3].pattern = at({"arenas", "[]", "plan", "live_regions"});  // not read: region indices per scope
    out[3].skip = true;
    // The post-mortem and the RTOS tasks are left out when malformed, the rest shown: so when
    // they pass a limit too.
    out[4] = left_out_when_malformed(at({"tflm"}), st.tflm_error, prefix);
    out[5] = left_out_when_malformed(at({"tasks"}), st.tasks_error, prefix);
    return out;
}

// A message fit to print and to draw in one line: printable, and at most about 1000 bytes (a
// value it quotes may be 64 KiB; ImGui draws at most 64 K vertices a window).
std::string one_line(const std::string &s)
{
    return printable(clip_utf8(s, 1000));
}

// Reads a snapshot with parse (given the places to stream) and validates it; errors start with where.
LoadResult read(const std::string &where, const std::vector<std::string> &prefix,
                const std::function<json(const std::vector<JsonPlace> &)> &parse,
                const std::function<const json &(const json &)> &snapshot_of)
{
    try {
        Streamed st;
        const json root = parse(places(st, prefix));
        return {snapshot(snapshot_of(root), st), {}};
    } catch (const JsonError &e) {
        return {std::nullopt, one_line(e.syntax ? fmt::format("{}: {}", where, e.message)
                                                : fmt::format("{}: {}: not a snapshot arenascope writes "
                                                              "(docs/snapshot-schema.md)",
                                                              where, e.message))};
    } catch (const LoadError &e) {
        return {std::nullopt, one_line(fmt::format("{}: {}", where, e.message))};
    } catch (const std::exception &e) {
        return {std::nullopt, one_line(fmt::format("{}: {}", where, e.what()))};
    }
}

const json &whole(const json &root)
{
    return root;
}

std::string too_large(const std::string &where, uint64_t size)
{
    return snapshot_refusal(where, SnapshotLimit::Bytes, size);  // the planner's words too
}

}  // namespace

LoadResult parse_snapshot(std::string_view json_text)
{
    if (json_text.size() > kMaxSnapshotBytes) {
        return {std::nullopt, too_large("snapshot", json_text.size())};
    }
    return read(
        "snapshot", {}, [json_text](const std::vector<JsonPlace> &pl) { return parse_bounded(json_text, pl); }, whole);
}

LoadResult load_snapshot_file(const std::string &path)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        return {std::nullopt, fmt::format("{}: no such file", path)};
    }
    if (!std::filesystem::is_regular_file(status)) {
        return {std::nullopt, fmt::format("{}: not a regular file (a snapshot is a JSON file)", path)};
    }
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxSnapshotBytes) {
        return {std::nullopt, too_large(path, size)};
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!file) {
        return {std::nullopt, fmt::format("{}: cannot open the file", path)};
    }
    // Read as it is parsed: the text is never held whole.
    return read(
        path, {}, [&file](const std::vector<JsonPlace> &pl) { return parse_bounded(file.get(), pl); }, whole);
}

std::optional<bool> parse_state_message(std::string_view line)
{
    try {
        json msg = parse_bounded(line);
        if (msg.is_object() && msg.value("type", "") == "state" && msg.value("version", 0) == kStreamVersion &&
            msg.contains("running") && msg["running"].is_boolean()) {
            return msg["running"].get<bool>();
        }
    } catch (const std::exception &) {
    } catch (const JsonError &) {
    }
    return std::nullopt;
}

LoadResult parse_stream_message(std::string_view line)
{
    if (line.size() > kMaxMessageBytes) {
        return {std::nullopt, fmt::format("stream: a message of {} bytes, more than the {} MiB a message may have",
                                          line.size(), kMaxMessageBytes >> 20)};
    }
    std::string refusal;  // the message's own fields wrong: said as before, not as a snapshot's
    auto snapshot_of = [&refusal](const json &msg) -> const json & {
        if (!msg.is_object() || msg.value("type", "") != "snapshot") {
            refusal = "stream: a message that is not {\"type\":\"snapshot\",...}";
        } else if (!msg.contains("version") || msg["version"] != kStreamVersion) {
            refusal = fmt::format("stream: message version is not {}; use the viewer from the same arenascope version",
                                  kStreamVersion);
        } else if (!msg.contains("snapshot")) {
            refusal = "stream: message without a snapshot";
        }
        if (!refusal.empty()) throw std::runtime_error(refusal);
        return msg["snapshot"];
    };
    LoadResult r = read(
        "stream", {"snapshot"}, [line](const std::vector<JsonPlace> &pl) { return parse_bounded(line, pl); },
        snapshot_of);
    if (!refusal.empty()) r.error = refusal;
    return r;
}

}  // namespace arenascope
