// Streaming attention with a sliding window (KeyWindow: a key range per query,
// kernels/attention.hpp): the _ref against softmax(QKᵀ/√hs + M)·V computed
// whole in double with the mask's own pattern (pipeline/mask_pattern.hpp), the
// SIMD versions against the _ref, around lane and block edges, windows wider
// and narrower than a key block, and queries that are the last Tq positions.
// Then the pipeline: a window lesson streams under --trace none and its Z
// agrees with the materialised run.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/kernels.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/run.hpp"
#ifndef ATTNTRACE_SCALAR_ONLY
#include "kernels/simd/kernels.hpp"
#endif

using namespace attntrace;

namespace test_attention_windows {

namespace {

const double kEps = std::numeric_limits<float>::epsilon();

// Against the double reference, |Δz| <= (kPerBlockUlps · key blocks + kBaseUlps)
// ulp of max|v|: float scores, exp and sums, and the online softmax's rescale
// by α at each key block (a few ulp each), as in test_attention_kernels.cpp.
constexpr double kPerBlockUlps = 2.0;
constexpr double kBaseUlps = 8.0;
// SIMD against _ref: the same blocks and order; xsimd::exp against std::exp
// and FMA against mul + add (test_attention_kernels.cpp, kSimdUlps).
constexpr double kSimdUlps = 8.0;
// The pipeline, streamed against materialised, relative (test_policy.cpp's kStreamedRelTol).
constexpr double kStreamedRelTol = 1e-5;

struct Case {
    std::size_t Tq, T, NH, hs, w;
    bool causal;
};

std::vector<float> values(std::size_t n, std::uint32_t seed) {  // multiples of 1/16 in [-1, 1], fixed LCG
    std::vector<float> v(n);
    std::uint32_t s = seed * 2654435761u + 1u;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(static_cast<int>((s >> 16) % 33) - 16) / 16.0f;
    }
    return v;
}

Config window_config(const Case& c) {
    Config cfg;
    cfg.mask = MaskKind::window;
    cfg.mask_spec.window = c.w;
    cfg.mask_spec.causal = c.causal;
    return cfg;
}

struct Inputs {
    std::vector<float> q, k, v;
    explicit Inputs(const Case& c, std::uint32_t seed)
        : q(values(c.Tq * c.NH * c.hs, seed)), k(values(c.T * c.NH * c.hs, seed + 1)), v(values(c.T * c.NH * c.hs, seed + 2)) {}
};

float divisor_of(std::size_t hs) { return std::sqrt(static_cast<float>(hs)); }

// softmax(S / divisor + M)·V per head, in double, M from MaskPattern.
std::vector<double> reference(const Case& c, const Inputs& in) {
    const Config cfg = window_config(c);
    const MaskPattern mask(cfg, c.Tq, c.T);
    const std::size_t ld = c.NH * c.hs;
    std::vector<double> z(c.Tq * ld, 0.0), s(c.T);
    for (std::size_t h = 0; h < c.NH; ++h)
        for (std::size_t i = 0; i < c.Tq; ++i) {
            double mx = -INFINITY, sum = 0;
            for (std::size_t j = 0; j < c.T; ++j) {
                double acc = 0;
                for (std::size_t d = 0; d < c.hs; ++d) acc += double(in.q[i * ld + h * c.hs + d]) * in.k[j * ld + h * c.hs + d];
                s[j] = mask.allows(i, j) ? acc / divisor_of(c.hs) : -INFINITY;
                mx = std::max(mx, s[j]);
            }
            for (std::size_t j = 0; j < c.T; ++j) sum += s[j] = std::exp(s[j] - mx);
            for (std::size_t j = 0; j < c.T; ++j)
                for (std::size_t d = 0; d < c.hs; ++d) z[i * ld + h * c.hs + d] += s[j] / sum * in.v[j * ld + h * c.hs + d];
        }
    return z;
}

KeyWindow keys_of(const Case& c) { return key_window(window_config(c)).value(); }

template <class A, class B>
double worst_ulps(const A& a, const B& b, const std::vector<float>& v) {
    double scale = 0, worst = 0;
    for (float x : v) scale = std::max(scale, double(std::fabs(x)));
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(double(a[i]) - double(b[i]));
        worst = std::max(worst, std::isnan(d) ? INFINITY : d / (kEps * scale));
    }
    return worst;
}

