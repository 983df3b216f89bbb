#include "trace/policy.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/error.hpp"
#include "trace/catalogue.hpp"
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

std::vector<bool> parse_block_list(const std::string& text, std::size_t count, const std::string& origin) {
    std::vector<bool> keep(count, false);
    const std::string expected = fmt::format(
        "block numbers from 0 to {} (the model has {} block{}) or ranges A-B, separated by commas (0,5-7)", count - 1,
        count, count == 1 ? "" : "s");
    std::string item;  // the comma-separated item being read, for the message
    auto number = [&](const std::string& part) {
        std::size_t v = 0;
        const auto r = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || r.ec != std::errc() || r.ptr != part.data() + part.size() || v >= count)
            fail_file(origin, expected, "\"" + item + "\"");
        return v;
    };
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        item = text.substr(start, comma - start);
        const auto dash = item.find('-');
        const std::size_t a = number(item.substr(0, dash));
        const std::size_t b = dash == std::string::npos ? a : number(item.substr(dash + 1));
        if (b < a) fail_file(origin, expected + ", a range's first block at most its last", "\"" + item + "\"");
        for (std::size_t i = a; i <= b; ++i) keep[i] = true;
        start = comma + 1;
    }
    return keep;
}

Record TracePolicy::record_of(std::string_view step) const {
    if (std::find(keep.begin(), keep.end(), step) != keep.end()) return Record::full;
    if (!blocks.empty())
        if (const auto b = read_catalogue_name(step).block; b && (*b >= blocks.size() || !blocks[*b])) return Record::none;
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

std::string TracePolicy::describe_blocks() const {
    if (blocks.empty()) return "";
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        if (blocks[i]) kept.push_back(std::to_string(i));
    return fmt::format("blocks {} traced, the other {} run untraced", fmt::join(kept, ","), blocks.size() - kept.size());
}

namespace {
constexpr const char* kPolicyExpected = "full, summary, none, or step names or globs separated by commas (see docs/steps.md)";
}  // namespace

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
        if (pattern.empty()) fail_file(origin, kPolicyExpected, fmt::format("\"{}\" (an empty name)", text));
        p.steps.push_back(std::move(pattern));
        start = comma + 1;
    }
    return p;
}

void require_policy_steps(const TracePolicy& policy, const std::vector<std::string>& steps, const std::string& origin) {
    if (policy.kind != TracePolicy::Kind::subset) return;
    for (const std::string& pattern : policy.steps) {
        if (std::any_of(steps.begin(), steps.end(), [&](const std::string& s) { return step_matches(s, {pattern}); }))
            continue;
        // A step of the template this lesson does not record (hook_z of a lesson that stops at the
        // softmax, a variant's row max): one list serves many lessons, so it keeps nothing here.
        const auto& tmpl = step_catalogue();
        if (std::any_of(tmpl.begin(), tmpl.end(), [&](const StepDef& d) { return step_matches(d.name, {pattern}); }))
            continue;
        fail_file(origin, std::string(kPolicyExpected) + " of this lesson (`attntrace steps LESSON` lists them)",
                  fmt::format("\"{}\"{}", pattern, closest_note(closest_steps(pattern, steps))));
    }
}

}  // namespace attntrace
