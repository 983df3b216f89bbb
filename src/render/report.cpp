#include "render/report.hpp"

#include "trace/catalogue.hpp"

#include "export/trace_export.hpp"
#include "lesson/config_fields.hpp"
#include "render/report_assets.hpp"
#include "render/report_page.hpp"
#include "trace/steps.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attntrace {

namespace {

// Text as HTML element content or a quoted attribute value.
std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

// Passes JSON text on with every '<' as \u003c. In JSON a '<' can only stand
// inside a string, where \u003c is the same character, so the value is
// unchanged; inside the <script> element, "</script>" (which would end it)
// and "<!--" (which changes how the HTML parser reads script text) cannot
// appear. Per character, so a chunk boundary cannot split a pattern.
class ScriptSafeSink final : public TextSink {
public:
    explicit ScriptSafeSink(TextSink& out) : out_(out) {}
    void write(std::string_view text) override {
        std::size_t start = 0;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] != '<') continue;
            out_.write(text.substr(start, i - start));
            out_.write("\\u003c");
            start = i + 1;
        }
        out_.write(text.substr(start));
    }

private:
    TextSink& out_;
};

// default-src 'none': the page may load nothing, from anywhere; only its own
// inline style and script run. A stray URL would be refused by the browser and
// show as a console error (the report test fails on any).
constexpr const char* kContentPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";


