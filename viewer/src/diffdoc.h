// arenascope viewer: the diff the plugin computed (`arena diff A B --json`, docs/diff-schema.json,
// "arenascope.diff" version 1), read to draw two snapshots side by side with what changed
// marked. The viewer matches no region itself: which regions moved, grew, shrank, appeared or
// vanished is the plugin's answer (gdbplugin/arenascope_plugin/analyse/diff.py), read here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arenascope {

struct DiffArena {
    int index = 0;                   // the arena's index in both snapshots
    std::vector<int> before, after;  // snapshot region indices ("index") to mark in A and in B
    std::vector<std::string> lines;  // one per change: "moved tensor 5: +608 -> +624"
};

struct DiffDoc {
    std::string summary;         // the text report's last line
    std::string a_file, b_file;  // the files the diff was made from, as given (empty: the target now)
    std::vector<DiffArena> arenas;
};

struct DiffLoad {
    std::optional<DiffDoc> diff;
    std::string error;  // path-named; empty when diff is set
};

DiffLoad parse_diff(std::string_view json_text, const std::string &path);
DiffLoad load_diff_file(const std::string &path);  // at most 64 MiB

struct Snapshot;
// Whether the diff can be of these two snapshots: every region it names exists (by "index") in
// the arena of that index, on its side. The reason it cannot, naming the diff and what to do; or
// empty. (The viewer cannot prove a diff is of these files; it refuses one that is not.)
std::string diff_mismatch(const DiffDoc &d, const std::string &diff_path, const Snapshot &before,
                          const Snapshot &after);

}  // namespace arenascope
