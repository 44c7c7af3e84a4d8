// arenascope viewer: the live link to the GDB plugin (`arena view`): a loopback TCP client on a
// background thread that reads JSON lines, keeps the last good snapshot and reconnects.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "snapshot.h"

namespace arenascope {

class Link {
public:
    enum class State { Connecting, Connected, Lost };

    // host must be a loopback address (127.0.0.0/8, ::1 or "localhost"); start() refuses others.
    Link(std::string host, int port) : host_(std::move(host)), port_(port) {}
    ~Link();
    bool start(std::string &error);

    // The newest snapshot since the last call, if any.
    std::optional<Snapshot> take();
    State state() const { return state_; }
    bool target_running() const { return running_; }  // a state message said the target runs again
    std::string status() const;                       // one line for the status bar
    std::string last_error() const;
    unsigned received() const { return received_; }

private:
    void run();
    bool read_lines(int fd);

    std::string host_;
    int port_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<State> state_{State::Connecting};
    std::atomic<unsigned> received_{0};
    std::atomic<bool> running_{false};
    mutable std::mutex mutex_;
    std::optional<Snapshot> pending_;
    std::string error_;
};

bool is_loopback(const std::string &host);

}  // namespace arenascope
