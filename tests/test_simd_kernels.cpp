// Every SIMD kernel, for every instruction set this CPU has, against its
// scalar _ref twin, on lengths around the lane edges and odd matrix shapes.
#include <catch2/catch.hpp>

#include <omp.h>

#ifndef ATTNTRACE_SCALAR_ONLY

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "kernels/crew.hpp"
#include "kernels/activations.hpp"
#include "kernels/attention.hpp"
#include "kernels/blocking.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/matmul.hpp"
#include "kernels/positions.hpp"
#include "kernels/simd/kernels.hpp"
#include "kernels/simd/stream_store.hpp"
#include "kernels/softmax.hpp"

namespace test_simd_kernels {

namespace {

using attntrace::simd::Archs;

// A GEMM sums K products in another order than matmul_ref (panels, lanes,
// FMA): each order is within K·eps·Σ|a·b| of the exact sum, so two orders
// differ by at most 2·K·eps·Σ|a·b|. With inputs in [-1, 1], Σ|a·b| <= K.
constexpr double kGemmOrderSlack = 2.0;
// xsimd::exp and xsimd::erf against std::exp and std::erf: a few ulp. The
// softmax sum then divides by a sum accumulated lane by lane.
constexpr double kMathUlps = 8.0;
const double kEps = std::numeric_limits<float>::epsilon();

const std::size_t kLengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 129};

// Floats in one register of each instruction set (this file is built for
// baseline x86-64, so it cannot ask xsimd::batch<float, Arch>::size).
std::size_t lanes_of(const char* name) {
    const std::string n = name;
    return n == "avx512" ? 16 : n == "avx2" ? 8 : 4;
}

// The lengths around one instruction set's lane edges: 1, W-1, W, W+1, 2W+3
// and a large one that is no multiple of W.
std::vector<std::size_t> lane_lengths(const char* name) {
    const std::size_t W = lanes_of(name);
    return {1, W - 1, W, W + 1, 2 * W + 3, 1000 * W + W - 1};
}

// Deterministic values in [-1, 1] (a fixed LCG: no library distribution).
std::vector<float> values(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    std::uint32_t s = seed * 2654435761u + 1u;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>((s >> 8) & 0xFFFF) / 32767.5f - 1.0f;
    }
    return v;
}

// Runs `body(arch, name)` for every arch in Archs the CPU supports.
template <class Body>
void for_each_arch(Body body) {
    const auto have = xsimd::available_architectures();
    if (have.avx512bw) body(xsimd::avx512bw{}, "avx512");
    if (have.fma3_avx2) body(xsimd::fma3<xsimd::avx2>{}, "avx2");
    if (have.sse4_2) body(xsimd::sse4_2{}, "sse4.2");
}

// Each thread's scratch for the GEMM's packed panels, as dispatch.cpp gives it:
// gemm_workspace_floats() floats, 64-byte aligned.
float* gemm_workspace() {
    thread_local std::vector<float> buffer(attntrace::simd::gemm_workspace_floats() + 16);
    return reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(buffer.data()) + 63) & ~std::uintptr_t{63});
}

}  // namespace

TEST_CASE("SIMD GEMM matches matmul_ref and matmul_nt_ref on odd shapes and strides", "[simd]") {
    const std::size_t shapes[][3] = {{1, 1, 1},   {1, 7, 17},  {3, 5, 7},    {14, 9, 32},  {15, 16, 33},
                                     {17, 9, 13}, {29, 65, 63}, {64, 64, 64}, {65, 400, 97}, {7, 1, 500},
                                     // narrow N (A read in place, the last partial panel packed), K past kGemmKC
                                     {45, 777, 64}, {30, 400, 16}, {43, 390, 40},
                                     // narrow N with rows 1024 and 2048 floats apart (lda = K + 3): each A panel packed
                                     {45, 1021, 64}, {29, 2045, 16}};
    auto* const ws = &gemm_workspace;
    for_each_arch([&](auto arch, const char* name) {
        for (const auto& s : shapes) {
            const std::size_t M = s[0], K = s[1], N = s[2];
            const std::size_t lda = K + 3, ldb = N + 5, ldbt = K + 2, ldc = N + 1;  // strided views
            auto a = values(M * lda, 1), b = values(K * ldb, 2), bt = values(N * ldbt, 3);
            std::vector<float> want(M * ldc), got(M * ldc, 7.0f);
            const double tol = kGemmOrderSlack * K * kEps * K;
            INFO(name << " " << M << "x" << K << "x" << N);
            attntrace::matmul_ref(a.data(), lda, b.data(), ldb, want.data(), ldc, M, K, N);
            attntrace::simd::Gemm{}(arch, a.data(), lda, b.data(), ldb, false, got.data(), ldc, M, K, N, ws, attntrace::simd::kGemmMeasured);
            for (std::size_t i = 0; i < M; ++i)
                for (std::size_t j = 0; j < N; ++j) REQUIRE(std::fabs(got[i * ldc + j] - want[i * ldc + j]) <= tol);
            attntrace::matmul_nt_ref(a.data(), lda, bt.data(), ldbt, want.data(), ldc, M, K, N);
            attntrace::simd::Gemm{}(arch, a.data(), lda, bt.data(), ldbt, true, got.data(), ldc, M, K, N, ws, attntrace::simd::kGemmMeasured);
            for (std::size_t i = 0; i < M; ++i)
                for (std::size_t j = 0; j < N; ++j) REQUIRE(std::fabs(got[i * ldc + j] - want[i * ldc + j]) <= tol);
        }
    });
}

TEST_CASE("the GEMM's micro-kernel alone (bench's measure) computes the product of its packed blocks", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        const std::string n = name;
        const attntrace::simd::GemmTile tile = n == "avx512" ? attntrace::simd::kGemmTileAvx512
                                               : n == "avx2" ? attntrace::simd::kGemmTileAvx2
                                                             : attntrace::simd::kGemmTileSse;
        const std::size_t MR = tile.mr, NR = tile.nr, kc = 37, mc = 3 * MR, nc = 2 * NR, ldc = nc + 3;
        INFO(name);
        const auto a = values(mc * kc, 4), b = values(kc * nc, 5);  // a: (mc, kc), b: (kc, nc), row-major
        // The packed layouts: ap[p][k][i] = a[p·MR + i, k], bp[q][k][j] = b[k, q·NR + j].
        std::vector<float> ap(mc * kc), bp(kc * nc), want(mc * ldc), got(mc * ldc, 7.0f);
        alignas(64) static float bp_aligned[64 * 64 * 4];
        for (std::size_t p = 0; p < mc / MR; ++p)
            for (std::size_t k = 0; k < kc; ++k)
                for (std::size_t i = 0; i < MR; ++i) ap[(p * kc + k) * MR + i] = a[(p * MR + i) * kc + k];
        for (std::size_t q = 0; q < nc / NR; ++q)
            for (std::size_t k = 0; k < kc; ++k)
                for (std::size_t j = 0; j < NR; ++j) bp[(q * kc + k) * NR + j] = b[k * nc + q * NR + j];
        REQUIRE(bp.size() <= sizeof(bp_aligned) / sizeof(float));
        std::copy(bp.begin(), bp.end(), bp_aligned);  // the micro-kernel loads B's rows aligned
        const double flops = attntrace::simd::GemmMicroKernel{}(arch, kc, mc, nc, ap.data(), bp_aligned, got.data(), ldc);
        CHECK(flops == 2.0 * mc * nc * kc);
        attntrace::matmul_ref(a.data(), kc, b.data(), nc, want.data(), ldc, mc, kc, nc);
        const double tol = kGemmOrderSlack * kc * kEps * kc;
        for (std::size_t i = 0; i < mc; ++i)
            for (std::size_t j = 0; j < nc; ++j) REQUIRE(std::fabs(got[i * ldc + j] - want[i * ldc + j]) <= tol);
    });
}

