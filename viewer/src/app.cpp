// arenascope viewer: the window; see app.h.
#include "app.h"

#include <imgui.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ui.h"

namespace arenascope {

App::App() : panels_(make_panels()) {}
App::~App() = default;

void App::update_view()
{
    view_.snapshot = snapshot_ ? &*snapshot_ : nullptr;
    view_.before = before_ ? &*before_ : nullptr;
    view_.diff = diff_ ? &*diff_ : nullptr;
    view_.source = source_, view_.before_source = before_source_, view_.error = error_;
    view_.link = link_.get();
    const int n = snapshot_ ? int(snapshot_->arenas.size()) : 0;
    view_.arena_index = n ? std::clamp(view_.arena_index, 0, n - 1) : 0;
    const Arena *a = view_.arena();
    if (!a || view_.selected >= int(a->regions.size())) view_.selected = -1;
}

void App::changed(bool fresh)
{
    update_view();
    if (!snapshot_) return;
    for (auto &p : panels_) p->changed(view_, fresh);
}

void App::set_snapshot(Snapshot s, std::string source)
{
    const bool same_arena = snapshot_ && !snapshot_->arenas.empty() && !s.arenas.empty() &&
                            snapshot_->arenas[0].base_addr == s.arenas[0].base_addr &&
                            snapshot_->arenas[0].size_bytes == s.arenas[0].size_bytes;
    snapshot_ = std::move(s);
    source_ = std::move(source);
    view_.serial++;
    error_.clear();
    if (!same_arena) view_.selected = -1;
    changed(!same_arena);
}

void App::set_before(Snapshot s, std::string source)
{
    before_ = std::move(s), before_source_ = std::move(source);
    changed(true);
}

void App::set_diff(DiffDoc d)
{
    diff_ = std::move(d);
    changed(false);
}

void App::select_arena(int i)
{
    if (i != view_.arena_index) view_.selected = -1;  // a pin is of one arena
    view_.arena_index = i;
    changed(false);
}

void App::invalidate()
{
    for (auto &p : panels_) p->invalidate();
}

void App::bench_motion(int frame)
{
    for (auto &p : panels_) p->motion(frame);
}

bool App::panels_cut() const
{
    for (std::size_t i : order_)
        if (panels_[i]->cut()) return true;
    return false;
}

void App::lay_out(float width, float height)
{
    view_.body_h = body_height(height);
    std::vector<Space> spaces;
    order_.clear();
    for (std::size_t i = 0; i < panels_.size(); i++) {
        if (!panels_[i]->shown(view_)) continue;
        order_.push_back(i);
        spaces.push_back(panels_[i]->wants(view_));
    }
    std::vector<Rect> rects = screen_layout(width, height, spaces);
    // Drawn column by column, top to bottom.
    std::vector<std::size_t> by(order_.size());
    for (std::size_t k = 0; k < by.size(); k++) by[k] = k;
    std::stable_sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(spaces[a].column, spaces[a].order) < std::tie(spaces[b].column, spaces[b].order);
    });
    std::vector<std::size_t> order;
    rects_.clear();
    for (std::size_t k : by) order.push_back(order_[k]), rects_.push_back(rects[k]);
    order_ = std::move(order);
}

void App::draw_waiting(float width) const
{
    // Where the maps would be: the top left of the body.
    const float x = kLayoutMargin + 8, y = kLayoutMargin + kStatusHeight + kLayoutMargin + 8;
    const std::string msg = !error_.empty() ? "Cannot show this snapshot:\n" + error_
                            : snapshot_     ? "The snapshot has no arena."
                                            : "Waiting for a snapshot...";
    ImGui::GetWindowDrawList()->AddText(nullptr, 0, ImVec2(x, y),
                                        error_.empty() ? style().text.imgui() : col(Paint::RuleFail), msg.c_str(),
                                        nullptr, width - 40);
}

void App::frame(float width, float height)
{
    if (link_) {
        if (auto s = link_->take()) set_snapshot(std::move(*s), "live");
        if (!snapshot_ && !link_->last_error().empty()) error_ = link_->last_error();
    }
    const int n = snapshot_ ? int(snapshot_->arenas.size()) : 0;
    if (n > 1 && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Tab))) select_arena((view_.arena_index + 1) % n);
    update_view();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(width, height));
    // No window background: the GL clear colour is the background, so no full-window blended
    // fill is drawn (a software renderer pays for every pixel of it).
    ImGui::PushStyleColor(ImGuiCol_WindowBg, colour(Paint::Background).imgui());
    ImGui::Begin("arenascope", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoScrollWithMouse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBackground);
    lay_out(width, height);
    for (std::size_t k = 0; k < order_.size(); k++) panels_[order_[k]]->draw(view_, rects_[k]);
    if (!snapshot_) draw_waiting(width);
    ImGui::End();
    ImGui::PopStyleColor();
}

std::string App::layout_json() const
{
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t k = 0; k < order_.size(); k++) panels_[order_[k]]->describe(view_, rects_[k], j);
    return j.dump(1);
}

}  // namespace arenascope
