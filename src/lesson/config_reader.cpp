// config: reads and validates a lesson's config. The fields, their spellings and defaults are
// config_fields.cpp's table; the checks between fields (norm_steps "all" only with LayerNorm, ...) are here.
#include "lesson/config_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lesson/config_fields.hpp"
#include "lesson/mask_reader.hpp"
#include "lesson/positions_reader.hpp"

namespace attntrace {

namespace {

// An enumerated field's value (config_fields.cpp's spellings), nullopt when the
// field is absent; any other string is refused listing the spellings.
std::optional<int> read_spelling(const Fields& f, const json& c, const char* name) {
    const json* x = f.optional(c, name);
    if (!x) return std::nullopt;
    const ConfigField& field = config_field(name);
    const std::string path = join("config", name);
    // config.unembed is refused listing its spellings whatever it is; the others say they take a string
    if (!x->is_string() && field.name == "unembed") f.fail(path, spellings_expected(field.spellings), describe(*x));
    if (auto v = spelling_value(field.spellings, f.string(*x, path))) return v;
    f.fail(path, spellings_expected(field.spellings), describe(*x));
}

template <class E>
void read_enum(const Fields& f, const json& c, const char* name, E& out) {
    if (auto v = read_spelling(f, c, name)) out = static_cast<E>(*v);
}

// config.scale: true, false, or one of {"divide_by": x | "sqrt_dk"}, {"multiply_by": x}.
Scaling read_scale(const Fields& f, const json& v) {
    Scaling sc;
    const char* expected = "true, false, {\"divide_by\": NUMBER or \"sqrt_dk\"} or {\"multiply_by\": NUMBER}";
    if (v.is_boolean()) {
        sc.kind = v.get<bool>() ? ScaleKind::sqrt_dk : ScaleKind::none;
        return sc;
    }
    if (!v.is_object()) f.fail("config.scale", expected, describe(v));
    f.only_keys(v, "config.scale", {"divide_by", "multiply_by"});
    if (v.size() != 1)
        f.fail("config.scale", "exactly one of divide_by and multiply_by", v.empty() ? "an empty object" : "both");
    const std::string key = v.begin().key();
    const std::string path = join("config.scale", key);
    const json& x = v.begin().value();
    sc.recorded = true;
    if (key == "divide_by" && x.is_string()) {
        if (x.get<std::string>() != "sqrt_dk") f.fail(path, "a number or \"sqrt_dk\"", describe(x));
        return sc;
    }
    if (!x.is_number()) f.fail(path, key == "divide_by" ? "a number or \"sqrt_dk\"" : "a number", describe(x));
    const double n = f.number(x, path);
    if (!(n >= kMinScaleFactor && n <= kMaxScaleFactor))
        f.fail(path, fmt::format("a number from {:g} to {:g}", kMinScaleFactor, kMaxScaleFactor), describe(x));
    sc.kind = key == "divide_by" ? ScaleKind::divide_by : ScaleKind::multiply_by;
    sc.value = n;
    return sc;
}

// config.mask_at ("scaled", "raw", "weights") and config.renormalize (only with "weights").
void read_mask_placement(const Fields& f, const json& c, Config& cfg) {
    if (auto* m = f.optional(c, "mask_at")) {
        read_enum(f, c, "mask_at", cfg.mask_at);
        // ALiBi's bias is defined on the scaled scores, beside the mask.
        if (cfg.mask_at != MaskAt::scaled && cfg.positions.kind == PositionKind::alibi)
            f.fail("config.mask_at", "\"scaled\" or no field with ALiBi (its bias is added to the scaled scores with the mask)",
                   describe(*m));
    }
    if (auto* r = f.optional(c, "renormalize")) {
        cfg.renormalize = f.boolean(*r, "config.renormalize");
        if (cfg.mask_at != MaskAt::weights)
            f.fail("config.renormalize", "config.renormalize only with config.mask_at \"weights\" (the weights zeroed after the softmax)",
                   cfg.mask_at == MaskAt::raw ? "config.mask_at \"raw\"" : "config.mask_at \"scaled\" (the default)");
    }
}

// config.d_k and config.d_v: each head's query/key and value widths. Without
// d_k, heads split d_model (d_k = d_model / heads, which must come out whole).
void read_widths(const Fields& f, const json& c, Config& cfg) {
    auto width = [&](const char* key) -> std::size_t {
        const json* w = f.optional(c, key);
        if (!w) return 0;
        const std::string path = join("config", key);
        const auto n = static_cast<std::size_t>(f.integer(*w, path, 1, kMaxDModel));
        // Q, K and V are T x heads·width: bounded as d_model is.
        if (n * cfg.heads > static_cast<std::size_t>(kMaxDModel))
            f.fail(path, fmt::format("heads · {} at most {} (heads = {})", key, kMaxDModel, cfg.heads),
                   fmt::format("{} · {} = {}", cfg.heads, n, n * cfg.heads));
        return n;
    };
    cfg.d_k = width("d_k");
    cfg.d_v = width("d_v");
    if (const json* o = f.optional(c, "d_out"))
        cfg.d_out = static_cast<std::size_t>(f.integer(*o, "config.d_out", 1, kMaxDModel));
    if (!cfg.d_k && cfg.d_model % cfg.heads != 0)
        f.fail("config.heads", fmt::format("a divisor of d_model = {} (or config.d_k, the width of each head)", cfg.d_model),
               fmt::format("{}", cfg.heads));
}

}  // namespace

Config read_config(const Fields& f, const json& cv, const std::vector<std::string>& tokens, std::size_t queries) {
    const json& c = f.object(cv, "config");
    f.only_keys(c, "config", config_field_names());
    Config cfg;
    cfg.d_model = static_cast<std::size_t>(f.integer(f.member(c, "config", "d_model"), "config.d_model", 1, kMaxDModel));
    if (auto* h = f.optional(c, "heads"))
        cfg.heads = static_cast<std::size_t>(f.integer(*h, "config.heads", 1, kMaxHeads));
    read_widths(f, c, cfg);
    if (auto* kv = f.optional(c, "kv_heads")) {
        cfg.kv_heads = static_cast<std::size_t>(f.integer(*kv, "config.kv_heads", 1, kMaxHeads));
        // query head h reads K/V head h / (heads / kv_heads): the groups must come out whole
        if (cfg.heads % cfg.kv_heads != 0)
            f.fail("config.kv_heads", fmt::format("a divisor of heads = {} (1: MQA, {}: MHA)", cfg.heads, cfg.heads),
                    fmt::format("{}", cfg.kv_heads));
    }
    if (auto* d = f.optional(c, "d_ff"))
        cfg.d_ff = static_cast<std::size_t>(f.integer(*d, "config.d_ff", 1, kMaxDff));
    if (auto* m = f.optional(c, "mask")) read_mask(f, *m, tokens, queries, cfg);
    if (auto* s = f.optional(c, "scale")) cfg.scale = read_scale(f, *s);
    read_enum(f, c, "activation", cfg.activation);
    read_enum(f, c, "norm", cfg.norm);
    if (auto* e = f.optional(c, "eps")) {
        cfg.eps = f.number(*e, "config.eps");
        // kMinEps..kMaxEps (lesson.hpp); 0 itself is a textbook's LayerNorm (a
        // constant row then divides 0 by 0: refused naming the row, pipeline/layernorm.cpp)
        if (cfg.eps != 0 && (cfg.eps < kMinEps || cfg.eps > kMaxEps))
            f.fail("config.eps", fmt::format("0 or a number from {:g} to {:g}", kMinEps, kMaxEps), describe(*e));
    }
    if (f.optional(c, "variance")) {
        read_enum(f, c, "variance", cfg.variance);
        if (cfg.variance == Variance::unbiased && cfg.norm != NormKind::layernorm)
            f.fail("config.variance",
                   fmt::format("\"biased\" or no field with config.norm \"{}\" ({} has no variance)", norm_name(cfg.norm),
                               norm_display_name(cfg.norm)),
                   "\"unbiased\"");
        if (cfg.variance == Variance::unbiased && cfg.d_model < 2)
            f.fail("config.variance", "\"biased\" with d_model = 1 (C - 1 = 0 values to divide by)", "\"unbiased\"");
    }
    if (auto all = read_spelling(f, c, "norm_steps")) {
        cfg.norm_steps_all = *all == 1;
        if (cfg.norm_steps_all && cfg.norm != NormKind::layernorm)
            f.fail("config.norm_steps",
                   fmt::format("\"fused\" or no field with config.norm \"{}\" ({} subtracts no mean)", norm_name(cfg.norm),
                               norm_display_name(cfg.norm)),
                   "\"all\"");
    }
    read_enum(f, c, "weight_layout", cfg.weight_layout);
    read_enum(f, c, "normalizer", cfg.normalizer);
    if (auto* m = f.optional(c, "max_shift")) {
        cfg.max_shift = f.boolean(*m, "config.max_shift");
        if (cfg.normalizer != Normalizer::softmax)
            f.fail("config.max_shift", "config.max_shift only with config.normalizer \"softmax\" (there is no exp to guard)",
                   fmt::format("config.normalizer \"{}\"", spelling_of(normalizers(), cfg.normalizer)));
    }
    if (auto* b = f.optional(c, "blocks"))
        cfg.arch.blocks = static_cast<std::size_t>(f.integer(*b, "config.blocks", 1, kMaxBlocks));
    if (auto* n = f.optional(c, "norm_first")) cfg.arch.norm_first = f.boolean(*n, "config.norm_first");
    if (auto* n = f.optional(c, "parallel_residual")) cfg.arch.parallel = f.boolean(*n, "config.parallel_residual");
    if (auto* n = f.optional(c, "shared_norm")) cfg.arch.shared_norm = f.boolean(*n, "config.shared_norm");
    if (auto* n = f.optional(c, "embed_norm")) cfg.arch.embed_norm = f.boolean(*n, "config.embed_norm");
    if (auto* n = f.optional(c, "final_norm")) cfg.arch.final_norm = f.boolean(*n, "config.final_norm");
    if (auto tied = read_spelling(f, c, "unembed")) {
        // the logits after the last block: x·W_U, or x·W_Eᵀ with the embedding table tied
        cfg.unembed_tied = *tied == 1;
        cfg.arch.unembed = true;
    }
    if (auto decoder = read_spelling(f, c, "block")) {
        cfg.arch.decoder = *decoder == 1;
        // A decoder's self-attention is causal unless the lesson says otherwise.
        if (cfg.arch.decoder && !f.optional(c, "mask")) cfg.mask = MaskKind::causal;
    }
    if (cfg.arch.parallel && (!cfg.arch.norm_first || cfg.arch.decoder))
        f.fail("config.parallel_residual", "config.parallel_residual only with config.norm_first true in an encoder block "
               "(the FFN's norm reads the block's input beside the attention)",
               cfg.arch.decoder ? "config.block \"decoder\"" : "config.norm_first false");
    if (cfg.arch.shared_norm && !cfg.arch.parallel)
        f.fail("config.shared_norm", "config.shared_norm only with config.parallel_residual true (the FFN reads LN1's "
               "output beside the attention)", "config.parallel_residual false");
    Dims d;
    d.T = tokens.size();
    d.Tq = queries;
    d.P = d.T;
    d.C = cfg.d_model;
    d.NH = cfg.heads;
    d.hs = cfg.dk();
    d.hv = cfg.dv();
    d.O = cfg.dout();
    d.KVH = cfg.kv_heads ? cfg.kv_heads : cfg.heads;
    d.F = cfg.d_ff;
    if (auto* p = f.optional(c, "positions")) cfg.positions = read_positions(f, *p, d);
    read_mask_placement(f, c, cfg);
    return cfg;
}

}  // namespace attntrace
