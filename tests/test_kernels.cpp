// The scalar kernels (src/kernels/*_ref) on cases worked out by hand, and the
// properties the pipeline relies on: softmax rows sum to 1 and never give NaN,
// LayerNorm standardizes, GELU is x·Φ(x), matmul honours leading dimensions.
//
// Letters as everywhere: M, K, N for a product (M, K)·(K, N); C a row's width.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <vector>

#include "kernels/activations.hpp"
#include "kernels/blocking.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/matmul.hpp"
#include "kernels/softmax.hpp"

using namespace attntrace;

namespace test_kernels {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Hand-computed decimals are written to 9 significant digits; a float32
// result carries ~7, so a relative 1e-6 (about 8 ulps) separates "the same
// number" from any real mistake, which shows up in the 2nd or 3rd digit.
constexpr double kHandRel = 1e-6;

// Deterministic inputs: a tiny LCG (no <random>, whose distributions differ
// between standard libraries).
struct Lcg {
    std::uint64_t s;
    explicit Lcg(std::uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
    std::uint32_t next() {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(s >> 33);
    }
    // uniform in [lo, hi)
    float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() % 1000000) / 1e6f; }
    // an integer in [-4, 4], as a float
    float small_int() { return static_cast<float>(static_cast<int>(next() % 9) - 4); }
};

// Φ(x), the standard normal CDF, in double.
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

// ---------------------------------------------------------------- matmul

TEST_CASE("matmul_ref multiplies a 2x2 by a 2x3 as worked by hand") {
    // a = [[1, 2], [3, 4]]   b = [[5, 6, 7], [8, 9, 10]]
    // c[0] = [1·5 + 2·8, 1·6 + 2·9, 1·7 + 2·10] = [21, 24, 27]
    // c[1] = [3·5 + 4·8, 3·6 + 4·9, 3·7 + 4·10] = [47, 54, 61]
    const float a[] = {1, 2, 3, 4};
    const float b[] = {5, 6, 7, 8, 9, 10};
    float c[6] = {-1, -1, -1, -1, -1, -1};  // overwritten, not accumulated into
    matmul_ref(a, 2, b, 3, c, 3, 2, 2, 3);
    const float want[] = {21, 24, 27, 47, 54, 61};
    for (int i = 0; i < 6; ++i) CHECK(c[i] == want[i]);  // small integers: exact in float32
}

TEST_CASE("matmul_nt_ref multiplies by the transpose without forming it") {
    // a = [[1, 2], [3, 4]]   b = [[5, 8], [6, 9], [7, 10]] (N = 3 rows of K = 2), so bᵀ = [[5, 6, 7], [8, 9, 10]]
    // and a·bᵀ is the product of the case above: [[21, 24, 27], [47, 54, 61]]
    const float a[] = {1, 2, 3, 4};
    const float b[] = {5, 8, 6, 9, 7, 10};
    float c[6] = {-1, -1, -1, -1, -1, -1};
    matmul_nt_ref(a, 2, b, 2, c, 3, 2, 2, 3);
    const float want[] = {21, 24, 27, 47, 54, 61};
    for (int i = 0; i < 6; ++i) CHECK(c[i] == want[i]);
}

TEST_CASE("gemv_ref multiplies one row by a matrix and by its transpose, the bias after the sum, as worked by hand") {
    // x = [1, 2]   W = [[5, 6, 7], [8, 9, 10]] (ld 4)   x·W = [21, 24, 27]; + b = [0.5, -1, 0] -> [21.5, 23, 27]
    const float x[] = {1, 2};
    const float W[] = {5, 6, 7, -1, 8, 9, 10, -1};
    const float b[] = {0.5f, -1, 0};
    float y[4] = {-7, -7, -7, -7};
    gemv_ref(x, W, 4, false, nullptr, y, 2, 3);
    CHECK(y[0] == 21.0f);
    CHECK(y[1] == 24.0f);
    CHECK(y[2] == 27.0f);
    CHECK(y[3] == -7.0f);  // nothing past N
    gemv_ref(x, W, 4, false, b, y, 2, 3);
    CHECK(y[0] == 21.5f);
    CHECK(y[1] == 23.0f);
    CHECK(y[2] == 27.0f);
    // transposed: Wt = [[5, 8], [6, 9], [7, 10]] (ld 3), x·Wtᵀ = x·W
    const float Wt[] = {5, 8, -1, 6, 9, -1, 7, 10, -1};
    gemv_ref(x, Wt, 3, true, b, y, 2, 3);
    CHECK(y[0] == 21.5f);
    CHECK(y[1] == 23.0f);
    CHECK(y[2] == 27.0f);
    // K = 0: the empty sum, then the bias
    gemv_ref(x, W, 4, false, b, y, 0, 3);
    CHECK(y[0] == 0.5f);
    CHECK(y[1] == -1.0f);
}

