// An independent reference of the whole post-norm encoder block, for the
// tests: plain loops over xtensor containers, in double, written from the
// definitions of PyTorch's nn.TransformerEncoderLayer(norm_first=False,
// dropout=0, batch_first=True) for one sequence, not from attntrace's code.
//
//   Q = X·W_Q + b_Q,  K = X·W_K + b_K,  V = X·W_V + b_V      X: (T, C)  W: d_in x d_out
//   W_Q, W_K: (C, NH·hs), W_V: (C, NH·hv), W_O: (NH·hv, C); hs, hv read off the
//   weights' widths (= C/NH in nn.TransformerEncoderLayer; config.d_k, d_v otherwise)
//   per head h (Q, K columns h·hs .. (h+1)·hs-1; V, Z columns h·hv .. (h+1)·hv-1):
//     S_h = Q_h·K_hᵀ,  S̃_h = S_h/√hs,  A_h = softmax(S̃_h + M)   M: 0 or -inf (causal: j > i)
//     Z_h = A_h·V_h;  Z = [Z_0 … Z_NH-1]
//   attn_out = Z·W_O + b_O
//   X_mid = X + attn_out;             LN1 = LayerNorm(X_mid)      (biased variance, eps inside √)
//   FFN = act(LN1·W_1 + b_1)·W_2 + b_2   act: ReLU, or GELU x·Φ(x) (erf form)
//   X_mid2 = LN1 + FFN;               X_out = LayerNorm(X_mid2)
//   (with `dyt` both norms are DyT instead, Zhu et al. 2025's definition:
//    DyT(x) = γ ⊙ tanh(α·x) + β, α one number per norm, no statistic of the row)
//
// Every intermediate the trace records is kept, with the trace's shapes.
// Checked once against torch 1.13.1 (Debian's python3-torch), in float64, with
// these weights loaded into nn.TransformerEncoderLayer (in_proj_weight =
// [W_Qᵀ; W_Kᵀ; W_Vᵀ], out_proj.weight = W_Oᵀ, linear1.weight = W_1ᵀ, ...):
// block output and attention weights agreed to 3e-15 for (T, C, NH, F) =
// (16, 32, 4, 64) causal GELU, (7, 12, 3, 20) ReLU, (33, 64, 8, 128) causal ReLU.
// Header-only on purpose (tests/CMakeLists.txt globs test_*.cpp only). No
// reduction is ever held as a lazy xtensor expression (xtensor 0.24.3's
// keep_dims reducers gave wrong rows inside broadcasts): every sum is a loop into a double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