TEST_CASE("SIMD GEMM on grouped-query views: Q_h·K_gᵀ and A_h·V_g, K and V KVH heads wide, match the _ref",
          "[simd][gqa]") {
    // As scores.cpp and mix.cpp call it: query head h at columns h·hs of a
    // row of NH·hs, K/V head g = h / (NH/KVH) at columns g·hs of a row of KVH·hs.
    auto* const ws = &gemm_workspace;
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t hs : {7, 16, 64})
            for (std::size_t T : {9, 65})
                for (auto [NH, KVH] : {std::pair<std::size_t, std::size_t>{6, 2}, {4, 1}}) {
                    const std::size_t ldq = NH * hs, ldkv = KVH * hs;
                    auto q = values(T * ldq, 11), k = values(T * ldkv, 12), v = values(T * ldkv, 13),
                         a = values(NH * T * T, 14);
                    std::vector<float> want(T * std::max(T, ldq)), got(want.size(), 7.0f);
                    INFO(name << " hs " << hs << " T " << T << " NH " << NH << " KVH " << KVH);
                    for (std::size_t h = 0; h < NH; ++h) {
                        const std::size_t g = h / (NH / KVH);
                        const double tol_s = kGemmOrderSlack * hs * kEps * hs, tol_z = kGemmOrderSlack * T * kEps * T;
                        attntrace::matmul_nt_ref(q.data() + h * hs, ldq, k.data() + g * hs, ldkv, want.data(), T, T, hs, T);
                        attntrace::simd::Gemm{}(arch, q.data() + h * hs, ldq, k.data() + g * hs, ldkv, true, got.data(),
                                                T, T, hs, T, ws, attntrace::simd::kGemmMeasured);
                        for (std::size_t i = 0; i < T * T; ++i) REQUIRE(std::fabs(got[i] - want[i]) <= tol_s);
                        attntrace::matmul_ref(a.data() + h * T * T, T, v.data() + g * hs, ldkv, want.data() + h * hs,
                                              ldq, T, T, hs);
                        attntrace::simd::Gemm{}(arch, a.data() + h * T * T, T, v.data() + g * hs, ldkv, false,
                                                got.data() + h * hs, ldq, T, T, hs, ws, attntrace::simd::kGemmMeasured);
                        for (std::size_t i = 0; i < T; ++i)
                            for (std::size_t e = 0; e < hs; ++e)
                                REQUIRE(std::fabs(got[i * ldq + h * hs + e] - want[i * ldq + h * hs + e]) <= tol_z);
                    }
                }
    });
}

// The register tile of each instruction set's micro-kernel (tuning.hpp).
static attntrace::simd::GemmTile tile_of(const char* name) {
    const std::string n = name;
    return n == "avx512" ? attntrace::simd::kGemmTileAvx512 : n == "avx2" ? attntrace::simd::kGemmTileAvx2
                                                                          : attntrace::simd::kGemmTileSse;
}

TEST_CASE("SIMD GEMM crosses its cache blocks (K > kc, N > nc, M > mc) like matmul_ref, for several blockings",
          "[simd]") {
    using namespace attntrace::simd;
    auto* const ws = &gemm_workspace;
    for_each_arch([&](auto arch, const char* name) {
        const GemmTile t = tile_of(name);
        const std::size_t MR = t.mr, NR = t.nr;
        // The measured fallback, the one derived from this machine's caches, and
        // small ones that put many blocks' edges in small products.
        const GemmBlocking blockings[] = {kGemmMeasured,
                                          attntrace::derive_gemm_blocking(attntrace::read_cache_info(), t, sizeof(float)),
                                          {8, MR, NR}, {16, 2 * MR, 3 * NR}, {24, 5 * MR, 2 * NR}};
        for (const GemmBlocking& blk : blockings) {
            REQUIRE(attntrace::gemm_blocking_valid(blk, t));
            const bool small = blk.mc * blk.nc < 10000;
            // (M past mc, K past kc, N of a few panels), (a few panels, K past kc, N past nc), and both when small
            std::vector<std::array<std::size_t, 3>> shapes = {{blk.mc + 5, 2 * blk.kc + 7, 3 * NR + 5},
                                                              {2 * MR + 3, blk.kc + 7, blk.nc + 9}};
            if (small) shapes.push_back({2 * blk.mc + 3, 3 * blk.kc + 1, 2 * blk.nc + 7});
            for (const auto& [M, K, N] : shapes) {
                INFO(name << " kc " << blk.kc << " mc " << blk.mc << " nc " << blk.nc << ": " << M << "x" << K << "x" << N);
                auto a = values(M * K, 4), b = values(K * N, 5);
                std::vector<float> want(M * N), got(M * N, 7.0f);
                attntrace::matmul_ref(a.data(), K, b.data(), N, want.data(), N, M, K, N);
                Gemm{}(arch, a.data(), K, b.data(), N, false, got.data(), N, M, K, N, ws, blk);
                const double tol = kGemmOrderSlack * K * kEps * K;
                double worst = 0;
                for (std::size_t i = 0; i < M * N; ++i)
                    worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
                CHECK(worst <= tol);
            }
        }
    });
}

TEST_CASE("SIMD GEMM split over threads (rows or columns) gives the same C, bit for bit, on 1, 2 and 3 threads",
          "[simd][threads]") {
    using namespace attntrace::simd;
    const int saved = omp_get_max_threads();
    auto* const ws = &gemm_workspace;
    for_each_arch([&](auto arch, const char* name) {
        const GemmTile t = tile_of(name);
        const std::size_t MR = t.mr, NR = t.nr;
        // Above kGemmParallelFlops: few row panels and many column panels (split N), many row panels and
        // few columns (split M), narrow N (A read in place), odd panel counts and partial edge tiles.
        const std::size_t shapes[][3] = {{3 * MR + 5, 300, 11 * NR + 7}, {40 * MR + 3, 200, NR + 3},
                                         {37 * MR + 8, 129, 2 * NR}, {2 * MR + 1, 1000, 5 * NR}, {50 * MR + 1, 100, 3 * NR},
                                         {301, 77, 257}};
        for (const auto& s : shapes) {
            // K grown where the tile is small, so that the product runs on the threads
            const std::size_t M = s[0], N = s[2];
            const std::size_t K = std::max<std::size_t>(s[1], static_cast<std::size_t>(kGemmParallelFlops / (2.0 * M * N)) + 1);
            REQUIRE(2.0 * M * K * N > kGemmParallelFlops);
            const std::size_t lda = K + 1, ldb = N + 3, ldbt = K + 5, ldc = N + 2;
            auto a = values(M * lda, 21), b = values(K * ldb, 22), bt = values(N * ldbt, 23);
            std::vector<float> want(M * ldc), want_nt(M * ldc);
            attntrace::matmul_ref(a.data(), lda, b.data(), ldb, want.data(), ldc, M, K, N);
            attntrace::matmul_nt_ref(a.data(), lda, bt.data(), ldbt, want_nt.data(), ldc, M, K, N);
            std::vector<float> one, one_nt;
            for (int threads : {1, 2, 3}) {
                INFO(name << " " << M << "x" << K << "x" << N << " on " << threads << " threads");
                omp_set_num_threads(threads);
                std::vector<float> got(M * ldc, 7.0f), got_nt(M * ldc, 7.0f);
                Gemm{}(arch, a.data(), lda, b.data(), ldb, false, got.data(), ldc, M, K, N, ws, kGemmMeasured);
                Gemm{}(arch, a.data(), lda, bt.data(), ldbt, true, got_nt.data(), ldc, M, K, N, ws, kGemmMeasured);
                const double tol = kGemmOrderSlack * K * kEps * K;
                double worst = 0;
                for (std::size_t i = 0; i < M; ++i)
                    for (std::size_t j = 0; j < N; ++j)
                        worst = std::max({worst, static_cast<double>(std::fabs(got[i * ldc + j] - want[i * ldc + j])),
                                          static_cast<double>(std::fabs(got_nt[i * ldc + j] - want_nt[i * ldc + j]))});
                CHECK(worst <= tol);
                if (threads == 1) {
                    one = got, one_nt = got_nt;
                } else {
                    CHECK(std::memcmp(got.data(), one.data(), got.size() * sizeof(float)) == 0);
                    CHECK(std::memcmp(got_nt.data(), one_nt.data(), got_nt.size() * sizeof(float)) == 0);
                }
            }
        }
    });
    omp_set_num_threads(saved);
}

// A GEMV's y[j] against the float64 sum: any order of K float32 products and
// sums is within K·eps·Σ|x·w| of it (each partial sum rounds once, the
// products once each); the bias adds one more rounding of |y|.
constexpr double kGemvF64Slack = 1.0;

