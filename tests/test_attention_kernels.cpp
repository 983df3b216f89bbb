// The streaming attention kernel against its _ref twin (every instruction set
// this CPU has) and against the materialised pipeline (matmul_nt_ref, ÷ divisor,
// -inf mask, softmax_rows_ref, matmul_ref); the scale and mask kernels against
// theirs. Letters as everywhere: Tq queries, T keys, NH heads, hs head size,
// KVH K/V heads (query head h reads K/V head h / (NH/KVH): GQA, MQA).
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/kernels.hpp"
#include "kernels/matmul.hpp"
#include "kernels/softmax.hpp"
#ifndef ATTNTRACE_SCALAR_ONLY
#include "kernels/simd/kernels.hpp"
#endif

using namespace attntrace;

namespace test_attention_kernels {

namespace {

const double kEps = std::numeric_limits<float>::epsilon();
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// SIMD against attention_streaming_ref, |Δz| <= kSimdUlps · eps · max|v|.
// Inputs lie on a 1/16 grid, so every product and partial sum of a score is
// exact: S is the same float in both, FMA or not. What differs: xsimd::exp
// against std::exp (1-2 ulp per weight, and in each α), and FMA (one rounding)
// against mul + add (two) in O += P·V. Both sum the keys in the same order,
// so Z differs by a few ulp of max|v|: the worst seen over these cases was
// 1.25 ulp, so 8 leaves room for another libm and still fails on a wrong
// weight or index (an off-by-one causal mask moved Z by ~1e6 ulp).
constexpr double kSimdUlps = 8.0;

// Streaming against the materialised softmax(S)·V, |Δz| <= (kOnlineUlpsPerBlock ·
// key blocks + kOnlineUlps) · eps · max|v|. The online softmax rescales what
// it has summed by α = exp(m - m') at every key block (a few ulp each: exp's
// error and the product), adds P·V before dividing by l instead of after, and
// so groups the sums differently. The worst seen was 2.5 ulp of max|v| (huge
// logits, 3 key blocks); 1.5 on the other cases.
constexpr double kOnlineUlpsPerBlock = 2.0;
constexpr double kOnlineUlps = 8.0;

// Arbitrary (not grid) floats: a score rounds differently in the SIMD product
// (FMA, the same order otherwise), by at most 2·hs·eps·Σ|q·k| / divisor; a
// weight then moves by that much relatively, twice over (its exp and the sum
// l), and Z, a convex combination of V rows, by at most 4·hs·eps·hs·max|q|·
// max|k| / divisor · max|v|. Inputs in [-1, 1]: kDotSlack · hs² / divisor ulp
// of max|v|, plus kSimdUlps. (A worst case; 1 ulp was seen.)
constexpr double kDotSlack = 4.0;

std::size_t blocks_of(std::size_t T) { return (T + kAttnBc - 1) / kAttnBc; }

// Deterministic values: a fixed LCG (no library distribution). On the grid,
// multiples of 1/16 in [-1, 1]; off it, any float in [-1, 1].
std::vector<float> values(std::size_t n, std::uint32_t seed, bool grid = true) {
    std::vector<float> v(n);
    std::uint32_t s = seed * 2654435761u + 1u;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = grid ? static_cast<float>(static_cast<int>((s >> 16) % 33) - 16) / 16.0f
                 : static_cast<float>((s >> 8) & 0xFFFF) / 32767.5f - 1.0f;
    }
    return v;
}

struct Case {
    std::size_t Tq, T, NH, hs;
    bool causal;
    std::size_t KVH = 0;  // K/V heads; 0: NH (multi-head)
    std::size_t kvh() const { return KVH ? KVH : NH; }
};

// q: (Tq, NH, hs)   k, v: (T, KVH, hs)
struct Inputs {
    std::vector<float> q, k, v;
    Inputs(const Case& c, std::uint32_t seed, bool grid = true)
        : q(values(c.Tq * c.NH * c.hs, seed, grid)), k(values(c.T * c.kvh() * c.hs, seed + 1, grid)),
          v(values(c.T * c.kvh() * c.hs, seed + 2, grid)) {}
};

float divisor_of(std::size_t hs) { return std::sqrt(static_cast<float>(hs)); }

std::vector<float> streaming_ref(const Case& c, const Inputs& in) {
    std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
    attention_streaming_ref(in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH, c.kvh(), c.hs,
                            divisor_of(c.hs), c.causal);
    return z;
}

std::vector<float> streaming(const Case& c, const Inputs& in) {
    std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
    attention_streaming(in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH, c.kvh(), c.hs,
                        divisor_of(c.hs), c.causal);
    return z;
}

// The pipeline's stages, materialised per head: S = Q·Kᵀ (Tq, T), S / divisor,
// masked cells -inf (query i sees keys j <= i + T - Tq), softmax, Z = A·V;
// head h reading K/V head g = h / (NH/KVH), written out here on its own.
std::vector<float> materialised(const Case& c, const Inputs& in, float divisor) {
    const std::size_t ld = c.NH * c.hs, kvld = c.kvh() * c.hs, offset = c.T - c.Tq, n = c.Tq * c.T;
    std::vector<float> S(n), m(c.Tq), shifted(n), e(n), l(c.Tq), A(n), z(c.Tq * ld);
    for (std::size_t h = 0; h < c.NH; ++h) {
        const std::size_t g = h * c.kvh() / c.NH;  // = h / (NH/KVH) when KVH divides NH
        matmul_nt_ref(in.q.data() + h * c.hs, ld, in.k.data() + g * c.hs, kvld, S.data(), c.T, c.Tq, c.hs, c.T);
        for (std::size_t i = 0; i < c.Tq; ++i)
            for (std::size_t j = 0; j < c.T; ++j)
                S[i * c.T + j] = c.causal && j > i + offset ? kNegInf : S[i * c.T + j] / divisor;
        softmax_rows_ref(S.data(), c.Tq, c.T, m.data(), shifted.data(), e.data(), l.data(), A.data());
        matmul_ref(A.data(), c.T, in.v.data() + g * c.hs, kvld, z.data() + h * c.hs, ld, c.Tq, c.T, c.hs);
    }
    return z;
}

double max_abs(const std::vector<float>& x) {
    double m = 0;
    for (float v : x) m = std::max(m, static_cast<double>(std::fabs(v)));
    return m;
}

// The worst |a - b| in units of eps · scale (NaN anywhere counts as infinite).
double worst_ulps(const std::vector<float>& a, const std::vector<float>& b, double scale) {
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
        worst = std::max(worst, std::isnan(d) ? std::numeric_limits<double>::infinity() : d / (kEps * scale));
    }
    return worst;
}

