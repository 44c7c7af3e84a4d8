// arenascope viewer: cutting and wrapping text; see textfit.h.
#include "textfit.h"

#include <string_view>

namespace arenascope {
namespace {

bool continues(char c)
{
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;  // a UTF-8 continuation byte, 10xxxxxx
}

// Where a text's characters start: at byte 0 and at every byte that is not a continuation byte,
// so no cut splits a UTF-8 sequence. Found only as far as they are asked for, from the front or
// from the back: asking about the first or the last k characters costs O(k) whatever the length.
class CharStarts {
public:
    static constexpr std::size_t kPast = std::string::npos;  // the text has fewer characters
    explicit CharStarts(std::string_view text) : t_(text), front_{0}, back_{text.size()} {}
    // Byte offset of character k (0-based); the text's size when it has k characters exactly.
    std::size_t front(std::size_t k)
    {
        if (t_.empty()) return k == 0 ? 0 : kPast;
        while (front_.size() <= k && front_.back() < t_.size()) {
            std::size_t i = front_.back() + 1;
            while (i < t_.size() && continues(t_[i])) i++;
            front_.push_back(i);
        }
        return k < front_.size() ? front_[k] : kPast;
    }
    // Byte offset where the last k characters start (the size for k = 0; 0 for all of them).
    std::size_t back(std::size_t k)
    {
        while (back_.size() <= k && back_.back() > 0) {
            std::size_t i = back_.back() - 1;
            while (i > 0 && continues(t_[i])) i--;
            back_.push_back(i);
        }
        return k < back_.size() ? back_[k] : kPast;
    }

private:
    std::string_view t_;
    std::vector<std::size_t> front_, back_;
};

// The largest k in [0, n] with fits(k), where fits(0) holds and fits is true up to some k and
// false after it (a text's width grows with what is kept of it). Gallops from 0 (1, 3, 7, 15, ...)
// then halves: O(log k) calls, none past 2k + 1, so a search over a long text costs what fits.
std::size_t longest(std::size_t n, const std::function<bool(std::size_t)> &fits)
{
    std::size_t lo = 0, hi = n + 1;  // fits(lo); hi: the first known not to fit (or past n)
    for (std::size_t step = 1; lo < n; step *= 2) {
        const std::size_t k = lo + std::min(step, n - lo);
        if (!fits(k)) {
            hi = k;
            break;
        }
        lo = k;
    }
    while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

}  // namespace

std::string cut_middle(const std::string &text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    // Keep a third from the start and the rest from the end ("MobilenetV1/...conv_pw_13/Relu6"):
    // the end of a tensor's name tells it from its siblings, its start says which model part.
    // The most characters (fewer than all) whose cut fits; none: "...".
    CharStarts at(text);
    const auto cut = [&](std::size_t keep) {
        const std::size_t head = keep / 3, tail = keep - head;
        return text.substr(0, at.front(head)) + "..." + text.substr(at.back(tail));
    };
    const std::size_t keep = longest(text.size(), [&](std::size_t k) {
        const std::size_t head = k / 3, from = at.back(k - head), to = at.front(head);
        return to != CharStarts::kPast && from != CharStarts::kPast && to < from && measure(cut(k)) <= max_px;
    });
    return keep == 0 ? std::string("...") : cut(keep);
}

std::string cut_to_width(std::string text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    // Its longest start, fewer characters than all, that fits with "..." after it; none: "...".
    CharStarts at(text);
    const std::size_t keep = longest(text.size(), [&](std::size_t k) {
        const std::size_t to = at.front(k);
        return to < text.size() && measure(text.substr(0, to) + "...") <= max_px;
    });
    text.resize(at.front(keep));
    return text + "...";
}

std::vector<std::string> wrap_at_spaces(const std::string &text, float first_px, float rest_px,
                                        const std::function<float(const std::string &)> &measure)
{
    std::vector<std::string> lines;
    std::string line, joined;  // joined: the line with the next segment (its buffer reused)
    auto limit = [&] { return lines.empty() ? first_px : rest_px; };
    std::size_t i = 0;
    while (i < text.size()) {
        // The next segment, text[i, j): its leading spaces and one word.
        std::size_t j = i;
        while (j < text.size() && text[j] == ' ') j++;
        while (j < text.size() && text[j] != ' ') j++;
        joined.assign(line).append(text, i, j - i);
        if (measure(joined) <= limit()) {
            line.swap(joined);
            i = j;
            continue;
        }
        if (!line.empty()) {
            lines.push_back(line);
            line.clear();
        }
        while (i < j && text[i] == ' ') i++;
        // The word, text[i, j), on as many lines as it needs: on each, its longest start that
        // fits (at least one character); what fits whole starts the next line.
        while (i < j) {
            const std::string_view rest(text.data() + i, j - i);
            CharStarts at(rest);
            const float room = limit();
            const std::size_t fit = longest(rest.size(), [&](std::size_t k) {
                const std::size_t to = at.front(k);
                return to != CharStarts::kPast && (k <= 1 || measure(std::string(rest.substr(0, to))) <= room);
            });
            const std::size_t to = at.front(fit);
            if (to == rest.size() && measure(std::string(rest)) <= room) {
                line.assign(rest);
                break;
            }
            lines.emplace_back(rest.substr(0, to));
            i += to;
        }
        i = j;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

}  // namespace arenascope
