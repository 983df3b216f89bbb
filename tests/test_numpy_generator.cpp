// numpy's generators (draft/numpy_generator): every value below is one numpy printed, with the command that printed it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "draft/numpy_generator.hpp"

namespace test_numpy_generator {

namespace {

// The xor of n draws' bit patterns (numpy: np.bitwise_xor.reduce(values.view(np.uint64))): any bit of any draw changes it.
template <class Draw>
std::uint64_t xor_bits(int n, Draw draw) {
    std::uint64_t out = 0;
    for (int i = 0; i < n; ++i) {
        const double v = draw();
        std::uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        out ^= bits;
    }
    return out;
}

}  // namespace

TEST_CASE("numpy's PCG64 seeded through SeedSequence: its raw draws and random()", "[numpy_generator]") {
    // g = np.random.default_rng(42); g.bit_generator.random_raw(2) -> [14276969152011380360, 8095878257575067585]
    attntrace::NumpyPcg64 raw(42);
    CHECK(raw.next64() == 14276969152011380360ULL);
    CHECK(raw.next64() == 8095878257575067585ULL);
    // np.random.default_rng(42).random(3).tolist()
    attntrace::NumpyPcg64 g(42);
    CHECK(g.uniform() == 0.7739560485559633);
    CHECK(g.uniform() == 0.4388784397520523);
    CHECK(g.uniform() == 0.8585979199113825);
    // a seed of two 32-bit words: np.random.default_rng(2**40 + 3).random(2).tolist()
    attntrace::NumpyPcg64 wide((std::uint64_t{1} << 40) + 3);
    CHECK(wide.uniform() == 0.7736560850714245);
    CHECK(wide.uniform() == 0.9958573802012665);
    // np.bitwise_xor.reduce(np.random.default_rng(0).random(100000).view(np.uint64))
    attntrace::NumpyPcg64 many(0);
    CHECK(xor_bits(100000, [&] { return many.uniform(); }) == 0x12d758914c02950ULL);
}

TEST_CASE("numpy's standard_normal by the ziggurat: bit for bit, its rare paths too", "[numpy_generator]") {
    // np.random.default_rng(0).standard_normal(479)[[0, 74, 126, 303, 478]].tolist(): draw 74 is accepted after a
    // rejected try, 126 by the wedge test, 303 and 478 come from the tail past r
    attntrace::NumpyPcg64 g(0);
    std::vector<double> v;
    for (int i = 0; i < 479; ++i) v.push_back(g.normal());
    CHECK(v[0] == 0.1257302210933933);
    CHECK(v[74] == 1.8220113633283233);
    CHECK(v[126] == -1.4227417685154136);
    CHECK(v[303] == -3.772275156122734);
    CHECK(v[478] == -3.899421730054339);
    // np.bitwise_xor.reduce(np.random.default_rng(S).standard_normal(100000).view(np.uint64)) for S = 42, 2026: every
    // layer of the ziggurat is used hundreds of times (a table computed one ulp off at a layer changes it)
    attntrace::NumpyPcg64 a(42), b(2026);
    CHECK(xor_bits(100000, [&] { return a.normal(); }) == 0x13afe9a567dbb1fULL);
    CHECK(xor_bits(100000, [&] { return b.normal(); }) == 0xfef25f0d228ec463ULL);
}

TEST_CASE("numpy's legacy generator: random_sample and the polar method's normals", "[numpy_generator]") {
    // np.random.seed(42); np.random.rand(3).tolist(); np.random.randn(3).tolist() (the first two uniforms, then the normals)
    attntrace::NumpyLegacy g(42);
    CHECK(g.uniform() == 0.3745401188473625);
    CHECK(g.uniform() == 0.9507143064099162);
    g = attntrace::NumpyLegacy(42);
    for (int i = 0; i < 3; ++i) g.uniform();
    CHECK(g.normal() == -1.1118801180469204);
    CHECK(g.normal() == 0.31890218468938336);  // the pair's second, kept
    CHECK(g.normal() == 0.2790412922001377);
}

}  // namespace test_numpy_generator
