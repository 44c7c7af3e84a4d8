// arenascope: the one file writer of the C++ parts (the planner's --snapshot, --header and
// --write-offline-plan outputs, the viewer's --report, --svg and --png). Header-only, C++17, POSIX.
//
// write_whole(name, fill) writes the file whole or not at all: into a new temporary file in its
// directory (mkstemp: created exclusively with a name no one can plant, never through a link left
// there), then renamed over it (a full disk leaves the old file, never a truncated one). A link to
// a file is written through (its target replaced), but not a link another user planted in a
// shared sticky directory such as /tmp (planted_link: the kernel's fs.protected_symlinks rule,
// which resolving the link here would otherwise bypass); a directory, a device, a FIFO, or a link
// to one, is refused. The file keeps the mode it had (a 0600 file stays 0600); a new one gets the
// mode a plain create would (0666 less the umask). Returns "" or why it failed. The Python side's
// twin is gdbplugin/arenascope_plugin/present/files.py.
//
// The temporary file is removed whatever ends the write: a failure, an exception from fill (then
// rethrown), or one of the signals that end a process (kCleanupSignals: Ctrl-C, kill, a hang-up,
// a closed pipe, Ctrl-\, the file size limit). For those, while a write is under way, a handler
// unlinks the temporary file and then gives the signal back to the disposition it had: by default
// the process dies of it as it would have without the writer (its exit status says which
// signal); a signal ignored before stays ignored; a handler of the program's own runs after the
// unlink, and the write then fails ("interrupted by ..."). The handlers before the write are put
// back after it. Only SIGKILL (and a crash) can leave a `.arenascope-XXXXXX` file behind. One
// write at a time arms the handler: a write started while another is under way (another thread,
// or inside a fill) is cleaned up on failure but not on a signal.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
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

namespace write_whole_detail {

// The signals whose default action ends the process, and that can end it in the middle of a
// write: SIGINT (Ctrl-C), SIGTERM (kill, timeout), SIGHUP (the terminal closed), SIGQUIT
// (Ctrl-\), SIGPIPE (kill -PIPE; the fill writes to the file, not to a pipe, so a real one is
// unlikely but costs nothing) and SIGXFSZ (the temporary file grows past RLIMIT_FSIZE: raised by
// the write itself).
// Why the symbolic link `name` is not followed ("" when it may be): in a sticky, world-writable
// directory a link is followed only when the writer or the directory's owner owns it, as the
// kernel's fs.protected_symlinks rule says (Documentation/admin-guide/sysctl/fs.rst); a writer
// that resolves the link itself (canonical) would otherwise bypass it.
inline std::string planted_link(const std::string &name)
{
    struct stat link;
    struct stat dir;
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::absolute(std::filesystem::path(name), ec).parent_path();
    if (::lstat(name.c_str(), &link) != 0 || !S_ISLNK(link.st_mode) || ::stat(parent.c_str(), &dir) != 0) return "";
    const bool shared = (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH);
    if (!shared || link.st_uid == ::geteuid() || link.st_uid == dir.st_uid) return "";
    return "it is a symbolic link another user (uid " + std::to_string(link.st_uid) +
           ") made in a shared folder anyone can write to: not followed (the kernel's protected_symlinks rule); "
           "remove it or give another file name";
}

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};
constexpr int kSignals = sizeof kCleanupSignals / sizeof kCleanupSignals[0];

// What the handler reads: the temporary file's path (mkstemp fills in its name in place), whether
// it is armed, and each signal's disposition before the write. Written only outside the handler,
// and `pending` is armed only once the rest is in place.
inline char pending[4096];
inline volatile std::sig_atomic_t armed = 0;
inline volatile std::sig_atomic_t fired = 0;  // the signal that removed the file, 0 if none
inline struct sigaction previous[kSignals];
inline std::atomic<bool> claimed{false};  // one write at a time owns the above

inline void on_signal(int sig)
{
    const int saved = errno;
    if (armed) ::unlink(pending);  // async-signal-safe, as is all of this
    fired = sig;
    for (int i = 0; i < kSignals; ++i)
        if (kCleanupSignals[i] == sig) ::sigaction(sig, &previous[i], nullptr);
    // Blocked while this runs: delivered again, to the restored disposition, when it returns.
    ::raise(sig);
    errno = saved;
}

// Arms the handler for one write: the handlers in place from the constructor (for each signal
// not ignored) to the destructor, which removes the temporary file unless it was renamed and
// puts the old handlers back.
class Guard {
public:
    Guard() : owner_(!claimed.exchange(true))
    {
        if (!owner_) return;
        struct sigaction action {};
        action.sa_handler = on_signal;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        for (int sig : kCleanupSignals) sigaddset(&action.sa_mask, sig);
        fired = 0;
        for (int i = 0; i < kSignals; ++i) {
            ::sigaction(kCleanupSignals[i], nullptr, &previous[i]);
            if (previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &action, nullptr);
        }
    }
    Guard(const Guard &) = delete;
    Guard &operator=(const Guard &) = delete;
    // mkstemp on `tmp`: in the handler's buffer when this write owns it (armed from before the
    // name is chosen, so no moment has the file and not the handler's knowledge of it).
    int create(std::string &tmp)
    {
        if (!owner_ || tmp.size() >= sizeof pending) {
            const int fd = ::mkstemp(tmp.data());
            if (fd >= 0) created_ = tmp;
            return fd;
        }
        std::memcpy(pending, tmp.c_str(), tmp.size() + 1);
        armed = 1;
        const int fd = ::mkstemp(pending);
        if (fd >= 0) created_ = tmp = pending;
        return fd;
    }
    void renamed() { created_.clear(); }
    // The signal that removed the temporary file and then let the write go on (a handler of the
    // program's own that returned), 0 if none.
    int interrupted() const { return owner_ ? fired : 0; }
    ~Guard()
    {
        if (!created_.empty()) ::unlink(created_.c_str());
        if (!owner_) return;
        armed = 0;  // after the rename or the unlink: a signal meanwhile unlinks a name now gone
        for (int i = 0; i < kSignals; ++i) ::sigaction(kCleanupSignals[i], &previous[i], nullptr);
        claimed.store(false);
    }

private:
    bool owner_;
    std::string created_;  // the temporary file, until it is renamed
};

}  // namespace write_whole_detail

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
    if (const std::string planted = write_whole_detail::planted_link(name); !planted.empty()) return planted;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(name, ec)) && std::filesystem::exists(status))
        path = std::filesystem::canonical(name, ec).string();
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::string tmp = ((dir.empty() ? std::filesystem::path(".") : dir) / ".arenascope-XXXXXX").string();
    write_whole_detail::Guard guard;  // removes tmp on every way out but the rename
    const int fd = guard.create(tmp);
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
    const bool whole = written && !guard.interrupted();
    std::error_code renamed;
    if (whole) std::filesystem::rename(tmp, path, renamed);
    if (whole && !renamed) {
        guard.renamed();
        return {};
    }
    if (const int sig = guard.interrupted())  // the temporary file went with the signal
        return std::string("interrupted by ") + strsignal(sig) + " (nothing written)";
    return renamed ? renamed.message() : why;
}

}  // namespace arenascope
