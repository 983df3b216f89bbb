// Claims: what an article prints for one step, read and validated against the
// lesson's catalogue and extents (docs/lesson-format.md, Claims).
#include "lesson/claim_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "lesson/claim_at.hpp"
#include "lesson/claim_precision.hpp"
#include "lesson/config_reader.hpp"
#include "trace/step_lookup.hpp"

namespace attntrace {

namespace {

// An axis a claim names. K and V's heads are `kv_head`; lessons written
// before K/V heads existed say `head`, which is the same axis in
// multi-head attention (kv_heads = heads) and is read as kv_head there.
// V's and Z's head width is d_head_v, written "d_head" as every head width; attn_out's width d_out is
// written "d_model".
std::optional<Axis> claim_axis(const Dims& dims, const StepDef& def, const std::string& name) {
    auto axis = axis_from_name(name);
    const auto& axes = def.axes;
    if (axis == Axis::d_head && std::find(axes.begin(), axes.end(), Axis::d_head_v) != axes.end())
        return Axis::d_head_v;
    if (axis == Axis::d_model && std::find(axes.begin(), axes.end(), Axis::d_out) != axes.end()) return Axis::d_out;  // attn_out's
    if (axis == Axis::head && dims.KVH == dims.NH && std::find(axes.begin(), axes.end(), Axis::head) == axes.end() &&
        std::find(axes.begin(), axes.end(), Axis::kv_head) != axes.end())
        return Axis::kv_head;
    return axis;
}

// The region's shape once reduced: without its last axis (rows), the one
// before it (columns), or its head axis (`axes`: the region's; Over::head sets r.axis).
void reduce_region(const Fields& f, Shape& region, const std::vector<Axis>& axes, Reduction& r, const std::string& path) {
    if (r.over == Reduction::Over::head) {
        const auto at = std::find_if(axes.begin(), axes.end(), [](Axis a) { return a == Axis::head || a == Axis::kv_head; });
        if (at == axes.end())
            f.fail(path, fmt::format("{} of a step with heads left after \"at\" (hook_q, hook_pattern, hook_z ...)", reduction_name(r)),
                   "no head axis");
        r.axis = static_cast<std::uint8_t>(at - axes.begin());
        if (r.op == Reduction::Op::std_unbiased && region[r.axis] < 2)
            f.fail(path, fmt::format("{} over at least two heads (it divides by n - 1)", reduction_name(r)), "one head");
        region.erase(region.begin() + r.axis);
        return;
    }
    if (r.over == Reduction::Over::all) {  // the whole region, one number
        std::size_t cells = 1;
        for (std::size_t e : region) cells *= e;
        if (r.op == Reduction::Op::std_unbiased && cells < 2)
            f.fail(path, "all_std_unbiased of at least two cells (it divides by n - 1)", "a single value");
        region.clear();
        return;
    }
    const bool row = r.over == Reduction::Over::row;
    if (region.size() < (row ? 1u : 2u))
        f.fail(path, fmt::format("{} of a step with {} left after \"at\"", reduction_name(r), row ? "rows" : "columns"),
               region.empty() ? "a single value" : "a single row");
    const std::size_t n = region[region.size() - (row ? 1 : 2)];
    if (r.op == Reduction::Op::std_unbiased && n < 2)
        f.fail(path, fmt::format("{} over at least two cells (it divides by n - 1)", reduction_name(r)),
               fmt::format("{} of one cell", row ? "rows" : "columns"));
    region.erase(region.end() - (row ? 1 : 2));
}

// The smallest terms claim: one term and the sum.
constexpr std::size_t kMinTermsValues = 2;

// A claim `of: "terms"`: one cell (every axis fixed by `at`) of a step whose
// explanation writes terms, its values a list of them then their sum. How many
// terms the cell has is the explanation's to say (a bias adds one): the check
// holds the count (check/claim_terms.cpp).
Claim read_terms_claim(const ClaimContext& ctx, const json& v, const std::string& path, const StepDef& def,
                       std::vector<Axis> free_axes, Claim c) {
    const Fields& f = ctx.f;
    // an axis of one (the head of a one-head lesson, the only token) is fixed by itself, at 0
    std::erase_if(free_axes, [&](Axis a) { return ctx.dims.extent(a) == 1; });
    c.kind = Claim::Kind::terms;
    if (!writes_terms(def.leaf))
        f.fail(join(path, "step"),
               "a step whose explanation writes a dot product's terms, since \"of\" is \"terms\" (hook_q, hook_k, "
               "hook_v, hook_scores_raw, hook_z, hook_attn_out, mlp.hook_pre, mlp.hook_pre_linear, hook_mlp_out)",
               def.name);
    if (!c.select.empty())
        f.fail(join(join(path, "at"), std::string(axis_name(c.select.front().first))),
               "an index or a label (a terms claim is on one cell)", "a list or a range");
    // Z's row with its width left free: the weighted value vectors A[i, j]·V[j], one per key (docs: Terms)
    const bool vectors = def.leaf == Leaf::z && free_axes.size() == 1 && axis_name(free_axes[0]) == "d_head";  // d_head or d_head_v
    if (!free_axes.empty() && !vectors) {
        std::string left;
        for (Axis a : free_axes) left += (left.empty() ? "" : ", ") + std::string(axis_name(a));
        f.fail(join(path, "at"),
               fmt::format("every axis of {} fixed (terms are of one cell){}", c.step,
                           def.leaf == Leaf::z ? ", or all but d_head (the weighted value vectors of one row)" : ""),
               fmt::format("{} left free", left));
    }
    const std::string vp = join(path, "values");
    c.values = f.tensor(f.member(v, path, "values"), vp, true);
    if (vectors && (c.values.rank() != 2 || c.values.shape[0] < 1))
        f.fail(vp, "the weighted value vectors, a row per key (then, optionally, their sum), since d_head is left free",
               array_text(c.values.shape));
    if (!vectors && (c.values.rank() != 1 || c.values.size() < kMinTermsValues))
        f.fail(vp, "a list of the cell's terms, then their sum (at least 2 numbers)", array_text(c.values.shape));
    read_precision(f, v, path, c.values.shape, c);
    return c;
}

// A claim `of: "next_token"`: at one position of the logits, the top next
// token (`token`, a piece or an index of the vocab axis) and its probability
// (`values`, one number): softmax over the position's row, as run --model's table.
Claim read_next_token_claim(const ClaimContext& ctx, const json& v, const std::string& path, const StepDef& def,
                            const std::vector<Axis>& free_axes, Claim c) {
    const Fields& f = ctx.f;
    c.kind = Claim::Kind::next_token;
    if (def.leaf != Leaf::logits)
        f.fail(join(path, "step"), "the logits (unembed), since \"of\" is \"next_token\"", def.name);
    if (!c.select.empty() || free_axes != std::vector<Axis>{Axis::vocab})
        f.fail(join(path, "at"), "one position fixed (\"at\": {\"pos\": ...}), the vocabulary left whole",
               c.select.empty() ? "no position fixed" : "a list or a range");
    const Dims d = ctx.lesson.dims();
    const std::string tp = join(path, "token");
    const AxisPick pick = read_axis_pick(f, f.member(v, path, "token"), tp, Axis::vocab,
                                         ctx.lesson.axis_labels(Axis::vocab, d, false), d.V);
    if (!pick.fixed) f.fail(tp, "one vocabulary entry (a piece or an index)", "a list or a range");
    c.token = pick.indices[0];
    const std::string vp = join(path, "values");
    c.values = f.tensor(f.member(v, path, "values"), vp, true);
    if (c.values.size() != 1) f.fail(vp, "one number: the token's probability", array_text(c.values.shape));
    read_precision(f, v, path, c.values.shape, c);
    return c;
}

// `axes` (a values claim): the printed array's axes in the order printed, a permutation of the region's
// axes (`kept`, extents `region`) in which an axis of extent 1 may be left out (Kᵀ printed d_head x pos).
// Returns, for each printed axis, its position in the region.
std::vector<std::size_t> read_printed_axes(const Fields& f, const Dims& dims, const StepDef& def, const json& axes,
                                           const std::string& path, const std::vector<Axis>& kept, const Shape& region) {
    const std::vector<std::string> names = f.strings(axes, path, true);
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string p = index(path, i);
        const std::string& name = names[i];
        const auto axis = claim_axis(dims, def, name);
        const auto at = axis ? std::find(kept.begin(), kept.end(), *axis) : kept.end();
        std::string free;
        for (Axis a : kept) free += (free.empty() ? "" : ", ") + std::string(axis_name(a));
        if (at == kept.end()) f.fail(p, "an axis the claim leaves free (" + (free.empty() ? "none" : free) + ")", describe(axes[i]));
        const std::size_t k = static_cast<std::size_t>(at - kept.begin());
        if (std::find(order.begin(), order.end(), k) != order.end()) f.fail(p, "each axis once", name + " again");
        order.push_back(k);
    }
    for (std::size_t k = 0; k < kept.size(); ++k)
        if (region[k] > 1 && std::find(order.begin(), order.end(), k) == order.end())
            f.fail(path, fmt::format("every free axis longer than 1 ({} is {})", axis_name(kept[k]), region[k]), "it left out");
    return order;
}

// Values written in the printed order (`order`: each printed axis's position in the region) put in the region's
// order, as the step holds them; `values` of the printed extents, `region` the step's.
template <class Values>
Values to_region_order(const Values& values, const Shape& region, const std::vector<std::size_t>& order) {
    Shape printed;
    for (std::size_t k : order) printed.push_back(region[k]);
    std::vector<std::size_t> stride(order.size(), 1);  // the printed array's strides, row-major
    for (std::size_t i = order.size(); i-- > 1;) stride[i - 1] = stride[i] * printed[i];
    Values out(values.size());
    std::vector<std::size_t> r(region.size(), 0);  // the region's multi-index, row-major
    for (std::size_t flat = 0; flat < out.size(); ++flat) {
        std::size_t from = 0;
        for (std::size_t i = 0; i < order.size(); ++i) from += r[order[i]] * stride[i];
        out[flat] = values[from];
        for (std::size_t d = region.size(); d-- > 0;) {
            if (++r[d] < region[d]) break;
            r[d] = 0;
        }
    }
    return out;
}

}  // namespace

