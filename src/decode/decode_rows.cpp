#include "decode/decode_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "kernels/kernels.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/positions.hpp"
#include "kernels/softmax.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stages.hpp"

namespace attntrace::decode_detail {

namespace {

double max_abs_diff(const float* a, const float* b, std::size_t n) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m;
}

// Row t of a step whose first axis is the position: (T, a, b) -> a·b floats.
std::vector<float> row_of(const Tensor& full, std::size_t t) {
    const std::size_t n = full.size() / full.shape[0];
    return std::vector<float>(full.ptr() + t * n, full.ptr() + (t + 1) * n);
}

// A step the causal run computed (given or formula), or null.
const Step* computed(const Trace& full, const std::string& name) {
    const Step* s = full.find(name);
    return s && s->source != StepSource::not_computable && s->value.size() ? s : nullptr;
}

}  // namespace

RowDecoder::RowDecoder(const Lesson& lesson, const Trace& full) : lesson_(lesson), full_(full), d_(lesson.dims()) {}

std::size_t RowDecoder::cache_floats() const {
    std::size_t n = 0;
    for (const auto& [name, c] : caches_) n += c.k.size() + c.v.size();
    return n;
}

void RowDecoder::keep(const std::string& name, std::vector<float> row, std::size_t t, DecodeStep& s) {
    if (const Step* f = computed(full_, name))
        s.dev_rows = std::max(s.dev_rows, max_abs_diff(row.data(), f->value.ptr() + t * row.size(), row.size()));
    rows_[name] = std::move(row);
    through_ = name;
}

bool RowDecoder::step(std::size_t t, DecodeStep& s) {
    rows_.clear();
    q_.clear();
    keep("blocks.0.hook_resid_pre", row_of(full_.find("blocks.0.hook_resid_pre")->value, t), t, s);
    const auto& passes = lesson_.catalogue().passes();
    for (int pi = 1; pi <= lesson_.last_pass; ++pi) {
        const Pass& p = passes[static_cast<std::size_t>(pi)];
        bool ok = true;
        switch (p.stage) {
            case Stage::embed:
            case Stage::rope:  // qkv rotates the new token's q and k at its position
            case Stage::scores:
            case Stage::scale:
            case Stage::mask:
            case Stage::softmax: break;  // the mix pass runs scores .. mix for the one query
            case Stage::qkv: ok = qkv(p, t, s); break;
            case Stage::mix: ok = attend(p, t, s); break;
            case Stage::out: ok = out_proj(p, t, s); break;
            case Stage::add1:
            case Stage::add2: ok = residual(p, t, s); break;
            case Stage::norm1:
            case Stage::norm2: ok = norm(p, t, s); break;
            case Stage::ffn: ok = ffn(p, t, s); break;
        }
        if (!ok) return false;
    }
    return true;
}