// The page around its data: `data` writes the trace's JSON.
template <class WriteData>
void write_page(TextSink& out, const std::string& title, WriteData&& data) {
    out.write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.write("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    out.write(kContentPolicy);
    out.write("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    out.write(html_escape("attntrace: " + title));
    out.write("</title>\n<style>\n");
    out.write(report_css());
    out.write("</style>\n</head>\n<body>\n");
    out.write("<noscript><p>This report draws its steps, heatmaps and claims with JavaScript: "
              "please allow scripts for this file. The data is in the element #trace.</p></noscript>\n");
    out.write("<main id=\"report\"></main>\n<script type=\"application/json\" id=\"");
    out.write(kReportDataId);
    out.write("\">\n");
    ScriptSafeSink safe(out);
    data(safe);
    out.write("</script>\n<script type=\"application/json\" id=\"");
    out.write(kReportVocabularyId);
    out.write("\">\n");
    write_readable(report_vocabulary(), safe);
    out.write("</script>\n<script>\n");
    out.write(report_js());
    out.write("</script>\n</body>\n</html>\n");
}

// The axes of a step named like a catalogue step (any block, self- or
// cross-attention: "blocks.3.cross_attn.hook_pattern" is the template's
// "blocks.0.attn.hook_pattern"), when it has that step's rank.
std::vector<std::string> axes_of(const std::string& name, std::size_t rank) {
    std::vector<std::string> axes;
    if (const StepTemplate* t = find_template(read_catalogue_name(name).base); t && t->axes.size() == rank)
        for (Axis a : t->axes) axes.emplace_back(axis_name(a));
    else
        for (std::size_t k = 0; k < rank; ++k) axes.push_back("axis" + std::to_string(k));
    return axes;
}

std::vector<std::string> numbered(const std::string& prefix, std::size_t n) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
}

// What the page reads of a trace that has less than an export: every field
// report.js draws, filled in where the trace leaves it out.
OrderedJson page_data(const TraceData& t, const nlohmann::json* doc) {
    OrderedJson j;
    j["format"] = "attntrace-trace";
    j["version"] = kTraceFormatVersion;
    j["generator"] = doc && doc->contains("generator") && (*doc)["generator"].is_string()
                         ? (*doc)["generator"].get<std::string>() : std::string("a trace read by attntrace");
    const bool has_lesson = doc && doc->contains("lesson") && (*doc)["lesson"].is_object();
    j["lesson"] = has_lesson ? OrderedJson::parse((*doc)["lesson"].dump())
                             : OrderedJson{{"id", t.lesson_id.empty() ? std::string("trace") : t.lesson_id},
                                           {"title", "Trace " + t.file},
                                           {"source", {{"document", t.file}, {"title", ""}, {"section", ""}}}};
    // tokens: the trace's own, else numbered after the longest token axis
    std::size_t tokens = 0;
    std::vector<std::vector<std::string>> axes;
    for (const TraceStepData& s : t.steps) {
        axes.push_back(axes_of(s.name, s.shape.size()));
        for (std::size_t k = 0; k < s.shape.size(); ++k)
            if (axes.back()[k] == "pos" || axes.back()[k] == "key" || axes.back()[k] == "query")
                tokens = std::max(tokens, s.shape[k]);
    }
    const bool has_tokens = doc && doc->contains("tokens") && (*doc)["tokens"].is_array();
    j["tokens"] = has_tokens ? OrderedJson::parse((*doc)["tokens"].dump()) : OrderedJson(numbered("t", tokens));
    j["config"] = doc && doc->contains("config") && (*doc)["config"].is_object() ? OrderedJson::parse((*doc)["config"].dump())
                                                                               : OrderedJson::object();
    const std::vector<std::string> token_labels = j["tokens"].get<std::vector<std::string>>();
    // a large trace: reduced as a lesson's page is (report_page.hpp)
    PageReduction reduction;
    for (const TraceStepData& s : t.steps) reduction.floats += s.values.size();
    const bool reduce = reduction.floats > kPageFullFloats;
    OrderedJson steps = OrderedJson::array();
    for (std::size_t i = 0; i < t.steps.size(); ++i) {
        const TraceStepData& s = t.steps[i];
        OrderedJson sj;
        sj["name"] = s.name;
        sj["shape"] = s.shape;
        sj["axes"] = axes[i];
        OrderedJson labels = OrderedJson::array();
        for (std::size_t k = 0; k < s.shape.size(); ++k) {
            const std::string& a = axes[i][k];
            const bool token = a == "pos" || a == "key" || a == "query";
            labels.push_back(token && token_labels.size() == s.shape[k] ? OrderedJson(token_labels)
                             : OrderedJson(numbered(token ? "t" : a == "head" ? "h" : a == "kv_head" ? "kv" : "", s.shape[k])));
        }
        sj["labels"] = labels;
        sj["source"] = s.source.empty() ? std::string("computed") : s.source;
        sj["recorded"] = s.recorded;
        if (!s.values.data.empty()) {
            Tensor v = s.values;
            v.shape = s.shape;
            if (!reduce) {
                sj["values"] = tensor_to_json(v);
            } else if (auto pooled = reduce_page_step(sj, s.name, v, axes[i], labels.get<std::vector<std::vector<std::string>>>(),
                                                      reduction)) {
                sj["values"] = tensor_to_json(*pooled);
            } else if (!sj.contains("summary")) {
                sj["values"] = tensor_to_json(v);
            }
        } else {
            sj["values"] = nullptr;
        }
        steps.push_back(sj);
    }
    j["steps"] = steps;
    j["claims"] = OrderedJson::array();
    if (reduce) j["page"] = reduction.note();
    return j;
}

// A cell index as the page writes it: [1, 0, 2]
std::string index_text(const std::vector<std::size_t>& idx) {
    std::string s = "[";
    for (std::size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
    return s + "]";
}

}  // namespace

OrderedJson report_vocabulary() {
    OrderedJson boxes = OrderedJson::object();
    const auto box = [&](const std::string& name, Leaf leaf) {
        if (const std::string_view label = pipeline_box(leaf); !label.empty())
            boxes[name.substr(name.rfind('.') + 1)] = std::string(label);  // "hook_q", "unembed"
    };
    for (const StepTemplate& t : step_templates()) box(t.name, t.leaf);
    Arch decoder;  // the names only a decoder block writes: hook_cross_attn_out, hook_resid_mid2
    decoder.decoder = true;
    for (const StepDef& d : catalogue_for(decoder).steps()) box(d.name, d.leaf);
    const auto names = [](std::span<const Spelling> kinds) {
        OrderedJson out = OrderedJson::object();
        for (const Spelling& s : kinds) out[std::string(s.name)] = std::string(s.display.empty() ? s.name : s.display);
        return out;
    };
    return {{"boxes", boxes},
            {"norms", names(norm_kinds())},
            {"norm_default", std::string(norm_name(Config{}.norm))},
            {"positions", names(position_kinds())}};
}

void write_diff_report_html(TextSink& out, const TraceData& a, const TraceData& b, const DiffReport& r) {
    // The page of A's steps, each replaced by |A - B| (or no values, with the reason), with
    // each cell's verdict under the diff's tolerances (`beyond`: 1 where it diverges) and the
    // largest finite |A - B| of the page: the one scale the page colours every step on.
    TraceData d;
    d.file = r.file_a + " vs " + r.file_b;
    d.lesson_id = "diff";
    std::vector<std::string> notes;
    std::vector<Tensor> beyond;
    double largest = 0;
    for (const StepDiff& sd : r.steps) {
        const auto find = [&](const TraceData& t) {
            return std::find_if(t.steps.begin(), t.steps.end(), [&](const TraceStepData& s) { return s.name == sd.name; });
        };
        TraceStepData s;
        s.name = sd.name;
        s.shape = sd.shape_a;
        const TraceStepData &sa = *find(a), &sb = *find(b);
        s.values = abs_difference(sa, sb);
        Tensor off;
        if (s.values.size()) {
            off = Tensor(s.values.shape);
            for (std::size_t i = 0; i < off.size(); ++i) {
                off.data[i] = cell_diverges(sa.values.data[i], sb.values.data[i], r.atol, r.rtol) ? 1.0f : 0.0f;
                if (std::isfinite(s.values.data[i])) largest = std::max(largest, double(s.values.data[i]));
            }
        }
        beyond.push_back(std::move(off));
        std::string note = verdict_name(sd.verdict);
        if (sd.verdict == StepVerdict::shape_mismatch) note += ": B's shape differs";
        else if (!sd.note.empty()) note += ": " + sd.note;
        else if (sd.max_abs)
            note += fmt::format(": largest |A - B| {:.3g} at {} (A {:.9g}, B {:.9g}); {} of {} cells beyond tolerance",
                                sd.max_abs->abs, index_text(sd.max_abs->index), sd.max_abs->a, sd.max_abs->b, sd.beyond,
                                sd.cells);
        notes.push_back(note);
        d.steps.push_back(std::move(s));
    }
    OrderedJson page = page_data(d, nullptr);
    const std::string first = r.first_divergence ? r.steps[*r.first_divergence].name : std::string();
    page["lesson"]["title"] = "A vs B: " + r.file_a + " and " + r.file_b;
    page["lesson"]["description"] =
        fmt::format("Each step is |A − B|, cell by cell, on one scale for every step: white where A and B hold the "
                    "same float, green where they differ within the tolerance (float32 noise: |a − b| ≤ {:g} + "
                    "{:g}·|a|), red where they diverge, from pale at {:g} to dark at the page's largest difference "
                    "({:.3g}; logarithmic). {} {} of {} steps compared; first divergence: {}.{}{}",
                    r.atol, r.rtol, r.atol, largest, first.empty() ? "B matches A everywhere." : "B diverges.", r.compared(),
                    r.steps.size(), first.empty() ? "none" : first,
                    r.only_a.empty() ? "" : fmt::format(" Only in A: {}.", fmt::join(r.only_a, ", ")),
                    r.only_b.empty() ? "" : fmt::format(" Only in B: {}.", fmt::join(r.only_b, ", ")));
    page["diff"] = {{"a", r.file_a}, {"b", r.file_b},     {"first_divergence", first},
                    {"atol", r.atol},   {"rtol", r.rtol},   {"largest", largest}};
    for (std::size_t i = 0; i < notes.size(); ++i) {
        OrderedJson& sj = page["steps"][i];
        sj["note"] = notes[i];
        sj["title"] = "|A − B|";
        // each cell's verdict beside its |A - B|, pooled as the values were (a block diverges when a cell does)
        if (!beyond[i].size() || !sj.contains("values") || sj["values"].is_null()) continue;
        if (sj.contains("pooled"))
            sj["beyond"] = tensor_to_json(pool(beyond[i], sj["pooled"]["block"].get<std::vector<std::size_t>>(), PoolOp::max));
        else
            sj["beyond"] = tensor_to_json(beyond[i]);
    }
    write_page(out, "A vs B", [&](TextSink& data) { write_readable(page, data); });
}

void write_report_html(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                       const OrderedJson& extra) {
    // The export's text, byte for byte, unless the trace is too large for a page (report_page.hpp).
    DeferredTensors deferred;
    std::vector<std::unique_ptr<Tensor>> owned;
    OrderedJson page = page_json(lesson, trace, report, deferred, owned);
    for (const auto& [key, value] : extra.items()) page[key] = value;
    write_page(out, lesson.title, [&](TextSink& data) { write_readable(page, data, deferred); });
}

void write_trace_report_html(TextSink& out, const TraceData& trace, const nlohmann::json* doc) {
    // An export of attntrace's own has every field the page reads: drawn as it is.
    const bool whole = doc && doc->contains("lesson") && doc->contains("steps") && (*doc)["steps"].is_array() &&
                       std::all_of((*doc)["steps"].begin(), (*doc)["steps"].end(), [](const nlohmann::json& s) {
                           return s.is_object() && s.contains("axes") && s.contains("labels");
                       });
    std::size_t floats = 0;
    for (const TraceStepData& s : trace.steps) floats += s.values.size();
    OrderedJson page;
    if (whole && floats <= kPageFullFloats) {
        page = OrderedJson::parse(doc->dump());
    } else {
        page = page_data(trace, doc);
        // an export too large to draw whole: its own words (titles, formulas, claims) on the reduced steps
        if (whole) {
            const nlohmann::json& from = (*doc)["steps"];
            for (std::size_t i = 0; i < page["steps"].size() && i < from.size(); ++i)
                for (const char* key : {"title", "stage", "formula", "explain", "inputs", "note", "axes"})
                    if (from[i].contains(key) && from[i].value("name", "") == page["steps"][i]["name"])
                        page["steps"][i][key] = OrderedJson::parse(from[i][key].dump());
            for (const char* key : {"claims", "config", "run", "warnings", "model"})
                if (doc->contains(key)) page[key] = OrderedJson::parse((*doc)[key].dump());
        }
    }
    const std::string title = page["lesson"].value("title", std::string("trace"));
    write_page(out, title, [&](TextSink& data) { write_readable(page, data); });
}

}  // namespace attntrace
