#include "trace/trace_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace attntrace {

using nlohmann::json;

namespace {

// An array whose one-line form is at most this wide stays on one line: a
// small matrix reads as a matrix, a long row as a list.
constexpr std::size_t kInlineWidth = 100;

OrderedJson tensor_rec(const Tensor& t, std::size_t axis, std::size_t offset, std::size_t stride_after) {
    auto num = [](float x) -> OrderedJson {
        if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
        return static_cast<double>(x);
    };
    if (t.shape.empty()) return num(t.data[0]);
    OrderedJson arr = OrderedJson::array();
    std::size_t n = t.shape[axis];
    std::size_t inner = stride_after / n;
    for (std::size_t i = 0; i < n; ++i) {
        if (axis + 1 == t.shape.size()) arr.push_back(num(t.data[offset + i]));
        else arr.push_back(tensor_rec(t, axis + 1, offset + i * inner, inner));
    }
    return arr;
}

void dump(const OrderedJson& j, int indent, std::string& out);

// The one-line form, or "" when it would hold an object or exceed kInlineWidth.
std::string inline_form(const OrderedJson& j) {
    std::string out;
    if (j.is_object()) return "";
    if (!j.is_array()) {
        dump(j, 0, out);
        return out;
    }
    out = "[";
    for (std::size_t i = 0; i < j.size(); ++i) {
        std::string e = inline_form(j[i]);
        if (e.empty() && !(j[i].is_string() || j[i].is_primitive())) return "";
        out += (i ? ", " : "") + e;
        if (out.size() > kInlineWidth) return "";
    }
    return out + "]";
}

void dump(const OrderedJson& j, int indent, std::string& out) {
    const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    const std::string pad_in(static_cast<std::size_t>(indent + 1) * 2, ' ');
    if (j.is_object()) {
        if (j.empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!first) out += ",\n";
            first = false;
            out += pad_in + OrderedJson(it.key()).dump() + ": ";
            dump(it.value(), indent + 1, out);
        }
        out += "\n" + pad + "}";
    } else if (j.is_array()) {
        std::string one_line = inline_form(j);
        bool flat = std::none_of(j.begin(), j.end(), [](const OrderedJson& e) { return e.is_structured(); });
        if (!one_line.empty() || flat) {
            if (one_line.empty()) {  // a long flat row: still one line
                out += "[";
                for (std::size_t i = 0; i < j.size(); ++i) {
                    if (i) out += ", ";
                    dump(j[i], indent + 1, out);
                }
                out += "]";
            } else {
                out += one_line;
            }
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (i) out += ",\n";
            out += pad_in;
            dump(j[i], indent + 1, out);
        }
        out += "\n" + pad + "]";
    } else if (j.is_number_float()) {
        // Every tensor value is a float32: its shortest form round-trips.
        out += fmt::format("{}", static_cast<float>(j.get<double>()));
    } else {
        out += j.dump();
    }
}

}  // namespace

OrderedJson tensor_to_json(const Tensor& t) {
    if (t.shape.empty()) return t.data.empty() ? OrderedJson(nullptr) : tensor_rec(t, 0, 0, 1);
    return tensor_rec(t, 0, 0, t.size());
}

std::string dump_readable(const OrderedJson& j) {
    std::string out;
    dump(j, 0, out);
    out += "\n";
    return out;
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
        if (!shape.is_array() || shape.size() > 3) f.fail(join(p, "shape"), "an array of at most 3 sizes", describe(shape));
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
            Tensor out = d.shape.empty() ? Tensor(Shape{}) : f.tensor(v, vp, true);
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
            f.object(f.member(s, p, "summary"), join(p, "summary"));  // the statistics are for people, not compared
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
    return parse_trace(load_json_file(path), path, require);
}

}  // namespace attntrace
