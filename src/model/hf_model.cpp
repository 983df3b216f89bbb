// A checkpoint folder -> a lesson: config.json read with field paths, the
// model type's mapping, the input tokenized, and the end of the model.
#include "model/hf_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/memory.hpp"
#include "io/safetensors.hpp"
#include "kernels/kernels.hpp"
#include "model/bert.hpp"
#include "model/gpt2.hpp"

namespace attntrace {

std::string known_model_types() { return "\"gpt2\", \"bert\""; }

std::string HfModel::label(std::int64_t id) const {
    if (tokenizer) {
        const std::string p = tokenizer->shown(id);
        if (!p.empty()) return p;
    }
    if (wordpiece) {
        const std::string& p = wordpiece->piece(id);  // as the vocabulary spells it: "##ing", "[CLS]"
        if (!p.empty()) return p;
    }
    return fmt::format("#{}", id);
}

HfModel load_hf_model(const std::string& dir, const ModelInput& input) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        fail_file(dir, "a checkpoint folder (config.json, model.safetensors, the tokenizer's files)",
                  fs::exists(dir, ec) ? "a file" : "nothing there");
    const std::string config_path = (fs::path(dir) / "config.json").string();
    if (!fs::exists(config_path, ec)) fail_file(config_path, "the model's config.json", "no such file");
    const json config = load_json_file(config_path);
    Fields f(config_path);
    f.object(config, "");
    const std::string type = f.string(f.member(config, "", "model_type"), "model_type");
    HfModel m;
    m.dir = dir;
    m.model_type = type;
    if (type == "bert") {
        load_bert(m, config, config_path, input);  // its own tokenizer (WordPiece) and ids
        return m;
    }
    m.tokenizer = Tokenizer::open(dir);

    // The input's ids, before the weights: a wrong input costs no loading.
    std::vector<std::int64_t> ids = input.ids;
    if (input.text) {
        if (!m.tokenizer)
            fail_file(dir, "a tokenizer (tokenizer.json, or vocab.json and merges.txt) to read " + input.text_source,
                      "none in the folder (give --ids instead)");
        ids = m.tokenizer->encode(*input.text, input.text_source);
        if (ids.empty()) fail_file(input.text_source, "a text of at least one token", "an empty text");
    }
    if (ids.empty()) fail_file("--ids", "at least one token id", "none");

    if (type == "gpt2") {
        const Gpt2Config c = read_gpt2_config(config, config_path);
        for (std::size_t i = 0; i < ids.size(); ++i)
            if (ids[i] < 0 || ids[i] >= static_cast<std::int64_t>(c.vocab))
                fail_field(input.text ? input.text_source : std::string("--ids"), fmt::format("[{}]", i),
                           fmt::format("a token id below the vocabulary's {} (config.json's vocab_size)", c.vocab),
                           fmt::format("{}", ids[i]));
        if (ids.size() > c.positions)
            fail_file(input.text ? input.text_source : std::string("--ids"),
                      fmt::format("at most {} tokens (config.json's n_positions)", c.positions),
                      fmt::format("{} tokens", ids.size()));
        const Checkpoint ckpt = Checkpoint::open(dir);
        build_gpt2(m, c, ckpt, ids);
    } else {
        f.fail("model_type", "a model type this attntrace maps (" + known_model_types() + ")", describe(config["model_type"]));
    }
    return m;
}

std::string final_residual_step(const Lesson& lesson) {
    // The last pass's output: resid_post of a pre-norm stack, the last norm's of a post-norm one (BERT).
    const Catalogue& cat = lesson.catalogue();
    return cat.at(cat.passes().back().out).name;
}

ModelHead model_head(const HfModel& m, const Lesson& lesson, const Tensor& resid, std::size_t k) {
    const std::size_t T = resid.shape.at(0), C = resid.shape.at(1);
    const Tensor& wte = lesson.inputs.at("embedding");  // (V, C)
    const std::size_t V = wte.shape[0];
    ModelHead h;
    // ln_final.hook_normalized = (x - μ) / √(σ² + eps) · γ + β   (T, C)
    h.normalized = Tensor::uninitialized({T, C});
    std::vector<float> mean(T), var(T), sigma(T), xhat(T * C);
    layernorm_rows(resid.ptr(), T, C, m.ln_f_eps, m.ln_f_gamma.ptr(), m.ln_f_beta.ptr(), mean.data(), var.data(),
                   sigma.data(), xhat.data(), h.normalized.ptr());
    // logits = ln_final · W_Eᵀ   (T, C)·(C, V) -> (T, V): the unembedding is the embedding's transpose (tied)
    h.logits = Tensor::uninitialized({T, V});
    matmul_nt(h.normalized.ptr(), C, wte.ptr(), C, h.logits.ptr(), V, T, C, V);
    // p = softmax(logits[T-1]), in double: the next token's distribution
    const float* last = h.logits.ptr() + (T - 1) * V;
    const double mx = *std::max_element(last, last + V);
    double sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(last[v]) - mx);
    std::vector<std::size_t> order(V);
    std::iota(order.begin(), order.end(), std::size_t{0});
    k = std::min(k, V);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t a, std::size_t b) { return last[a] != last[b] ? last[a] > last[b] : a < b; });
    for (std::size_t i = 0; i < k; ++i)
        h.top.push_back({static_cast<std::int64_t>(order[i]), last[order[i]],
                         std::exp(static_cast<double>(last[order[i]]) - mx) / sum});
    return h;
}

}  // namespace attntrace