TEST_CASE("SIMD GEMV is the GEMM's row bit for bit, within the order slack of gemv_ref and of float64, on any threads",
          "[simd][gemv]") {
    using namespace attntrace::simd;
    auto* const ws = &gemm_workspace;
    const int saved = omp_get_max_threads();
    // the measured blocking, and a small one whose kc = 96 cuts every K below into several blocks
    const GemmBlocking blockings[] = {kGemmMeasured, GemmBlocking{96, 84, 96}};
    for_each_arch([&](auto arch, const char* name) {
        const GemmTile t = tile_of(name);
        // (K, N): lane and panel edges, K across kc, N across kGemvColumns, above kGemvParallelFloats, K = 0
        const std::size_t shapes[][2] = {{1, 1},   {7, 17},          {64, 33},
                                         {385, t.nr + 1},            {2 * kGemmMeasured.kc + 5, 3 * t.nr + 1},
                                         {203, kGemvColumns + 19},   {768, 2304}, {0, 9}};
        for (const GemmBlocking blk : blockings)
            for (const auto& sh : shapes)
                for (bool transposed : {false, true})
                    for (bool with_bias : {false, true}) {
                        const std::size_t K = sh[0], N = sh[1], ldw = (transposed ? K : N) + 5;
                        const auto x = values(K + 1, 51), w = values((transposed ? N : K) * ldw + 1, 52);
                        auto bias = values(N, 53);
                        bias[0] = -0.0f;
                        const float* b = with_bias ? bias.data() : nullptr;
                        // the GEMM's row: one row of A
                        attntrace::FloatBuffer gemm(N + 1, 5.0f);
                        Gemm{}(arch, x.data(), K, w.data(), ldw, transposed, gemm.data(), N, 1, K, N, ws, blk,
                               GemmOptions{false, nullptr, b});
                        std::vector<float> ref(N);
                        attntrace::gemv_ref(x.data(), w.data(), ldw, transposed, b, ref.data(), K, N);
                        std::vector<float> one;
                        for (int threads : {1, 2, 3}) {
                            INFO(name << " K " << K << " N " << N << (transposed ? " W transposed" : "")
                                      << (with_bias ? " with a bias" : "") << " kc " << blk.kc << " on " << threads
                                      << " threads");
                            omp_set_num_threads(threads);
                            attntrace::FloatBuffer got(N + 1, 6.0f);
                            Gemv{}(arch, x.data(), w.data(), ldw, transposed, b, got.data(), K, N, ws, blk);
                            REQUIRE(got[N] == 6.0f);  // nothing past y
                            REQUIRE(std::memcmp(got.data(), gemm.data(), N * sizeof(float)) == 0);
                            for (std::size_t j = 0; j < N; ++j) {
                                double exact = 0, magnitude = 0;
                                for (std::size_t k = 0; k < K; ++k) {
                                    const double p = double(x[k]) * (transposed ? w[j * ldw + k] : w[k * ldw + j]);
                                    exact += p;
                                    magnitude += std::fabs(p);
                                }
                                if (b) exact += b[j];
                                const double order = kGemmOrderSlack * K * kEps * magnitude + kEps * std::fabs(exact);
                                REQUIRE(std::fabs(double(got[j]) - ref[j]) <= order);
                                REQUIRE(std::fabs(double(got[j]) - exact) <=
                                        kGemvF64Slack * (K * kEps * magnitude + kEps * std::fabs(exact)));
                            }
                            if (threads == 1) one.assign(got.begin(), got.end() - 1);
                            else REQUIRE(std::memcmp(got.data(), one.data(), N * sizeof(float)) == 0);
                        }
                    }
    });
    omp_set_num_threads(saved);
}

TEST_CASE("a GEMV inside a crew (a decode's threads kept awake) is the same GEMV bit for bit, job after job", "[simd][gemv]") {
    using namespace attntrace::simd;
    auto* const ws = &gemm_workspace;
    CHECK(attntrace::Crew::leading() == nullptr);
    for_each_arch([&](auto arch, const char* name) {
        const std::size_t shapes[][2] = {{768, 2304}, {203, kGemvColumns + 19}, {3072, 768}};
        for (const auto& sh : shapes)
            for (bool transposed : {false, true}) {
                const std::size_t K = sh[0], N = sh[1], ldw = (transposed ? K : N) + 3;
                const auto x = values(K, 61), w = values((transposed ? N : K) * ldw, 62), bias = values(N, 63);
                std::vector<float> alone(N);
                Gemv{}(arch, x.data(), w.data(), ldw, transposed, bias.data(), alone.data(), K, N, ws, kGemmMeasured);
                for (int threads : {2, 3}) {
                    INFO(name << " K " << K << " N " << N << (transposed ? " W transposed" : "") << " a crew of " << threads);
                    std::vector<std::vector<float>> got(5, std::vector<float>(N));
                    int size = 0;
                    attntrace::Crew::run(threads, [&] {
                        REQUIRE(attntrace::Crew::leading() != nullptr);
                        size = attntrace::Crew::leading()->size();
                        for (auto& y : got)  // one job after another, as a decode's products
                            Gemv{}(arch, x.data(), w.data(), ldw, transposed, bias.data(), y.data(), K, N, ws, kGemmMeasured);
                    });
                    CHECK(size >= 2);
                    CHECK(attntrace::Crew::leading() == nullptr);
                    for (const auto& y : got) REQUIRE(std::memcmp(y.data(), alone.data(), N * sizeof(float)) == 0);
                }
            }
    });
    // one thread: the body alone, no crew; an exception leaves the crew stopped and reaches the caller
    bool ran = false;
    attntrace::Crew::run(1, [&] { ran = attntrace::Crew::leading() == nullptr; });
    CHECK(ran);
    CHECK_THROWS_WITH(attntrace::Crew::run(2, [] { throw std::runtime_error("refused inside"); }), "refused inside");
    CHECK(attntrace::Crew::leading() == nullptr);
}

TEST_CASE("matmul, matmul_nt and linear of one row (a decode step's products) give that row of the whole product",
          "[simd][gemv]") {
    // The decode holds each step's rows to the causal run's (kDecodeTol): the one-row products run as
    // gemv, and must be the rows the whole sequence's GEMM gives. With the kernels in use (or the _ref).
    const std::size_t M = 5, K = 2 * 384 + 37, N = 3 * 32 + 5;
    const auto a = values(M * K, 61), b = values(K * N, 62), bt = values(N * K, 63), bias = values(N, 64);
    std::vector<float> whole(M * N), whole_nt(M * N), whole_linear(M * N), row(N), row_nt(N), row_linear(N);
    attntrace::matmul(a.data(), K, b.data(), N, whole.data(), N, M, K, N);
    attntrace::matmul_nt(a.data(), K, bt.data(), K, whole_nt.data(), N, M, K, N);
    attntrace::linear(a.data(), b.data(), bias.data(), whole_linear.data(), M, K, N);
    for (std::size_t i = 0; i < M; ++i) {
        INFO("row " << i << ", kernels " << attntrace::kernel_isa());
        attntrace::matmul(a.data() + i * K, K, b.data(), N, row.data(), N, 1, K, N);
        attntrace::matmul_nt(a.data() + i * K, K, bt.data(), K, row_nt.data(), N, 1, K, N);
        attntrace::linear(a.data() + i * K, b.data(), bias.data(), row_linear.data(), 1, K, N);
        CHECK(std::memcmp(row.data(), whole.data() + i * N, N * sizeof(float)) == 0);
        CHECK(std::memcmp(row_nt.data(), whole_nt.data() + i * N, N * sizeof(float)) == 0);
        CHECK(std::memcmp(row_linear.data(), whole_linear.data() + i * N, N * sizeof(float)) == 0);
    }
}

TEST_CASE("SIMD softmax matches softmax_rows_ref, masked cells exactly 0, empty rows all 0", "[simd]") {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t cols : kLengths) {
            const std::size_t rows = 4;
            auto x = values(rows * cols, static_cast<std::uint32_t>(cols));
            for (auto& v : x) v *= 30.0f;                               // logits from -30 to 30
            for (std::size_t j = 1; j < cols; j += 3) x[j] = neg_inf;   // row 0: some keys masked
            for (std::size_t j = 0; j < cols; ++j) x[cols + j] = neg_inf;  // row 1: every key masked
            x[2 * cols] = 1e30f;                                       // row 2: one huge logit
            std::vector<float> want(5 * rows * cols), got(5 * rows * cols);
            auto run = [&](std::vector<float>& o, auto&& f) {
                float* m = o.data();
                float* sh = m + rows;
                float* e = sh + rows * cols;
                float* s = e + rows * cols;
                float* out = s + rows;
                return f(x.data(), rows, cols, m, sh, e, s, out);
            };
            INFO(name << " cols " << cols);
            auto empty_ref = run(want, attntrace::softmax_rows_ref);
            auto empty = run(got, [&](auto... args) { return attntrace::simd::SoftmaxRows{}(arch, args...); });
            CHECK(empty == empty_ref);
            CHECK(empty == 1);
            for (std::size_t i = 0; i < want.size(); ++i) {
                if (std::isinf(want[i]) || want[i] == 0.0f) {
                    REQUIRE(got[i] == want[i]);  // -inf stays -inf, masked weights exactly 0
                } else {
                    REQUIRE(std::isfinite(got[i]));
                    REQUIRE(std::fabs(got[i] - want[i]) <= kMathUlps * kEps * std::max(1.0f, std::fabs(want[i])) * 2);
                }
            }
        }
    });
}