// Merge the last two axes: (T, NH, hs) -> (T, NH·hs), = (T, C) unless config.d_k. The articles print Q and Z
// with the heads side by side; the trace keeps TransformerLens' (pos, head, d_head).
Shape merge_last2(const Shape& s) {
    if (s.size() < 2) return s;
    Shape out(s.begin(), s.end() - 2);
    out.push_back(s[s.size() - 2] * s[s.size() - 1]);
    return out;
}

// The article's layout of a step: the step's own shape, or it without axes
// of size 1 (one head's T x T scores); for a step ending in (head, d_head),
// also the heads side by side (Q as T x d_model, as the articles print it;
// K and V, ending in (kv_head, d_head), as T x kv_heads·head_size).
bool shape_accepts(const Shape& got, const Shape& want, bool heads_side_by_side) {
    return got == want || squeeze(got) == squeeze(want) ||
           (heads_side_by_side && want.size() >= 2 && squeeze(got) == squeeze(merge_last2(want)));
}

bool ends_with_heads(const std::vector<Axis>& axes) {
    return axes.size() >= 2 && (axes[axes.size() - 2] == Axis::head || axes[axes.size() - 2] == Axis::kv_head) &&
           (axes.back() == Axis::d_head || axes.back() == Axis::d_head_v);
}

