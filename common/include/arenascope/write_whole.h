// arenascope: the one file writer of the C++ parts (the planner's --snapshot, --header and
// --write-offline-plan outputs, the viewer's --report, --svg and --png). Header-only, C++17, POSIX.
//
// write_whole(name, fill) writes the file whole or not at all: into a new temporary file in its
// directory (mkstemp: created exclusively with a name no one can plant, never through a link left
// there), then renamed over it (a full disk leaves the old file, never a truncated one). A link to
// a file is written through (its target replaced); a directory, a device, a FIFO, or a link to
// one, is refused. The file keeps the mode it had (a 0600 file stays 0600); a new one gets the
// mode a plain create would (0666 less the umask). Returns "" or why it failed. The Python side's
// twin is gdbplugin/arenascope_plugin/present/files.py.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace arenascope {

inline std::string write_whole(const std::string &name, const std::function<void(std::ostream &)> &fill)
{
    std::error_code ec;
    const auto status = std::filesystem::status(name, ec);
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        return "not a regular file (a directory, a device, a FIFO, or a link to one): give a file name";
    // /dev/stdout with standard output sent to a file is that file: replacing it would lose what
    // is printed after (the summary goes to the old file).
    struct stat target;
    struct stat stream;
    const bool exists = ::stat(name.c_str(), &target) == 0;
    if (exists)
        for (int fd : {1, 2})
            if (::fstat(fd, &stream) == 0 && stream.st_dev == target.st_dev && stream.st_ino == target.st_ino)
                return std::string("it is the file standard ") + (fd == 1 ? "output" : "error") +
                       " goes to: give another file name";
    std::string path = name;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(name, ec)) && std::filesystem::exists(status))
        path = std::filesystem::canonical(name, ec).string();
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::string tmp = ((dir.empty() ? std::filesystem::path(".") : dir) / ".arenascope-XXXXXX").string();
    const int fd = mkstemp(tmp.data());
    if (fd < 0) return std::strerror(errno);
    mode_t mode = target.st_mode & 07777;
    if (!exists) {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd, mode);
    bool written;
    {
        __gnu_cxx::stdio_filebuf<char> buf(fd, std::ios::out | std::ios::binary);  // closes fd
        std::ostream out(&buf);
        fill(out);
        written = static_cast<bool>(out.flush()) && buf.close() != nullptr;
    }
    const std::string why = std::strerror(errno);
    std::error_code renamed;
    if (written) std::filesystem::rename(tmp, path, renamed);
    if (!written || renamed) {
        std::remove(tmp.c_str());
        return renamed ? renamed.message() : why;
    }
    return {};
}

}  // namespace arenascope