TEST_CASE("add_bias_rows_ref adds the bias to every row and leaves the padding alone") {
    // c: (2, 3) with ldc 4 = [[1, 2, 3 | pad], [4, 5, 6 | pad]]   bias = [10, 20, 30]
    // -> [[11, 22, 33], [14, 25, 36]]
    float c[] = {1, 2, 3, 99, 4, 5, 6, 99};
    const float bias[] = {10, 20, 30};
    add_bias_rows_ref(c, 4, bias, 2, 3);
    const float want[] = {11, 22, 33, 99, 14, 25, 36, 99};
    for (int i = 0; i < 8; ++i) CHECK(c[i] == want[i]);
}

namespace {

// A (rows, cols) matrix stored with row stride ld >= cols; the padding holds
// NaN, so a kernel that reads past `cols` poisons its result.
std::vector<float> strided(Lcg& g, std::size_t rows, std::size_t cols, std::size_t ld) {
    std::vector<float> m(rows * ld, kNaN);
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) m[i * ld + j] = g.small_int();
    return m;
}

}  // namespace

// ---------------------------------------------------------------- GEMM blocking (kernels/blocking.hpp)

TEST_CASE("GEMM blocking derived from the caches as worked by hand, the measured one when they are unknown") {
    using simd::GemmBlocking;
    auto same = [](GemmBlocking got, GemmBlocking want) {
        INFO("kc " << got.kc << " mc " << got.mc << " nc " << got.nc);
        CHECK(got.kc == want.kc);
        CHECK(got.mc == want.mc);
        CHECK(got.nc == want.nc);
    };
    // An AMD EPYC (Zen 4) as its VM reports it: L1d 32 KiB 8-way, L2 1 MiB 8-way, L3 32 MiB 16-way for 2 CPUs;
    // AVX-512 tile 14 x 32, floats.
    //   kc: 6/8 · 32768 / 4 = 6144 floats; / 14 = 438.9 -> 432 (a multiple of 8)
    //   nc: 7/8 · 1 MiB / 4 = 229376; - 14·432 = 223328; / (432 + 14) = 500.7 -> 480 (a multiple of 32)
    //   mc: 15/16 · 16 MiB / 4 = 3932160; - 432·480 = 3724800; / (432 + 480) = 4084.2 -> 4074 (14·291),
    //       but 4074·432 + 432·480 > 829440 floats of workspace: mc <= (829440 - 207360) / 432 = 1440 -> 1428
    CacheInfo zen4;
    zen4.l1d = {32768, 8, 1};
    zen4.l2 = {1 << 20, 8, 1};
    zen4.l3 = {32u << 20, 16, 2};
    zen4.source = "sysfs";
    same(derive_gemm_blocking(zen4, simd::kGemmTileAvx512, 4), {432, 1428, 480});
    // A smaller L3 share binds before the workspace does:
    //   L3 2 MiB 16-way for 2 CPUs: 15/16 · 1 MiB / 4 = 245760; - 207360 = 38400; / 912 = 42.1 -> 42
    CacheInfo small_l3 = zen4;
    small_l3.l3 = {2u << 20, 16, 2};
    same(derive_gemm_blocking(small_l3, simd::kGemmTileAvx512, 4), {432, 42, 480});
    // A Xeon with L1d 48 KiB 12-way, L2 2 MiB 16-way and no L3 reported; AVX2 tile 6 x 16:
    //   kc: 10/12 · 49152 / 4 = 10240; / 6 = 1706.7 -> 1704
    //   nc: 15/16 · 2 MiB / 4 = 491520; - 6·1704 = 481296; / (1704 + 6) = 281.5 -> 272 (a multiple of 16)
    //   mc: the measured 1680, but 1680·1704 + 1704·272 > 829440: mc <= (829440 - 463488) / 1704 = 214.8 -> 210
    CacheInfo xeon;
    xeon.l1d = {48u << 10, 12, 1};
    xeon.l2 = {2u << 20, 16, 1};
    xeon.source = "sysconf";
    same(derive_gemm_blocking(xeon, simd::kGemmTileAvx2, 4), {1704, 210, 272});
    // Sizes without ways: 8 assumed, so the Zen 4's kc and nc; no L3: mc the measured 1680, within the
    // workspace 1428 as above.
    CacheInfo no_ways;
    no_ways.l1d = {32768, 0, 1};
    no_ways.l2 = {1 << 20, 0, 1};
    same(derive_gemm_blocking(no_ways, simd::kGemmTileAvx512, 4), {432, 1428, 480});
    // Doubles (8 bytes) halve kc: 6/8 · 32768 / 8 / 14 = 219.4 -> 216.
    CHECK(derive_gemm_blocking(zen4, simd::kGemmTileAvx512, 8).kc == 216);
    // Nothing reported: the measured blocking.
    same(derive_gemm_blocking(CacheInfo{}, simd::kGemmTileAvx512, 4), simd::kGemmMeasured);
    CacheInfo l1_only;
    l1_only.l1d = {32768, 8, 1};
    same(derive_gemm_blocking(l1_only, simd::kGemmTileSse, 4), simd::kGemmMeasured);
    // Every blocking above suits its tile; a kc not a multiple of 8 or an mc not one of MR does not.
    CHECK(gemm_blocking_valid({432, 1428, 480}, simd::kGemmTileAvx512));
    CHECK_FALSE(gemm_blocking_valid({436, 1428, 480}, simd::kGemmTileAvx512));
    CHECK_FALSE(gemm_blocking_valid({432, 1438, 480}, simd::kGemmTileAvx512));
    CHECK_FALSE(gemm_blocking_valid({432, 1428, 490}, simd::kGemmTileAvx512));
    CHECK_FALSE(gemm_blocking_valid({432, 1442, 480}, simd::kGemmTileAvx512));  // past the workspace
}

