#include "trace/step_lookup.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>


namespace attntrace {

namespace {

bool ends_with_part(std::string_view full, std::string_view tail) {
    return full.size() > tail.size() && full.substr(full.size() - tail.size()) == tail &&
           full[full.size() - tail.size() - 1] == '.';
}

// The last k dotted parts of s ("attn.hook_pattern" for k = 2), or all of it.
std::string_view last_parts(std::string_view s, std::size_t k) {
    std::size_t start = s.size();
    for (std::size_t found = 0; found < k; ++found) {
        const auto dot = start == 0 ? std::string_view::npos : s.rfind('.', start - 1);
        if (dot == std::string_view::npos) return s;
        start = dot;
    }
    return s.substr(start + 1);
}

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

}  // namespace

StepLookup lookup_step(const Catalogue& catalogue, std::string_view name,
                       const std::function<bool(const StepDef&)>& suggest) {
    StepLookup out;
    if (const StepDef* d = catalogue.find(name)) {
        out.def = d;
        return out;
    }
    if (!name.empty())
        for (const StepDef& d : catalogue.steps())
            if (ends_with_part(d.name, name)) out.ambiguous.push_back(&d);
    if (out.ambiguous.size() == 1) {
        out.def = out.ambiguous.front();
        out.ambiguous.clear();
        return out;
    }
    if (out.ambiguous.empty()) {
        std::vector<std::string> names;
        for (const StepDef& d : catalogue.steps())
            if (!suggest || suggest(d)) names.push_back(d.name);
        out.closest = closest_names(name, names);
    }
    return out;
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates, std::size_t n) {
    if (name.empty() || name.size() > kMaxSuggestedNameLength) return {};
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    // A name of k dotted parts is held to the candidates' last k parts:
    // "hook_patern" to "hook_pattern", "1.attn.hook_patern" to
    // "1.attn.hook_pattern", a whole name to whole names.
    const std::size_t parts = static_cast<std::size_t>(std::count(name.begin(), name.end(), '.')) + 1;
    std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, candidate index)
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        const std::string_view c = candidates[k];
        if (c.size() > kMaxSuggestedNameLength) continue;
        std::size_t dist = edit_distance(name, last_parts(c, parts));
        // "patern" against "pattern" too: a one-part name without the hooks' common prefix
        if (const std::string_view last = last_parts(c, 1); parts == 1 && last.substr(0, 5) == "hook_")
            dist = std::min(dist, edit_distance(name, last.substr(5)));
        if (dist <= limit) scored.emplace_back(dist, k);
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& [dist, k] : scored) {
        if (out.size() == n) break;
        out.push_back(candidates[k]);
    }
    return out;
}

std::string lookup_failure(std::string_view name, const StepLookup& found) {
    std::string quoted = fmt::format("\"{}\"", name);
    if (name.size() > kMaxSuggestedNameLength) {
        std::size_t cut = kMaxSuggestedNameLength;  // at a character boundary, not inside a UTF-8 sequence
        while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
        quoted = fmt::format("\"{}...\" ({} bytes)", name.substr(0, cut), name.size());
    }
    if (!found.ambiguous.empty()) {
        std::vector<std::string> names;
        for (const StepDef* d : found.ambiguous) names.push_back(d->name);
        return fmt::format("{}, which names {} steps ({}): write the whole name", quoted, names.size(),
                           fmt::join(names, ", "));
    }
    if (found.closest.empty()) return quoted;
    return fmt::format("{} (closest: {})", quoted, fmt::join(found.closest, ", "));
}

}  // namespace attntrace
