// arenascope viewer: the bounded JSON reader; see bounded_json.h.
#include "bounded_json.h"

#include <fmt/format.h>

#include <deque>
#include <iterator>
#include <optional>

namespace arenascope {
namespace {

using nlohmann::json;

// The bytes being parsed, from memory or from a FILE read in blocks; pos is how many were read.
struct Source {
    const char *data = nullptr;
    std::size_t size = 0, at = 0;  // data[at] is the next byte
    std::size_t base = 0;          // bytes before data (FILE: earlier blocks)
    std::FILE *file = nullptr;
    std::vector<char> block;
    // nlohmann's lexer holds a number token whole, and its error message copies it several times:
    // a number longer than kMaxNumberChars ends the input here (parse_error tells why).
    static constexpr std::size_t kMaxNumberChars = 4096;
    std::size_t number_chars = 0;
    bool in_string = false, escaped = false, number_too_long = false;
    void advance()
    {
        const char c = data[at++];
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
            number_chars = 0;
        } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
            number_too_long = ++number_chars > kMaxNumberChars;
        } else {
            number_chars = 0;
        }
    }
    bool at_end()
    {
        if (number_too_long) return true;
        if (at < size || !file) return at >= size;
        base += size;
        block.resize(1u << 16);
        size = std::fread(block.data(), 1, block.size(), file);
        data = block.data();
        at = 0;
        return size == 0;
    }
    std::size_t pos() const { return base + at; }
};

// An input iterator over a Source, for nlohmann's iterator input adapter; the end iterator has none.
struct SourceIterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char *;
    using reference = const char &;
    Source *src = nullptr;
    reference operator*() const { return src->data[src->at]; }
    SourceIterator &operator++()
    {
        src->advance();
        return *this;
    }
    bool operator==(const SourceIterator &o) const
    {
        const bool end = !src || src->at_end(), o_end = !o.src || o.src->at_end();
        return end == o_end;
    }
    bool operator!=(const SourceIterator &o) const { return !(*this == o); }
};

std::string clip(std::string s, std::size_t max)
{
    if (s.size() <= max) return s;
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) n--;
    s.resize(n);
    return s + "...";
}

class Builder : public nlohmann::json_sax<json> {
public:
    Builder(Source &src, const std::vector<JsonPlace> &places, const JsonLimits &limits)
        : src_(src), places_(places), limits_(limits)
    {}
    json root;