TEST_CASE("matmul_ref and matmul_nt_ref honour leading dimensions larger than the row width") {
    // Odd shapes; every buffer has 3 extra columns (the layout of one head's
    // slice of Q inside (T, C)). Inputs are integers in [-4, 4]: every product
    // and partial sum (|.| <= 13·16) is an integer below 2^24, so float32 is
    // exact and the results must equal the double loop exactly.
    struct Case { std::size_t M, K, N; };
    const Case cases[] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 13}};
    const std::size_t pad = 3;
    const float sentinel = 12345.0f;  // in c's padding: must survive
    for (const Case& cs : cases) {
        const std::size_t M = cs.M, K = cs.K, N = cs.N;
        INFO("M, K, N = " << M << ", " << K << ", " << N);
        Lcg g(M * 100 + K * 10 + N);
        const std::size_t lda = K + pad, ldb = N + pad, ldbt = K + pad, ldc = N + pad;
        auto a = strided(g, M, K, lda);
        auto b = strided(g, K, N, ldb);
        // bt holds bᵀ: (N, K) with its own leading dimension
        std::vector<float> bt(N * ldbt, kNaN);
        for (std::size_t k = 0; k < K; ++k)
            for (std::size_t j = 0; j < N; ++j) bt[j * ldbt + k] = b[k * ldb + j];

        std::vector<double> want(M * N, 0.0);
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t j = 0; j < N; ++j)
                for (std::size_t k = 0; k < K; ++k)
                    want[i * N + j] += static_cast<double>(a[i * lda + k]) * b[k * ldb + j];

        std::vector<float> c(M * ldc, sentinel), ct(M * ldc, sentinel);
        matmul_ref(a.data(), lda, b.data(), ldb, c.data(), ldc, M, K, N);
        matmul_nt_ref(a.data(), lda, bt.data(), ldbt, ct.data(), ldc, M, K, N);
        for (std::size_t i = 0; i < M; ++i) {
            for (std::size_t j = 0; j < N; ++j) {
                INFO("cell " << i << ", " << j);
                CHECK(c[i * ldc + j] == want[i * N + j]);
                CHECK(ct[i * ldc + j] == want[i * N + j]);
            }
            for (std::size_t j = N; j < ldc; ++j) {
                CHECK(c[i * ldc + j] == sentinel);
                CHECK(ct[i * ldc + j] == sentinel);
            }
        }
    }
}