// q of the new token (and, in self-attention, its k and v appended to the
// cache); a cross-attention projects the memory's K and V once, at t = 0.
// A step the lesson gives (an article's Q) is used as given, as the causal run did.
bool RowDecoder::qkv(const Pass& p, std::size_t t, DecodeStep& s) {
    const auto x = rows_.find(p.x);
    if (x == rows_.end()) return false;
    const std::size_t C = d_.C, NH = d_.NH, KVH = d_.KVH, hs = d_.hs;
    const bool rope = !p.cross && lesson_.config.positions.kind == PositionKind::rope;
    auto project = [&](const char* leaf, const char* w, const char* b, const float* in, std::size_t rows,
                       std::size_t row0, std::size_t heads) -> std::optional<Tensor> {
        Tensor out(Shape{rows, heads, hs});
        const Step* given = full_.find(p.attn + leaf);
        if (given && given->source == StepSource::given) {
            std::copy_n(given->value.ptr() + row0 * out.size() / rows, out.size(), out.ptr());
            return out;
        }
        const Tensor* W = weight(p, w);
        const Tensor* B = weight(p, b);
        if (!W) return std::nullopt;
        linear(in, W->ptr(), B ? B->ptr() : nullptr, out.ptr(), rows, C, heads * hs);
        return out;
    };
    auto q = project("hook_q", "W_Q", "b_Q", x->second.data(), 1, t, NH);
    if (!q) return false;
    Cache& cache = caches_[p.attn];
    if (p.cross) {
        if (cache.rows == 0) {  // the memory's keys and values: computed once, reused by every new token
            const Tensor& M = lesson_.inputs.at("memory");
            auto k = project("hook_k", "W_K", "b_K", M.ptr(), M.shape[0], 0, KVH);
            auto v = project("hook_v", "W_V", "b_V", M.ptr(), M.shape[0], 0, KVH);
            if (!k || !v) return false;
            cache = {std::move(*k), std::move(*v), M.shape[0]};
            const std::pair<const char*, const Tensor*> kv[] = {{"hook_k", &cache.k}, {"hook_v", &cache.v}};
            for (const auto& [name, mine] : kv)
                if (const Step* f = computed(full_, p.attn + name))
                    s.dev_k = std::max(s.dev_k, max_abs_diff(mine->ptr(), f->value.ptr(), mine->size()));
        }
        q_[p.attn] = std::move(*q);
        return true;
    }
    auto k = project("hook_k", "W_K", "b_K", x->second.data(), 1, t, KVH);
    auto v = project("hook_v", "W_V", "b_V", x->second.data(), 1, t, KVH);
    if (!k || !v) return false;
    if (rope) {  // (1, heads, hs) rows at position t: the cache holds rotated keys, as a real one does
        const Positions& pos = lesson_.config.positions;
        const bool interleaved = pos.layout == RopeLayout::interleaved;
        Tensor qr(q->shape), kr(k->shape);
        rope_rows(q->ptr(), qr.ptr(), 1, NH, hs, t, pos.base, interleaved);
        rope_rows(k->ptr(), kr.ptr(), 1, KVH, hs, t, pos.base, interleaved);
        *q = std::move(qr);
        *k = std::move(kr);
    }
    if (cache.rows == 0) cache = {Tensor(Shape{d_.T, KVH, hs}), Tensor(Shape{d_.T, KVH, hs}), 0};
    const std::size_t row = KVH * hs;
    std::copy_n(k->ptr(), row, cache.k.ptr() + t * row);
    std::copy_n(v->ptr(), row, cache.v.ptr() + t * row);
    cache.rows = t + 1;
    const Step* fk = computed(full_, p.attn + (rope ? "hook_rot_k" : "hook_k"));
    const Step* fv = computed(full_, p.attn + "hook_v");
    if (fk) s.dev_k = std::max(s.dev_k, max_abs_diff(k->ptr(), fk->value.ptr() + t * row, row));
    if (fv) s.dev_k = std::max(s.dev_k, max_abs_diff(v->ptr(), fv->value.ptr() + t * row, row));
    if (p.block == 0) {
        s.q = Tensor(Shape{NH, hs});
        std::copy_n(q->ptr(), s.q.size(), s.q.ptr());
        s.k = Tensor(Shape{KVH, hs});
        std::copy_n(k->ptr(), row, s.k.ptr());
        s.v = Tensor(Shape{KVH, hs});
        std::copy_n(v->ptr(), row, s.v.ptr());
    }
    q_[p.attn] = std::move(*q);
    return true;
}

// One query over the cache: the pipeline's own scores .. mix (as a one-block
// lesson), the query at the last of the cache's positions in self-attention,
// over the whole memory in cross-attention (no mask, no positions).
bool RowDecoder::attend(const Pass& p, std::size_t t, DecodeStep& s) {
    const Cache& cache = caches_.at(p.attn);
    const std::size_t NH = d_.NH, KVH = d_.KVH, hs = d_.hs, n = cache.rows;
    const bool rope = !p.cross && lesson_.config.positions.kind == PositionKind::rope;
    Lesson one;
    one.file = lesson_.file;
    one.id = lesson_.id;
    one.config = p.cross ? cross_attention_config(lesson_.config) : lesson_.config;
    one.config.arch = Arch{};
    one.set_range(Stage::scores, Stage::mix);
    one.tokens = p.cross ? lesson_.memory_tokens
                         : std::vector<std::string>(lesson_.tokens.begin(), lesson_.tokens.begin() + long(n));
    one.query_tokens = {lesson_.tokens[t]};
    Tensor q3(Shape{1, NH, hs}), kc(Shape{n, KVH, hs}), vc(Shape{n, KVH, hs});
    std::copy_n(q_.at(p.attn).ptr(), q3.size(), q3.ptr());
    std::copy_n(cache.k.ptr(), kc.size(), kc.ptr());
    std::copy_n(cache.v.ptr(), vc.size(), vc.ptr());
    one.given = {{rope ? "blocks.0.attn.hook_rot_q" : "blocks.0.attn.hook_q", std::move(q3)},
                 {rope ? "blocks.0.attn.hook_rot_k" : "blocks.0.attn.hook_k", std::move(kc)},
                 {"blocks.0.attn.hook_v", std::move(vc)}};
    const Trace trace = run_lesson(one);
    const Step* scores = computed(trace, "blocks.0.attn.hook_attn_scores");
    const Step* pattern = computed(trace, "blocks.0.attn.hook_pattern");
    const Step* z = computed(trace, "blocks.0.attn.hook_z");
    if (!scores || !pattern || !z) throw std::logic_error(fmt::format("attntrace: decode step {} left attention not computable", t));
    // Against row t of the causal run: A (NH, Tq, keys), Z (Tq, NH, hs); past t the causal run's weights must be 0.
    if (const Step* A = computed(full_, p.attn + "hook_pattern")) {
        const std::size_t keys = A->shape[2];
        for (std::size_t h = 0; h < NH; ++h) {
            const float* full_row = A->value.ptr() + (h * A->shape[1] + t) * keys;
            s.dev_pattern = std::max(s.dev_pattern, max_abs_diff(pattern->value.ptr() + h * n, full_row, n));
            for (std::size_t j = n; j < keys; ++j) s.future_weight = std::max(s.future_weight, double(full_row[j]));
        }
    }
    std::vector<float> zrow(z->value.data.begin(), z->value.data.end());  // (1, NH, hs) -> C
    if (const Step* Z = computed(full_, p.attn + "hook_z"))
        s.dev_z = std::max(s.dev_z, max_abs_diff(zrow.data(), Z->value.ptr() + t * zrow.size(), zrow.size()));
    if (p.block == 0 && !p.cross) {
        s.scores = Tensor(Shape{NH, n});
        std::copy_n(scores->value.ptr(), s.scores.size(), s.scores.ptr());
        s.pattern = Tensor(Shape{NH, n});
        std::copy_n(pattern->value.ptr(), s.pattern.size(), s.pattern.ptr());
        s.z = Tensor(Shape{NH, hs});
        std::copy_n(zrow.data(), s.z.size(), s.z.ptr());
    }
    rows_[p.attn + "hook_z"] = std::move(zrow);
    through_ = p.attn + "hook_z";
    return true;
}

