#include "lesson/lesson.hpp"

#include <fmt/format.h>

#include <array>

#include "lesson/batch_reader.hpp"

namespace attntrace {

namespace {
constexpr std::array<std::string_view, 5> kVerdicts = {"agrees", "agrees-when-rounded", "disagrees",
                                                       "not-checkable", "agrees-from-given"};
}

std::string_view verdict_name(Verdict v) { return kVerdicts[static_cast<int>(v)]; }

std::optional<Verdict> verdict_from_name(std::string_view s) {
    for (std::size_t i = 0; i < kVerdicts.size(); ++i)
        if (kVerdicts[i] == s) return static_cast<Verdict>(i);
    return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 6> kReduceOps = {"sum", "min", "max", "mean", "std", "std_unbiased"};
constexpr std::array<std::string_view, 4> kReduceOver = {"row", "col", "all", "head"};
}  // namespace

std::string reduction_name(Reduction r) {
    return fmt::format("{}_{}", kReduceOver[static_cast<int>(r.over)], kReduceOps[static_cast<int>(r.op)]);
}

std::optional<Reduction> reduction_from_name(std::string_view s) {
    for (std::size_t o = 0; o < kReduceOver.size(); ++o)
        for (std::size_t op = 0; op < kReduceOps.size(); ++op)
            if (Reduction r{static_cast<Reduction::Op>(op), static_cast<Reduction::Over>(o)}; reduction_name(r) == s)
                return r;
    return std::nullopt;
}

std::vector<std::string> Lesson::axis_labels(Axis a, const Dims& d, bool cross) const {
    std::vector<std::string> out;
    auto numbered = [&](const char* prefix, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out.push_back(fmt::format("{}{}", prefix, i));
        return out;
    };
    switch (a) {
        case Axis::pos: return tokens;
        case Axis::key: return cross ? memory_tokens : tokens;
        case Axis::query: return cross ? tokens : query_labels();
        case Axis::head: return numbered("h", d.NH);
        case Axis::kv_head: return numbered("kv", d.KVH);
        case Axis::d_model:
        case Axis::d_out:
        case Axis::d_head:
        case Axis::d_head_v: return numbered("d", d.extent(a));
        case Axis::d_ff: return numbered("f", d.F);
        case Axis::batch: return batch_labels(d.B);  // a batched trace's leading axis (src/batch/), never one run's
        case Axis::vocab:
            if (vocab.size() == d.V) return vocab;
            return numbered("#", d.V);
    }
    return out;
}

std::string Lesson::vocab_label(std::int64_t id) const {
    if (id >= 0 && static_cast<std::size_t>(id) < vocab.size()) return vocab[static_cast<std::size_t>(id)];
    return fmt::format("#{}", id);
}

// mask_name, activation_name, norm_name, position_name, config_records and
// config_records_when read the config field table (config_fields.cpp).

Config cross_attention_config(Config c) {
    c.mask = MaskKind::none;
    c.mask_spec = MaskSpec{};
    c.positions = Positions{};
    return c;
}

std::string_view position_step_kind(Leaf leaf) {
    switch (leaf) {
        case Leaf::pos_embed: return "sinusoidal or learned";
        case Leaf::rot_q:
        case Leaf::rot_k: return "rope";
        case Leaf::alibi_slopes:
        case Leaf::alibi: return "alibi";
        default: return "";
    }
}

bool position_step_applies(PositionKind k, Leaf leaf) {
    const std::string_view needs = position_step_kind(leaf);
    if (needs.empty()) return true;
    if (needs == "rope") return k == PositionKind::rope;
    if (needs == "alibi") return k == PositionKind::alibi;
    return k == PositionKind::sinusoidal || k == PositionKind::learned;
}

std::vector<std::string> formula_quantities(Leaf leaf, const Config& config) {
    const PositionKind k = config.positions.kind;
    if ((leaf == Leaf::pos_embed && k == PositionKind::sinusoidal) ||
        ((leaf == Leaf::rot_q || leaf == Leaf::rot_k) && k == PositionKind::rope))
        return {"angle", "frequency"};
    return {};
}

std::string_view rope_layout_name(RopeLayout l) { return l == RopeLayout::half ? "half" : "interleaved"; }

}  // namespace attntrace
