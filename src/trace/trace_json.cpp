#include "trace/trace_json.hpp"

#include <fmt/format.h>

#include <map>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace attntrace {

using nlohmann::json;

void read_token_sources(const Fields& f, const json& doc, TraceData& t) {
    const json* tokens = f.optional(doc, "tokens");
    if (const json* ids = f.optional(doc, "token_ids")) {
        if (!ids->is_array()) f.fail("token_ids", "an array of token ids", describe(*ids));
        if (tokens && tokens->is_array() && tokens->size() != ids->size())
            f.fail("token_ids", fmt::format("one id per token ({})", tokens->size()), fmt::format("{} ids", ids->size()));
        for (std::size_t i = 0; i < ids->size(); ++i)
            t.token_ids.push_back(f.integer((*ids)[i], index("token_ids", i), 0, std::int64_t{1} << 40));
    }
    const json* text = f.optional(doc, "text");
    if (text) t.text = f.string(*text, "text");
    const json* spans = f.optional(doc, "token_spans");
    if (!spans) return;
    if (!text) f.fail("text", "the text token_spans are in", "none");
    if (!spans->is_array() || spans->size() != t.token_ids.size())
        f.fail("token_spans", fmt::format("an array of one span per token id ({})", t.token_ids.size()), describe(*spans));
    std::size_t last = 0;
    for (std::size_t i = 0; i < spans->size(); ++i) {
        const std::string p = index("token_spans", i);
        const json& s = (*spans)[i];
        if (!s.is_array() || s.size() != 2) f.fail(p, "[begin, end]: the token's bytes in the text", describe(s));
        const auto size = static_cast<std::int64_t>(t.text->size());
        const auto b = static_cast<std::size_t>(f.integer(s[0], index(p, 0), static_cast<std::int64_t>(last), size));
        const auto e = static_cast<std::size_t>(f.integer(s[1], index(p, 1), static_cast<std::int64_t>(b), size));
        t.token_spans.push_back({b, e});
        last = b;
    }
}

TraceData parse_trace(const json& doc, const std::string& file, TraceRequire require) {
    const bool minimal = require == TraceRequire::minimal;
    Fields f(file);
    f.object(doc, "");
    if (f.string(f.member(doc, "", "format"), "format") != "attntrace-trace")
        f.fail("format", "\"attntrace-trace\"", describe(doc["format"]));
    auto version = f.integer(f.member(doc, "", "version"), "version", 1, 1000000);
    // Version 1 is version 2 without trace policies: every step in full.
    if (version != 1 && version != kTraceFormatVersion)
        f.fail("version", fmt::format("1 or {}", kTraceFormatVersion), fmt::format("{}", version));
    TraceData t;
    t.file = file;
    if (const json* lesson = minimal ? f.optional(doc, "lesson") : &f.member(doc, "", "lesson")) {
        f.object(*lesson, "lesson");
        t.lesson_id = f.string(f.member(*lesson, "lesson", "id"), "lesson.id");
    }
    read_token_sources(f, doc, t);
    const json& steps = f.member(doc, "", "steps");
    if (!steps.is_array()) f.fail("steps", "an array of steps", describe(steps));
    std::map<std::string, std::size_t> seen;  // name -> its index
    for (std::size_t i = 0; i < steps.size(); ++i) {
        std::string p = index("steps", i);
        const json& s = f.object(steps[i], p);
        TraceStepData d;
        d.name = f.string(f.member(s, p, "name"), join(p, "name"));
        if (auto [it, fresh] = seen.emplace(d.name, i); !fresh)
            f.fail(join(p, "name"),
                   fmt::format("a name no other step has (this one is {}'s)", index("steps", it->second)),
                   describe(s["name"]));
        const json& shape = f.member(s, p, "shape");
        if (!shape.is_array() || shape.size() > kMaxTraceRank)
            f.fail(join(p, "shape"), fmt::format("an array of at most {} sizes", kMaxTraceRank), describe(shape));
        for (std::size_t k = 0; k < shape.size(); ++k)
            d.shape.push_back(static_cast<std::size_t>(f.integer(shape[k], index(join(p, "shape"), k), 0, kMaxElements)));
        std::size_t n = 0;
        if (!checked_numel(d.shape, kMaxElements, n))
            f.fail(join(p, "shape"), fmt::format("at most {} numbers", kMaxElements), shape_str(d.shape));
        if (const json* source = minimal ? f.optional(s, "source") : &f.member(s, p, "source")) {
            d.source = f.string(*source, join(p, "source"));
            if (d.source != "computed" && d.source != "given" && d.source != "not-computable")
                f.fail(join(p, "source"), "computed, given or not-computable", describe(*source));
        } else {
            d.source = "computed";
        }
        auto read_values = [&](const json& v, const std::string& vp) {
            Tensor out = d.shape.empty() ? Tensor(Shape{}) : f.tensor(v, vp, true, kMaxTraceRank);
            if (d.shape.empty()) {
                if (v.is_string() && v.get<std::string>() == "-inf") out.data[0] = kNegInf;
                else out.data[0] = static_cast<float>(f.number(v, vp));
            }
            if (out.shape != d.shape)
                f.fail(vp, array_text(d.shape) + " (the step's shape)", array_text(out.shape));
            return out;
        };
        if (auto* rec = f.optional(s, "recorded")) {
            d.recorded = f.string(*rec, join(p, "recorded"));
            if (d.recorded != "full" && d.recorded != "summary")
                f.fail(join(p, "recorded"), "full or summary", describe(*rec));
        }
        if (d.recorded == "summary") {
            // The statistics are for people, not compared; a step not computable has none to give.
            if (d.source != "not-computable" || f.optional(s, "summary"))
                f.object(f.member(s, p, "summary"), join(p, "summary"));
            t.steps.push_back(std::move(d));
            continue;
        }
        const json& values = f.member(s, p, "values");
        if (!values.is_null()) d.values = read_values(values, join(p, "values"));
        else if (d.source != "not-computable") f.fail(join(p, "values"), "the step's values", "null");
        if (auto* fv = f.optional(s, "formula_values")) d.formula_values = read_values(*fv, join(p, "formula_values"));
        t.steps.push_back(std::move(d));
    }
    if (auto* claims = f.optional(doc, "claims")) {
        if (!claims->is_array()) f.fail("claims", "an array", describe(*claims));
        for (std::size_t i = 0; i < claims->size(); ++i) {
            std::string p = index("claims", i);
            const json& c = f.object((*claims)[i], p);
            t.claims.push_back({f.string(f.member(c, p, "id"), join(p, "id")),
                                f.string(f.member(c, p, "verdict"), join(p, "verdict"))});
        }
    }
    return t;
}

TraceData read_trace_file(const std::string& path, TraceRequire require) {
    return parse_trace(load_json_file(path, {{"steps", kMaxTraceSteps}, {"claims", kMaxTraceClaims}}), path, require);
}

}  // namespace attntrace
