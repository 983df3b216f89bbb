#include "export/trace_export.hpp"

#include <cmath>

#include "evaluate/model_end.hpp"
#include "lesson/config_fields.hpp"

namespace attntrace {

namespace {

// config.scale as the lesson wrote it: true, false, or its object.
OrderedJson scale_json(const Scaling& sc) {
    if (!sc.recorded) return sc.kind != ScaleKind::none;
    OrderedJson j;
    if (sc.kind == ScaleKind::sqrt_dk) j["divide_by"] = "sqrt_dk";
    else j[sc.kind == ScaleKind::multiply_by ? "multiply_by" : "divide_by"] = sc.value;
    return j;
}

// The digits of a claim written per row or per value, one per printed value,
// shaped as `printed` (a per-row list written out for each value of its row).
OrderedJson digits_json(const std::vector<int>& digits, const Shape& shape, std::size_t axis, std::size_t& next) {
    if (axis == shape.size()) return digits[next++];
    OrderedJson a = OrderedJson::array();
    for (std::size_t i = 0; i < shape[axis]; ++i) a.push_back(digits_json(digits, shape, axis + 1, next));
    return a;
}

// "decimals": 2 or "sig": 5, or their arrays.
void precision_json(OrderedJson& j, const Claim& c) {
    std::size_t next = 0;
    j[c.precision.unit == Precision::Unit::decimals ? "decimals" : "sig"] =
        c.cell_digits.empty() ? OrderedJson(c.precision.digits) : digits_json(c.cell_digits, c.values.shape, 0, next);
}

OrderedJson claim_json(const ClaimResult& r) {
    const Claim& c = r.claim;
    OrderedJson j;
    j["id"] = c.id;
    j["step"] = c.step;
    OrderedJson at = OrderedJson::object();
    for (const auto& [axis, i] : c.at) at[std::string(axis_name(axis))] = i;
    for (const auto& [axis, indices] : c.select) at[std::string(axis_name(axis))] = indices;  // a list or range, as its indices
    j["at"] = at;
    if (c.kind == Claim::Kind::shape) {
        j["of"] = "shape";
        OrderedJson s = OrderedJson::object();
        for (const auto& [axis, n] : c.shape) s[std::string(axis_name(axis))] = n;
        j["printed"] = s;
    } else {
        j["of"] = c.kind == Claim::Kind::reduced ? reduction_name(c.reduction)
                  : c.kind == Claim::Kind::terms ? "terms"  // printed and computed: the terms, then their sum
                  : c.kind == Claim::Kind::next_token ? "next_token"  // printed and computed: the token's probability
                  : c.kind == Claim::Kind::quantity ? c.quantity  // printed and computed: the quantity of each cell
                                                 : "values";
        if (c.kind == Claim::Kind::next_token) j["token"] = c.token;
        precision_json(j, c);
        j["printed"] = tensor_to_json(c.values);
        j["computed"] = r.computed.size() ? tensor_to_json(r.computed) : OrderedJson(nullptr);
        if (r.document.size()) j["document_arithmetic"] = tensor_to_json(r.document);
        if (r.computed.size()) {
            j["max_deviation"] = std::isinf(r.max_deviation) ? OrderedJson("inf") : OrderedJson(r.max_deviation);
            j["cells_off"] = r.cells_off;
        }
    }
    j["basis"] = std::string(basis_text(r.basis));
    j["verdict"] = std::string(verdict_name(r.verdict));
    j["expected"] = std::string(verdict_name(c.expect));
    if (!r.reason.empty()) j["reason"] = r.reason;
    if (!r.rests_on.empty()) j["rests_on"] = r.rests_on;  // agrees-from-given: the given step its formula does not give
    if (r.formula_only.size()) j["formula_only"] = tensor_to_json(r.formula_only);
    if (!c.quote.empty()) j["quote"] = c.quote;
    if (!c.note.empty()) j["note"] = c.note;
    return j;
}

}  // namespace

void put_token_sources(OrderedJson& j, const Lesson& lesson) {
    if (!lesson.weight_source) return;  // a checkpoint's run: its ids, and with a text each token's bytes in it
    j["token_ids"] = lesson.token_ids;
    if (lesson.token_spans.empty()) return;
    j["text"] = lesson.text;
    OrderedJson spans = OrderedJson::array();
    for (const TokenSpan& sp : lesson.token_spans) spans.push_back({sp.begin, sp.end});
    j["token_spans"] = std::move(spans);
}

OrderedJson trace_to_json(const Lesson& lesson, const Trace& trace, const CheckReport* report,
                          DeferredTensors* deferred) {
    auto values = [&](const Tensor& t) { return deferred ? deferred_tensor(t, *deferred) : tensor_to_json(t); };
    OrderedJson j;
    j["format"] = "attntrace-trace";
    j["version"] = kTraceFormatVersion;
    j["generator"] = "attntrace " ATTNTRACE_VERSION;
    j["lesson"] = {{"id", lesson.id},
                   {"title", lesson.title},
                   {"source", {{"document", lesson.source.document},
                               {"title", lesson.source.title},
                               {"section", lesson.source.section}}}};
    // what the lesson shows, and often what the article got wrong: the report opens with it
    if (!lesson.description.empty()) j["lesson"]["description"] = lesson.description;
    j["tokens"] = lesson.tokens;
    put_token_sources(j, lesson);
    if (!lesson.query_tokens.empty()) j["query_tokens"] = lesson.query_tokens;
    if (!trace.sequence_tokens.empty())  // a batch (src/batch/): tokens are then position labels
        j["batch"] = {{"pad_token", lesson.batch ? lesson.batch->pad_token : std::string()},
                      {"sequences", trace.sequence_tokens}};
    const Config& c = lesson.config;
    j["config"] = {{"d_model", c.d_model},  {"heads", c.heads}, {"kv_heads", lesson.dims().KVH},
                   {"d_head", c.dk()}, {"d_ff", c.d_ff},
                   {"mask", std::string(mask_name(c.mask))}, {"scale", scale_json(c.scale)},
                   {"activation", std::string(activation_name(c.activation))}, {"eps", c.eps}};
    if (c.norm != NormKind::layernorm) j["config"]["norm"] = std::string(norm_name(c.norm));  // absent: LayerNorm
    // The fields below are written only when they differ from their defaults, in their table's spellings
    // (config_fields.cpp): traces of lessons that do not use them are unchanged.
    auto spelled = [&](const char* field, int value) {
        j["config"][field] = std::string(spelling_name(config_field(field).spellings, value));
    };
    if (c.weight_layout != WeightLayout::in_out) spelled("weight_layout", static_cast<int>(c.weight_layout));
    if (c.normalizer != Normalizer::softmax) spelled("normalizer", static_cast<int>(c.normalizer));
    if (!c.max_shift) j["config"]["max_shift"] = false;  // absent: true
    if (c.mask_at != MaskAt::scaled) spelled("mask_at", static_cast<int>(c.mask_at));
    if (c.renormalize) j["config"]["renormalize"] = true;  // absent: false
    if (c.norm_steps_all) spelled("norm_steps", 1);      // absent: fused
    if (c.variance != Variance::biased) spelled("variance", static_cast<int>(c.variance));
    if (c.dv() != c.dk()) j["config"]["d_v"] = c.dv();  // absent: d_v = d_head (the query/key width d_k)
    if (c.dout() != c.d_model) j["config"]["d_out"] = c.dout();  // absent: attn_out is d_model wide
    if (c.positions.kind != PositionKind::none) {  // absent when none: traces without positions are unchanged
        const Positions& p = c.positions;
        OrderedJson pj;
        pj["kind"] = std::string(position_name(p.kind));
        if (p.kind == PositionKind::rope) {
            pj["layout"] = std::string(rope_layout_name(p.layout));
            pj["base"] = p.base;
            if (p.rotary_dims) pj["rotary_dims"] = p.rotary_dims;  // absent: every dimension rotated
        }
        if (p.kind == PositionKind::alibi && !p.slopes.empty()) pj["slopes"] = p.slopes;
        j["config"]["positions"] = std::move(pj);
    }
    j["run"] = {{"from", std::string(stage_name(lesson.from))}, {"to", std::string(stage_name(lesson.to))}};
    OrderedJson policy;
    const TracePolicy& tp = trace.policy;
    policy["policy"] = tp.kind == TracePolicy::Kind::full      ? "full"
                       : tp.kind == TracePolicy::Kind::summary ? "summary"
                       : tp.kind == TracePolicy::Kind::none    ? "none"
                                                                : "subset";
    if (tp.kind == TracePolicy::Kind::subset) policy["steps"] = tp.steps;
    policy["streamed_attention"] = trace.streamed_attention;
    j["trace"] = std::move(policy);
    j["document_rounding"] = lesson.document_rounding;
    OrderedJson steps = OrderedJson::array();
    for (const Step& s : trace.steps) {
        OrderedJson sj;
        sj["name"] = s.name;
        if (s.def) {
            sj["title"] = title_of(s);
            sj["stage"] = std::string(stage_name(s.def->stage));
            sj["formula"] = formula_of(s);
            sj["explain"] = meaning_of(s);
        }
        sj["shape"] = s.shape;
        sj["axes"] = s.axes;
        sj["labels"] = s.labels;
        sj["source"] = std::string(source_name(s.source));
        sj["inputs"] = s.inputs;
        if (!s.note.empty()) sj["note"] = s.note;
        sj["recorded"] = std::string(record_name(s.recorded));
        if (s.summary) {
            const StepSummary& m = *s.summary;
            sj["summary"] = {{"min", m.min},           {"max", m.max},
                             {"mean", m.mean},         {"neg_inf", m.neg_inf},
                             {"row_sums", tensor_to_json(m.row_sums)}, {"corner", tensor_to_json(m.corner)}};
        } else {
            if (s.source == StepSource::not_computable) sj["values"] = nullptr;
            // values_of: a held step's buffer (written from where it is), a derived step's values computed now
            // (when written, for a deferred document)
            else if (!is_derived(s)) sj["values"] = values(*values_of(trace, s));
            else if (deferred) sj["values"] = deferred_tensor([&trace, &s] { return values_of(trace, s).take(); }, *deferred);
            else sj["values"] = tensor_to_json(*values_of(trace, s));
            if (s.formula) sj["formula_values"] = values(*s.formula);
        }
        if (s.rounded_to >= 0) sj["rounded_to"] = s.rounded_to;
        steps.push_back(std::move(sj));
    }
    j["steps"] = std::move(steps);
    OrderedJson claims = OrderedJson::array();
    if (report)
        for (const auto& r : report->results) claims.push_back(claim_json(r));
    j["claims"] = std::move(claims);
    j["warnings"] = trace.warnings;
    // a run with a head: its next tokens as run computes them (absent otherwise: other traces are unchanged)
    if (lesson.config.arch.unembed) j["model"] = model_end_json(lesson, model_end(lesson, trace, kNextTokensShown));
    return j;
}

void write_trace_json(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport* report) {
    DeferredTensors deferred;
    OrderedJson j = trace_to_json(lesson, trace, report, &deferred);
    write_readable(j, out, deferred);
}

}  // namespace attntrace