// ---------------------------------------------------------------- softmax

namespace {

struct SoftmaxOut {
    std::vector<float> row_max, shifted, e, row_sum, out;
    std::size_t empty_rows = 0;
};

SoftmaxOut softmax(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    SoftmaxOut r;
    r.row_max.assign(rows, kNaN);
    r.row_sum.assign(rows, kNaN);
    r.shifted.assign(rows * cols, kNaN);
    r.e.assign(rows * cols, kNaN);
    r.out.assign(rows * cols, kNaN);
    r.empty_rows = softmax_rows_ref(x.data(), rows, cols, r.row_max.data(), r.shifted.data(), r.e.data(),
                                    r.row_sum.data(), r.out.data());
    return r;
}

}  // namespace

TEST_CASE("softmax_rows_ref computes [1, 2, 3] and its internals as worked by hand") {
    // m = 3; shifted = [-2, -1, 0]; e = [e^-2, e^-1, 1] = [0.135335283, 0.367879441, 1]
    // s = 1.50321472; out = e / s = [0.0900305732, 0.244728471, 0.665240956]
    // second row [0, 0]: m = 0, e = [1, 1], s = 2, out = [0.5, 0.5] exactly
    auto r = softmax({1, 2, 3}, 1, 3);
    CHECK(r.empty_rows == 0);
    CHECK(r.row_max[0] == 3.0f);
    CHECK(r.shifted == std::vector<float>{-2, -1, 0});
    CHECK(r.e[0] == Approx(0.135335283).epsilon(kHandRel));
    CHECK(r.e[1] == Approx(0.367879441).epsilon(kHandRel));
    CHECK(r.e[2] == 1.0f);
    CHECK(r.row_sum[0] == Approx(1.50321472).epsilon(kHandRel));
    CHECK(r.out[0] == Approx(0.0900305732).epsilon(kHandRel));
    CHECK(r.out[1] == Approx(0.244728471).epsilon(kHandRel));
    CHECK(r.out[2] == Approx(0.665240956).epsilon(kHandRel));

    auto two = softmax({0, 0}, 1, 2);
    CHECK(two.row_sum[0] == 2.0f);
    CHECK(two.out == std::vector<float>{0.5f, 0.5f});
}

TEST_CASE("softmax rows sum to one for rows of any length") {
    // Each weight e_j / s is rounded once (u = FLT_EPSILON/2) and s itself is a
    // float sum of `cols` terms (relative error <= (cols-1)·u); the row's sum
    // of weights is then a float sum again. 2·cols·FLT_EPSILON bounds the
    // drift from 1 for every length here, with a factor ~2 to spare.
    const std::size_t lengths[] = {1, 2, 7, 8, 9, 16, 17, 63, 64, 65, 257};
    Lcg g(7);
    for (std::size_t cols : lengths) {
        const double row_sum_tol = 2.0 * static_cast<double>(cols) * FLT_EPSILON;
        const std::size_t rows = 5;
        std::vector<float> x(rows * cols);
        for (float& v : x) v = g.uniform(-8.0f, 8.0f);
        auto r = softmax(x, rows, cols);
        for (std::size_t i = 0; i < rows; ++i) {
            INFO("cols " << cols << ", row " << i);
            double sum = 0.0;
            for (std::size_t j = 0; j < cols; ++j) {
                const float w = r.out[i * cols + j];
                CHECK(w >= 0.0f);
                CHECK(w <= 1.0f);
                sum += w;
            }
            CHECK(std::abs(sum - 1.0) <= row_sum_tol);
        }
    }
}

TEST_CASE("softmax gives masked (-inf) cells a weight of exactly zero") {
    // row [1, -inf, 2, -inf]: m = 2, shifted = [-1, -inf, 0, -inf], e = [e^-1, 0, 1, 0]
    // s = 1.36787944, out = [0.268941421, 0, 0.731058579, 0]
    auto r = softmax({1, -kInf, 2, -kInf}, 1, 4);
    CHECK(r.empty_rows == 0);
    CHECK(r.row_max[0] == 2.0f);
    CHECK(r.shifted[1] == -kInf);
    CHECK(r.shifted[3] == -kInf);
    CHECK(r.e[1] == 0.0f);
    CHECK(r.e[3] == 0.0f);
    CHECK(r.out[1] == 0.0f);
    CHECK(r.out[3] == 0.0f);
    CHECK(r.row_sum[0] == Approx(1.36787944).epsilon(kHandRel));
    CHECK(r.out[0] == Approx(0.268941421).epsilon(kHandRel));
    CHECK(r.out[2] == Approx(0.731058579).epsilon(kHandRel));
}

