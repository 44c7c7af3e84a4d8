// arenascope viewer: pixel ownership of a map lane; see pixelmap.h.
#include "pixelmap.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace arenascope {

PixelLane pixel_lane(std::vector<PixelItem> items)
{
    std::stable_sort(items.begin(), items.end(), [](const PixelItem &a, const PixelItem &b) {
        return a.start != b.start ? a.start < b.start : a.id < b.id;
    });
    // Overlaps: the later item owns its bytes (pixelmap.h); an item cut to nothing is dropped.
    PixelLane lane;
    std::vector<PixelItem> &kept = lane.items;
    for (const PixelItem &it : items) {
        if (it.end <= it.start) continue;
        while (!kept.empty() && kept.back().end > it.start) {
            kept.back().end = it.start;
            if (kept.back().end > kept.back().start) break;
            kept.pop_back();
        }
        kept.push_back(it);
    }
    return lane;
}

std::vector<PixelRun> own_pixels(std::vector<PixelItem> items, double lo, double hi, int width)
{
    return own_pixels(pixel_lane(std::move(items)), lo, hi, width);
}

std::vector<PixelRun> own_pixels(const PixelLane &lane, double lo, double hi, int width)
{
    std::vector<PixelRun> runs;
    if (!(hi > lo) || width < 1) return runs;
    // The items in view, [first, last): starts and ends both ascend (the items do not overlap).
    const std::vector<PixelItem> &all = lane.items;
    const auto first = std::partition_point(
        all.begin(), all.end(), [&](const PixelItem &it) { return (long double)it.end <= (long double)lo; });
    const auto last = std::partition_point(
        first, all.end(), [&](const PixelItem &it) { return (long double)it.start < (long double)hi; });
    const PixelItem *kept = all.data() + (first - all.begin());  // kept[i], i < n: the items in view
    const std::size_t n = std::size_t(last - first);
    const long double scale = (long double)width / ((long double)hi - (long double)lo);
    auto u = [&](uint64_t addr) { return ((long double)addr - (long double)lo) * scale; };  // pixel units
    constexpr int kEmpty = -1, kCluster = -2;
    std::vector<int> owner(std::size_t(width), kEmpty);
    std::vector<std::pair<int, int>> cluster;  // (pixel, item), by pixel: items come in address order
    std::vector<int> pixels(n, 0);             // how many pixels each item owns
    std::vector<std::size_t> needy;
    // Rule 1: the pixels whose centre the item holds.
    for (std::size_t i = 0; i < n; i++) {
        const uint64_t s = kept[i].start, e = kept[i].end;
        const long double a = std::ceil(u(s) - 0.5L), b = std::ceil(u(e) - 0.5L);
        const int k0 = int(std::clamp(a, 0.0L, (long double)width)), k1 = int(std::clamp(b, 0.0L, (long double)width));
        if (k1 > k0) {
            pixels[i] = k1 - k0;
            std::fill(owner.begin() + k0, owner.begin() + k1, int(i));
        } else {
            needy.push_back(i);
        }
    }
    // Rules 2 and 3: a pixel for each item that has none, or a cluster.
    for (std::size_t i : needy) {
        const long double mid = (u(kept[i].start) + u(kept[i].end)) / 2;
        const int k = int(std::clamp(std::floor(mid), 0.0L, (long double)(width - 1)));
        const int o = owner[std::size_t(k)];
        // Items do not overlap, so a pixel holding this item's middle is another item's edge.
        if (o == kEmpty || (o >= 0 && pixels[std::size_t(o)] >= 2)) {
            if (o >= 0) pixels[std::size_t(o)]--;
            owner[std::size_t(k)] = int(i);
            pixels[i] = 1;
        } else {
            if (o >= 0) {
                cluster.push_back({k, o});
                pixels[std::size_t(o)] = 0;
            }
            cluster.push_back({k, int(i)});
            owner[std::size_t(k)] = kCluster;
        }
    }
    std::size_t c = 0;  // the next cluster member
    for (int k = 0; k < width;) {
        const int o = owner[std::size_t(k)];
        int e = k + 1;
        while (e < width && owner[std::size_t(e)] == o) e++;
        if (o >= 0) {
            runs.push_back({k, e, kept[std::size_t(o)].id, {}});
        } else if (o == kCluster) {
            PixelRun r{k, e, -1, {}};
            for (; c < cluster.size() && cluster[c].first < e; c++) r.ids.push_back(kept[cluster[c].second].id);
            std::sort(r.ids.begin(), r.ids.end());
            r.ids.erase(std::unique(r.ids.begin(), r.ids.end()), r.ids.end());
            runs.push_back(std::move(r));
        }
        k = e;
    }
    return runs;
}

}  // namespace arenascope