// Sizes around the SIMD lanes (8, 16) and the blocks (Br query rows, Bc keys).
const std::size_t kSizes[] = {1,  7,  8,  9,  15, 16, 17, 31, 33, 63, 64, 65, kAttnBr - 1, kAttnBr + 1,
                              kAttnBc - 1, kAttnBc + 1, 2 * kAttnBc + 3};
const std::size_t kHeadSizes[] = {1, 7, 16, 64};

// Every case of the edge tests: Tq = T for each size, and decoding offsets
// (Tq < T: the last Tq positions) across block edges; each for hs, causal and
// heads: one, three (MHA), three sharing one K/V head (MQA), four sharing two (GQA).
std::vector<Case> edge_cases() {
    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    for (std::size_t n : kSizes) sizes.emplace_back(n, n);
    for (std::size_t Tq : {1, 7, 17, 65})
        for (std::size_t T : {kAttnBc + 1, 2 * kAttnBc + 3, kAttnBr + 1}) sizes.emplace_back(Tq, T);
    std::vector<Case> cases;
    for (auto [Tq, T] : sizes)
        for (std::size_t hs : kHeadSizes)
            for (auto [NH, KVH] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 3}, {3, 1}, {4, 2}})
                for (bool causal : {false, true}) cases.push_back({Tq, T, NH, hs, causal, KVH});
    return cases;
}

}  // namespace

