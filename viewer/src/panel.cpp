// arenascope viewer: the registry of panels; see panel.h.
#include "panel.h"

#include <algorithm>

namespace arenascope {
namespace {

std::vector<PanelFactory> &registry()
{
    static std::vector<PanelFactory> factories;  // filled before main by each panel file
    return factories;
}

}  // namespace

void Panel::describe(const View &, const Rect &r, nlohmann::json &out) const
{
    out[name()] = {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
}

PanelRegistration::PanelRegistration(PanelFactory make)
{
    registry().push_back(make);
}

std::vector<std::unique_ptr<Panel>> make_panels()
{
    std::vector<std::unique_ptr<Panel>> out;
    for (PanelFactory make : registry()) out.push_back(make());
    return out;
}

ReportPanels report_parts(const Snapshot &s)
{
    View v;
    v.snapshot = &s;
    ReportPanels out;
    std::vector<std::pair<std::pair<Column, int>, std::unique_ptr<Panel>>> order;
    for (auto &p : make_panels()) {
        if (!p->shown(v)) continue;
        const Space sp = p->wants(v);
        order.emplace_back(std::make_pair(sp.column, sp.order), std::move(p));
    }
    std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (auto &[key, p] : order) {
        out.parts.push_back(p.get());
        out.panels.push_back(std::move(p));
    }
    return out;
}

nlohmann::json rect_json(const Rect &r)
{
    return {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
}

}  // namespace arenascope