TEST_CASE("softmax of a fully masked row gives all-zero weights, row_sum 0 and no NaN, and is counted") {
    // rows: [-inf, -inf, -inf] (every key masked) between two ordinary rows
    auto r = softmax({0, 0, 0, -kInf, -kInf, -kInf, 1, -kInf, 1}, 3, 3);
    CHECK(r.empty_rows == 1);
    CHECK(r.row_max[1] == -kInf);
    CHECK(r.row_sum[1] == 0.0f);
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(r.shifted[3 + j] == -kInf);
        CHECK(r.e[3 + j] == 0.0f);
        CHECK(r.out[3 + j] == 0.0f);
    }
    // the neighbours are untouched by the empty row
    for (std::size_t j = 0; j < 3; ++j) CHECK(r.out[j] == Approx(1.0 / 3.0).epsilon(kHandRel));
    CHECK(r.out[6] == 0.5f);
    CHECK(r.out[7] == 0.0f);
    CHECK(r.out[8] == 0.5f);
    for (float v : r.out) CHECK_FALSE(std::isnan(v));
    for (float v : r.row_sum) CHECK_FALSE(std::isnan(v));
}

TEST_CASE("softmax of huge logits is finite and correct (the row max is subtracted before exp)") {
    // exp overflows float32 above ~88.72: exp(100) alone would be inf.
    //   [1e30, -1e30, 88, 100] -> m = 1e30, every other cell shifts to <= -1e30: [1, 0, 0, 0]
    //   [88, 100]              -> [e^-12, 1] / (1 + e^-12) = [6.14417460e-06, 0.999993856]
    //   [100, 100]             -> [0.5, 0.5]
    //   [-1e30, -1e30]         -> [0.5, 0.5] (very negative, but not masked)
    //   [FLT_MAX, -FLT_MAX]    -> shifted -FLT_MAX - FLT_MAX = -inf: [1, 0]
    const float big = 1e30f;
    auto a = softmax({big, -big, 88, 100}, 1, 4);
    CHECK(a.out == std::vector<float>{1, 0, 0, 0});
    CHECK(a.row_sum[0] == 1.0f);

    auto b = softmax({88, 100}, 1, 2);
    CHECK(b.out[0] == Approx(6.14417460e-06).epsilon(kHandRel));
    CHECK(b.out[1] == Approx(0.999993856).epsilon(kHandRel));

    auto c = softmax({100, 100, -big, -big, FLT_MAX, -FLT_MAX}, 3, 2);
    CHECK(c.empty_rows == 0);
    CHECK(c.out == std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f});
    for (const auto* v : {&a.out, &a.e, &a.row_sum, &b.out, &b.e, &c.out, &c.e, &c.row_sum})
        for (float x : *v) CHECK(std::isfinite(x));
}

// ---------------------------------------------------------------- LayerNorm

namespace {

struct LnOut {
    std::vector<float> mean, var, sd, xhat, out;
};

LnOut layernorm(const std::vector<float>& x, std::size_t rows, std::size_t C, float eps,
                const float* gamma = nullptr, const float* beta = nullptr) {
    LnOut r;
    r.mean.assign(rows, kNaN);
    r.var.assign(rows, kNaN);
    r.sd.assign(rows, kNaN);
    r.xhat.assign(rows * C, kNaN);
    r.out.assign(rows * C, kNaN);
    layernorm_rows_ref(x.data(), rows, C, eps, gamma, beta, r.mean.data(), r.var.data(), r.sd.data(),
                       r.xhat.data(), gamma && beta ? r.out.data() : nullptr);
    return r;
}

}  // namespace

