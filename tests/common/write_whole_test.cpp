// common/include/arenascope/write_whole.h, the file writer of the planner and the viewer (issue 37:
// "the temp removed on failure and on signals"). A signal in the middle of a write removes the
// temporary file and then ends the process as it would have without the writer; each such case runs
// in a forked child, which the test expects to die of that signal with the old file intact and no
// temporary file left in the folder.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "arenascope/write_whole.h"

namespace fs = std::filesystem;
using arenascope::write_whole;

namespace {

// A folder of its own, with out.txt holding "old", mode 0600.
struct Folder {
    fs::path dir, target;
    Folder()
    {
        std::string name = (fs::temp_directory_path() / "arenascope-write-whole-XXXXXX").string();
        if (!::mkdtemp(name.data())) throw std::runtime_error("mkdtemp failed");
        dir = name;
        target = dir / "out.txt";
        std::ofstream(target) << "old";
        fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
    }
    ~Folder() { fs::remove_all(dir); }
    std::string content() const
    {
        std::ifstream in(target, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    // Every file but out.txt: a temporary file left behind.
    std::vector<std::string> others() const
    {
        std::vector<std::string> out;
        for (const auto &e : fs::directory_iterator(dir))
            if (e.path() != target) out.push_back(e.path().filename().string());
        return out;
    }
};

// Runs child() in a forked process and returns its wait status. The child ends with _exit(its
// return value) when it lives through.
template <typename F> int in_child(F child)
{
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const rlimit no_core = {0, 0};  // SIGQUIT and SIGXFSZ dump core by default
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::_exit(child());
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return status;
}

std::string describe(int status)
{
    if (WIFSIGNALED(status)) return std::string("died of ") + strsignal(WTERMSIG(status));
    if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
    return "status " + std::to_string(status);
}

// The fill: half the file, then `sig` raised on the process with the temporary file in the
// folder (exit 4 if it is not: the test would prove nothing), then the rest.
int write_and_raise(const Folder &f, int sig)
{
    std::signal(sig, SIG_DFL);
    const std::string why = write_whole(f.target.string(), [&](std::ostream &out) {
        out << "new, half";
        out.flush();
        if (f.others().size() != 1) ::_exit(4);
        ::raise(sig);
        out << " and the rest";
    });
    return why.empty() ? 3 : 5;  // lived through the signal
}

}  // namespace

TEST(WriteWhole, ASignalMidWriteRemovesTheTemporaryFileAndEndsTheProcessWithIt)
{
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ}) {
        Folder f;
        const int status = in_child([&] { return write_and_raise(f, sig); });
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
            << strsignal(sig) << ": the child " << describe(status);
        EXPECT_EQ(f.content(), "old") << strsignal(sig);
        EXPECT_EQ(fs::status(f.target).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
        EXPECT_EQ(f.others(), std::vector<std::string>()) << strsignal(sig) << ": a temporary file is left";
    }
}

// The kernel's own signal from the write: the temporary file grows past RLIMIT_FSIZE (SIGXFSZ).
TEST(WriteWhole, TheFileSizeLimitMidWriteLeavesNoTemporaryFile)
{
    Folder f;
    const int status = in_child([&] {
        std::signal(SIGXFSZ, SIG_DFL);
        const rlimit small = {4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &small);
        const std::string why =
            write_whole(f.target.string(), [](std::ostream &out) { out << std::string(1 << 20, 'x'); });
        return why.empty() ? 3 : 5;
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << "the child " << describe(status);
    EXPECT_EQ(f.content(), "old");
    EXPECT_EQ(f.others(), std::vector<std::string>());
}

// A signal the process ignores stays ignored: the write goes on and is whole.
TEST(WriteWhole, AnIgnoredSignalStaysIgnored)
{
    Folder f;
    const int status = in_child([&] {
        std::signal(SIGHUP, SIG_IGN);
        const std::string why = write_whole(f.target.string(), [](std::ostream &out) {
            out << "new, half";
            ::raise(SIGHUP);
            out << " and the rest";
        });
        struct sigaction after {};
        ::sigaction(SIGHUP, nullptr, &after);
        return why.empty() && after.sa_handler == SIG_IGN ? 0 : 1;
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child " << describe(status);
    EXPECT_EQ(f.content(), "new, half and the rest");
    EXPECT_EQ(f.others(), std::vector<std::string>());
}

namespace {
volatile std::sig_atomic_t own_handler_ran = 0;
void own_handler(int)
{
    own_handler_ran = 1;
}
}  // namespace

// A handler of the program's own runs after the temporary file is removed; the write fails and
// says why; the handler is in place again after the write.
TEST(WriteWhole, AProgramsOwnHandlerRunsAfterTheTemporaryFileIsRemoved)
{
    Folder f;
    const int status = in_child([&] {
        std::signal(SIGTERM, own_handler);
        const std::string why = write_whole(f.target.string(), [](std::ostream &out) {
            out << "new, half";
            ::raise(SIGTERM);
            out << " and the rest";
        });
        struct sigaction after {};
        ::sigaction(SIGTERM, nullptr, &after);
        if (!own_handler_ran) return 1;
        if (why != std::string("interrupted by ") + strsignal(SIGTERM) + " (nothing written)") return 2;
        return after.sa_handler == own_handler ? 0 : 3;
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child " << describe(status);
    EXPECT_EQ(f.content(), "old");
    EXPECT_EQ(f.others(), std::vector<std::string>());
}

// An exception from the fill goes on up; the temporary file does not stay; the handlers before the
// write are back.
TEST(WriteWhole, AnExceptionFromTheFillLeavesTheOldFileAndNoTemporaryFile)
{
    Folder f;
    struct sigaction before {};
    ::sigaction(SIGINT, nullptr, &before);
    EXPECT_THROW(write_whole(f.target.string(),
                             [](std::ostream &out) {
                                 out << "new, half";
                                 throw std::runtime_error("the fill failed");
                             }),
                 std::runtime_error);
    EXPECT_EQ(f.content(), "old");
    EXPECT_EQ(f.others(), std::vector<std::string>());
    struct sigaction after {};
    ::sigaction(SIGINT, nullptr, &after);
    EXPECT_EQ(after.sa_handler, before.sa_handler);
}

// Done: the file is whole, its mode kept, the handlers as they were.
TEST(WriteWhole, AWholeWritePutsTheHandlersBack)
{
    Folder f;
    struct sigaction before[2] = {};
    ::sigaction(SIGINT, nullptr, &before[0]);
    ::sigaction(SIGTERM, nullptr, &before[1]);
    EXPECT_EQ(write_whole(f.target.string(), [](std::ostream &out) { out << "new"; }), "");
    EXPECT_EQ(f.content(), "new");
    EXPECT_EQ(fs::status(f.target).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(f.others(), std::vector<std::string>());
    struct sigaction after[2] = {};
    ::sigaction(SIGINT, nullptr, &after[0]);
    ::sigaction(SIGTERM, nullptr, &after[1]);
    EXPECT_EQ(after[0].sa_handler, before[0].sa_handler);
    EXPECT_EQ(after[1].sa_handler, before[1].sa_handler);
}

// A symbolic link another user made in a shared sticky folder (as in /tmp) is not followed: its
// target is left alone (the kernel's fs.protected_symlinks rule); one the writer owns is. Making a
// link owned by another uid needs root (lchown): skipped otherwise.
TEST(WriteWhole, ALinkAnotherUserPlantedInAStickySharedFolderIsNotFollowed)
{
    if (::geteuid() != 0) GTEST_SKIP() << "lchown to another uid needs root";
    Folder f;
    const fs::path shared = f.dir / "shared";
    fs::create_directory(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    const fs::path planted = shared / "out.html";
    fs::create_symlink(f.target, planted);
    ASSERT_EQ(::lchown(planted.c_str(), 12345, 12345), 0);
    const std::string why = write_whole(planted.string(), [](std::ostream &out) { out << "new"; });
    EXPECT_NE(why.find("symbolic link another user (uid 12345) made in a shared folder"), std::string::npos) << why;
    EXPECT_EQ(f.content(), "old");
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(planted)));
    ASSERT_EQ(::lchown(planted.c_str(), 0, 0), 0);  // the writer's own link: written through
    EXPECT_EQ(write_whole(planted.string(), [](std::ostream &out) { out << "mine"; }), "");
    EXPECT_EQ(f.content(), "mine");
}
