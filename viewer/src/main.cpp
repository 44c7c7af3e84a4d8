// arenascope-viewer: platform boilerplate (GLFW, OpenGL 3, Dear ImGui) and the command line.
//
//   arenascope-viewer SNAPSHOT.json              draw a snapshot file
//   arenascope-viewer --connect 127.0.0.1:PORT   draw the live stream of `arena view` in GDB
//   options: --screenshot OUT.png [--frames N]   render headless and write a PNG (xvfb-run works)
//            --wait-snapshot SECONDS             with --connect: wait that long for the first one
//            --snapshots N                       ... or for the N-th (reconnection tests)
//            --layout-out FILE.json              write the last frame's geometry (pixel tests)
//            --size WxH                          window size (default 1280x800, at least 1024x700);
//                                                without it a screenshot grows taller (to 8192 px)
//                                                until the summary and fault panels show every line
//            --zoom F --center OFFSET            the map's view: F times the whole arena (1..1e6),
//                                                centred on OFFSET bytes from its base (default: middle)
//            --arena N                           show arena N of a multi-arena snapshot (Tab switches)
//            --bench FRAMES                      print the mean frame time and exit
//            --bench-rebuild                     with --bench: rebuild the region rasters every frame
//            --bench-motion                      with --bench: zoom and pan the maps every frame, as
//                                                the wheel and a drag do (App::bench_motion)
//   arenascope-viewer SNAPSHOT.json --report OUT.html | --svg OUT.svg [--name TEXT]
//                                                the static report (report.h): no window, no display;
//                                                --name: what it calls the snapshot (default its path)
//   arenascope-viewer B.json --before A.json [--diff D.json]
//                                                compare: A's maps above B's, the changes the diff
//                                                (arena diff A B --json) names striped in both
//   arenascope-viewer --version                  print the version (VERSION at the repository root)
// Exit status: 0 ok; 2 bad arguments, unreadable or invalid snapshot (headless), no display.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app.h"
#include "arenascope/write_whole.h"
#include "report.h"

#ifndef ARENASCOPE_VERSION  // the build defines it from VERSION; a compile outside CMake says so
#define ARENASCOPE_VERSION "unknown"
#endif

