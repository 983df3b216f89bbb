// {"generate": "torch_uniform", ...}: PyTorch's CPU uniform_ after
// torch.manual_seed, bit for bit (lesson/generate.hpp). The reference values
// are what PyTorch 1.13 printed (float(x) of each float32, which round-trips):
//   torch.manual_seed(123); torch.rand(2, 3)
//   torch.manual_seed(123); torch.rand(40)[30:33]
//   torch.manual_seed(789); nn.Linear(3, 2)  (weight, then bias: ±1/sqrt(3))
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lesson/generate.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_torch_uniform {

namespace {

std::vector<float> as_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
std::vector<float> floats(const Tensor& t) { return std::vector<float>(t.data.begin(), t.data.end()); }

// nn.Linear's kaiming_uniform_ bound for fan_in 3 as torch's Python computes it (sqrt(3) · gain / sqrt(fan_in)),
// and its bias's 1 / sqrt(fan_in): two doubles a bit apart that round to one float32.
constexpr double kKaiming3 = 0.5773502691896257, kBias3 = 0.5773502691896258;

}  // namespace

TEST_CASE("torch_uniform is torch.rand after torch.manual_seed, bit for bit, from any draw on", "[generate]") {
    const Tensor t = torch_uniform({2, 3}, 123, 0, 0.0, 1.0);
    CHECK(floats(t) == as_floats({0.29611194133758545, 0.516562283039093, 0.2516707181930542, 0.6885567903518677,
                               0.07397246360778809, 0.866521954536438}));
    // the 31st to 33rd draws: an offset skips as many draws as the values before it took
    CHECK(floats(torch_uniform({3}, 123, 30, 0.0, 1.0)) == as_floats({0.9268229007720947, 0.7387571930885315, 0.7178835272789001}));
    // the seed's low 32 bits, as torch's generator takes them
    CHECK(floats(torch_uniform({3}, 123 + (std::uint64_t{1} << 32), 0, 0.0, 1.0)) == std::vector<float>(t.data.begin(), t.data.begin() + 3));
}

TEST_CASE("torch_uniform between ±bound is nn.Linear's initial weight, then its bias", "[generate]") {
    CHECK(floats(torch_uniform({2, 3}, 789, 0, -kKaiming3, kKaiming3)) ==
          as_floats({0.31605908274650574, 0.45680856704711914, 0.5118348598480225, -0.16828539967536926, -0.3378770351409912,
                     -0.0917738676071167}));
    CHECK(floats(torch_uniform({2}, 789, 6, -kBias3, kBias3)) == as_floats({0.4058058261871338, -0.4704205393791199}));
}

TEST_CASE("a lesson's weight generated as torch_uniform, and its refusals in one line", "[generate][errors]") {
    nlohmann::json l = {{"format", "attntrace-lesson"},
                        {"version", 1},
                        {"id", "tu"},
                        {"title", "t"},
                        {"tokens", {"a", "b", "c"}},
                        {"config", {{"d_model", 3}, {"heads", 1}, {"d_k", 2}, {"mask", "none"}, {"weight_layout", "out_in"}}},
                        {"run", {{"from", "embed"}, {"to", "mix"}}},
                        {"inputs", {{"X", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}}},
                        {"claims", nlohmann::json::array()}};
    for (const char* w : {"W_Q", "W_K", "W_V"})
        l["weights"][w] = {{"generate", "torch_uniform"}, {"seed", 789}, {"low", -kKaiming3}, {"high", kKaiming3}};
    l["weights"]["W_K"]["offset"] = 6;
    const Lesson lesson = parse_lesson(l.dump(), "tu.json");
    // generated d_out x d_in as nn.Linear holds it (weight_layout out_in), held d_in x d_out as every weight is
    for (const auto& [name, offset] : {std::pair<const char*, int>{"W_Q", 0}, {"W_K", 6}}) {
        const Tensor gen = torch_uniform({2, 3}, 789, static_cast<std::uint64_t>(offset), -kKaiming3, kKaiming3);
        const Tensor& held = lesson.weights.at(name);
        REQUIRE(held.shape == Shape{3, 2});
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 2; ++j) CHECK(held.data[i * 2 + j] == gen.data[j * 3 + i]);
    }

    nlohmann::json bad = l;
    bad["weights"]["W_Q"]["offset"] = -1;
    CHECK(test::lesson_refusal(bad.dump(), "tu.json").find("tu.json: weights.W_Q.offset: expected") == 0);
    bad = l;
    bad["weights"]["W_Q"]["high"] = -1.0;
    CHECK(test::lesson_refusal(bad.dump(), "tu.json").find("tu.json: weights.W_Q.high: expected a number at least low") == 0);
    bad = l;
    bad["weights"]["W_Q"].erase("seed");
    CHECK(test::lesson_refusal(bad.dump(), "tu.json").find("tu.json: weights.W_Q.seed") == 0);
    bad = l;
    bad["weights"]["W_Q"]["std"] = 1;
    CHECK(test::lesson_refusal(bad.dump(), "tu.json").find("tu.json: weights.W_Q.std") != std::string::npos);
}

}  // namespace test_torch_uniform