TEST_CASE("attention_streaming matches attention_streaming_ref around lane and block edges", "[attention]") {
    std::uint32_t seed = 1;
    double worst = 0;
    for (const Case& c : edge_cases()) {
        INFO("Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " KVH " << c.kvh() << " hs " << c.hs << " causal "
                   << c.causal);
        Inputs in(c, seed++);
        const double err = worst_ulps(streaming(c, in), streaming_ref(c, in), max_abs(in.v));
        worst = std::max(worst, err);
        REQUIRE(err <= kSimdUlps);
    }
    INFO("worst " << worst << " ulp of max|v|");
    SUCCEED();
}

#ifndef ATTNTRACE_SCALAR_ONLY
TEST_CASE("every instruction set's streaming attention matches attention_streaming_ref", "[attention][simd]") {
    const auto have = xsimd::available_architectures();
    auto check = [&](auto arch, const char* name) {
        std::uint32_t seed = 100;
        for (const Case& c : edge_cases()) {
            if (c.Tq != c.T && c.hs != 7) continue;  // the decoding offsets once per arch suffice
            INFO(name << " Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " KVH " << c.kvh() << " hs " << c.hs
                      << " causal " << c.causal);
            Inputs in(c, seed++);
            std::vector<float> work(simd::attention_workspace_floats(c.hs) + 16);
            float* ws = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(work.data()) + 63) &
                                                 ~std::uintptr_t{63});
            std::vector<float> z(c.Tq * c.NH * c.hs, 7.0f);
            simd::AttentionStreaming{}(arch, in.q.data(), in.k.data(), in.v.data(), z.data(), c.Tq, c.T, c.NH,
                                       c.kvh(), c.hs, divisor_of(c.hs), c.causal, ws, 1);
            REQUIRE(worst_ulps(z, streaming_ref(c, in), max_abs(in.v)) <= kSimdUlps);
        }
    };
    if (have.avx512bw) check(xsimd::avx512bw{}, "avx512");
    if (have.fma3_avx2) check(xsimd::fma3<xsimd::avx2>{}, "avx2");
    if (have.sse4_2) check(xsimd::sse4_2{}, "sse4.2");
}
#endif

TEST_CASE("streaming attention agrees with the materialised softmax(QKᵀ/√hs)·V, masked or not", "[attention]") {
    const Case cases[] = {{1, 1, 1, 1, false},     {9, 9, 3, 7, true},           {65, 65, 1, 64, true},
                          {17, 300, 3, 16, true},  {kAttnBr + 1, 300, 2, 64, false},
                          {300, 300, 2, 64, true}, {2 * kAttnBc + 3, 2 * kAttnBc + 3, 1, 33, true},
                          {65, 300, 4, 16, true, 1},  {kAttnBr + 1, kAttnBr + 1, 6, 8, true, 2},
                          {300, 300, 4, 64, false, 2}};
    std::uint32_t seed = 200;
    for (const Case& c : cases) {
        INFO("Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " KVH " << c.kvh() << " hs " << c.hs << " causal "
                   << c.causal);
        Inputs in(c, seed++);
        const auto want = materialised(c, in, divisor_of(c.hs));
        const double tol = kOnlineUlpsPerBlock * static_cast<double>(blocks_of(c.T)) + kOnlineUlps;
        CHECK(worst_ulps(streaming_ref(c, in), want, max_abs(in.v)) <= tol);
        CHECK(worst_ulps(streaming(c, in), want, max_abs(in.v)) <= tol + kSimdUlps);
    }
}

