// arenascope viewer: the plugin's diff document; see diffdoc.h.
#include "diffdoc.h"

#include <algorithm>

#include "snapshot.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace arenascope {
namespace {

using nlohmann::json;
constexpr std::size_t kMaxDiffBytes = 64u << 20, kMaxItems = 100000, kMaxArenas = 16, kMaxText = 4096;

struct Bad {
    std::string message;
};

const json &at(const json &o, const char *key, const std::string &path)
{
    if (!o.is_object()) throw Bad{fmt::format("{}: expected an object", path)};
    const auto it = o.find(key);
    if (it == o.end()) throw Bad{fmt::format("{}.{}: missing", path, key)};
    return *it;
}

int64_t integer(const json &o, const char *key, const std::string &path)
{
    const json &v = at(o, key, path);
    if (!v.is_number_integer()) throw Bad{fmt::format("{}.{}: expected an integer", path, key)};
    return v.get<int64_t>();
}

std::string text(const json &o, const char *key, const std::string &path)
{
    const json &v = at(o, key, path);
    if (!v.is_string()) throw Bad{fmt::format("{}.{}: expected a string", path, key)};
    std::string s = v.get<std::string>();
    if (s.size() > kMaxText) s.resize(kMaxText);
    return s;
}

const json &list(const json &o, const char *key, const std::string &path)
{
    const json &v = at(o, key, path);
    if (!v.is_array()) throw Bad{fmt::format("{}.{}: expected an array", path, key)};
    if (v.size() > kMaxItems) throw Bad{fmt::format("{}.{}: more than {} entries", path, key, kMaxItems)};
    return v;
}

std::string life(const json &r)
{
    const json &f = r.value("first_use", json()), &l = r.value("last_use", json());
    return f.is_number_integer() && l.is_number_integer() ? fmt::format("{}..{}", f.get<int64_t>(), l.get<int64_t>())
                                                          : std::string("whole run");
}

// One line per change, in the words of the plugin's text report (present/diff.py).
std::string change_line(const json &pair, const std::string &p)
{
    const json &a = at(pair, "a", p), &b = at(pair, "b", p);
    std::string detail;
    for (const json &c : list(pair, "changes", p)) {
        const std::string what = c.is_string() ? c.get<std::string>() : "?";
        std::string d;
        if (what == "moved") d = fmt::format("+{} -> +{}", integer(a, "offset", p), integer(b, "offset", p));
        if (what == "grew" || what == "shrank") {
            d = fmt::format("{} B -> {} B", integer(a, "size_bytes", p), integer(b, "size_bytes", p));
        }
        if (what == "lifetime") d = fmt::format("scopes {} -> {}", life(a), life(b));
        if (what == "kind") d = text(a, "kind", p) + " -> " + text(b, "kind", p);
        detail += (detail.empty() ? "" : ", ") + what + (d.empty() ? "" : " " + d);
    }
    return text(pair, "name", p) + ": " + detail;
}

DiffDoc read(const json &j, const std::string &path)
{
    if (!j.is_object() || j.value("schema", "") != "arenascope.diff") {
        throw Bad{fmt::format("{}: not an arenascope diff (write one with: arena diff A.json B.json --json)", path)};
    }
    if (!j.contains("version") || j["version"] != 1) {
        throw Bad{fmt::format("{}: diff version {}, this viewer reads version 1", path,
                              j.contains("version") ? j["version"].dump() : "none")};
    }
    DiffDoc d;
    d.summary = text(j, "summary", path);
    for (auto [side, out] : {std::pair{"a", &d.a_file}, std::pair{"b", &d.b_file}}) {  // optional here
        const auto s = j.find(side);
        if (s != j.end() && s->is_object() && s->contains("file") && (*s)["file"].is_string()) {
            *out = (*s)["file"].get<std::string>();
        }
    }
    const json &arenas = list(j, "arenas", path);
    if (arenas.size() > kMaxArenas) throw Bad{fmt::format("{}.arenas: more than {}", path, kMaxArenas)};
    for (std::size_t i = 0; i < arenas.size(); i++) {
        const std::string p = fmt::format("{}.arenas[{}]", path, i);
        DiffArena a;
        a.index = int(integer(arenas[i], "index", p));
        const json &rs = at(arenas[i], "regions", p);
        if (rs.is_null()) {
            a.lines.push_back(text(arenas[i], "in", p) == "a" ? "vanished: the whole arena"
                                                              : "appeared: the whole arena");
        } else {
            const json &changed = list(rs, "changed", p + ".regions");
            for (std::size_t k = 0; k < changed.size(); k++) {
                const std::string q = fmt::format("{}.regions.changed[{}]", p, k);
                a.before.push_back(int(integer(at(changed[k], "a", q), "index", q + ".a")));
                a.after.push_back(int(integer(at(changed[k], "b", q), "index", q + ".b")));
                a.lines.push_back(change_line(changed[k], q));
            }
            for (const char *side : {"appeared", "vanished"}) {
                const json &items = list(rs, side, p + ".regions");
                for (std::size_t k = 0; k < items.size(); k++) {
                    const std::string q = fmt::format("{}.regions.{}[{}]", p, side, k);
                    const json &r = at(items[k], "region", q);
                    (side[0] == 'a' ? a.after : a.before).push_back(int(integer(r, "index", q + ".region")));
                    a.lines.push_back(fmt::format("{}: {} at +{} ({} B)", text(items[k], "name", q), side,
                                                  integer(r, "offset", q), integer(r, "size_bytes", q)));
                }
            }
        }
        d.arenas.push_back(std::move(a));
    }
    return d;
}

}  // namespace

DiffLoad parse_diff(std::string_view json_text, const std::string &path)
{
    json j = json::parse(json_text.begin(), json_text.end(), nullptr, false);
    if (j.is_discarded()) return {std::nullopt, fmt::format("{}: not JSON", path)};
    try {
        return {read(j, path), {}};
    } catch (const Bad &b) {
        return {std::nullopt, b.message};
    } catch (const json::exception &e) {  // a member of the wrong type where a default was read
        return {std::nullopt, fmt::format("{}: malformed ({})", path, e.what())};
    }
}

std::string diff_mismatch(const DiffDoc &d, const std::string &diff_path, const Snapshot &before, const Snapshot &after)
{
    for (const DiffArena &a : d.arenas) {
        for (auto [snap, indices, name] :
             {std::tuple{&before, &a.before, "--before"}, std::tuple{&after, &a.after, "the"}}) {
            const auto arena = std::find_if(snap->arenas.begin(), snap->arenas.end(),
                                            [&](const Arena &x) { return x.index == a.index; });
            for (int idx : *indices) {
                const bool held =
                    arena != snap->arenas.end() && std::any_of(arena->regions.begin(), arena->regions.end(),
                                                               [&](const Region &r) { return r.index == idx; });
                if (!held) {
                    return fmt::format("{}: names region {} of arena {}, which {} snapshot does not hold: it is not "
                                       "the diff of these two files (write it with: arena diff A.json B.json --json)",
                                       diff_path, idx, a.index, name);
                }
            }
        }
    }
    return {};
}

DiffLoad load_diff_file(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return {std::nullopt, fmt::format("{}: no such file", path)};
    const auto size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxDiffBytes) {
        return {std::nullopt, fmt::format("{}: larger than the {} MiB a diff may have", path, kMaxDiffBytes >> 20)};
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return parse_diff(s.str(), path);
}

}  // namespace arenascope