TEST_CASE("SIMD LayerNorm normalisation and affine equal the _ref twin exactly", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t C : kLengths) {
            const std::size_t rows = 3;
            auto x = values(rows * C, static_cast<std::uint32_t>(C + 100));
            for (std::size_t c = 0; c < C; ++c) x[C + c] = 0.1f;  // a constant row
            auto g = values(C, 7), b = values(C, 8);
            std::vector<float> mean(rows), var(rows), sd(rows), xhat(rows * C), out(rows * C);
            std::vector<float> mean2(rows), var2(rows), sd2(rows), xhat2(rows * C), out2(rows * C);
            attntrace::layernorm_rows_ref(x.data(), rows, C, 1e-5f, g.data(), b.data(), mean.data(), var.data(),
                                          sd.data(), xhat.data(), out.data());
            attntrace::layernorm_stats_ref(x.data(), rows, C, 1e-5f, mean2.data(), var2.data(), sd2.data());
            attntrace::simd::NormalizeRows{}(arch, x.data(), rows, C, mean2.data(), sd2.data(), g.data(), b.data(),
                                             xhat2.data(), out2.data());
            INFO(name << " C " << C);
            CHECK(xhat2 == xhat);  // same operations in the same order: bit for bit
            CHECK(out2 == out);
            for (std::size_t c = 0; c < C; ++c) CHECK(xhat2[C + c] == 0.0f);
        }
    });
}

TEST_CASE("SIMD ReLU and residual add equal their _ref twins, GELU within a few ulp", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t n : kLengths) {
            auto x = values(n, static_cast<std::uint32_t>(n + 200)), y = values(n, static_cast<std::uint32_t>(n + 300));
            for (auto& v : x) v *= 6.0f;
            std::vector<float> want(n), got(n);
            INFO(name << " n " << n);
            attntrace::relu_ref(x.data(), want.data(), n);
            attntrace::simd::Relu{}(arch, x.data(), got.data(), n);
            CHECK(got == want);
            attntrace::add_ref(x.data(), y.data(), want.data(), n);
            attntrace::simd::Add{}(arch, x.data(), y.data(), got.data(), n);
            CHECK(got == want);
            attntrace::gelu_ref(x.data(), want.data(), n);
            attntrace::simd::Gelu{}(arch, x.data(), got.data(), n);
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(std::fabs(got[i] - want[i]) <= kMathUlps * kEps * std::max(1.0f, std::fabs(want[i])));
        }
    });
}


// GELU's tanh form and SiLU go through xsimd::tanh and xsimd::exp, each within
// a few ulp (kMathUlps) of std::. For GELU the error of tanh near -1 is absolute
// (1 + tanh(u) cancels), then multiplied by x/2: bounded by kMathUlps·eps·|x|,
// not by the (tiny) result. For SwiGLU exp's relative error passes through
// 1 + e^-g and the division unchanged: kMathUlps·eps relative (absolute below 1).
// Element-wise and row passes past kParallelFloats run split over the threads
// (simd/parallel.hpp). Each element or row is computed on its own, so every
// thread count must give the single thread's bits, and the exact kernels
// their _ref's, with odd lengths (a tail in the last range only) and odd rows.
TEST_CASE("element-wise and row passes split over 2 and 3 threads give the bits of one thread and of the _ref",
          "[simd][threads]") {
    using namespace attntrace::simd;
    const int saved = omp_get_max_threads();
    const std::size_t n = kParallelFloats + 37, rows = 613, C = 437;  // rows * C = 267,881 > kParallelFloats
    REQUIRE(rows * C > kParallelFloats);
    auto x = values(n, 31), u = values(n, 32), m = values(rows * C, 33), g = values(C, 34), bias = values(C, 35);
    for (auto& v : x) v *= 6.0f;
    m[5 * C + 3] = -0.0f;
    std::vector<float> sd(rows);
    for (std::size_t i = 0; i < rows; ++i) sd[i] = i == 7 ? 0.0f : 0.5f + static_cast<float>(i % 5);  // row 7: zero
    // every pass's outputs, one vector each, for the thread count in force
    auto outputs = [&](auto arch) {
        std::vector<std::vector<float>> out;
        auto next = [&](std::size_t size) -> float* { return out.emplace_back(size, 7.0f).data(); };
        Add{}(arch, x.data(), u.data(), next(n), n);
        Relu{}(arch, x.data(), next(n), n);
        Gelu{}(arch, x.data(), next(n), n);
        GeluTanh{}(arch, x.data(), next(n), n);
        Swiglu{}(arch, x.data(), u.data(), next(n), n);
        float* mean = next(rows);
        RowMean{}(arch, m.data(), rows, C, mean);
        RowVar{}(arch, m.data(), mean, rows, C, next(rows), 0);
        RowMeanSquare{}(arch, m.data(), rows, C, next(rows));
        NormalizeRows{}(arch, m.data(), rows, C, mean, sd.data(), g.data(), bias.data(), next(rows * C), next(rows * C));
        DivideRows{}(arch, m.data(), sd.data(), rows, C, next(rows * C));
        Gain{}(arch, m.data(), g.data(), rows, C, next(rows * C));
        for (std::size_t at : {std::size_t{0}, n / 2 + 5, n - 1}) {  // a NaN in the first range, the second, the tail
            std::vector<float> y = x;
            y[at] = -std::numeric_limits<float>::quiet_NaN();
            const attntrace::FloatBitsMax got = BitsMax{}(arch, y.data(), n), want = attntrace::float_bits_max_ref(y.data(), n);
            CHECK(got.magnitude == want.magnitude);
            CHECK(got.raw == want.raw);
        }
        return out;
    };
    for_each_arch([&](auto arch, const char* name) {
        omp_set_num_threads(1);
        const auto one = outputs(arch);
        // the exact kernels against their _ref twins
        std::vector<float> want(n);
        attntrace::add_ref(x.data(), u.data(), want.data(), n);
        CHECK(one[0] == want);
        attntrace::relu_ref(x.data(), want.data(), n);
        CHECK(one[1] == want);
        std::vector<float> mean(rows), var(rows), ms(rows), xhat(rows * C), aff(rows * C), div(rows * C), gain(rows * C);
        attntrace::row_mean_ref(m.data(), rows, C, mean.data());
        attntrace::row_var_ref(m.data(), mean.data(), rows, C, var.data(), 0);
        attntrace::row_mean_square_ref(m.data(), rows, C, ms.data());
        CHECK(one[5] == mean);
        CHECK(one[6] == var);
        CHECK(one[7] == ms);
        attntrace::divide_rows_ref(m.data(), sd.data(), rows, C, div.data());
        CHECK(one[10] == div);
        attntrace::gain_ref(m.data(), g.data(), rows, C, gain.data());
        CHECK(one[11] == gain);
        for (int threads : {2, 3}) {
            INFO(name << " on " << threads << " threads");
            omp_set_num_threads(threads);
            const auto got = outputs(arch);
            REQUIRE(got.size() == one.size());
            for (std::size_t k = 0; k < got.size(); ++k) {
                INFO("output " << k);
                CHECK(std::memcmp(got[k].data(), one[k].data(), got[k].size() * sizeof(float)) == 0);
            }
        }
    });
    omp_set_num_threads(saved);
}

TEST_CASE("SIMD LayerNorm and RMSNorm statistics equal row_mean_ref, row_var_ref and row_mean_square_ref exactly",
          "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        // rows around the 8 rows summed side by side (1, 7, 8, 9, 19) and C around the lane edges
        for (std::size_t rows : {1, 7, 8, 9, 19})
            for (std::size_t C : lane_lengths(name)) {
                auto x = values(rows * C, static_cast<std::uint32_t>(rows * 1000 + C));
                for (std::size_t i = 0; i < x.size(); ++i) x[i] = x[i] * 40.0f + (i % 3 == 0 ? 1e3f : 0.0f);  // terms of varied size
                std::vector<float> want(rows), got(rows, 7.0f), mean(rows), want_var(rows), got_var(rows, 7.0f);
                INFO(name << " rows " << rows << " C " << C);
                attntrace::row_mean_ref(x.data(), rows, C, want.data());
                attntrace::simd::RowMean{}(arch, x.data(), rows, C, got.data());
                CHECK(got == want);  // each row's double sum in the same order: bit for bit
                for (std::size_t ddof : {0, 1}) {
                    if (C <= ddof) continue;
                    attntrace::row_var_ref(x.data(), want.data(), rows, C, want_var.data(), ddof);
                    attntrace::simd::RowVar{}(arch, x.data(), want.data(), rows, C, got_var.data(), ddof);
                    CHECK(got_var == want_var);
                }
                attntrace::row_mean_square_ref(x.data(), rows, C, want.data());
                attntrace::simd::RowMeanSquare{}(arch, x.data(), rows, C, got.data());
                CHECK(got == want);
            }
    });
}

