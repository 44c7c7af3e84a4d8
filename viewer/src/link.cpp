// arenascope viewer: live link; see link.h. POSIX sockets, one background thread.
#include "link.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace arenascope {

bool is_loopback(const std::string &host)
{
    if (host == "localhost" || host == "::1") return true;
    in_addr a{};
    return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

Link::~Link()
{
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

bool Link::start(std::string &error)
{
    if (!is_loopback(host_)) {
        error = fmt::format("--connect {}: the live link is loopback only (127.0.0.1, ::1, localhost)", host_);
        return false;
    }
    if (port_ <= 0 || port_ > 65535) {
        error = fmt::format("--connect: port {} is not 1..65535", port_);
        return false;
    }
    thread_ = std::thread([this] { run(); });
    return true;
}

std::optional<Snapshot> Link::take()
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Snapshot> s = std::move(pending_);
    pending_.reset();
    return s;
}

std::string Link::last_error() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

std::string Link::status() const
{
    switch (state_.load()) {
    case State::Connecting:
        return fmt::format("live: connecting to {}:{} (start it in GDB with `arena view`)", host_, port_);
    case State::Connected:
        return fmt::format("live: connected to {}:{}, {} snapshot(s) received{}", host_, port_, received_.load(),
                           running_ ? "; the target is running: this is the last stop's snapshot" : "");
    case State::Lost:
        return fmt::format("live: GDB closed {}:{} (GDB exited, or `arena view --stop`): showing the last snapshot; "
                           "reconnecting when GDB serves again (`arena view`)",
                           host_, port_);
    }
    return {};
}

bool Link::read_lines(int fd)
{
    std::string buffer;
    char chunk[65536];
    while (!stop_) {
        pollfd p{fd, POLLIN, 0};
        const int r = poll(&p, 1, 200);
        if (r < 0) return false;
        if (r == 0) continue;
        const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return false;
        buffer.append(chunk, std::size_t(n));
        std::size_t start = 0, nl;
        while ((nl = buffer.find('\n', start)) != std::string::npos) {
            const std::string_view line = std::string_view(buffer).substr(start, nl - start);
            if (line.size() < 200) {
                if (auto running = parse_state_message(line)) {
                    running_ = *running;
                    start = nl + 1;
                    continue;
                }
            }
            LoadResult res = parse_stream_message(line);
            std::lock_guard<std::mutex> lock(mutex_);
            if (res.snapshot) {
                pending_ = std::move(res.snapshot);
                received_++;
                running_ = false;
                error_.clear();
            } else {
                error_ = res.error;
            }
            start = nl + 1;
        }
        buffer.erase(0, start);
        if (buffer.size() > kMaxMessageBytes) {
            std::lock_guard<std::mutex> lock(mutex_);
            error_ =
                fmt::format("stream: a message longer than {} MiB; dropped the connection", kMaxMessageBytes >> 20);
            return false;
        }
    }
    return true;
}

void Link::run()
{
    bool was_connected = false;
    while (!stop_) {
        addrinfo hints{}, *res = nullptr;
        hints.ai_socktype = SOCK_STREAM;
        const std::string port = std::to_string(port_);
        int fd = -1;
        if (getaddrinfo(host_.c_str(), port.c_str(), &hints, &res) == 0) {
            for (addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
                fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
                if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
                    close(fd);
                    fd = -1;
                }
            }
            freeaddrinfo(res);
        }
        if (fd < 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            error_ = fmt::format("cannot connect to {}:{}: {} (is `arena view` serving there?)", host_, port_,
                                 std::strerror(errno));
        }
        if (fd >= 0) {
            state_ = State::Connected;
            was_connected = true;
            read_lines(fd);
            close(fd);
        }
        state_ = was_connected ? State::Lost : State::Connecting;
        for (int i = 0; i < 5 && !stop_; i++) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

}  // namespace arenascope