std::string axes_text(const StepDef& def) {
    std::string s;
    for (Axis a : def.axes) s += (s.empty() ? "" : ", ") + std::string(axis_name(a));
    return s.empty() ? "scalar" : s;
}

void read_at(const Fields& f, const Lesson& lesson, const Dims& dims, const StepDef& def, const json& at,
             const std::string& path, std::vector<Axis>& free_axes, std::vector<std::pair<Axis, std::size_t>>& fixed,
             std::vector<std::pair<Axis, std::vector<std::size_t>>>& narrowed) {
    const Dims dd = lesson.dims_of(lesson.catalogue().pass_of(def));
    f.object(at, path);
    for (auto it = at.begin(); it != at.end(); ++it) {
        std::string p = join(path, it.key());
        auto axis = claim_axis(dims, def, it.key());
        auto pos = axis ? std::find(free_axes.begin(), free_axes.end(), *axis) : free_axes.end();
        if (pos == free_axes.end())
            f.fail(p, "an axis of " + def.name + " (" + (lesson.batch ? "batch, " : "") + axes_text(def) + ")",
                   "an unknown axis");
        AxisPick pick = read_axis_pick(f, *it, p, *axis, lesson.axis_labels(*axis, dd, def.cross), dd.extent(*axis));
        if (pick.fixed) {
            fixed.emplace_back(*axis, pick.indices[0]);
            free_axes.erase(pos);
        } else {
            narrowed.emplace_back(*axis, std::move(pick.indices));
        }
    }
}