std::vector<Case> cases() {
    std::vector<Case> out;
    const std::pair<std::size_t, std::size_t> sizes[] = {{1, 1},     {9, 9},    {65, 65},   {2 * kAttnBc + 3, 2 * kAttnBc + 3},
                                                        {kAttnBr + 1, kAttnBr + 1}, {17, 300}, {kAttnBr + 3, 300}};
    for (auto [Tq, T] : sizes)
        for (std::size_t w : {1, 3, 5, 63, 129, 1001})
            for (bool causal : {false, true})
                for (std::size_t hs : {7, 16})
                    out.push_back({Tq, T, Tq % 2 ? std::size_t{2} : std::size_t{1}, hs, w, causal});
    for (std::size_t w : {2, 64, 100}) out.push_back({300, 300, 1, 64, w, true});  // even causal windows
    return out;
}

std::vector<float> run_ref(const Case& c, const Inputs& in) {
    std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
    attention_streaming_ref(in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH, c.NH, c.hs, divisor_of(c.hs),
                            keys_of(c));
    return z;
}

}  // namespace

TEST_CASE("windowed streaming attention, _ref and dispatched, agrees with the whole masked softmax", "[attention][masks]") {
    std::uint32_t seed = 500;
    for (const Case& c : cases()) {
        INFO("Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " hs " << c.hs << " w " << c.w << " causal " << c.causal);
        const Inputs in(c, seed++);
        const auto want = reference(c, in);
        const auto ref = run_ref(c, in);
        const double tol = kPerBlockUlps * double((c.T + kAttnBc - 1) / kAttnBc) + kBaseUlps;
        REQUIRE(worst_ulps(ref, want, in.v) <= tol);
        std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
        attention_streaming(in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH, c.NH, c.hs, divisor_of(c.hs),
                            keys_of(c));
        REQUIRE(worst_ulps(z, ref, in.v) <= kSimdUlps);
    }
}

#ifndef ATTNTRACE_SCALAR_ONLY
TEST_CASE("every instruction set's windowed streaming attention matches the _ref", "[attention][simd][masks]") {
    const auto have = xsimd::available_architectures();
    auto check = [&](auto arch, const char* name) {
        std::uint32_t seed = 900;
        for (const Case& c : cases()) {
            INFO(name << " Tq " << c.Tq << " T " << c.T << " hs " << c.hs << " w " << c.w << " causal " << c.causal);
            const Inputs in(c, seed++);
            std::vector<float> work(simd::attention_workspace_floats(c.hs) + 16);
            float* ws = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(work.data()) + 63) & ~std::uintptr_t{63});
            std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
            simd::AttentionStreaming{}(arch, in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH, c.NH, c.hs,
                                       divisor_of(c.hs), keys_of(c), ws, 1);
            REQUIRE(worst_ulps(z, run_ref(c, in), in.v) <= kSimdUlps);
        }
    };
    if (have.avx512bw) check(xsimd::avx512bw{}, "avx512");
    if (have.fma3_avx2) check(xsimd::fma3<xsimd::avx2>{}, "avx2");
    if (have.sse4_2) check(xsimd::sse4_2{}, "sse4.2");
}
#endif

TEST_CASE("a window lesson streams under --trace none and its Z agrees with the materialised run", "[masks][policy]") {
    for (const bool causal : {false, true}) {
        nlohmann::json tokens = nlohmann::json::array();
        for (int i = 0; i < 150; ++i) tokens.push_back("t" + std::to_string(i));
        const nlohmann::json doc = {{"format", "attntrace-lesson"},
                                    {"version", 1},
                                    {"id", "w"},
                                    {"title", "window"},
                                    {"source", {{"document", "tests"}}},
                                    {"tokens", tokens},
                                    {"config", {{"d_model", 16}, {"heads", 2}, {"mask", {{"kind", "window"}, {"window", 9}, {"causal", causal}}}}},
                                    {"run", {{"from", "embed"}, {"to", "mix"}}},
                                    {"inputs", {{"X", {{"generate", "normal"}, {"seed", 11}}}}},
                                    {"weights_seed", 11}};
        const Lesson l = parse_lesson(doc.dump(), "w.json");
        const Trace full = run_lesson(l);
        const Trace none = run_lesson(l, Arithmetic::exact, parse_trace_policy("none", "--trace"));
        CHECK_FALSE(full.streamed_attention);
        REQUIRE(none.streamed_attention);
        const Tensor& a = full.find("blocks.0.attn.hook_z")->held();
        const Tensor& b = none.find("blocks.0.attn.hook_z")->held();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            REQUIRE(std::fabs(double(a.data[i]) - b.data[i]) <= kStreamedRelTol * (1.0 + std::fabs(a.data[i])));
    }
}

}  // namespace test_attention_windows