TEST_CASE("streaming attention of huge logits (±1e4) is finite and right: the running max is subtracted",
          "[attention]") {
    // q[i, 0] = ±100 and k[j, 0] = 100 put every score near ±1e4 (scale off:
    // divisor 1), where exp overflows to inf (+1e4) or underflows to 0 (-1e4)
    // unless the max is subtracted; the other dims add differences of order 1.
    // On the 1/16 grid every score, 1e4 + a multiple of 1/256, is still exact.
    const Case c{70, 2 * kAttnBc + 3, 2, 16, true};
    Inputs in(c, 300);
    for (std::size_t i = 0; i < c.Tq; ++i)
        for (std::size_t h = 0; h < c.NH; ++h) in.q[(i * c.NH + h) * c.hs] = i % 2 ? -100.0f : 100.0f;
    for (std::size_t j = 0; j < c.T; ++j)
        for (std::size_t h = 0; h < c.NH; ++h) in.k[(j * c.NH + h) * c.hs] = 100.0f;
    const auto want = materialised(c, in, 1.0f);
    const double tol = kOnlineUlpsPerBlock * static_cast<double>(blocks_of(c.T)) + kOnlineUlps;
    std::vector<float> ref(c.Tq * c.NH * c.hs), fast(c.Tq * c.NH * c.hs);
    attention_streaming_ref(in.q.data(), in.k.data(), in.v.data(), ref.data(), c.Tq, c.T, c.NH, c.NH, c.hs, 1.0f,
                            true);
    attention_streaming(in.q.data(), in.k.data(), in.v.data(), fast.data(), c.Tq, c.T, c.NH, c.NH, c.hs, 1.0f, true);
    for (float x : fast) REQUIRE(std::isfinite(x));
    CHECK(worst_ulps(ref, want, max_abs(in.v)) <= tol);
    CHECK(worst_ulps(fast, want, max_abs(in.v)) <= tol + kSimdUlps);
}

TEST_CASE("streaming attention of constant scores is the mean of the V rows each query sees", "[attention]") {
    // Q = 0: every visible score is 0, every weight 1/(visible keys).
    for (bool causal : {false, true}) {
        const Case c{kAttnBr + 1, kAttnBr + 9, 2, 7, causal};
        Inputs in(c, 400);
        std::fill(in.q.begin(), in.q.end(), 0.0f);
        const auto z = streaming(c, in);
        const std::size_t ld = c.NH * c.hs;
        double worst = 0;
        for (std::size_t i = 0; i < c.Tq; ++i)
            for (std::size_t col = 0; col < ld; ++col) {
                const std::size_t seen = causal ? i + (c.T - c.Tq) + 1 : c.T;
                double mean = 0;
                for (std::size_t j = 0; j < seen; ++j) mean += in.v[j * ld + col];
                mean /= static_cast<double>(seen);
                worst = std::max(worst, std::fabs(z[i * ld + col] - mean));
            }
        INFO("causal " << causal);
        // the weights 1/seen are exact up to exp(0) = 1 and the sum l; the
        // weighted sum itself rounds like any sum of `seen` terms
        CHECK(worst <= kEps * (static_cast<double>(c.T) + kOnlineUlps) * max_abs(in.v));
    }
}

TEST_CASE("attention_streaming on arbitrary floats stays within the rounding of the scores' dot products",
          "[attention]") {
    const Case cases[] = {{65, 65, 3, 64, true}, {kAttnBr + 1, 2 * kAttnBc + 3, 2, 16, false}, {33, 200, 1, 7, true},
                          {65, 130, 4, 16, true, 2}};
    std::uint32_t seed = 500;
    for (const Case& c : cases) {
        INFO("Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " KVH " << c.kvh() << " hs " << c.hs << " causal "
                   << c.causal);
        Inputs in(c, seed++, false);
        const double hs = static_cast<double>(c.hs);
        const double tol = kDotSlack * hs * hs / divisor_of(c.hs) + kSimdUlps;
        CHECK(worst_ulps(streaming(c, in), streaming_ref(c, in), max_abs(in.v)) <= tol);
    }
}

