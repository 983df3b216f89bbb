#include "trace/policy.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include "core/error.hpp"
#include "trace/step_lookup.hpp"
#include "trace/steps.hpp"

namespace attntrace {

std::string_view record_name(Record r) {
    switch (r) {
        case Record::full: return "full";
        case Record::summary: return "summary";
        case Record::none: return "none";
    }
    return "?";
}

bool step_matches(std::string_view name, const std::vector<std::string>& patterns) {
    const std::string n(name);
    for (const auto& p : patterns) {
        if (fnmatch(p.c_str(), n.c_str(), 0) == 0) return true;
        if (fnmatch(("*." + p).c_str(), n.c_str(), 0) == 0) return true;
    }
    return false;
}

Record TracePolicy::record_of(std::string_view step) const {
    switch (kind) {
        case Kind::full: return Record::full;
        case Kind::summary: return Record::summary;
        case Kind::none: return Record::none;
        case Kind::subset: return step_matches(step, steps) ? Record::full : Record::none;
    }
    return Record::full;
}

std::string TracePolicy::describe() const {
    switch (kind) {
        case Kind::full: return "full";
        case Kind::summary: return "summary";
        case Kind::none: return "none";
        case Kind::subset: return fmt::format("subset({})", fmt::join(steps, ", "));
    }
    return "?";
}

TracePolicy parse_trace_policy(const std::string& text, const std::string& origin) {
    TracePolicy p;
    if (text == "full") return p;
    if (text == "summary") return p.kind = TracePolicy::Kind::summary, p;
    if (text == "none") return p.kind = TracePolicy::Kind::none, p;
    p.kind = TracePolicy::Kind::subset;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        std::string pattern = text.substr(start, comma - start);
        bool any = false;
        for (const StepDef& d : step_catalogue()) any = any || step_matches(d.name, {pattern});
        if (pattern.empty() || !any) {
            std::vector<std::string> names;
            for (const StepDef& d : step_catalogue()) names.push_back(d.name);
            const std::vector<std::string> closest = closest_names(pattern, names);
            fail_file(origin, "full, summary, none, or step names or globs separated by commas (see docs/steps.md)",
                      fmt::format("\"{}\"{}", pattern.empty() ? text : pattern,
                                  closest.empty() ? "" : fmt::format(" (closest: {})", fmt::join(closest, ", "))));
        }
        p.steps.push_back(std::move(pattern));
        start = comma + 1;
    }
    return p;
}

}  // namespace attntrace