namespace attntrace::reference {

using Vec = xt::xtensor<double, 1>;
using Mat = xt::xtensor<double, 2>;
using Cube = xt::xtensor<double, 3>;

struct BlockWeights {
    Mat W_Q, W_K, W_V, W_O;  // (C, NH·hs) twice, (C, NH·hv), (NH·hv, C): (C, C) when heads split C
    Vec b_Q, b_K, b_V, b_O;  // (NH·hs) twice, (NH·hv), (C)
    Vec ln1_gamma, ln1_beta, ln2_gamma, ln2_beta;  // (C)
    double ln1_alpha = 0, ln2_alpha = 0;           // DyT's α (cfg.dyt)
    Mat W_1;                 // (C, F)
    Vec b_1;                 // (F)
    Mat W_2;                 // (F, C)
    Vec b_2;                 // (C)
};

struct BlockConfig {
    std::size_t heads = 1;
    bool causal = false;
    bool scale = true;  // divide by √hs ...
    double divide_by = 0;    // ... or, when set, by this number
    double multiply_by = 0;  // ... or, when set, multiply by this number
    bool gelu = false;  // else ReLU
    double eps = 1e-5;
    bool max_shift = true;    // softmax subtracts the row max (false: exp of the scores as they are)
    bool normalize = true;    // false: config.normalizer "none", the masked scores are the weights
    bool mask_raw = false;    // config.mask_at "raw": (S + M) / s
    bool mask_weights = false;  // config.mask_at "weights": softmax over every key, then zeroed (M of 1 and 0) ...
    bool renormalize = false;   // ... and divided by what is left of each row
    bool dyt = false;           // the norms are DyT, not LayerNorm
};

struct LayerNormOut {
    Vec mean, var, scale;     // (T)   scale = √(var + eps)
    Mat standardized;         // (T, C) (x - mean)/scale
    Mat centred, sq_dev;      // (T, C) x - mean, (x - mean)²
    Mat normalized;           // (T, C) γ ⊙ standardized + β
};

struct BlockOut {
    Mat X;                                   // (T, C)
    Mat Q, K, V;                             // (T, NH·hs) = (T, NH, hs) row-major; V (T, NH, hv)
    double scale_factor = 1;                 // what the scores are divided by (multiplied by, with multiply_by)
    Cube scores_raw, scores_scaled;          // (NH, T, T)
    Mat mask;                                // (T, T)
    Cube attn_scores;                        // (NH, T, T)
    Mat row_max, row_sum;                    // (NH, T)
    Cube shifted, exp, pattern;              // (NH, T, T)
    Cube scores_masked;                      // (NH, T, T) mask_raw: S + M
    Cube pattern_unmasked, pattern_zeroed;   // (NH, T, T) mask_weights: A⁰, A⁰ ⊙ M
    Mat zeroed_sum;                          // (NH, T)    mask_weights: Σ_j A⁰ ⊙ M
    Mat Z;                                   // (T, NH·hv) = (T, NH, hv)
    Mat attn_out, resid_mid;                 // (T, C)
    LayerNormOut ln1;
    Mat mlp_pre, mlp_post;                   // (T, F)
    Mat mlp_out, resid_post;                 // (T, C)
    LayerNormOut ln2;
};

// y = x·W + b   x: (R, I)   W: (I, O)   b: (O)   y: (R, O)
inline Mat linear(const Mat& x, const Mat& W, const Vec& b) {
    const std::size_t R = x.shape(0), I = x.shape(1), O = W.shape(1);
    Mat y = xt::zeros<double>({R, O});
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t o = 0; o < O; ++o) {
            double acc = b(o);
            for (std::size_t i = 0; i < I; ++i) acc += x(r, i) * W(i, o);
            y(r, o) = acc;
        }
    return y;
}

// torch.nn.LayerNorm over the last axis: biased variance, eps inside the square root.
inline LayerNormOut layer_norm(const Mat& x, const Vec& gamma, const Vec& beta, double eps) {
    const std::size_t R = x.shape(0), C = x.shape(1);
    LayerNormOut o;
    o.mean = xt::zeros<double>({R});
    o.var = xt::zeros<double>({R});
    o.scale = xt::zeros<double>({R});
    o.standardized = xt::zeros<double>({R, C});
    o.normalized = xt::zeros<double>({R, C});
    o.centred = xt::zeros<double>({R, C});
    o.sq_dev = xt::zeros<double>({R, C});
    for (std::size_t r = 0; r < R; ++r) {
        double mu = 0.0;
        for (std::size_t c = 0; c < C; ++c) mu += x(r, c);
        mu /= static_cast<double>(C);
        double var = 0.0;
        for (std::size_t c = 0; c < C; ++c) var += (x(r, c) - mu) * (x(r, c) - mu);
        var /= static_cast<double>(C);
        const double sd = std::sqrt(var + eps);
        o.mean(r) = mu;
        o.var(r) = var;
        o.scale(r) = sd;
        for (std::size_t c = 0; c < C; ++c) {
            o.centred(r, c) = x(r, c) - mu;
            o.sq_dev(r, c) = o.centred(r, c) * o.centred(r, c);
            o.standardized(r, c) = (x(r, c) - mu) / sd;
            o.normalized(r, c) = gamma(c) * o.standardized(r, c) + beta(c);
        }
    }
    return o;
}