    bool null() override { return put(json(nullptr)); }
    bool boolean(bool v) override { return put(json(v)); }
    bool number_integer(number_integer_t v) override { return put(json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
    bool number_float(number_float_t v, const string_t &) override { return put(json(v)); }
    bool string(string_t &v) override
    {
        if (check_string(v, "a string")) return true;
        return put(json(std::move(v)));
    }
    bool binary(binary_t &) override { return put(json(nullptr)); }  // never in JSON text
    bool key(string_t &k) override
    {
        if (check_string(k, "a key")) return true;
        frames_.back().key = std::move(k);
        return true;
    }
    bool start_object(std::size_t) override { return open(json::object()); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t byte, const std::string &, const nlohmann::detail::exception &e) override
    {
        if (src_.number_too_long) {
            fail(fmt::format("a number of more than {} characters", Source::kMaxNumberChars), path());
        }
        // nlohmann's message quotes the last token read, which may be megabytes long.
        throw JsonError{fmt::format("not valid JSON (byte {}): {}", byte, clip(e.what(), 240)), byte, true};
    }

private:
    struct Frame {
        json *value = nullptr;  // the container (nullptr: skipped)
        bool object = false;
        std::string key;  // object: the member being read
        std::size_t entries = 0;
        const JsonPlace *stream = nullptr;  // entries go to stream->on_entry
        json entry;                         // stream: the entry being built
        std::size_t entry_values = 0;       // stream: values_ before the entry
        std::vector<std::size_t> indices;   // stream: what the pattern's "[]" matched
    };

    // A limit passed: throws, or returns true when it was inside a contained place (the place's
    // value is now null and every frame in it is skipped).
    bool fail(const std::string &what, const std::string &path)
    {
        const std::size_t byte = src_.pos() > 0 ? src_.pos() - 1 : 0;  // the byte that passed the limit
        const std::string message = fmt::format("{}: {} (byte {})", path, what, byte);
        if (contained_ == kNone || frames_.size() <= contained_) {
            throw JsonError{message, byte, false};
        }
        if (contained_failed_) return true;  // the first limit passed is the one told
        contained_failed_ = true;
        contained_place_->on_error(message);
        if (frames_[contained_].value) *frames_[contained_].value = nullptr;
        for (std::size_t i = contained_; i < frames_.size(); i++) frames_[i].value = nullptr;
        values_ = contained_values_;
        return true;
    }
    static constexpr std::size_t kNone = ~std::size_t(0);

    // The path of the value now being read ("$.arenas[0].regions[7]"), keys cut to 40 bytes.
    std::string path() const
    {
        std::string p = "$";
        for (const Frame &f : frames_) {
            p += f.object ? "." + clip(f.key, 40) : fmt::format("[{}]", f.entries);
        }
        return p;
    }

    bool check_string(const std::string &s, const char *what)
    {
        if (s.size() > limits_.max_string_bytes) {
            return fail(fmt::format("{} of {} bytes, more than the {} this viewer accepts", what, s.size(),
                                    limits_.max_string_bytes),
                        path());
        }
        return false;
    }

    // The place whose pattern is the path of the value now being read, if any.
    const JsonPlace *place(std::vector<std::size_t> &indices) const
    {
        for (const JsonPlace &pl : places_) {
            if (pl.pattern.size() != frames_.size()) continue;
            indices.clear();
            bool match = true;
            for (std::size_t i = 0; i < frames_.size() && match; i++) {
                const Frame &f = frames_[i];
                if (!f.value) return nullptr;
                if (f.object) {
                    match = pl.pattern[i] == f.key;
                } else {
                    match = pl.pattern[i] == "[]";
                    indices.push_back(f.entries);
                }
            }
            if (match) return &pl;
        }
        return nullptr;
    }

    // Where the next value goes (nullptr: not kept), after the limits are checked.
    json *slot()
    {
        if (frames_.empty()) return &root;
        Frame &f = frames_.back();
        if (!f.value) return nullptr;
        if (f.stream) {
            if (f.entries >= f.stream->max_entries) {
                fail(fmt::format("more than the {} entries this viewer accepts", f.stream->max_entries), path());
                return nullptr;  // never reached: no stream is inside a contained place
            }
            f.entry_values = values_;
            return &f.entry;
        }
        if (++values_ > limits_.max_values &&
            fail(fmt::format("more than {} JSON values, more than any snapshot holds: is this an arenascope "
                             "snapshot?",
                             limits_.max_values),
                 path())) {
            return nullptr;
        }
        if (within_entry_ && values_ - entry_base_ > limits_.max_entry_values) {
            fail(fmt::format("more than {} JSON values in one entry", limits_.max_entry_values), path());
        }
        return f.value->is_object() ? &(*f.value)[f.key] : &f.value->emplace_back();
    }

    // An entry of a streamed array is complete: hand it over and release its values.
    void entry_done(Frame &f)
    {
        const std::string p = path();
        within_entry_ = false;
        json entry = std::move(f.entry);
        f.entry = json();
        values_ = f.entry_values;
        f.stream->on_entry(f.indices, f.entries, std::move(entry), p);
    }

    bool put(json &&v)
    {
        json *s = slot();
        if (!s) return true;
        *s = std::move(v);
        Frame &f = frames_.empty() ? top_ : frames_.back();
        if (f.stream) {
            entry_done(f);
        }
        if (!frames_.empty()) frames_.back().entries++;
        return true;
    }

    bool open(json &&container)
    {
        Frame child;
        if (overflow_ > 0 ||
            (frames_.size() >= limits_.max_depth &&
             fail(fmt::format("nested deeper than {} levels, deeper than any snapshot", limits_.max_depth), path()))) {
            overflow_++;  // contained: deeper levels are counted, not framed
            return true;
        }
        child.object = container.is_object();
        std::vector<std::size_t> indices;
        const JsonPlace *pl = place(indices);
        if (pl && pl->skip) {
            frames_.push_back(std::move(child));  // value nullptr: nothing below is kept
            return true;
        }
        const bool entry_starts = !frames_.empty() && frames_.back().stream;
        json *s = slot();
        if (s) {
            *s = std::move(container);
            child.value = s;
            if (entry_starts) {
                within_entry_ = true;
                entry_base_ = values_;
            } else if (pl && pl->on_error && contained_ == kNone) {
                contained_ = frames_.size();
                contained_place_ = pl;
                contained_values_ = values_;
            } else if (pl && s->is_array()) {
                child.stream = pl;
                child.indices = std::move(indices);
                if (pl->on_start) pl->on_start(child.indices);
            }
        }
        frames_.push_back(std::move(child));
        return true;
    }

    bool close()
    {
        if (overflow_ > 0) {
            overflow_--;
            return true;
        }
        frames_.pop_back();
        if (frames_.size() == contained_) {
            contained_ = kNone;
            contained_failed_ = false;
        }
        if (frames_.empty()) return true;
        Frame &parent = frames_.back();
        if (parent.stream && parent.value) entry_done(parent);
        parent.entries++;
        return true;
    }

    Source &src_;
    const std::vector<JsonPlace> &places_;
    const JsonLimits &limits_;
    // A frame's `value` may point into its parent's entry: a deque keeps every frame in place
    // while frames are pushed and popped at the back (a vector would move them as it grows).
    std::deque<Frame> frames_;
    Frame top_;  // the root's "parent": never streams
    std::size_t values_ = 0, entry_base_ = 0;
    bool within_entry_ = false;
    std::size_t contained_ = kNone, contained_values_ = 0;  // the frame of the contained place being read
    const JsonPlace *contained_place_ = nullptr;
    bool contained_failed_ = false;
    std::size_t overflow_ = 0;  // levels below max_depth inside a contained place
};

json parse(Source &src, const std::vector<JsonPlace> &places, const JsonLimits &limits)
{
    Builder b(src, places, limits);
    SourceIterator first{&src}, last{};
    json::sax_parse(first, last, &b);
    return std::move(b.root);
}

}  // namespace

json parse_bounded(std::string_view text, const std::vector<JsonPlace> &places, const JsonLimits &limits)
{
    Source src;
    src.data = text.data();
    src.size = text.size();
    return parse(src, places, limits);
}

json parse_bounded(std::FILE *file, const std::vector<JsonPlace> &places, const JsonLimits &limits)
{
    Source src;
    src.file = file;
    return parse(src, places, limits);
}

}  // namespace arenascope