namespace {

struct Options {
    std::string file, connect, screenshot, layout_out, report, svg, before, diff, name;
    int frames = 3, width = 1280, height = 800, bench = 0, snapshots = 1, arena = 0;
    bool bench_rebuild = false, bench_motion = false, version = false, sized = false;
    double zoom = 1;
    std::optional<double> center;
    double wait_snapshot = 0;
};

const char *kUsage =
    "usage: arenascope-viewer SNAPSHOT.json | --connect 127.0.0.1:PORT\n"
    "       [--screenshot OUT.png [--frames N]] [--wait-snapshot SECONDS] [--layout-out FILE.json]\n"
    "       [--size WxH] [--zoom F] [--center OFFSET] [--arena N] [--snapshots N]\n"
    "       [--bench FRAMES [--bench-rebuild] [--bench-motion]]\n"
    "       arenascope-viewer SNAPSHOT.json --report OUT.html | --svg OUT.svg [--name TEXT]   (no display needed)\n"
    "       arenascope-viewer B.json --before A.json [--diff D.json]   (compare; arena diff A B --view starts it)\n"
    "       arenascope-viewer --version\n";

// A count option's value (--frames, --bench, --snapshots, --arena) into o; false with error set
// when it is out of range.
bool parse_count(const std::string &a, const char *v, Options &o, std::string &error)
{
    char *end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (a == "--frames" || a == "--bench") {
        if (*end || n < 1 || n > 100000) {
            error = fmt::format("{} {}: expected 1..100000", a, v);
            return false;
        }
        (a == "--frames" ? o.frames : o.bench) = int(n);
        return true;
    }
    if (*end || n < (a == "--arena" ? 0 : 1) || n > 1000) {
        error = fmt::format("{} {}: expected a number from {} to 1000", a, v, a == "--arena" ? 0 : 1);
        return false;
    }
    (a == "--arena" ? o.arena : o.snapshots) = int(n);
    return true;
}

// --zoom's factor or --center's offset (decimal, +decimal or hex) into o; false with error set
// when it is out of range.
bool parse_zoom_or_center(const std::string &a, const char *v, Options &o, std::string &error)
{
    char *end = nullptr;
    const bool hex = a == "--center" && (std::strncmp(v, "0x", 2) == 0 || std::strncmp(v, "+0x", 3) == 0);
    const double x = hex ? double(std::strtoull(v + (v[0] == '+' ? 1 : 0), &end, 16)) : std::strtod(v, &end);
    if (*end || (a == "--zoom" ? !(x >= 1 && x <= 1e6) : !(x >= 0 && x <= 1e12))) {
        error = a == "--zoom" ? fmt::format("--zoom {}: expected a factor from 1 (the whole arena) to 1000000", v)
                              : fmt::format("--center {}: expected an offset in bytes from the arena's base, "
                                            "e.g. 4096, +4096 or 0x1000",
                                            v);
        return false;
    }
    if (a == "--zoom") {
        o.zoom = x;
    } else {
        o.center = x;
    }
    return true;
}

// The options that take a number (counts, seconds, a zoom, an offset, a size) into o; false with
// error set when the value is missing or out of range.
bool parse_number(const std::string &a, const std::function<const char *(const char *)> &value, Options &o,
                  std::string &error)
{
    const char *v = nullptr;
    if (a == "--frames" || a == "--bench") {
        return (v = value("a frame count")) && parse_count(a, v, o, error);
    } else if (a == "--snapshots" || a == "--arena") {
        return (v = value("a count")) && parse_count(a, v, o, error);
    } else if (a == "--wait-snapshot") {
        if (!(v = value("seconds"))) return false;
        char *end = nullptr;
        o.wait_snapshot = std::strtod(v, &end);
        if (*end || !(o.wait_snapshot >= 0 && o.wait_snapshot <= 3600)) {
            error = fmt::format("--wait-snapshot {}: expected seconds from 0 to 3600", v);
            return false;
        }
    } else if (a == "--zoom" || a == "--center") {
        return (v = value(a == "--zoom" ? "a factor" : "an offset in bytes")) && parse_zoom_or_center(a, v, o, error);
    } else if (a == "--size") {
        if (!(v = value("WxH"))) return false;
        char tail = 0;
        if (std::sscanf(v, "%dx%d%c", &o.width, &o.height, &tail) != 2 || o.width < 1024 || o.height < 700 ||
            o.width > 8192 || o.height > 8192) {
            error = fmt::format("--size {}: expected WxH, from 1024x700 (smaller is unreadable) to 8192x8192", v);
            return false;
        }
        o.sized = true;
    }
    return true;
}

bool takes_number(const std::string &a)
{
    return a == "--frames" || a == "--bench" || a == "--snapshots" || a == "--arena" || a == "--wait-snapshot" ||
           a == "--zoom" || a == "--center" || a == "--size";
}

// The options given together that do not go together; false with error set if any.
bool check_combination(const Options &o, std::string &error)
{
    if (!o.diff.empty() && o.before.empty()) {
        error = "--diff marks the changes between --before A.json and the snapshot: give --before too";
        return false;
    }
    if (!o.before.empty() && o.file.empty()) {
        error = "--before compares with a snapshot file (give its path)";
        return false;
    }
    if ((!o.report.empty() || !o.svg.empty()) && o.file.empty()) {
        error = "--report and --svg read a snapshot file (give its path)";
        return false;
    }
    if (o.file.empty() == o.connect.empty()) {
        error = "give a snapshot file or --connect HOST:PORT (one of them)";
        return false;
    }
    return true;
}

bool parse(int argc, char **argv, Options &o, std::string &error)
{
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const std::function<const char *(const char *)> value = [&](const char *what) -> const char * {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                error = fmt::format("{} needs {}", a, what);
                return nullptr;
            }
            return argv[++i];
        };
        const char *v = nullptr;
        if (a == "--help" || a == "-h") {
            error = "";
            return false;
        } else if (a == "--version") {
            o.version = true;
            return true;
        } else if (a == "--connect") {
            if (!(v = value("HOST:PORT"))) return false;
            o.connect = v;
        } else if (a == "--screenshot") {
            if (!(v = value("a PNG path"))) return false;
            o.screenshot = v;
        } else if (a == "--name") {
            if (!(v = value("what the report calls its snapshot"))) return false;
            o.name = v;
        } else if (a == "--before" || a == "--diff") {
            if (!(v = value(a == "--before" ? "the earlier snapshot's path" : "a diff JSON path"))) return false;
            (a == "--before" ? o.before : o.diff) = v;
        } else if (a == "--report" || a == "--svg") {
            if (!(v = value(a == "--report" ? "an HTML path" : "an SVG path"))) return false;
            (a == "--report" ? o.report : o.svg) = v;
        } else if (a == "--layout-out") {
            if (!(v = value("a JSON path"))) return false;
            o.layout_out = v;
        } else if (takes_number(a)) {
            if (!parse_number(a, value, o, error)) return false;
        } else if (a == "--bench-rebuild") {
            o.bench_rebuild = true;
        } else if (a == "--bench-motion") {
            o.bench_motion = true;
        } else if (!a.empty() && a[0] == '-') {
            error = fmt::format("unknown option {}", a);
            return false;
        } else if (o.file.empty()) {
            o.file = a;
        } else {
            error = fmt::format("one snapshot file only ({} and {})", o.file, a);
            return false;
        }
    }
    return check_combination(o, error);
}