TEST_CASE("SIMD GELU (tanh form) and SwiGLU within a few ulp of their _ref twins at every lane edge", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t n : lane_lengths(name)) {
            auto x = values(n, static_cast<std::uint32_t>(n + 400)), u = values(n, static_cast<std::uint32_t>(n + 500));
            for (auto& v : x) v *= 12.0f;  // [-12, 12]: tanh and the sigmoid saturate at both ends
            std::vector<float> want(n), got(n, 7.0f);
            INFO(name << " n " << n);
            attntrace::gelu_tanh_ref(x.data(), want.data(), n);
            attntrace::simd::GeluTanh{}(arch, x.data(), got.data(), n);
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(std::fabs(got[i] - want[i]) <= kMathUlps * kEps * std::max(1.0f, std::fabs(x[i])));
            std::fill(got.begin(), got.end(), 7.0f);
            attntrace::swiglu_ref(x.data(), u.data(), want.data(), n);
            attntrace::simd::Swiglu{}(arch, x.data(), u.data(), got.data(), n);
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(std::fabs(got[i] - want[i]) <= kMathUlps * kEps * std::max(1.0f, std::fabs(want[i])));
            // The tail goes through the same vector code: an element's value does not depend on its place.
            if (n > 1) {
                std::vector<float> one(1);
                attntrace::simd::GeluTanh{}(arch, x.data() + n - 1, one.data(), 1);
                attntrace::simd::GeluTanh{}(arch, x.data(), got.data(), n);
                CHECK(one[0] == got[n - 1]);
            }
        }
    });
}

TEST_CASE("SIMD RMSNorm passes (x / σ per row, γ ⊙ x̂) equal divide_rows_ref and gain_ref bit for bit", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t C : lane_lengths(name)) {
            const std::size_t rows = 3;
            auto x = values(rows * C, static_cast<std::uint32_t>(C + 600)), g = values(C, 17);
            std::vector<float> sd = {0.75f, 0.0f, 3.1f};  // row 1: a zero divisor gives 0, as the _ref
            std::vector<float> want(rows * C), got(rows * C, 7.0f);
            INFO(name << " C " << C);
            attntrace::divide_rows_ref(x.data(), sd.data(), rows, C, want.data());
            attntrace::simd::DivideRows{}(arch, x.data(), sd.data(), rows, C, got.data());
            CHECK(got == want);
            attntrace::gain_ref(x.data(), g.data(), rows, C, want.data());
            attntrace::simd::Gain{}(arch, x.data(), g.data(), rows, C, got.data());
            CHECK(got == want);
        }
    });
}

TEST_CASE("SIMD DyT tanh(alpha x) equals dyt_tanh_ref bit for bit at every lane edge", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t n : lane_lengths(name)) {
            auto x = values(n, static_cast<std::uint32_t>(n + 700));
            for (auto& v : x) v *= 12.0f;  // [-12, 12]: tanh saturates at both ends
            for (float alpha : {0.5f, 1.7f, -0.3f}) {
                std::vector<float> want(n), got(n, 7.0f);
                INFO(name << " n " << n << " alpha " << alpha);
                attntrace::dyt_tanh_ref(x.data(), alpha, want.data(), n);
                attntrace::simd::DytTanh{}(arch, x.data(), alpha, got.data(), n);
                CHECK(got == want);
            }
        }
    });
}

TEST_CASE("SIMD RoPE rotation equals rope_rows bit for bit, both layouts, heads around the lane edges", "[simd]") {
    for_each_arch([&](auto arch, const char* name) {
        const std::size_t W = lanes_of(name);
        // hs is even (pairs): 2, the even lengths next to W and 2W + 3, and 128
        for (std::size_t hs : {std::size_t{2}, W - W % 2, W + 2, 2 * W + 4, std::size_t{128}})
            for (bool interleaved : {false, true})
            for (std::size_t rotary : {hs, hs / 2 - hs / 2 % 2}) {  // every dimension, or about half (GPT-NeoX)
                if (rotary == 0) continue;
                const std::size_t rows = 5, heads = 3, pos0 = 7;
                const double base = 10000.0;
                auto x = values(rows * heads * hs, static_cast<std::uint32_t>(hs + 700));
                std::vector<float> want(x.size()), got(x.size(), 7.0f), cos_d(hs), sin_d(hs);
                std::vector<int> partner(hs);
                INFO(name << " hs " << hs << " rotary " << rotary << (interleaved ? " interleaved" : " half"));
                attntrace::rope_rows(x.data(), want.data(), rows, heads, hs, rotary, pos0, base, interleaved);
                for (std::size_t r = 0; r < rows; ++r) {
                    attntrace::rope_row_tables(pos0 + r, hs, rotary, base, interleaved, cos_d.data(), sin_d.data(),
                                               partner.data());
                    attntrace::simd::RotatePairs{}(arch, x.data() + r * heads * hs, got.data() + r * heads * hs, heads,
                                                   hs, cos_d.data(), sin_d.data(), partner.data());
                }
                CHECK(got == want);
            }
    });
}

// linear() adds the bias as the GEMM stores its last K block's tiles (GemmOptions::bias):
// C + bias after C's whole sum, the order of the product followed by add_bias_rows_ref.
TEST_CASE("SIMD GEMM with a bias gives the bits of the product then add_bias_rows_ref, on any blocks and threads",
          "[simd][gemm]") {
    using attntrace::simd::Gemm;
    using attntrace::simd::GemmOptions;
    using attntrace::simd::kGemmMeasured;
    auto* const ws = &gemm_workspace;
    const int saved = omp_get_max_threads();
    for_each_arch([&](auto arch, const char* name) {
        const attntrace::simd::GemmTile t = tile_of(name);
        // partial tiles, several K blocks, a product large enough to split over threads, K = 0
        const std::size_t shapes[][3] = {{30, 19, 70}, {t.mr + 1, 2 * kGemmMeasured.kc + 5, 3 * t.nr + 1},
                                         {301, 300, 257}, {5, 0, 9}};
        for (const auto& sh : shapes) {
            const std::size_t M = sh[0], K = sh[1], N = sh[2], lda = K + 3, ldb = N + 5;
            const std::size_t ldc = (N + 16) / 16 * 16;  // aligned rows: the streamed stores run too
            const auto a = values(M * lda + 1, 41), b = values(K * ldb + 1, 42);
            auto bias = values(N, 43);
            bias[0] = -0.0f;  // 0 + -0 is +0: the sum, then the bias, as the pass would
            for (int threads : {1, 2, 3}) {
                INFO(name << " M " << M << " K " << K << " N " << N << " on " << threads << " threads");
                omp_set_num_threads(threads);
                attntrace::FloatBuffer want(M * ldc, 5.0f), got(M * ldc, 6.0f), streamed(M * ldc, 7.0f);
                Gemm{}(arch, a.data(), lda, b.data(), ldb, false, want.data(), ldc, M, K, N, ws, kGemmMeasured);
                attntrace::add_bias_rows_ref(want.data(), ldc, bias.data(), M, N);
                Gemm{}(arch, a.data(), lda, b.data(), ldb, false, got.data(), ldc, M, K, N, ws, kGemmMeasured,
                       GemmOptions{false, nullptr, bias.data()});
                Gemm{}(arch, a.data(), lda, b.data(), ldb, false, streamed.data(), ldc, M, K, N, ws, kGemmMeasured,
                       GemmOptions{true, nullptr, bias.data()});
                for (std::size_t i = 0; i < M; ++i) {
                    REQUIRE(std::memcmp(&got[i * ldc], &want[i * ldc], N * sizeof(float)) == 0);
                    REQUIRE(std::memcmp(&streamed[i * ldc], &want[i * ldc], N * sizeof(float)) == 0);
                    for (std::size_t j = N; j < ldc; ++j) REQUIRE((got[i * ldc + j] == 6.0f && streamed[i * ldc + j] == 7.0f));
                }
            }
        }
    });
    omp_set_num_threads(saved);
}

