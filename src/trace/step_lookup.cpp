#include "trace/step_lookup.hpp"

#include <algorithm>

#include <fmt/format.h>


namespace attntrace {

namespace {

bool ends_with_part(std::string_view full, std::string_view tail) {
    return full.size() > tail.size() && full.substr(full.size() - tail.size()) == tail &&
           full[full.size() - tail.size() - 1] == '.';
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
        out.closest = closest_steps(name, names);
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
    return quoted + closest_note(found.closest);
}

}  // namespace attntrace