TEST_CASE("layernorm_rows_ref normalizes [1, 2, 3, 4] as worked by hand, eps inside the square root") {
    // μ = 2.5; x - μ = [-1.5, -0.5, 0.5, 1.5]; σ² = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25 (biased: / C)
    // eps = 0.25 (large on purpose, so that where it goes shows): σ = √(1.25 + 0.25) = √1.5 = 1.22474487
    // x̂ = [-1.22474487, -0.408248290, 0.408248290, 1.22474487]
    // γ = [1, 2, 0.5, -1], β = [0, 1, -1, 0.5]:
    // out = [-1.22474487, 2·-0.408248290 + 1, 0.5·0.408248290 - 1, -1.22474487 + 0.5]
    //     = [-1.22474487, 0.183503419, -0.795875855, -0.724744871]
    const float gamma[] = {1, 2, 0.5f, -1};
    const float beta[] = {0, 1, -1, 0.5f};
    auto r = layernorm({1, 2, 3, 4}, 1, 4, 0.25f, gamma, beta);
    CHECK(r.mean[0] == 2.5f);
    CHECK(r.var[0] == 1.25f);
    CHECK(r.sd[0] == Approx(1.22474487).epsilon(kHandRel));
    const double xhat[] = {-1.22474487, -0.408248290, 0.408248290, 1.22474487};
    const double out[] = {-1.22474487, 0.183503419, -0.795875855, -0.724744871};
    for (int c = 0; c < 4; ++c) {
        CHECK(r.xhat[c] == Approx(xhat[c]).epsilon(kHandRel));
        CHECK(r.out[c] == Approx(out[c]).epsilon(kHandRel));
    }
}

TEST_CASE("layernorm_rows_ref skips the affine when gamma or beta is missing") {
    const float gamma[] = {1, 1};
    std::vector<float> out(2, 7.0f);
    float mean, var, sd, xhat[2];
    layernorm_rows_ref(std::vector<float>{1, 3}.data(), 1, 2, 0.0f, gamma, nullptr, &mean, &var, &sd, xhat,
                       out.data());
    CHECK(out == std::vector<float>{7.0f, 7.0f});  // untouched
    CHECK(xhat[0] == -1.0f);                       // μ = 2, σ² = 1, eps 0: x̂ = [-1, 1]
    CHECK(xhat[1] == 1.0f);
}

TEST_CASE("layernorm rows have mean 0 and biased variance var/(var+eps) before the affine") {
    // x̂ = (x - μ)/√(σ² + eps), so mean(x̂) = 0 and mean(x̂²) = σ²/(σ² + eps):
    // 1 only when σ² >> eps. Rows of std ~1 (ratio ~0.99999) and of std ~1e-3
    // (σ² ~ 1e-6 against eps = 1e-5: ratio ~0.09) check that eps is added to
    // the variance inside the square root, once.
    // Tolerance: μ and σ² are float sums of C terms (relative error <= C·u);
    // the moments of x̂ inherit that. 2·C·FLT_EPSILON, with C the row width.
    const float eps = 1e-5f;
    const std::size_t widths[] = {2, 7, 16, 64, 65, 768};
    Lcg g(11);
    for (std::size_t C : widths) {
        const double moment_tol = 2.0 * static_cast<double>(C) * FLT_EPSILON;
        for (float spread : {1.0f, 1e-3f}) {
            std::vector<float> x(C);
            for (float& v : x) v = 3.0f * spread + g.uniform(-spread, spread) * 1.7f;  // offset mean
            auto r = layernorm(x, 1, C, eps);
            // the variance of the input, in double
            double mu = 0, var = 0;
            for (float v : x) mu += v;
            mu /= static_cast<double>(C);
            for (float v : x) var += (v - mu) * (v - mu);
            var /= static_cast<double>(C);
            double m1 = 0, m2 = 0;
            for (float h : r.xhat) m1 += h, m2 += static_cast<double>(h) * h;
            m1 /= static_cast<double>(C);
            m2 /= static_cast<double>(C);
            INFO("C " << C << ", spread " << spread << ", var " << var);
            CHECK(std::abs(m1) <= moment_tol);
            CHECK(std::abs(m2 - var / (var + eps)) <= moment_tol);
            CHECK(r.sd[0] == Approx(std::sqrt(var + eps)).epsilon(moment_tol));
        }
    }
}