TEST_CASE("SIMD GEMM with B packed ahead, or C streamed, gives the plain product's bits on any rows of A",
          "[simd][gemm][packed]") {
    // The fused attention (softmax.cpp) multiplies row blocks of the weights by V,
    // packed once per head, and row blocks of Q by Kᵀ: each block's rows must be
    // the whole product's rows bit for bit. K = 2048 runs as several kc blocks.
    using attntrace::simd::Gemm;
    using attntrace::simd::GemmOptions;
    using attntrace::simd::GemmPackB;
    using attntrace::simd::kGemmMeasured;
    auto* const ws = &gemm_workspace;
    for_each_arch([&](auto arch, const char* name) {
        struct Shape {
            std::size_t M, K, N;
            bool nt;
        };
        for (const Shape sh : {Shape{77, 2048, 64, false}, Shape{45, 64, 333, true}, Shape{30, 19, 70, false},
                               Shape{29, 64, 2048, true}}) {
            const std::size_t M = sh.M, K = sh.K, N = sh.N, lda = K + 3, ldb = (sh.nt ? K : N) + 5;
            // C rows aligned to every register width for the streamed stores, one row of padding
            const std::size_t ldc = (N + 16) / 16 * 16;
            INFO(name << " M " << M << " K " << K << " N " << N << (sh.nt ? " b transposed" : ""));
            const auto a = values(M * lda, 31), b = values((sh.nt ? N : K) * ldb, 32);
            attntrace::FloatBuffer whole(M * ldc, 5.0f), rows(M * ldc, 6.0f), streamed(M * ldc, 7.0f);
            Gemm{}(arch, a.data(), lda, b.data(), ldb, sh.nt, whole.data(), ldc, M, K, N, ws, kGemmMeasured);
            // 64-byte aligned, as GemmPackB requires
            std::vector<float> bp_buffer(attntrace::gemm_packed_b_floats(K, N) + 17, 9.0f);
            float* bp = bp_buffer.data() + (16 - reinterpret_cast<std::uintptr_t>(bp_buffer.data()) / sizeof(float) % 16) % 16;
            GemmPackB{}(arch, b.data(), ldb, sh.nt, K, N, kGemmMeasured, bp);
            REQUIRE(bp[attntrace::gemm_packed_b_floats(K, N)] == 9.0f);  // within gemm_packed_b_floats
            // rows in blocks of 13 (no multiple of any MR), then the streamed product
            for (std::size_t r0 = 0; r0 < M; r0 += 13)
                Gemm{}(arch, a.data() + r0 * lda, lda, nullptr, 0, false, rows.data() + r0 * ldc, ldc,
                       std::min<std::size_t>(13, M - r0), K, N, ws, kGemmMeasured, GemmOptions{false, bp});
            Gemm{}(arch, a.data(), lda, b.data(), ldb, sh.nt, streamed.data(), ldc, M, K, N, ws, kGemmMeasured,
                   GemmOptions{true, nullptr});
            // all rows at once from the packed B: threads may split C by columns (PackedB's col0)
            attntrace::FloatBuffer all_rows(M * ldc, 8.0f);
            Gemm{}(arch, a.data(), lda, nullptr, 0, false, all_rows.data(), ldc, M, K, N, ws, kGemmMeasured,
                   GemmOptions{false, bp});
            for (std::size_t i = 0; i < M; ++i)
                for (std::size_t j = 0; j < N; ++j) REQUIRE(all_rows[i * ldc + j] == whole[i * ldc + j]);
            for (std::size_t i = 0; i < M; ++i) {
                for (std::size_t j = 0; j < N; ++j) {
                    REQUIRE(std::memcmp(&rows[i * ldc + j], &whole[i * ldc + j], sizeof(float)) == 0);
                    REQUIRE(std::memcmp(&streamed[i * ldc + j], &whole[i * ldc + j], sizeof(float)) == 0);
                }
                for (std::size_t j = N; j < ldc; ++j)  // the padding columns are not written
                    REQUIRE((whole[i * ldc + j] == 5.0f && rows[i * ldc + j] == 6.0f && streamed[i * ldc + j] == 7.0f));
            }
        }
    });
}

TEST_CASE("BitsMax finds float_bits_max_ref's maxima with an infinity, a NaN or -0 in any lane or the tail", "[simd]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t n : lane_lengths(name))
            for (float special : {inf, -inf, nan, -nan, -0.0f, 3e38f, -1e-40f})
                for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
                    INFO(name << " n " << n << " special " << special << " at " << at);
                    auto x = values(n, 43);
                    const auto plain = attntrace::simd::BitsMax{}(arch, x.data(), n);
                    const auto plain_ref = attntrace::float_bits_max_ref(x.data(), n);
                    CHECK((plain.magnitude == plain_ref.magnitude && plain.raw == plain_ref.raw));
                    x[at] = special;
                    const auto got = attntrace::simd::BitsMax{}(arch, x.data(), n);
                    const auto want = attntrace::float_bits_max_ref(x.data(), n);
                    REQUIRE(got.magnitude == want.magnitude);
                    REQUIRE(got.raw == want.raw);
                    if (std::isnan(special) || std::isinf(special)) REQUIRE(got.magnitude >= 0x7f800000);
                    else REQUIRE(got.magnitude < 0x7f800000);
                }
    });
}

TEST_CASE("MapFoldRow folds a map's row as map_fold_row_ref: every pooling width, mask and special value", "[simd]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for_each_arch([&](auto arch, const char* name) {
        const std::size_t W = lanes_of(name);
        for (std::size_t cols : lane_lengths(name))
            for (std::size_t f : {std::size_t{1}, W - 1, W, 2 * W + 1, cols})
                for (int mask_kind = 0; mask_kind < 4; ++mask_kind)
                    for (float special : {-inf, 0.0f, inf, nan, 5.0f}) {
                        INFO(name << " cols " << cols << " f " << f << " mask " << mask_kind << " special " << special);
                        auto x = values(cols, 47);
                        for (std::size_t c = 0; c < cols; c += 3) x[c] = special;  // every third cell, across lanes and tails
                        const auto m = values(cols, 53);
                        std::vector<float> blocks(cols);
                        const float blocked = mask_kind == 3 ? -inf : 0.0f;
                        for (std::size_t c = 0; c < cols; ++c) blocks[c] = m[c] < 0 ? blocked : 1.0f;
                        attntrace::MapMask mask;
                        mask.zero = mask_kind == 1;
                        if (mask_kind >= 2) mask.blocks = blocks.data(), mask.blocked_value = blocked;
                        const std::size_t P = (cols + f - 1) / f;
                        std::vector<attntrace::MapFold> want(P), got(P);
                        // twice: a fold adds to what a pooled cell has seen of earlier rows
                        for (int row = 0; row < 2; ++row) {
                            attntrace::map_fold_row_ref(x.data(), cols, f, mask, want.data());
                            attntrace::simd::MapFoldRow{}(arch, x.data(), cols, f, mask, got.data());
                        }
                        for (std::size_t p = 0; p < P; ++p) {
                            REQUIRE(got[p].n == want[p].n);
                            REQUIRE(std::memcmp(&got[p].best, &want[p].best, sizeof(float)) == 0);
                            REQUIRE(std::memcmp(&got[p].lo, &want[p].lo, sizeof(float)) == 0);
                            REQUIRE(std::memcmp(&got[p].hi, &want[p].hi, sizeof(float)) == 0);
                            double magnitude = 0;  // Σ|x| of the cells let through, both rows
                            for (std::size_t c = p * f; c < std::min(cols, p * f + f); ++c)
                                if (std::isfinite(x[c])) magnitude += 2 * std::fabs(x[c]);
                            const double per_lane = 2.0 * static_cast<double>((f + W - 1) / W);
                            if (std::isnan(want[p].sum)) REQUIRE(std::isnan(got[p].sum));
                            else if (std::isinf(want[p].sum)) REQUIRE(got[p].sum == want[p].sum);
                            else REQUIRE(std::fabs(got[p].sum - want[p].sum) <= attntrace::kMapFoldSumTol * per_lane * magnitude);
                        }
                        // the twin itself: a cell the mask blocks is never counted, a NaN never the max
                        std::size_t through = 0;
                        for (std::size_t c = 0; c < cols; ++c)
                            through += !(x[c] == -inf || (mask.zero && x[c] == 0.0f) || (mask.blocks && blocks[c] == blocked));
                        std::size_t counted = 0;
                        for (const auto& fd : want) {
                            counted += fd.n;
                            REQUIRE(!std::isnan(fd.best));
                        }
                        REQUIRE(counted == 2 * through);
                    }
    });
}

TEST_CASE("CopyStreamed copies as copy_ref at every lane edge and destination alignment", "[simd][stream]") {
    for_each_arch([&](auto arch, const char* name) {
        for (std::size_t n : lane_lengths(name))
            for (std::size_t shift : {0, 1, 5}) {  // y's first float 0, 1 and 5 floats past a 64-byte boundary
                INFO(name << " n " << n << " shift " << shift);
                const auto x = values(n, 41);
                attntrace::FloatBuffer want(n + 32, -3.0f), got(n + 32, -3.0f);
                const std::size_t off = (16 - reinterpret_cast<std::uintptr_t>(got.data()) / sizeof(float) % 16) % 16 + shift;
                attntrace::copy_ref(x.data(), want.data() + off, n);
                attntrace::simd::CopyStreamed{}(arch, x.data(), got.data() + off, n);
                REQUIRE(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);  // nothing past n either
            }
    });
}

