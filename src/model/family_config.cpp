// config.json read as a family declares it: the same reading and the same
// refusals for every family, each naming config.json and the field.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model/config_bounds.hpp"
#include "model/family.hpp"
#include "model/hf_model.hpp"  // read_norm_eps

namespace attntrace {

std::size_t ModelSizes::of(Size s) const {
    switch (s) {
        case Size::d_model: return d_model;
        case Size::heads: return heads;
        case Size::kv_heads: return kv_heads;
        case Size::head_dim: return head_dim;
        case Size::layers: return layers;
        case Size::positions: return positions;
        case Size::vocab: return vocab;
        case Size::d_ff: return d_ff;
        case Size::type_vocab: return type_vocab;
        case Size::q_width: return heads * head_dim;
        case Size::kv_width: return kv_heads * head_dim;
    }
    return 0;
}

namespace {

std::size_t& slot(ModelSizes& m, Size s) {
    switch (s) {
        case Size::d_model: return m.d_model;
        case Size::heads: return m.heads;
        case Size::kv_heads: return m.kv_heads;
        case Size::head_dim: return m.head_dim;
        case Size::layers: return m.layers;
        case Size::positions: return m.positions;
        case Size::vocab: return m.vocab;
        case Size::d_ff: return m.d_ff;
        case Size::type_vocab: return m.type_vocab;
        default: break;
    }
    return m.type_vocab;  // q_width and kv_width are derived, never declared as fields
}

// A present, non-null member, or null.
const json* given(const Fields& f, const json& config, const char* key) {
    const json* v = f.optional(config, key);
    return v && !v->is_null() ? v : nullptr;
}

const char* key_of(const Family& fam, Size s) {
    for (const SizeField& z : fam.sizes)
        if (z.size == s) return z.key;
    return "";
}

void read_sizes(const Family& fam, const Fields& f, const json& config, ModelSizes& m) {
    // The required first: the defaults of the others are made of them.
    for (int pass = 0; pass < 2; ++pass)
        for (const SizeField& z : fam.sizes) {
            if ((z.absent == SizeField::Absent::required) != (pass == 0)) continue;
            std::size_t& out = slot(m, z.size);
            if (const json* v = z.absent == SizeField::Absent::required ? &f.member(config, "", z.key) : given(f, config, z.key)) {
                out = static_cast<std::size_t>(f.integer(*v, z.key, 1, z.most));
                continue;
            }
            switch (z.absent) {
                case SizeField::Absent::heads: out = m.heads; break;
                case SizeField::Absent::four_d_model: out = 4 * m.d_model; break;
                case SizeField::Absent::two: out = 2; break;  // BertConfig's type_vocab_size
                case SizeField::Absent::required: break;
            }
        }
    const char* heads_key = key_of(fam, Size::heads);
    if (!key_of(fam, Size::kv_heads)[0]) m.kv_heads = m.heads;
    if (m.heads % m.kv_heads != 0)
        f.fail(key_of(fam, Size::kv_heads), fmt::format("a divisor of {} ({})", heads_key, m.heads),
               fmt::format("{}", m.kv_heads));
    const json* hd = fam.head_dim_key ? given(f, config, fam.head_dim_key) : nullptr;
    if (hd) {
        m.head_dim = static_cast<std::size_t>(f.integer(*hd, fam.head_dim_key, 1, kMaxDModel));
    } else {
        if (m.d_model % m.heads != 0)
            f.fail(heads_key,
                   fmt::format("a divisor of {} ({}){}", key_of(fam, Size::d_model), m.d_model,
                               fam.head_dim_key ? fmt::format(" when {} is not given", fam.head_dim_key) : ""),
                   fmt::format("{}", m.heads));
        m.head_dim = m.d_model / m.heads;
    }
    if (fam.positions == PositionKind::rope && m.head_dim % 2 != 0)
        f.fail(fam.head_dim_key ? fam.head_dim_key : heads_key, "an even head size (RoPE turns pairs of dimensions)",
               fmt::format("{}", m.head_dim));
}

void read_activation(const ActivationField& a, const Fields& f, const json& config, ModelSizes& m) {
    const json* v = f.optional(config, a.key);
    const std::string name = !v ? a.absent : v->is_string() ? v->get<std::string>() : std::string();
    for (const auto& n : a.accepted)
        if (name == n.name) {
            m.activation = n.computes;
            return;
        }
    f.fail(a.key, a.expected, v ? describe(*v) : std::string("nothing"));
}

void read_rules(const Family& fam, const Fields& f, const json& config) {
    for (const FlagRule& r : fam.flags)
        if (const json* v = f.optional(config, r.key); v && f.boolean(*v, r.key) != r.must)
            f.fail(r.key, r.expected, r.must ? "false" : "true");
    for (const WordRule& r : fam.words)
        if (const json* v = given(f, config, r.key); v && (!v->is_string() || v->get<std::string>() != r.must))
            f.fail(r.key, r.expected, describe(*v));
    for (const KindRule& r : fam.kinds)
        if (const json* v = given(f, config, r.key)) {
            f.object(*v, r.key);
            const char* kind_key = v->contains("rope_type") ? "rope_type" : "type";
            const std::string path = std::string(r.key) + "." + kind_key;
            if (f.string(f.member(*v, r.key, kind_key), path) != r.must) f.fail(path, r.expected, describe((*v)[kind_key]));
        }
}

}  // namespace

ModelSizes read_family_config(const Family& fam, const json& config, const std::string& file) {
    Fields f(file);
    ModelSizes m;
    read_sizes(fam, f, config, m);
    m.eps = read_norm_eps(f, config, fam.eps_key, fam.eps_absent);
    if (fam.rope_theta_key)
        if (const json* t = f.optional(config, fam.rope_theta_key)) {
            m.rope_theta = f.number(*t, fam.rope_theta_key);
            if (!(m.rope_theta > 1 && m.rope_theta <= 1e12))
                f.fail(fam.rope_theta_key, "a number above 1, at most 1e12", describe(*t));
        }
    if (fam.rotary_fraction_key) {
        double share = fam.rotary_fraction;
        if (const json* r = given(f, config, fam.rotary_fraction_key)) {
            share = f.number(*r, fam.rotary_fraction_key);
            if (!(share > 0 && share <= 1)) f.fail(fam.rotary_fraction_key, "a share of each head above 0, at most 1", describe(*r));
        }
        // as modeling_gpt_neox: int(head_size * rotary_pct) dimensions, which RoPE turns in pairs
        const auto dims = static_cast<std::size_t>(static_cast<double>(m.head_dim) * share);
        if (dims < 2 || dims % 2 != 0)
            f.fail(fam.rotary_fraction_key,
                   fmt::format("a share of the head size {} giving an even number of rotated dimensions", m.head_dim),
                   fmt::format("{} ({} dimensions)",
                               f.optional(config, fam.rotary_fraction_key)
                                   ? describe(*f.optional(config, fam.rotary_fraction_key))
                                   : fmt::format("none, so {:g}", fam.rotary_fraction),
                               dims));
        if (dims < m.head_dim) m.rotary_dims = dims;
    }
    m.parallel = fam.parallel;
    if (fam.parallel_key)
        if (const json* p = f.optional(config, fam.parallel_key)) m.parallel = f.boolean(*p, fam.parallel_key);
    read_rules(fam, f, config);
    read_activation(fam.activation, f, config, m);
    m.tied = fam.tied;
    if (fam.tie_key)
        if (const json* t = f.optional(config, fam.tie_key)) m.tied = f.boolean(*t, fam.tie_key);
    m.qkv_bias = m.o_bias = fam.biases;
    if (fam.bias_key)
        if (const json* b = f.optional(config, fam.bias_key)) m.qkv_bias = m.o_bias = f.boolean(*b, fam.bias_key);
    if (fam.qkv_bias) m.qkv_bias = true;
    bool sliding = fam.sliding;
    if (fam.sliding_switch_key)
        if (const json* u = f.optional(config, fam.sliding_switch_key)) sliding = f.boolean(*u, fam.sliding_switch_key);
    if (fam.window_key && sliding)
        if (const json* w = given(f, config, fam.window_key))
            m.sliding_window = static_cast<std::size_t>(f.integer(*w, fam.window_key, 1, kMaxRotaryPositions));
    return m;
}

}  // namespace attntrace