// DyT: standardized = tanh(α·x), normalized = γ ⊙ tanh(α·x) + β; no mean, variance or scale.
inline LayerNormOut dyt_norm(const Mat& x, double alpha, const Vec& gamma, const Vec& beta) {
    const std::size_t R = x.shape(0), C = x.shape(1);
    LayerNormOut o;
    o.standardized = xt::zeros<double>({R, C});
    o.normalized = xt::zeros<double>({R, C});
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) {
            o.standardized(r, c) = std::tanh(alpha * x(r, c));
            o.normalized(r, c) = gamma(c) * o.standardized(r, c) + beta(c);
        }
    return o;
}

inline BlockOut encoder_block(const Mat& X, const BlockWeights& w, const BlockConfig& cfg) {
    const double neg_inf = -std::numeric_limits<double>::infinity();
    const std::size_t T = X.shape(0), C = X.shape(1), NH = cfg.heads;
    const std::size_t hs = w.W_Q.shape(1) / NH, hv = w.W_V.shape(1) / NH;
    BlockOut o;
    o.X = X;

    // projections
    o.Q = linear(X, w.W_Q, w.b_Q);
    o.K = linear(X, w.W_K, w.b_K);
    o.V = linear(X, w.W_V, w.b_V);

    // mask: M[i, j] = -inf where key j is after query i (causal), else 0
    o.mask = xt::zeros<double>({T, T});
    if (cfg.causal)
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t j = i + 1; j < T; ++j) o.mask(i, j) = neg_inf;

    o.scores_raw = xt::zeros<double>({NH, T, T});
    o.scores_scaled = xt::zeros<double>({NH, T, T});
    o.attn_scores = xt::zeros<double>({NH, T, T});
    o.shifted = xt::zeros<double>({NH, T, T});
    o.exp = xt::zeros<double>({NH, T, T});
    o.pattern = xt::zeros<double>({NH, T, T});
    o.row_max = xt::zeros<double>({NH, T});
    o.row_sum = xt::zeros<double>({NH, T});
    o.scores_masked = xt::zeros<double>({NH, T, T});
    o.pattern_unmasked = xt::zeros<double>({NH, T, T});
    o.pattern_zeroed = xt::zeros<double>({NH, T, T});
    o.zeroed_sum = xt::zeros<double>({NH, T});
    o.Z = xt::zeros<double>({T, NH * hv});
    const double divisor = cfg.divide_by     ? cfg.divide_by
                           : cfg.multiply_by ? 1.0 / cfg.multiply_by
                           : cfg.scale       ? std::sqrt(static_cast<double>(hs))
                                             : 1.0;
    o.scale_factor = cfg.multiply_by ? cfg.multiply_by : divisor;
    for (std::size_t h = 0; h < NH; ++h) {
        // this head's columns, as concrete (T, hs) and (T, hv) matrices
        const std::size_t c0 = h * hs, v0 = h * hv;
        Mat Qh = xt::view(o.Q, xt::all(), xt::range(c0, c0 + hs));
        Mat Kh = xt::view(o.K, xt::all(), xt::range(c0, c0 + hs));
        Mat Vh = xt::view(o.V, xt::all(), xt::range(v0, v0 + hv));
        for (std::size_t i = 0; i < T; ++i) {
            // S = Q_h·K_hᵀ, S̃ = S/√hs, + M
            for (std::size_t j = 0; j < T; ++j) {
                double s = 0.0;
                for (std::size_t d = 0; d < hs; ++d) s += Qh(i, d) * Kh(j, d);
                o.scores_raw(h, i, j) = s;
                o.scores_scaled(h, i, j) = s / divisor;
                o.scores_masked(h, i, j) = s + o.mask(i, j);
                o.attn_scores(h, i, j) = cfg.mask_weights ? s / divisor
                                         : cfg.mask_raw   ? (s + o.mask(i, j)) / divisor
                                                          : s / divisor + o.mask(i, j);
            }
            if (!cfg.normalize) {  // the masked scores as weights, blocked keys 0
                for (std::size_t j = 0; j < T; ++j)
                    o.pattern(h, i, j) = o.attn_scores(h, i, j) == neg_inf ? 0.0 : o.attn_scores(h, i, j);
                continue;
            }
            // softmax over keys, with the internals the trace shows
            double m = neg_inf;
            for (std::size_t j = 0; j < T; ++j) m = std::max(m, o.attn_scores(h, i, j));
            if (!cfg.max_shift) m = 0.0;  // exp(s) as it is
            double sum = 0.0;
            for (std::size_t j = 0; j < T; ++j) {
                o.shifted(h, i, j) = o.attn_scores(h, i, j) - m;
                o.exp(h, i, j) = std::exp(o.shifted(h, i, j));
                sum += o.exp(h, i, j);
            }
            o.row_max(h, i) = m;
            o.row_sum(h, i) = sum;
            for (std::size_t j = 0; j < T; ++j) o.pattern(h, i, j) = o.exp(h, i, j) / sum;
            if (!cfg.mask_weights) continue;
            // the weights of every key, then the blocked ones zeroed (and the row renormalised)
            double left = 0.0;
            for (std::size_t j = 0; j < T; ++j) {
                o.pattern_unmasked(h, i, j) = o.pattern(h, i, j);
                o.pattern_zeroed(h, i, j) = o.mask(i, j) == neg_inf ? 0.0 : o.pattern(h, i, j);
                left += o.pattern_zeroed(h, i, j);
            }
            o.zeroed_sum(h, i) = left;
            for (std::size_t j = 0; j < T; ++j)
                o.pattern(h, i, j) = cfg.renormalize ? o.pattern_zeroed(h, i, j) / left : o.pattern_zeroed(h, i, j);
        }
        // Z_h = A_h·V_h, into the head's columns (the concatenation)
        Mat Zh = xt::zeros<double>({T, hv});
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t d = 0; d < hv; ++d) {
                double acc = 0.0;
                for (std::size_t j = 0; j < T; ++j) acc += o.pattern(h, i, j) * Vh(j, d);
                Zh(i, d) = acc;
            }
        xt::view(o.Z, xt::all(), xt::range(v0, v0 + hv)) = Zh;
    }

    o.attn_out = linear(o.Z, w.W_O, w.b_O);
    o.resid_mid = xt::zeros<double>({T, C});
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t c = 0; c < C; ++c) o.resid_mid(i, c) = X(i, c) + o.attn_out(i, c);
    o.ln1 = cfg.dyt ? dyt_norm(o.resid_mid, w.ln1_alpha, w.ln1_gamma, w.ln1_beta)
                    : layer_norm(o.resid_mid, w.ln1_gamma, w.ln1_beta, cfg.eps);

    o.mlp_pre = linear(o.ln1.normalized, w.W_1, w.b_1);
    o.mlp_post = o.mlp_pre;
    for (double& v : o.mlp_post)
        v = cfg.gelu ? 0.5 * v * std::erfc(-v / std::sqrt(2.0))  // x·Φ(x)
                     : (v > 0.0 ? v : 0.0);
    o.mlp_out = linear(o.mlp_post, w.W_2, w.b_2);

    // post-norm: the FFN's residual is LN1's output, not X_mid
    o.resid_post = xt::zeros<double>({T, C});
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t c = 0; c < C; ++c) o.resid_post(i, c) = o.ln1.normalized(i, c) + o.mlp_out(i, c);
    o.ln2 = cfg.dyt ? dyt_norm(o.resid_post, w.ln2_alpha, w.ln2_gamma, w.ln2_beta)
                    : layer_norm(o.resid_post, w.ln2_gamma, w.ln2_beta, cfg.eps);
    return o;
}

}  // namespace attntrace::reference