TEST_CASE("outputs past kStreamBytes (non-temporal stores) equal the _ref twins", "[simd][stream]") {
    // 64 MiB and more: attention steps at n >= 2048. Tensor buffers that big
    // are 2 MiB-aligned, as the pipeline's are; one view starts 1 float in,
    // so the unaligned head of the streamed loop runs too.
    const std::size_t n = attntrace::simd::kStreamBytes / sizeof(float) + 37;
    attntrace::Tensor x = attntrace::Tensor::uninitialized({n + 1}), want = attntrace::Tensor::uninitialized({n + 1}),
                      got = attntrace::Tensor::uninitialized({n + 1});
    auto v = values(n + 1, 9);
    std::copy(v.begin(), v.end(), x.data.begin());
    for_each_arch([&](auto arch, const char* name) {
        INFO(name);
        for (std::size_t off : {0, 1}) {
            attntrace::scale_div_ref(x.ptr() + off, 8.0f, want.ptr() + off, n);
            attntrace::simd::ScaleDiv{}(arch, x.ptr() + off, 8.0f, got.ptr() + off, n);
            REQUIRE(std::equal(want.data.begin() + off, want.data.begin() + off + n, got.data.begin() + off));
        }
        const std::size_t plane = n / 2 - 3;  // two heads
        std::vector<float> mask(values(plane, 10));
        for (std::size_t i = 5; i < plane; i += 7) mask[i] = -std::numeric_limits<float>::infinity();
        attntrace::add_mask_heads_ref(x.ptr(), mask.data(), want.ptr(), 2, plane);
        attntrace::simd::AddMaskHeads{}(arch, x.ptr(), mask.data(), got.ptr(), 2, plane);
        REQUIRE(std::equal(want.data.begin(), want.data.begin() + 2 * plane, got.data.begin()));
    });
    // Softmax: rows x cols past the threshold, rows aligned (cols a multiple of 16).
    const std::size_t rows = 4096 + 3, cols = 4096;
    attntrace::Tensor in = attntrace::Tensor::uninitialized({rows, cols});
    auto w = values(rows * cols, 11);
    for (std::size_t i = 0; i < w.size(); ++i) in.data[i] = 20.0f * w[i];
    auto buffers = [&] {
        std::vector<attntrace::Tensor> b;
        for (int k = 0; k < 3; ++k) b.push_back(attntrace::Tensor::uninitialized({rows, cols}));  // shifted, e, out
        b.push_back(attntrace::Tensor::uninitialized({rows}));                                    // m
        b.push_back(attntrace::Tensor::uninitialized({rows}));                                    // s
        return b;
    };
    auto ref = buffers();
    attntrace::softmax_rows_ref(in.ptr(), rows, cols, ref[3].ptr(), ref[0].ptr(), ref[1].ptr(), ref[4].ptr(),
                                ref[2].ptr());
    for_each_arch([&](auto arch, const char* name) {
        INFO(name);
        auto got_b = buffers();
        attntrace::simd::SoftmaxRows{}(arch, in.ptr(), rows, cols, got_b[3].ptr(), got_b[0].ptr(), got_b[1].ptr(),
                                       got_b[4].ptr(), got_b[2].ptr());
        for (int k : {0, 2}) {  // the streamed outputs: shifted scores exactly, weights within exp's ulps
            double worst = 0;
            for (std::size_t i = 0; i < rows * cols; ++i)
                worst = std::max(worst, double(std::fabs(got_b[k].data[i] - ref[k].data[i])));
            CHECK(worst <= (k == 0 ? 0.0 : kMathUlps * kEps * 2));
        }
    });
}

// A trace derives the shifted scores and exps from the row max (trace/derived.hpp): the in-place
// softmax and the row exps must give what SoftmaxRows records, bit for bit, at every lane edge.
TEST_CASE("the in-place softmax and the row exps equal SoftmaxRows' m, s, weights and exps bit for bit", "[simd][derived]") {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    auto same_bits = [](const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; };
    auto inputs = [&](std::size_t rows, std::size_t cols) {
        auto x = values(rows * cols, static_cast<std::uint32_t>(cols + 11));
        for (auto& v : x) v *= 30.0f;
        for (std::size_t j = 1; j < cols; j += 3) x[j] = neg_inf;      // row 0: some keys masked
        for (std::size_t j = 0; j < cols; ++j) x[cols + j] = neg_inf;  // row 1: every key masked
        x[2 * cols] = 1e30f;                                            // row 2: one huge logit
        return x;
    };
    // The scalar twins first: softmax_rows_inplace_ref and exp_rows_ref against softmax_rows_ref.
    for (std::size_t cols : kLengths) {
        const std::size_t rows = 4;
        auto x = inputs(rows, cols);
        std::vector<float> m(rows), sh(rows * cols), e(rows * cols), s(rows), out(rows * cols);
        attntrace::softmax_rows_ref(x.data(), rows, cols, m.data(), sh.data(), e.data(), s.data(), out.data());
        std::vector<float> y = x, m2(rows), s2(rows), e2(rows * cols);
        CHECK(attntrace::softmax_rows_inplace_ref(y.data(), rows, cols, m2.data(), s2.data()) == 1);
        attntrace::exp_rows_ref(sh.data(), e2.data(), rows, cols);
        INFO("ref cols " << cols);
        CHECK(same_bits(m.data(), m2.data(), rows));
        CHECK(same_bits(s.data(), s2.data(), rows));
        CHECK(same_bits(out.data(), y.data(), rows * cols));
        CHECK(same_bits(e.data(), e2.data(), rows * cols));
    }
    for_each_arch([&](auto arch, const char* name) {
        std::vector<std::size_t> lengths(std::begin(kLengths), std::end(kLengths));
        for (std::size_t n : lane_lengths(name)) lengths.push_back(n);
        for (std::size_t cols : lengths) {
            const std::size_t rows = 4;
            auto x = inputs(rows, cols);
            std::vector<float> m(rows), sh(rows * cols), e(rows * cols), s(rows), out(rows * cols);
            attntrace::simd::SoftmaxRows{}(arch, x.data(), rows, cols, m.data(), sh.data(), e.data(), s.data(), out.data());
            std::vector<float> y = x, m2(rows), s2(rows), e2(rows * cols, 7.0f);
            CHECK(attntrace::simd::SoftmaxRowsInPlace{}(arch, y.data(), rows, cols, m2.data(), s2.data()) == 1);
            attntrace::simd::ExpRows{}(arch, sh.data(), e2.data(), rows, cols);
            INFO(name << " cols " << cols);
            CHECK(same_bits(m.data(), m2.data(), rows));
            CHECK(same_bits(s.data(), s2.data(), rows));
            CHECK(same_bits(out.data(), y.data(), rows * cols));
            CHECK(same_bits(e.data(), e2.data(), rows * cols));  // exp(-inf) of a blocked row: +0, as SoftmaxRows writes
        }
    });
}

namespace {

// 16-bit weights of a checkpoint: random bits of finite values in [-2, 2]
// for bfloat16 and half, and every `special`-th one an edge of the format
// (±0, subnormals, the largest finite, ±inf, quiet and signalling NaN).
std::vector<std::uint16_t> stored_bits(std::size_t n, attntrace::StoredType type, std::uint32_t seed, std::size_t special) {
    const bool bf16 = type == attntrace::StoredType::bf16;
    const std::uint16_t edges_bf16[] = {0x0000, 0x8000, 0x0001, 0x807f, 0x7f7f, 0x7f80, 0xff80, 0x7fc1, 0x7f81};
    const std::uint16_t edges_half[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0x7c00, 0xfc00, 0x7e01, 0x7c01};
    const auto v = values(n, seed);
    std::vector<std::uint16_t> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float x = 2.0f * v[i];
        if (bf16) {
            std::uint32_t b;
            std::memcpy(&b, &x, 4);
            out[i] = static_cast<std::uint16_t>(b >> 16);
        } else {
            // a half of about x: sign, exponent 13..16, mantissa from x's bits
            std::uint32_t b;
            std::memcpy(&b, &x, 4);
            out[i] = static_cast<std::uint16_t>((b >> 16 & 0x8000u) | ((13u + (b >> 21) % 4u) << 10) | (b >> 5 & 0x3ffu));
        }
        if (special && i % special == special - 1) out[i] = (bf16 ? edges_bf16 : edges_half)[(i / special) % 9];
    }
    return out;
}