TEST_CASE("layernorm of a constant row gives exactly 0 standardized values") {
    // A constant row has no direction to normalize: x̂ must be exactly 0 (and
    // the output exactly β), for any constant and width, as the kernel's
    // header promises. The row mean must come back as the constant itself for
    // that. A float32 running sum of C copies is not exact: 0.1 over 7 columns
    // gives the mean 0.100000009 and x̂ = -2.4e-6; 123.456 over 768 columns
    // gives x̂ = 0.21, as σ = √(tiny + eps) divides the mean's error.
    const float constants[] = {2.0f, 0.5f, 0.1f, 3.7f, -2.3f, 123.456f};
    const std::size_t widths[] = {1, 4, 7, 11, 64, 768};
    for (float k : constants)
        for (std::size_t C : widths) {
            std::vector<float> gamma(C, 1.5f), beta(C, 0.25f);
            auto r = layernorm(std::vector<float>(C, k), 1, C, 1e-5f, gamma.data(), beta.data());
            INFO("constant " << std::setprecision(9) << k << " over " << C << " columns: mean " << r.mean[0]
                             << ", var " << r.var[0] << ", x̂[0] " << r.xhat[0]);
            CHECK(r.mean[0] == k);
            CHECK(r.var[0] == 0.0f);
            CHECK(std::all_of(r.xhat.begin(), r.xhat.end(), [](float v) { return v == 0.0f; }));
            CHECK(std::all_of(r.out.begin(), r.out.end(), [](float v) { return v == 0.25f; }));
        }
}

// ---------------------------------------------------------------- activations

TEST_CASE("relu_ref keeps positives and zeroes the rest") {
    const float x[] = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f, -1e30f, 1e30f};
    float y[7];
    relu_ref(x, y, 7);
    const float want[] = {0, 0, 0, 0.5f, 3, 0, 1e30f};
    for (int i = 0; i < 7; ++i) CHECK(y[i] == want[i]);
}

TEST_CASE("gelu_ref gives x·Phi(x) at points worked by hand") {
    // Φ(1) = 0.841344746, Φ(-1) = 0.158655254, Φ(0.5) = 0.691462461, Φ(2) = 0.977249868
    // gelu(1) = 0.841344746, gelu(-1) = -0.158655254, gelu(0.5) = 0.345731231,
    // gelu(2) = 1.95449974, gelu(0) = 0
    const float x[] = {1, -1, 0.5f, 2, 0};
    float y[5];
    gelu_ref(x, y, 5);
    CHECK(y[0] == Approx(0.841344746).epsilon(kHandRel));
    CHECK(y[1] == Approx(-0.158655254).epsilon(kHandRel));
    CHECK(y[2] == Approx(0.345731231).epsilon(kHandRel));
    CHECK(y[3] == Approx(1.95449974).epsilon(kHandRel));
    CHECK(y[4] == 0.0f);
}

TEST_CASE("gelu_ref matches x·Phi(x) computed in double across the range") {
    // float32: erf carries ~1 ulp of |erf| <= 1, and 1 + erf adds a rounding of
    // 1; times x/2 that is an absolute error of about |x|·FLT_EPSILON. In the
    // negative tail 1 + erf cancels (gelu(-5) = -1.4e-6 from 1 - 0.99999943),
    // so the bound is absolute there, not relative: 2·max(1, |x|)·FLT_EPSILON.
    const float xs[] = {-10, -5, -3, -2, -1.5f, -1, -0.5f, -0.1f, 0, 0.1f, 0.5f, 1, 1.5f, 2, 3, 5, 10};
    for (float xv : xs) {
        float y;
        gelu_ref(&xv, &y, 1);
        const double want = static_cast<double>(xv) * normal_cdf(xv);
        const double tol = 2.0 * std::max(1.0, std::abs(static_cast<double>(xv))) * FLT_EPSILON;
        INFO("x = " << xv << ": gelu " << y << ", x·Φ(x) " << want);
        CHECK(std::abs(y - want) <= tol);
    }
    // and it is not the tanh approximation: at x = -3 the tanh form gives -0.00363739, x·Φ(x) -0.00404969
    float x3 = -3.0f, y3;
    gelu_ref(&x3, &y3, 1);
    CHECK(y3 == Approx(-0.00404969).epsilon(1e-4));
}

TEST_CASE("add_ref adds element-wise") {
    // [1, 2, 3] + [0.5, -2, 4] = [1.5, 0, 7]
    const float a[] = {1, 2, 3}, b[] = {0.5f, -2, 4};
    float y[3];
    add_ref(a, b, y, 3);
    CHECK(y[0] == 1.5f);
    CHECK(y[1] == 0.0f);
    CHECK(y[2] == 7.0f);
}

}  // namespace test_kernels
