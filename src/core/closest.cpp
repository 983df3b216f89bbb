#include "core/closest.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace attntrace {

namespace {

// Levenshtein distance, one row at a time   O(|a|·|b|) time, O(|b|) memory
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// Where each part of s starts, and one past the end of s (as if a separator followed it).
std::vector<std::size_t> part_starts(std::string_view s, char separator) {
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == separator) starts.push_back(i + 1);
    starts.push_back(s.size() + 1);
    return starts;
}

// The smallest distance from `name` (of k parts) to k parts of `c`, as `parts` says.
std::size_t distance_to(std::string_view name, std::size_t k, std::string_view c, const NameParts& parts) {
    const std::vector<std::size_t> starts = part_starts(c, parts.separator);
    const std::size_t count = starts.size() - 1;  // c's parts
    // The runs of k parts: the last one only, or every one; the whole of c when it has k parts or fewer.
    const std::size_t first_run = count <= k || !parts.any_run ? count - std::min(k, count) : 0;
    std::size_t best = SIZE_MAX;
    for (std::size_t r = first_run; r + std::min(k, count) <= count; ++r) {
        const std::size_t from = starts[r], to = starts[r + std::min(k, count)] - 1;
        best = std::min(best, edit_distance(name, c.substr(from, to - from)));
    }
    const std::string_view prefix = parts.optional_prefix;
    if (const std::string_view last = c.substr(starts[count - 1]);
        k == 1 && !prefix.empty() && last.substr(0, prefix.size()) == prefix)
        best = std::min(best, edit_distance(name, last.substr(prefix.size())));
    return best;
}

}  // namespace

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates, std::size_t n,
                                       const NameParts& parts) {
    if (name.empty() || name.size() > kMaxSuggestedNameLength) return {};
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    const std::size_t k = static_cast<std::size_t>(std::count(name.begin(), name.end(), parts.separator)) + 1;
    std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, candidate index)
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (candidates[i].size() > kMaxSuggestedNameLength) continue;
        if (const std::size_t dist = distance_to(name, k, candidates[i], parts); dist <= limit) scored.emplace_back(dist, i);
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& [dist, i] : scored) {
        if (out.size() == n) break;
        out.push_back(candidates[i]);
    }
    return out;
}

std::string closest_note(const std::vector<std::string>& closest) {
    return closest.empty() ? "" : fmt::format(" (closest: {})", fmt::join(closest, ", "));
}

}  // namespace attntrace