// The stored matrix widened value by value (the conversion the loader ran before packing).
std::vector<float> widened(const std::vector<std::uint16_t>& bits, attntrace::StoredType type) {
    std::vector<float> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i)
        out[i] = type == attntrace::StoredType::bf16 ? attntrace::bf16_to_float_ref(bits[i])
                                                     : attntrace::half_to_float_ref(bits[i]);
    return out;
}

}  // namespace

TEST_CASE("bf16_to_float_ref and half_to_float_ref widen exactly: edges, subnormals, NaN bits kept", "[simd][stored]") {
    using attntrace::bf16_to_float_ref;
    using attntrace::half_to_float_ref;
    auto bits = [](float f) {
        std::uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
    };
    CHECK(bf16_to_float_ref(0x3f80) == 1.0f);
    CHECK(bits(bf16_to_float_ref(0x7f81)) == 0x7f810000u);  // a signalling NaN stays one
    CHECK(half_to_float_ref(0x3c00) == 1.0f);
    CHECK(half_to_float_ref(0x0001) == std::ldexp(1.0f, -24));  // the least subnormal half
    CHECK(half_to_float_ref(0x03ff) == std::ldexp(1023.0f, -24));
    CHECK(half_to_float_ref(0x7bff) == 65504.0f);
    CHECK(bits(half_to_float_ref(0x7c01)) == 0x7f802000u);
    CHECK(bits(half_to_float_ref(0xfc00)) == 0xff800000u);
}

TEST_CASE("the GEMM's packing widens bf16 and f16 as it packs: convert-then-pack's floats bit for bit, ragged edges",
          "[simd][gemm][stored]") {
    using attntrace::StoredMatrix;
    using attntrace::StoredType;
    using attntrace::simd::GemmPackB;
    using attntrace::simd::GemmPackBStored;
    using attntrace::simd::kGemmMeasured;
    for_each_arch([&](auto arch, const char* name) {
        for (const StoredType type : {StoredType::bf16, StoredType::f16})
            for (const bool nt : {false, true})
                // K past kc (several K blocks) and not a multiple of 16; N around NR = 2W (16, 32, 8)
                for (const auto& [K, N] : std::vector<std::pair<std::size_t, std::size_t>>{
                         {1, 1}, {17, 5}, {31, 33}, {64, 47}, {700, 70}, {33, 100}}) {
                    const std::size_t ld = (nt ? K : N) + 3;
                    INFO(name << (type == StoredType::bf16 ? " bf16" : " f16") << (nt ? " transposed" : "") << " K " << K
                              << " N " << N);
                    const auto bits = stored_bits((nt ? N : K) * ld, type, static_cast<std::uint32_t>(K + N), 7);
                    const auto f = widened(bits, type);
                    const std::size_t floats = attntrace::gemm_packed_b_floats(K, N);
                    std::vector<float> want_buffer(floats + 32, 9.0f), got_buffer(floats + 32, 9.0f);
                    auto aligned = [](std::vector<float>& v) {
                        return v.data() + (16 - reinterpret_cast<std::uintptr_t>(v.data()) / sizeof(float) % 16) % 16;
                    };
                    float* want = aligned(want_buffer);
                    float* got = aligned(got_buffer);
                    GemmPackB{}(arch, f.data(), ld, nt, K, N, kGemmMeasured, want);
                    GemmPackBStored{}(arch, bits.data(), type, ld, nt, K, N, kGemmMeasured, got);
                    REQUIRE(std::memcmp(want, got, floats * sizeof(float)) == 0);
                    // the scalar twins: pack_b_stored_ref is pack_b_ref of the widened matrix
                    std::vector<float> ref_want(K * N), ref_got(K * N);
                    attntrace::pack_b_ref(f.data(), ld, nt, K, N, ref_want.data());
                    attntrace::pack_b_stored_ref(StoredMatrix{bits.data(), type, ld, nt}, K, N, ref_got.data());
                    REQUIRE(std::memcmp(ref_want.data(), ref_got.data(), K * N * sizeof(float)) == 0);
                }
    });
}

TEST_CASE("the GEMM reading bf16 or f16 B flags a NaN or an infinity as it packs it, on every ISA and on 2 threads",
          "[simd][gemm][stored]") {
    using attntrace::StoredType;
    using attntrace::simd::Gemm;
    using attntrace::simd::GemmOptions;
    using attntrace::simd::kGemmMeasured;
    auto* const ws = &gemm_workspace;
    const int saved = omp_get_max_threads();
    for_each_arch([&](auto arch, const char* name) {
        for (const StoredType type : {StoredType::bf16, StoredType::f16})
            for (const bool nt : {false, true})
                for (const int threads : {1, 2}) {
                    omp_set_num_threads(threads);
                    const std::size_t M = 40, K = 700, N = 300, ld = nt ? K : N;  // several K blocks and threads' parts
                    const std::uint16_t nan = type == StoredType::bf16 ? 0x7fc0 : 0x7e00;
                    const std::uint16_t inf = type == StoredType::bf16 ? 0xff80 : 0xfc00;
                    const auto a = values(M * K, 51);
                    std::vector<float> c(M * N);
                    // clean; then one special value at a corner, past the first K block, in the last column
                    for (const std::size_t at : {std::size_t{0}, std::size_t{1}, (K - 1) * N + N - 1, 500 * N + 299}) {
                        auto bits = stored_bits(K * N, type, 52, 0);
                        const std::size_t k = at / N, j = at % N;
                        if (at > 0) bits[nt ? j * K + k : k * N + j] = k % 2 ? nan : inf;
                        INFO(name << (type == StoredType::bf16 ? " bf16" : " f16") << (nt ? " transposed" : "")
                                  << " threads " << threads << " at " << at);
                        bool not_finite = false;
                        Gemm{}(arch, a.data(), K, nullptr, ld, nt, c.data(), N, M, K, N, ws, kGemmMeasured,
                               GemmOptions{false, nullptr, nullptr, bits.data(), type, &not_finite});
                        CHECK(not_finite == (at > 0));
                        const attntrace::StoredMatrix w{bits.data(), type, ld, nt};
                        std::vector<float> ref(M * N);
                        CHECK(attntrace::linear_stored_ref(a.data(), w, nullptr, ref.data(), M, K, N) == (at == 0));
                    }
                }
    });
    omp_set_num_threads(saved);
}

TEST_CASE("linear_stored on bf16 and f16 weights gives linear's bits on the widened weights, any rows, threads and layout",
          "[simd][gemm][stored]") {
    using attntrace::StoredMatrix;
    using attntrace::StoredType;
    const int saved = omp_get_max_threads();
    for (const StoredType type : {StoredType::bf16, StoredType::f16})
        for (const bool nt : {false, true})
            for (const auto& [M, K, N] : std::vector<std::array<std::size_t, 3>>{{1, 40, 33}, {3, 17, 70}, {37, 300, 47},
                                                                              {64, 512, 96}}) {
                INFO((type == StoredType::bf16 ? "bf16" : "f16") << (nt ? " transposed" : "") << " M " << M << " K " << K
                                                                 << " N " << N << ", kernels " << attntrace::kernel_isa());
                const auto bits = stored_bits(K * N, type, static_cast<std::uint32_t>(M + K), 0);  // finite values
                const auto f = widened(bits, type);
                // the float32 W (K, N) the loader made: transposed from nn.Linear's (N, K)
                std::vector<float> w(K * N);
                for (std::size_t k = 0; k < K; ++k)
                    for (std::size_t j = 0; j < N; ++j) w[k * N + j] = nt ? f[j * K + k] : f[k * N + j];
                const auto x = values(M * K, 41), bias = values(N, 42);
                const StoredMatrix stored{bits.data(), type, nt ? K : N, nt};
                for (const int threads : {1, 2}) {
                    omp_set_num_threads(threads);
                    std::vector<float> want(M * N, 1.0f), got(M * N, 2.0f), ref_want(M * N), ref_got(M * N);
                    attntrace::linear(x.data(), w.data(), bias.data(), want.data(), M, K, N);
                    attntrace::linear_stored(x.data(), stored, bias.data(), got.data(), M, K, N);
                    REQUIRE(std::memcmp(want.data(), got.data(), M * N * sizeof(float)) == 0);
                    attntrace::linear_ref(x.data(), w.data(), bias.data(), ref_want.data(), M, K, N);
                    attntrace::linear_stored_ref(x.data(), stored, bias.data(), ref_got.data(), M, K, N);
                    REQUIRE(std::memcmp(ref_want.data(), ref_got.data(), M * N * sizeof(float)) == 0);
                }
            }
    omp_set_num_threads(saved);
}

}  // namespace test_simd_kernels

#endif  // ATTNTRACE_SCALAR_ONLY
