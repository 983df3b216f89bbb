#include "evaluate/patch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "evaluate/model_end.hpp"
#include "pipeline/run.hpp"
#include "trace/derived.hpp"

namespace attntrace {

namespace {

Leaf leaf_of(const std::string& step) {
    if (step == "hook_z") return Leaf::z;
    if (step == "hook_attn_out") return Leaf::attn_out;
    if (step == "hook_mlp_out") return Leaf::mlp_out;
    return Leaf::resid_pre;
}

int first_pass_of(const Catalogue& cat, int block) {
    const auto& passes = cat.passes();
    for (std::size_t i = 0; i < passes.size(); ++i)
        if (passes[i].block == block) return static_cast<int>(i);
    throw std::logic_error(fmt::format("attntrace: the model has no block {}", block));
}

// The step patched in block b: its leaf's, or for hook_resid_pre what the block's first pass reads.
std::string patched_step(const Lesson& lesson, const std::string& step, int block) {
    const Catalogue& cat = lesson.catalogue();
    if (step == "hook_resid_pre") return cat.at(cat.passes()[static_cast<std::size_t>(first_pass_of(cat, block))].x).name;
    return cat.step(leaf_of(step), block).name;
}

// LD = logit[answer] - logit[wrong] at the last position, in double.
double logit_diff(const Lesson& lesson, const Trace& trace, const PatchSpec& spec) {
    const Step* s = trace.find(output_step(lesson));
    if (!s || s->source == StepSource::not_computable || s->recorded != Record::full)
        throw std::logic_error("attntrace: patching: the run kept no logits");
    const StepValues v = values_of(trace, *s);
    const std::size_t V = s->shape.back(), last = v->size() / V - 1;
    return double(v->data[last * V + std::size_t(spec.answer)]) - double(v->data[last * V + std::size_t(spec.wrong)]);
}

// The steps of earlier passes that the passes from `start` on read: what a run starting at `start` is given
// (a block's input, and anything else wired across it: the run's own wiring decides, not a list here).
std::vector<std::string> read_from_before(const Lesson& lesson, int start) {
    const Catalogue& cat = lesson.catalogue();
    std::vector<std::string> names;
    for (int i = start; i <= lesson.last_pass; ++i)
        for (const StepDef* def : cat.consumed_by(cat.passes()[static_cast<std::size_t>(i)], lesson.reads()))
            if (def->pass < start && std::find(names.begin(), names.end(), def->name) == names.end())
                names.push_back(def->name);
    return names;
}

Tensor held_values(const Trace& trace, const std::string& name) {
    const Step* s = trace.find(name);
    if (!s || s->source == StepSource::not_computable || s->recorded != Record::full)
        throw std::logic_error("attntrace: patching: the run did not keep " + name);
    return values_of(trace, *s).take();
}

// Restores the corrupt lesson as it was, whatever a patched run throws.
struct Restore {
    Lesson& lesson;
    int first_pass;
    std::map<std::string, Given> given;
    ~Restore() {
        lesson.first_pass = first_pass;
        lesson.given = std::move(given);
    }
};

}  // namespace

const std::vector<std::string>& patch_steps() {
    static const std::vector<std::string> steps{"hook_z", "hook_resid_pre", "hook_attn_out", "hook_mlp_out"};
    return steps;
}

PatchResult activation_patching(const Lesson& clean, Lesson& corrupt, const PatchSpec& spec,
                                const std::function<void(std::size_t, std::size_t)>& progress) {
    if (!corrupt.config.arch.unembed)
        fail_file(corrupt.file, "a model with next-token logits to patch (GPT-2, the Llama family)",
                  "one without an unembedding (an encoder: no logit difference to measure)");
    if (clean.tokens.size() != corrupt.tokens.size())
        fail_file("--corrupt", fmt::format("a text of as many tokens as --clean's {} (patching matches positions)",
                                           clean.tokens.size()),
                  fmt::format("{} tokens", corrupt.tokens.size()));
    if (std::find(patch_steps().begin(), patch_steps().end(), spec.step) == patch_steps().end())
        fail_file("--step", fmt::format("one of {}", fmt::join(patch_steps(), ", ")), "\"" + spec.step + "\"");
    if (spec.over != "heads" && spec.over != "positions")
        fail_file("--over", "heads or positions", "\"" + spec.over + "\"");
    if (spec.over == "heads" && spec.step != "hook_z")
        fail_file("--over", fmt::format("positions for {} (only hook_z has a head axis)", spec.step), "heads");
    const std::int64_t V = static_cast<std::int64_t>(corrupt.dims().V);
    for (auto [flag, id] : {std::pair{"--answer", spec.answer}, std::pair{"--wrong", spec.wrong}})
        if (id < 0 || id >= V) fail_file(flag, fmt::format("a token id below {}", V), std::to_string(id));
    if (spec.answer == spec.wrong) fail_file("--wrong", "a token other than --answer's", "the same token");

    const Catalogue& cat = corrupt.catalogue();
    const int blocks = static_cast<int>(cat.arch().blocks);
    PatchResult r;
    r.spec = spec;
    TracePolicy keep;
    keep.kind = TracePolicy::Kind::none;
    std::vector<std::vector<std::string>> inputs;  // per block: what a run starting at it is given
    for (int b = 0; b < blocks; ++b) {
        r.rows.push_back(patched_step(corrupt, spec.step, b));
        keep.keep.push_back(r.rows.back());
        inputs.push_back(read_from_before(corrupt, first_pass_of(cat, b)));
    }
    const Trace clean_trace = run_lesson(clean, Arithmetic::exact, keep);
    for (const auto& names : inputs) keep.keep.insert(keep.keep.end(), names.begin(), names.end());
    const Trace corrupt_trace = run_lesson(corrupt, Arithmetic::exact, keep);
    r.ld_clean = logit_diff(clean, clean_trace, spec);
    r.ld_corrupt = logit_diff(corrupt, corrupt_trace, spec);
    r.passes_whole = static_cast<std::size_t>(corrupt.last_pass - corrupt.first_pass + 1);
    if (r.ld_clean == r.ld_corrupt)
        fail_file("--corrupt", "a text whose logit difference differs from --clean's (the normalisation divides by it)",
                  fmt::format("the same, {:.6g}, in both runs", r.ld_clean));

    const Step& first = *corrupt_trace.find(r.rows.front());
    const bool heads = spec.over == "heads";
    const std::size_t axis = heads ? 1 : 0, columns = first.shape[axis];  // hook_z (query, head, d); the rest (pos, C)
    for (std::size_t c = 0; c < columns; ++c) r.columns.push_back(first.labels.size() > axis && c < first.labels[axis].size()
                                                                      ? first.labels[axis][c]
                                                                      : std::to_string(c));
    r.normalized = Tensor({std::size_t(blocks), columns});
    r.logit_diff = Tensor({std::size_t(blocks), columns});

    TracePolicy none;
    none.kind = TracePolicy::Kind::none;  // the run's output (the logits) is kept all the same
    Restore restore{corrupt, corrupt.first_pass, corrupt.given};
    const double denominator = r.ld_clean - r.ld_corrupt;
    std::size_t done = 0;
    for (int b = 0; b < blocks; ++b) {
        const std::string& name = r.rows[static_cast<std::size_t>(b)];
        const Tensor clean_v = held_values(clean_trace, name), corrupt_v = held_values(corrupt_trace, name);
        const Shape& shape = corrupt_v.shape;
        const std::size_t inner = heads ? shape[2] : corrupt_v.size() / shape[0];  // a cell's floats
        const std::size_t outer = heads ? shape[0] : 1;                            // heads: one run of floats per query
        const int start = first_pass_of(cat, b);
        r.passes_per_block.push_back(static_cast<std::size_t>(corrupt.last_pass - start + 1));
        for (std::size_t c = 0; c < columns; ++c) {
            Given g{corrupt_v, Tensor(shape), "patch"};
            for (std::size_t o = 0; o < outer; ++o) {
                // heads: z[o, c, :] (query o, head c); positions: row c of the step
                const std::size_t at = heads ? (o * shape[1] + c) * inner : c * inner;
                std::copy_n(clean_v.data.begin() + std::ptrdiff_t(at), inner, g.values.data.begin() + std::ptrdiff_t(at));
                std::fill_n(g.cells.data.begin() + std::ptrdiff_t(at), inner, 1.0f);
            }
            corrupt.given = restore.given;
            corrupt.first_pass = start;
            for (const std::string& input : inputs[static_cast<std::size_t>(b)])
                if (input != name) corrupt.given[input] = Given{held_values(corrupt_trace, input), {}, "patch"};
            // The patched step; the block's input itself (hook_resid_pre) is given whole before the run starts.
            if (std::find(inputs[std::size_t(b)].begin(), inputs[std::size_t(b)].end(), name) != inputs[std::size_t(b)].end())
                g.cells = Tensor();
            corrupt.given[name] = std::move(g);
            const double ld = logit_diff(corrupt, run_lesson(corrupt, Arithmetic::exact, none), spec);
            r.logit_diff.data[std::size_t(b) * columns + c] = static_cast<float>(ld);
            r.normalized.data[std::size_t(b) * columns + c] = static_cast<float>((ld - r.ld_corrupt) / denominator);
            if (progress) progress(++done, std::size_t(blocks) * columns);
        }
    }
    return r;
}

std::int64_t vocab_token(const Lesson& lesson, const std::string& typed, const std::string& flag) {
    if (typed.empty()) fail_file(flag, "a token of the vocabulary", "an empty string");
    const std::size_t V = lesson.dims().V;
    if (typed[0] == '#' && typed.size() > 1 && typed.find_first_not_of("0123456789", 1) == std::string::npos) {
        const unsigned long long id = typed.size() > 12 ? V : std::strtoull(typed.c_str() + 1, nullptr, 10);
        if (id >= V) fail_file(flag, fmt::format("a token id below {}", V), typed);
        return static_cast<std::int64_t>(id);
    }
    const std::string space = "\u2423";  // ␣: how a label shows a leading space
    const std::string shown = typed[0] == ' ' ? space + typed.substr(1) : typed;
    const bool marked = shown.compare(0, space.size(), space) == 0;
    // The label as typed, and unless it says where a space goes, the same word after one.
    std::vector<std::int64_t> found;
    for (std::size_t i = 0; i < lesson.vocab.size(); ++i)
        if (lesson.vocab[i] == shown || (!marked && lesson.vocab[i] == space + shown)) found.push_back(std::int64_t(i));
    if (found.size() == 1) return found.front();
    if (found.empty())
        fail_file(flag, "one token of the model's vocabulary (as the run labels it, ␣ or a leading space for a space, or #id)",
                  "\"" + typed + "\" (no token is that text alone)");
    std::vector<std::string> names;
    for (auto id : found) names.push_back(fmt::format("{} (#{})", lesson.vocab[std::size_t(id)], id));
    fail_file(flag, "one token of the vocabulary (type its ␣, a leading space, or #id)",
              fmt::format("\"{}\", which could be {}", typed, fmt::join(names, " or ")));
}

}  // namespace attntrace