// attn_out = z·W_O + b_O   z: (C)
bool RowDecoder::out_proj(const Pass& p, std::size_t t, DecodeStep& s) {
    const Tensor* W = weight(p, "W_O");
    const Tensor* B = weight(p, "b_O");
    if (!W) return false;
    std::vector<float> out(d_.C);
    linear(rows_.at(p.attn + "hook_z").data(), W->ptr(), B ? B->ptr() : nullptr, out.data(), 1, d_.C, d_.C);
    keep(p.attn_out, std::move(out), t, s);
    return true;
}

bool RowDecoder::residual(const Pass& p, std::size_t t, DecodeStep& s) {
    const auto a = rows_.find(p.residual), b = rows_.find(p.update);
    if (a == rows_.end() || b == rows_.end()) return false;
    std::vector<float> out(d_.C);
    add(a->second.data(), b->second.data(), out.data(), d_.C);
    keep(p.out, std::move(out), t, s);
    return true;
}

// The token's row through LayerNorm (or RMSNorm), as the norm stage computes it.
bool RowDecoder::norm(const Pass& p, std::size_t t, DecodeStep& s) {
    const auto x = rows_.find(p.x);
    const Tensor* gamma = weight(p, fmt::format("ln{}_gamma", p.norm_index));
    const Tensor* beta = weight(p, fmt::format("ln{}_beta", p.norm_index));
    const bool rms = lesson_.config.norm == NormKind::rmsnorm;
    if (x == rows_.end() || !gamma || (!rms && !beta)) return false;
    const std::size_t C = d_.C;
    const float eps = static_cast<float>(lesson_.config.eps);
    std::vector<float> xhat(C), out(C);
    float mean = 0, var = 0, sd = 0;
    if (rms) {
        row_mean_square_ref(x->second.data(), 1, C, &var);
        std_eps_ref(&var, 1, eps, &sd);
        divide_rows_ref(x->second.data(), &sd, 1, C, xhat.data());
        gain_ref(xhat.data(), gamma->ptr(), 1, C, out.data());
    } else {
        layernorm_rows(x->second.data(), 1, C, eps, gamma->ptr(), beta->ptr(), &mean, &var, &sd, xhat.data(), out.data());
    }
    keep(p.out + "hook_normalized", std::move(out), t, s);
    return true;
}

// The token's row through the FFN: act(x·W_1 + b_1)·W_2 + b_2 (SwiGLU: SiLU(x·W_1 + b_1) ⊙ (x·W_3 + b_3)).
bool RowDecoder::ffn(const Pass& p, std::size_t t, DecodeStep& s) {
    const auto x = rows_.find(p.x);
    const Tensor *W1 = weight(p, "W_1"), *b1 = weight(p, "b_1"), *W2 = weight(p, "W_2"), *b2 = weight(p, "b_2");
    const bool gated = lesson_.config.activation == Activation::swiglu;
    const Tensor *W3 = weight(p, "W_3"), *b3 = weight(p, "b_3");
    if (x == rows_.end() || !W1 || !W2 || (gated && !W3)) return false;
    const std::size_t C = d_.C, F = d_.F;
    std::vector<float> h(F), u(gated ? F : 0), a(F), out(C);
    linear(x->second.data(), W1->ptr(), b1 ? b1->ptr() : nullptr, h.data(), 1, C, F);
    if (gated) linear(x->second.data(), W3->ptr(), b3 ? b3->ptr() : nullptr, u.data(), 1, C, F);
    ffn_activate(lesson_.config, h.data(), gated ? u.data() : nullptr, a.data(), F);
    linear(a.data(), W2->ptr(), b2 ? b2->ptr() : nullptr, out.data(), 1, F, C);
    keep(p.mlp_out, std::move(out), t, s);
    return true;
}

}  // namespace attntrace::decode_detail