// Writes text to path whole (common/include/arenascope/write_whole.h: a unique temporary file,
// never a planted name, the file's mode kept).
bool write_whole(const std::string &path, const std::string &text, std::string &error)
{
    const std::string why = arenascope::write_whole(path, [&text](std::ostream &out) { out << text; });
    if (!why.empty()) error = fmt::format("cannot write {}: {}", path, why);
    return why.empty();
}
bool write_png(const std::string &path, int w, int h)
{
    std::vector<unsigned char> px(std::size_t(w) * h * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    std::vector<unsigned char> flipped(px.size());
    for (int y = 0; y < h; y++) {
        std::memcpy(&flipped[std::size_t(y) * w * 4], &px[std::size_t(h - 1 - y) * w * 4], std::size_t(w) * 4);
    }
    std::string png;  // encoded in memory, then written whole like every other output
    const auto append = [](void *to, void *data, int size) {
        static_cast<std::string *>(to)->append(static_cast<const char *>(data), std::size_t(size));
    };
    if (stbi_write_png_to_func(append, &png, w, h, 4, flipped.data(), w * 4) == 0) return false;
    std::string error;
    return write_whole(path, png, error);
}

// The static report (--report, --svg): no window, no display. Returns the exit status.
int write_reports(const Options &opt)
{
    std::string error;
    arenascope::LoadResult r = arenascope::load_snapshot_file(opt.file);
    if (!r.snapshot) {
        std::fprintf(stderr, "arenascope-viewer: %s\n", r.error.c_str());
        return 2;
    }
    const std::string generator = std::string("arenascope-viewer ") + ARENASCOPE_VERSION;
    for (const auto &[path, html] : {std::pair{opt.report, true}, std::pair{opt.svg, false}}) {
        if (path.empty()) continue;
        const std::string &name = opt.name.empty() ? opt.file : opt.name;
        const arenascope::ReportPanels report = arenascope::report_parts(*r.snapshot);
        const std::string text = html ? arenascope::report_html(*r.snapshot, name, generator, report.parts)
                                      : arenascope::report_svg(*r.snapshot, name, generator, report.parts);
        if (!write_whole(path, text, error)) {
            std::fprintf(stderr, "arenascope-viewer: %s\n", error.c_str());
            return 2;
        }
        std::printf("arenascope-viewer: wrote %s (%zu B)\n", path.c_str(), text.size());
    }
    return 0;
}

// The snapshot file (and in compare mode the one before and the diff) into the app. Returns -1,
// or the exit status when one of them cannot be used.
int load_files(const Options &opt, arenascope::App &app)
{
    std::optional<arenascope::DiffDoc> diff;
    std::optional<arenascope::Snapshot> before;
    if (!opt.before.empty()) {  // compare mode: both files must load, and the diff when given
        arenascope::LoadResult b = arenascope::load_snapshot_file(opt.before);
        if (!b.snapshot) {
            std::fprintf(stderr, "arenascope-viewer: --before: %s\n", b.error.c_str());
            return 2;
        }
        before = std::move(b.snapshot);
        if (!opt.diff.empty()) {
            arenascope::DiffLoad d = arenascope::load_diff_file(opt.diff);
            if (!d.diff) {
                std::fprintf(stderr, "arenascope-viewer: --diff: %s\n", d.error.c_str());
                return 2;
            }
            diff = std::move(d.diff);
        }
    }
    arenascope::LoadResult r = arenascope::load_snapshot_file(opt.file);
    if (!r.snapshot) {
        std::fprintf(stderr, "arenascope-viewer: %s\n", r.error.c_str());
        if (opt.bench > 0) return 2;
        app.set_error(r.error);  // shown in the window; headless runs still exit 2
    } else {
        if (!r.snapshot->tflm_error.empty()) {  // the snapshot is shown without its post-mortem
            std::fprintf(stderr, "arenascope-viewer: %s: post-mortem not shown: %s\n", opt.file.c_str(),
                         r.snapshot->tflm_error.c_str());
        }
        if (!r.snapshot->tasks_error.empty()) {  // and without its RTOS tasks
            std::fprintf(stderr, "arenascope-viewer: %s: RTOS tasks not shown: %s\n", opt.file.c_str(),
                         r.snapshot->tasks_error.c_str());
        }
        if (before) {  // compare mode: the diff must be of these two files
            if (diff) {
                const std::string bad = arenascope::diff_mismatch(*diff, opt.diff, *before, *r.snapshot);
                if (!bad.empty()) {
                    std::fprintf(stderr, "arenascope-viewer: --diff: %s\n", bad.c_str());
                    return 2;
                }
                auto base = [](const std::string &p) { return p.substr(p.find_last_of('/') + 1); };
                if ((!diff->a_file.empty() && base(diff->a_file) != base(opt.before)) ||
                    (!diff->b_file.empty() && base(diff->b_file) != base(opt.file))) {
                    std::fprintf(stderr, "arenascope-viewer: warning: %s was made from %s and %s, not %s and %s\n",
                                 opt.diff.c_str(), diff->a_file.c_str(), diff->b_file.c_str(), opt.before.c_str(),
                                 opt.file.c_str());
                }
                app.set_diff(std::move(*diff));
            }
            app.set_before(std::move(*before), opt.before);
        }
        app.set_snapshot(std::move(*r.snapshot), opt.file);
    }
    return -1;
}

// --connect HOST:PORT: the live link into the app. Returns -1, or the exit status.
int connect(const Options &opt, arenascope::App &app)
{
    std::string error;
    const auto colon = opt.connect.rfind(':');
    const std::string host = colon == std::string::npos ? opt.connect : opt.connect.substr(0, colon);
    char *end = nullptr;
    const long port = colon == std::string::npos ? 0 : std::strtol(opt.connect.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || *end || port < 1 || port > 65535) {
        std::fprintf(stderr, "arenascope-viewer: --connect %s: expected HOST:PORT, port 1..65535\n",
                     opt.connect.c_str());
        return 2;
    }
    auto link = std::make_unique<arenascope::Link>(host, int(port));
    if (!link->start(error)) {
        std::fprintf(stderr, "arenascope-viewer: %s\n", error.c_str());
        return 2;
    }
    app.set_link(std::move(link));
    return -1;
}

// GLFW's window with an OpenGL 3.3 context, and ImGui on it; null (said on stderr) when there is
// no display.
GLFWwindow *open_window(const Options &opt, bool headless)
{
    glfwSetErrorCallback(
        [](int code, const char *msg) { std::fprintf(stderr, "arenascope-viewer: GLFW %d: %s\n", code, msg); });
    if (!glfwInit()) {
        std::fprintf(stderr, "arenascope-viewer: no display (set DISPLAY, or run under xvfb-run for --screenshot)\n");
        return nullptr;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_RESIZABLE, headless ? GLFW_FALSE : GLFW_TRUE);
    GLFWwindow *window = glfwCreateWindow(opt.width, opt.height, "arenascope: tensor arena map", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr, "arenascope-viewer: cannot open a %dx%d OpenGL 3.3 window\n", opt.width, opt.height);
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    glfwSetWindowSizeLimits(window, 1024, 700, GLFW_DONT_CARE, GLFW_DONT_CARE);  // smaller is unreadable
    glfwSwapInterval(headless ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    // Everything drawn is axis-aligned: anti-aliased lines only add vertices and blended pixels.
    ImGui::GetStyle().AntiAliasedLines = false;
    ImGui::GetStyle().AntiAliasedLinesUseTex = false;
    ImGui::GetStyle().AntiAliasedFill = false;
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330");

    return window;
}

// --wait-snapshot: waits for the live link's first snapshots (said when they do not come, headless).
void wait_for_snapshots(const Options &opt, arenascope::App &app, bool headless)
{
    if (!opt.connect.empty() && opt.wait_snapshot > 0) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.wait_snapshot);
        while (app.link()->received() < unsigned(opt.snapshots) && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (app.link()->received() < unsigned(opt.snapshots) && headless) {
            const std::string why = app.link()->last_error();
            std::fprintf(stderr, "arenascope-viewer: %u of %d snapshot(s) from %s within %.1f s%s%s\n",
                         app.link()->received(), opt.snapshots, opt.connect.c_str(), opt.wait_snapshot,
                         why.empty() ? "" : ": ", why.c_str());
        }
    }
}

// The last headless frame: the bench's times, the screenshot, the layout JSON. Returns the exit
// status.
int finish(const Options &opt, arenascope::App &app, int w, int h, std::chrono::steady_clock::time_point t0,
           double build_ms, double render_ms)
{
    int status = 0;
    const int total = opt.bench > 0 ? opt.bench : opt.frames;
    if (opt.bench > 0) {
        glFinish();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("frames %d, mean frame time %.3f ms (build %.3f ms + draw %.3f ms + present %.3f ms), "
                    "%d draw vertices\n",
                    total - 1, ms / (total - 1), build_ms / (total - 1), render_ms / (total - 1),
                    (ms - build_ms - render_ms) / (total - 1), ImGui::GetDrawData()->TotalVtxCount);
    }
    if (!opt.screenshot.empty()) {
        if (!write_png(opt.screenshot, w, h)) {
            std::fprintf(stderr, "arenascope-viewer: cannot write %s\n", opt.screenshot.c_str());
            status = 2;
        } else {
            std::printf("arenascope-viewer: wrote %s (%dx%d)%s\n", opt.screenshot.c_str(), w, h,
                        app.link() ? fmt::format(", {} live snapshot(s) received", app.link()->received()).c_str()
                                   : "");
        }
    }
    if (!opt.layout_out.empty()) {
        std::ofstream(opt.layout_out) << app.layout_json();
    }
    if (!app.has_snapshot()) status = 2;
    return status;
}

// The frames: until the window closes, or headless, until the last frame is written. Returns the
// exit status.
int run(const Options &opt, arenascope::App &app, GLFWwindow *window, bool headless)
{
    int status = 0, frame = 0, grown_from = 0;
    const int total = opt.bench > 0 ? opt.bench : opt.frames;
    auto t0 = std::chrono::steady_clock::now();
    using clock = std::chrono::steady_clock;
    double build_ms = 0, render_ms = 0;  // --bench: CPU frame building, GL drawing (glFinish)
    while (!glfwWindowShouldClose(window)) {
        glfwPollEvents();
        if (!headless && !app.has_snapshot()) glfwWaitEventsTimeout(0.1);
        const auto tb = clock::now();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        // Off-screen (--screenshot, --bench) the picture must not depend on where the X pointer
        // is: Xvfb puts it in the middle of its screen, over the window, and hovering draws tooltips.
        if (headless) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
        ImGui::NewFrame();
        if (opt.bench_rebuild) app.invalidate();
        if (opt.bench_motion && frame >= 1) app.bench_motion(frame);
        int w, h;
        glfwGetFramebufferSize(window, &w, &h);
        app.frame(float(w), float(h));
        ImGui::Render();
        const auto tr = clock::now();
        glViewport(0, 0, w, h);
        const auto bg = arenascope::colour(arenascope::Paint::Background);
        glClearColor(bg.r / 255.f, bg.g / 255.f, bg.b / 255.f, 1.f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        if (opt.bench > 0) {
            glFinish();
            if (frame >= 1) {
                build_ms += std::chrono::duration<double, std::milli>(tr - tb).count();
                render_ms += std::chrono::duration<double, std::milli>(clock::now() - tr).count();
            }
        }
        frame++;
        if (headless && frame == 2) {
            glFinish();
            t0 = std::chrono::steady_clock::now();  // frame 1 builds the font atlas: not timed
        }
        // A screenshot of its own size grows until the panels show every line: a picture for a
        // bug report must not say "more below: scroll".
        if (!opt.screenshot.empty() && !opt.sized && frame >= total + 1 && app.panels_cut() && h < 8192 &&
            h > grown_from) {
            grown_from = h;  // the window did grow since the last request (else an X server refused)
            glfwSetWindowSize(window, w, std::min(8192, h + 160));
            frame = 1;
            continue;
        }
        if (headless && frame >= total + 1) {
            status = finish(opt, app, w, h, t0, build_ms, render_ms);
            break;
        }
        glfwSwapBuffers(window);
    }
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    Options opt;
    std::string error;
    if (!parse(argc, argv, opt, error)) {
        if (!error.empty()) std::fprintf(stderr, "arenascope-viewer: %s\n", error.c_str());
        std::fputs(kUsage, error.empty() ? stdout : stderr);
        return error.empty() ? 0 : 2;
    }
    if (opt.version) {  // before any window or display is opened
        std::printf("arenascope-viewer %s\n", ARENASCOPE_VERSION);
        return 0;
    }
    if (!opt.report.empty() || !opt.svg.empty()) return write_reports(opt);  // no window, no display
    const bool headless = !opt.screenshot.empty() || opt.bench > 0;
    arenascope::App app;
    if (const int status = opt.file.empty() ? connect(opt, app) : load_files(opt, app); status >= 0) return status;
    GLFWwindow *window = open_window(opt, headless);
    if (!window) return 2;
    app.select_arena(opt.arena);
    app.set_offscreen(!opt.screenshot.empty());
    app.set_view(opt.zoom, opt.center);
    wait_for_snapshots(opt, app, headless);
    const int status = run(opt, app, window, headless);
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return status;
}