TEST_CASE("streaming GQA and MQA equal MHA on K and V whose heads are repeated for their groups, bit for bit",
          "[attention][gqa]") {
    // Query head h reads K/V head h / (NH/KVH): copying that head into every
    // slot of an NH-head K and V gives the same products in the same order.
    const Case cases[] = {{9, 9, 4, 7, true, 2},  {kAttnBr + 1, 2 * kAttnBc + 3, 6, 16, false, 3},
                          {17, 300, 3, 64, true, 1}, {65, 65, 8, 8, true, 2}};
    std::uint32_t seed = 700;
    for (const Case& c : cases) {
        INFO("Tq " << c.Tq << " T " << c.T << " NH " << c.NH << " KVH " << c.kvh() << " hs " << c.hs);
        Inputs in(c, seed++, false);
        Case mha = c;
        mha.KVH = 0;
        Inputs rep(mha, seed);  // q copied below, k and v repeated
        rep.q = in.q;
        for (std::size_t j = 0; j < c.T; ++j)
            for (std::size_t h = 0; h < c.NH; ++h)
                for (std::size_t e = 0; e < c.hs; ++e) {
                    const std::size_t g = h / (c.NH / c.kvh());
                    rep.k[(j * c.NH + h) * c.hs + e] = in.k[(j * c.kvh() + g) * c.hs + e];
                    rep.v[(j * c.NH + h) * c.hs + e] = in.v[(j * c.kvh() + g) * c.hs + e];
                }
        const auto gqa_ref = streaming_ref(c, in), mha_ref = streaming_ref(mha, rep);
        CHECK(std::memcmp(gqa_ref.data(), mha_ref.data(), gqa_ref.size() * sizeof(float)) == 0);
        const auto gqa = streaming(c, in), mha_fast = streaming(mha, rep);
        CHECK(std::memcmp(gqa.data(), mha_fast.data(), gqa.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("streaming attention gives bit-identical results on 1 and 2 threads", "[attention][threads]") {
    // 3 heads x 3 query blocks: 9 (head, block) items to split; then the 3 heads share one K/V head
    for (const auto& [KVH, causal] : {std::pair<std::size_t, bool>{3, false}, {3, true}, {1, false}, {1, true}}) {
        const Case c{2 * kAttnBr + 40, 2 * kAttnBr + 40, 3, 64, causal, KVH};
        Inputs in(c, 600, false);
        const int before = omp_get_max_threads();
        omp_set_num_threads(1);
        const auto one = streaming(c, in);
        omp_set_num_threads(2);
        const auto two = streaming(c, in);
        omp_set_num_threads(before);
        INFO("KVH " << KVH << " causal " << causal);
        CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("scale_div and add_mask_heads equal their _ref twins bit for bit, -inf in the mask", "[attention]") {
    // lane edges, and sizes past the threads' threshold (2^18 floats)
    const std::size_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129, (1u << 18) + 7};
    for (std::size_t n : lengths) {
        INFO("n " << n);
        auto x = values(n, static_cast<std::uint32_t>(n), false);
        for (auto& e : x) e *= 50.0f;
        x[0] = kNegInf;
        for (float divisor : {8.0f, std::sqrt(7.0f), 1.0f}) {
            std::vector<float> want(n), got(n, 7.0f);
            scale_div_ref(x.data(), divisor, want.data(), n);
            scale_div(x.data(), divisor, got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
        }
        auto mask = values(n, static_cast<std::uint32_t>(n + 1), false);
        for (std::size_t i = 0; i < n; i += 3) mask[i] = kNegInf;
        for (std::size_t NH : {1, 3}) {
            const auto s = values(NH * n, static_cast<std::uint32_t>(n + 2), false);
            std::vector<float> want(NH * n), got(NH * n, 7.0f);
            add_mask_heads_ref(s.data(), mask.data(), want.data(), NH, n);
            add_mask_heads(s.data(), mask.data(), got.data(), NH, n);
            CHECK(std::memcmp(got.data(), want.data(), NH * n * sizeof(float)) == 0);
            CHECK(got[0] == kNegInf);
        }
    }
}

#ifndef ATTNTRACE_SCALAR_ONLY
TEST_CASE("every instruction set's scale_div and add_mask_heads equal the _ref twins bit for bit", "[simd]") {
    const auto have = xsimd::available_architectures();
    auto check = [&](auto arch, const char* name) {
        for (std::size_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129}) {
            INFO(name << " n " << n);
            const auto x = values(n, static_cast<std::uint32_t>(n), false);
            std::vector<float> want(3 * n), got(3 * n);
            scale_div_ref(x.data(), 3.0f, want.data(), n);
            simd::ScaleDiv{}(arch, x.data(), 3.0f, got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
            auto mask = values(n, 9, false);
            mask[n - 1] = kNegInf;
            const auto s = values(3 * n, 10, false);
            add_mask_heads_ref(s.data(), mask.data(), want.data(), 3, n);
            simd::AddMaskHeads{}(arch, s.data(), mask.data(), got.data(), 3, n);
            CHECK(std::memcmp(got.data(), want.data(), 3 * n * sizeof(float)) == 0);
        }
    };
    if (have.avx512bw) check(xsimd::avx512bw{}, "avx512");
    if (have.fma3_avx2) check(xsimd::fma3<xsimd::avx2>{}, "avx2");
    if (have.sse4_2) check(xsimd::sse4_2{}, "sse4.2");
}

TEST_CASE("exact_reciprocal: 1/d only for powers of two whose reciprocal is a normal float", "[simd]") {
    CHECK(simd::exact_reciprocal(8.0f) == 0.125f);
    CHECK(simd::exact_reciprocal(-2.0f) == -0.5f);
    CHECK(simd::exact_reciprocal(0.5f) == 2.0f);
    CHECK(simd::exact_reciprocal(std::ldexp(1.0f, -126)) == std::ldexp(1.0f, 126));
    CHECK(simd::exact_reciprocal(std::ldexp(1.0f, 126)) == std::ldexp(1.0f, -126));
    for (float d : {3.0f, std::sqrt(128.0f), 10.0f, std::ldexp(1.0f, 127), std::ldexp(1.0f, -127), 0.0f, -0.0f,
                    std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                    std::nextafter(8.0f, 9.0f)})
        CHECK(simd::exact_reciprocal(d) == 0.0f);
}

TEST_CASE("ScaleDiv by a power of two (a product with the exact reciprocal) equals the _ref's division bit for bit, "
          "at the float edges",
          "[simd]") {
    const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
    const float tiny = std::numeric_limits<float>::min(), sub = std::numeric_limits<float>::denorm_min();
    std::vector<float> x = {0.0f, -0.0f, sub, -sub, 3 * sub, tiny, -tiny, std::nextafter(tiny, 0.0f), 1.0f, -1.5f,
                            big, -big, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1e-39f, 7e-45f, 3.3e38f};
    const auto more = values(77, 12, false);  // and ordinary values past the lanes
    x.insert(x.end(), more.begin(), more.end());
    const std::size_t n = x.size();
    const auto have = xsimd::available_architectures();
    auto check = [&](auto arch, const char* name) {
        for (float divisor : {8.0f, 0.5f, -4.0f, std::ldexp(1.0f, 126), std::ldexp(1.0f, -126), 3.0f}) {
            INFO(name << " divisor " << divisor);
            std::vector<float> want(n), got(n);
            scale_div_ref(x.data(), divisor, want.data(), n);
            simd::ScaleDiv{}(arch, x.data(), divisor, got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
        }
    };
    if (have.avx512bw) check(xsimd::avx512bw{}, "avx512");
    if (have.fma3_avx2) check(xsimd::fma3<xsimd::avx2>{}, "avx2");
    if (have.sse4_2) check(xsimd::sse4_2{}, "sse4.2");
}
#endif

}  // namespace test_attention_kernels