Claim read_claim(const ClaimContext& ctx, const json& v, const std::string& path) {
    const Fields& f_ = ctx.f;
    const Lesson& lesson_ = ctx.lesson;
    const Dims& dims_ = ctx.dims;
    f_.object(v, path);
    f_.only_keys(v, path, {"id", "step", "at", "of", "token", "decimals", "sig", "values", "axes", "shape", "expect", "quote", "note"});
    Claim c;
    c.id = f_.string(f_.member(v, path, "id"), join(path, "id"));
    c.step = f_.string(f_.member(v, path, "step"), join(path, "step"));
    // The whole name, or its end when one step ends so ("hook_pattern"): kept whole from here on.
    const StepLookup found =
        lookup_step(lesson_.catalogue(), c.step, [&](const StepDef& d) { return lesson_.records(d); });
    if (!found.def)
        f_.fail(join(path, "step"), found.ambiguous.empty() ? "a step name (see docs/steps.md)" : "the name of one step",
                lookup_failure(c.step, found));
    const StepDef* def = found.def;
    c.step = def->name;
    const Dims dd = lesson_.dims_of(lesson_.catalogue().pass_of(*def));
    if (!lesson_.records(*def))
        f_.fail(join(path, "step"), "a step this lesson records",
                fmt::format("{} ({})", c.step, ctx.why_not_recorded(*def)));
    if (dims_.F == 0 && std::find(def->axes.begin(), def->axes.end(), Axis::d_ff) != def->axes.end())
        f_.fail("config.d_ff", fmt::format("d_ff, since {} names {}", join(path, "step"), def->name),
                "nothing (the field is missing)");
    auto expect = f_.string(f_.member(v, path, "expect"), join(path, "expect"));
    auto verdict = verdict_from_name(expect);
    if (!verdict)
        f_.fail(join(path, "expect"), "agrees, agrees-from-given, agrees-when-rounded, disagrees or not-checkable", describe(v["expect"]));
    c.expect = *verdict;
    if (auto* q = f_.optional(v, "quote")) c.quote = f_.string(*q, join(path, "quote"));
    if (auto* n = f_.optional(v, "note")) c.note = f_.string(*n, join(path, "note"));

    // Region selected by `at`.
    std::vector<Axis> free_axes = def->axes;
    if (lesson_.batch) free_axes.insert(free_axes.begin(), Axis::batch);  // the batched trace's leading axis
    if (auto* at = f_.optional(v, "at"))
        read_at(f_, lesson_, dims_, *def, *at, join(path, "at"), free_axes, c.at, c.select);

    if (auto* s = f_.optional(v, "shape")) {
        if (f_.optional(v, "values") || f_.optional(v, "decimals") || f_.optional(v, "sig") || f_.optional(v, "of"))
            f_.fail(path, "either \"shape\" or \"values\" with \"decimals\"", "both");
        c.kind = Claim::Kind::shape;
        if (!c.select.empty())  // a shape states whole extents: a list or a range in `at` would narrow nothing
            f_.fail(join(join(path, "at"), std::string(axis_name(c.select.front().first))),
                    "an index or a label (a shape claim states whole extents)", "a list or a range");
        f_.object(*s, join(path, "shape"));
        for (auto it = s->begin(); it != s->end(); ++it) {
            std::string p = join(join(path, "shape"), it.key());
            auto axis = claim_axis(dims_, *def, it.key());
            if (!axis || (std::find(def->axes.begin(), def->axes.end(), *axis) == def->axes.end() &&
                          !(lesson_.batch && *axis == Axis::batch)))
                f_.fail(p, "an axis of " + c.step + " (" + (lesson_.batch ? "batch, " : "") + axes_text(*def) + ")",
                       "an unknown axis");
            c.shape.emplace_back(*axis, static_cast<std::size_t>(f_.integer(*it, p, 0, kMaxTokens)));
        }
        return c;
    }
    if (auto* of = f_.optional(v, "of")) {
        auto s = f_.string(*of, join(path, "of"));
        auto reduction = reduction_from_name(s);
        if (s == "terms") return read_terms_claim(ctx, v, path, *def, free_axes, std::move(c));
        if (s == "next_token") return read_next_token_claim(ctx, v, path, *def, free_axes, std::move(c));
        if (s == "angle" || s == "frequency") {  // a quantity inside the step's formula (formula_quantities)
            const std::vector<std::string> q = formula_quantities(def->leaf, lesson_.config);
            if (std::find(q.begin(), q.end(), s) == q.end())
                f_.fail(join(path, "step"),
                        fmt::format("a step whose formula has {} {} (hook_pos_embed with sinusoidal positions; "
                                    "attn.hook_rot_q or hook_rot_k with RoPE), since \"of\" is \"{}\"",
                                    s == "angle" ? "an" : "a", s, s),
                        def->name);
            c.kind = Claim::Kind::quantity;
            c.quantity = s;
        } else if (s != "values" && !reduction) {
            f_.fail(join(path, "of"),
                    "\"values\", \"terms\", \"next_token\", \"angle\", \"frequency\", or row_, col_ or all_ with "
                    "sum, min, max, mean, std or std_unbiased (\"row_sum\", \"col_max\", \"all_mean\"), or head_ with one "
                    "of them (\"head_mean\": across the heads)",
                    describe(*of));
        }
        if (reduction) {
            c.kind = Claim::Kind::reduced;
            c.reduction = *reduction;
        }
    }
    // The region: the free axes' extents, a selected axis as long as its selection.
    Shape region;
    for (Axis a : free_axes) {
        auto sel = std::find_if(c.select.begin(), c.select.end(), [&](const auto& s) { return s.first == a; });
        region.push_back(sel != c.select.end() ? sel->second.size() : dd.extent(a));
    }
    std::vector<Axis> kept_axes = free_axes;  // the region's axes once reduced (a head_ reduction takes its head axis)
    if (c.kind == Claim::Kind::reduced) {
        reduce_region(f_, region, free_axes, c.reduction, join(path, "of"));
        if (c.reduction.over == Reduction::Over::head) kept_axes.erase(kept_axes.begin() + c.reduction.axis);
    }
    if (f_.optional(v, "token")) f_.fail(join(path, "token"), "a token only with \"of\": \"next_token\"", "a token");
    const json& vals = f_.member(v, path, "values");
    c.values = f_.tensor(vals, join(path, "values"), true);  // a single number is rank 0
    // `axes`: printed in another order than the step's (Kᵀ): read so, then put in the step's order
    std::vector<std::size_t> order;
    if (auto* axes = f_.optional(v, "axes")) {
        if (c.kind != Claim::Kind::values)
            f_.fail(join(path, "axes"), "axes only on a claim of values (not with \"of\")", describe(*axes));
        order = read_printed_axes(f_, dims_, *def, *axes, join(path, "axes"), kept_axes, region);
        for (std::size_t k : order) c.printed_axes.push_back(kept_axes[k]);
    }
    Shape printed = region;
    if (!order.empty()) {
        printed.clear();
        for (std::size_t k : order) printed.push_back(region[k]);
    }
    if (!shape_accepts(c.values.shape, printed, order.empty() && ends_with_heads(kept_axes)))
        f_.fail(join(path, "values"),
                fmt::format("{} (the selected part of {}{})", printed.empty() ? "a single number" : "a " + shape_str(printed) + " array",
                            c.step, order.empty() ? "" : ", its axes in the order of \"axes\""),
                array_text(c.values.shape));
    read_precision(f_, v, path, c.values.shape, c);
    if (!order.empty()) {
        c.values.data = to_region_order(c.values.data, region, order);
        if (!c.cell_digits.empty()) c.cell_digits = to_region_order(c.cell_digits, region, order);
    }
    c.values.shape = region;
    return c;
}

}  // namespace attntrace
