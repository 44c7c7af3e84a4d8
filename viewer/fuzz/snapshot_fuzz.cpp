// libFuzzer harness of the viewer's snapshot reader (docs/fuzzing.md): parse_snapshot,
// parse_stream_message (the input as a whole line, and as the snapshot of a message) and
// parse_state_message on every input. Aborts when a result is neither a snapshot nor an error,
// or an error is not one printable line of at most about 1000 bytes (the window draws it);
// ASan and UBSan abort on memory errors, -rss_limit_mb on memory past the bound.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "snapshot.h"

namespace {

void check(const arenascope::LoadResult &r, const char *what)
{
    const bool ok = r.snapshot ? r.error.empty() : !r.error.empty() && r.error.size() <= 1100;
    bool printable = true;
    for (const char c : r.error) printable = printable && c != '\n' && c != '\r' && c != '\0';
    if (!ok || !printable) {
        std::fprintf(stderr, "arenascope fuzz: %s: %s error of %zu bytes: %.300s\n", what,
                     r.snapshot ? "a snapshot with an" : "no snapshot and a bad", r.error.size(), r.error.c_str());
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    check(arenascope::parse_snapshot(text), "parse_snapshot");
    check(arenascope::parse_stream_message(text), "parse_stream_message(line)");
    const std::string message = "{\"type\":\"snapshot\",\"version\":1,\"snapshot\":" + std::string(text) + "}";
    check(arenascope::parse_stream_message(message), "parse_stream_message(snapshot)");
    arenascope::parse_state_message(text);
    return 0;
}
