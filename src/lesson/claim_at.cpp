// A claim's `at`, axis by axis: positions by index or by label, lists and ranges.
#include "lesson/claim_at.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace attntrace {

namespace {

// Labels shown in an error before "...": a long sentence need not fill the line.
constexpr std::size_t kLabelsShown = 8;

// "the, ring, fell", or the first kLabelsShown and "...".
std::string label_list(const std::vector<std::string>& labels) {
    std::string out;
    for (std::size_t i = 0; i < labels.size() && i < kLabelsShown; ++i) out += (i ? ", " : "") + labels[i];
    return labels.size() > kLabelsShown ? out + ", ..." : out;
}

// An index (0-based) or a label of the axis, at `path`.
std::size_t read_position(const Fields& f, const json& v, const std::string& path, Axis axis,
                          const std::vector<std::string>& labels, std::size_t extent) {
    const std::string name(axis_name(axis));
    if (!v.is_string()) {
        if (!v.is_number()) {
            const std::string labelled = labels.empty() ? "" : fmt::format(" or a {} label", name);
            f.fail(path, fmt::format("an index from 0 to {}{}", extent - 1, labelled), describe(v));
        }
        return static_cast<std::size_t>(f.integer(v, path, 0, static_cast<std::int64_t>(extent) - 1));
    }
    if (labels.empty())
        f.fail(path, fmt::format("an index from 0 to {} ({} has no labels)", extent - 1, name), describe(v));
    const std::string label = v.get<std::string>();
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (labels[i] == label) found.push_back(i);
    if (found.empty())
        f.fail(path, fmt::format("an index from 0 to {} or a {} label ({})", extent - 1, name, label_list(labels)),
               describe(v));
    if (found.size() > 1)
        f.fail(path, fmt::format("a label naming one {} position, or an index", name),
               fmt::format("\"{}\", which names {} {} and {} (ambiguous)", label, name, found[0], found[1]));
    return found[0];
}

// "query 1 (\"ring\")" for messages.
std::string position_text(Axis axis, const std::vector<std::string>& labels, std::size_t i) {
    return i < labels.size() ? fmt::format("{} {} (\"{}\")", axis_name(axis), i, labels[i])
                             : fmt::format("{} {}", axis_name(axis), i);
}

// {"from": A, "to": B}: A..B, both included; either may be left out (the first, the last).
std::vector<std::size_t> read_range(const Fields& f, const json& v, const std::string& path, Axis axis,
                                    const std::vector<std::string>& labels, std::size_t extent) {
    f.only_keys(v, path, {"from", "to"});
    const json* from = f.optional(v, "from");
    const json* to = f.optional(v, "to");
    const std::size_t a = from ? read_position(f, *from, join(path, "from"), axis, labels, extent) : 0;
    const std::size_t b = to ? read_position(f, *to, join(path, "to"), axis, labels, extent) : extent - 1;
    if (b < a)
        f.fail(join(path, "to"), fmt::format("a position at or after \"from\", {}", position_text(axis, labels, a)),
               position_text(axis, labels, b));
    std::vector<std::size_t> out;
    for (std::size_t i = a; i <= b; ++i) out.push_back(i);
    return out;
}

// [A, B, ...]: positions in axis order, each once.
std::vector<std::size_t> read_list(const Fields& f, const json& v, const std::string& path, Axis axis,
                                   const std::vector<std::string>& labels, std::size_t extent) {
    if (v.empty()) f.fail(path, "at least one index or label", "an empty array");
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < v.size(); ++k) {
        const std::size_t i = read_position(f, v[k], index(path, k), axis, labels, extent);
        if (!out.empty() && i <= out.back())
            f.fail(index(path, k),
                   fmt::format("a position after {} (a list names positions in axis order, each once)",
                               position_text(axis, labels, out.back())),
                   position_text(axis, labels, i));
        out.push_back(i);
    }
    return out;
}

}  // namespace

AxisPick read_axis_pick(const Fields& f, const json& v, const std::string& path, Axis axis,
                        const std::vector<std::string>& labels, std::size_t extent) {
    if (v.is_array()) return {false, read_list(f, v, path, axis, labels, extent)};
    if (v.is_object()) return {false, read_range(f, v, path, axis, labels, extent)};
    return {true, {read_position(f, v, path, axis, labels, extent)}};
}

}  // namespace attntrace
