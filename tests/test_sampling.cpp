// decode --generate --temperature: the distribution a token is drawn from
// (decode/sample.hpp) held to Hugging Face's warpers written here the way
// they are written there (top-p by the ascending cumulative sum), the
// generator to SplitMix64's published first output, the draws to their
// distribution, and generation reproducible for a seed; the CLI's refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "decode/generate.hpp"
#include "decode/sample.hpp"
#include "model/hf_model.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_sampling {

namespace {

// The probabilities are computed in double both ways, by different sums: 1e-12 is far above double's
// rounding of a sum of at most a few hundred terms, far below any difference a wrong cut would make.
constexpr double kProbTol = 1e-12;

// Hugging Face's order, written as its warpers are: logits / T; top-k sets all but the K largest to
// -inf; top-p sorts ascending, takes the softmax's cumulative sum and removes the tokens whose
// cumulative probability is <= 1 - P, keeping the largest; softmax of what is left. Returns p (V), 0
// where removed.
std::vector<double> hf_warped(const std::vector<float>& logits, double T, std::size_t k, double P) {
    const std::size_t V = logits.size();
    std::vector<double> x(V);
    for (std::size_t v = 0; v < V; ++v) x[v] = logits[v] / T;
    const double ninf = -std::numeric_limits<double>::infinity();
    if (k && k < V) {
        std::vector<double> sorted = x;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1), sorted.end(), std::greater<>());
        const double kth = sorted[k - 1];
        for (double& a : x)
            if (a < kth) a = ninf;
    }
    const auto softmax = [&](const std::vector<double>& a) {
        const double mx = *std::max_element(a.begin(), a.end());
        std::vector<double> p(a.size());
        double s = 0;
        for (std::size_t i = 0; i < a.size(); ++i) s += p[i] = a[i] == ninf ? 0 : std::exp(a[i] - mx);
        for (double& q : p) q /= s;
        return p;
    };
    if (P < 1) {
        const std::vector<double> p = softmax(x);
        std::vector<std::size_t> asc(V);
        std::iota(asc.begin(), asc.end(), std::size_t{0});
        std::stable_sort(asc.begin(), asc.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
        double cum = 0;
        for (std::size_t i = 0; i + 1 < V; ++i) {  // the last (largest) is always kept
            cum += p[asc[i]];
            if (cum <= 1 - P) x[asc[i]] = ninf;
        }
    }
    return softmax(x);
}

// Distinct logits (no ties at the cut, where the two ways could keep different tied tokens).
std::vector<float> random_logits(std::size_t V, std::uint32_t seed, float spread) {
    std::mt19937 gen(seed);
    std::vector<float> l(V);
    for (std::size_t v = 0; v < V; ++v) l[v] = spread * (static_cast<float>(gen() % 100000) / 100000.0f - 0.5f) + 1e-5f * v;
    return l;
}

}  // namespace

TEST_CASE("the sampling distribution worked by hand: temperature, top-k, top-p, ties", "[sampling]") {
    // p = 0.5, 0.3, 0.2 at T = 1
    const std::vector<float> l = {std::log(0.3f), std::log(0.5f), std::log(0.2f)};
    Sampling s;
    s.temperature = 1;
    auto d = sampling_distribution(l.data(), l.size(), s);
    REQUIRE(d.size() == 3);
    CHECK(d[0].id == 1);
    CHECK(d[1].id == 0);
    CHECK(d[2].id == 2);
    CHECK(d[0].probability == Approx(0.5).margin(1e-7));
    CHECK(d[2].probability == Approx(0.2).margin(1e-7));
    s.top_k = 2;  // 0.5 and 0.3, renormalised: 0.625, 0.375
    d = sampling_distribution(l.data(), l.size(), s);
    REQUIRE(d.size() == 2);
    CHECK(d[0].probability == Approx(0.625).margin(1e-7));
    s.top_k = 0;
    s.top_p = 0.5;  // the mass before the second is 0.5, not below 0.5: the first alone
    d = sampling_distribution(l.data(), l.size(), s);
    REQUIRE(d.size() == 1);
    CHECK(d[0].probability == 1);
    s.top_p = 0.6;
    CHECK(sampling_distribution(l.data(), l.size(), s).size() == 2);
    s.top_p = 1;
    s.temperature = 0.5;  // p ∝ p^2: 0.25, 0.09, 0.04 over 0.38
    d = sampling_distribution(l.data(), l.size(), s);
    CHECK(d[0].probability == Approx(0.25 / 0.38).margin(1e-6));
    s.temperature = 0;  // greedy: the argmax alone
    d = sampling_distribution(l.data(), l.size(), s);
    REQUIRE(d.size() == 1);
    CHECK(d[0].id == 1);
    const std::vector<float> tied = {1, 2, 2, 0};  // equal logits: the lower id first
    s.temperature = 1;
    CHECK(sampling_distribution(tied.data(), tied.size(), s)[0].id == 1);
}

TEST_CASE("the greedy choice is next_tokens' first entry: the largest logit, the lower id on a tie", "[sampling]") {
    const std::vector<std::vector<float>> rows = {
        {0.5f}, {1, 3, 3, 2}, {-1, -1, -1}, {2, 7, 1, 7, 7}, {-0.0f, 0.0f}, {-1e30f, -3e38f, -1e30f}};
    for (const auto& r : rows) {
        const NextToken want = next_tokens(r.data(), r.size(), 1).front();
        CHECK(top_token(r.data(), r.size()) == static_cast<std::size_t>(want.id));
        const std::vector<NextToken> greedy = sampling_distribution(r.data(), r.size(), Sampling{});
        REQUIRE(greedy.size() == 1);
        CHECK(greedy[0].id == want.id);
        CHECK(greedy[0].logit == want.logit);
        CHECK(greedy[0].probability == 1.0);
        // and next_tokens with its probabilities given is next_tokens
        const auto k = std::min<std::size_t>(3, r.size());
        const auto a = next_tokens(r.data(), r.size(), k), b = next_tokens(r.data(), r.size(), k, next_token_probabilities(r.data(), r.size()));
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK((a[i].id == b[i].id && a[i].probability == b[i].probability));
    }
}

TEST_CASE("the sampling distribution equals Hugging Face's warpers over random logits", "[sampling]") {
    const std::vector<double> temperatures = {0.05, 0.7, 1, 2.5}, tops_p = {0.05, 0.5, 0.9, 1};
    const std::vector<std::size_t> tops_k = {0, 1, 7, 200};
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
        const std::vector<float> l = random_logits(300, seed, 12);
        for (double T : temperatures)
            for (std::size_t k : tops_k)
                for (double P : tops_p) {
                    INFO("seed " << seed << " T " << T << " k " << k << " P " << P);
                    Sampling s;
                    s.temperature = T;
                    s.top_k = k;
                    s.top_p = P;
                    const auto got = sampling_distribution(l.data(), l.size(), s);
                    const std::vector<double> want = hf_warped(l, T, k, P);
                    std::size_t kept = 0;
                    for (double p : want) kept += p > 0;
                    CHECK(got.size() == kept);
                    double worst = 0, sum = 0;
                    for (const NextToken& t : got) {
                        worst = std::max(worst, std::fabs(t.probability - want[static_cast<std::size_t>(t.id)]));
                        sum += t.probability;
                    }
                    CHECK(worst < kProbTol);
                    CHECK(sum == Approx(1).margin(kProbTol));
                    for (std::size_t i = 1; i < got.size(); ++i) CHECK(got[i - 1].probability >= got[i].probability);
                }
    }
}

TEST_CASE("the generator is SplitMix64, and its draws follow the distribution", "[sampling]") {
    // SplitMix64 seeded with 0: its first output is 0xE220A8397B1DCDAF (the published sequence);
    // u is its top 53 bits over 2^53
    const std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
    Sampling s;
    s.temperature = 1;
    TokenSampler first(s);
    CHECK(first.draw(l.data(), l.size()).u == static_cast<double>(0xE220A8397B1DCDAFull >> 11) * 0x1.0p-53);
    // 30,000 draws: each token's share within 0.01 of its probability (a standard deviation is under 0.003)
    constexpr int kDraws = 30000;
    s.seed = 12345;
    TokenSampler sampler(s);
    std::map<std::int64_t, int> count;
    for (int i = 0; i < kDraws; ++i) {
        const auto d = sampler.draw(l.data(), l.size());
        ++count[d.kept[d.index].id];
        // the token drawn is the first whose cumulative mass passes u
        double before = 0;
        for (std::size_t j = 0; j < d.index; ++j) before += d.kept[j].probability;
        CHECK(before <= d.u);
        CHECK(before + d.kept[d.index].probability > d.u);
    }
    CHECK(count[0] / double(kDraws) == Approx(0.5).margin(0.01));
    CHECK(count[1] / double(kDraws) == Approx(0.3).margin(0.01));
    CHECK(count[2] / double(kDraws) == Approx(0.2).margin(0.01));
}

TEST_CASE("decode --generate with a temperature: the same seed draws the same tokens, T = 0 is greedy", "[sampling]") {
    const std::string dir = source_dir() + "/tests/models/tiny-gpt2";
    const auto run = [&](double T, std::uint64_t seed) {
        ModelInput in;
        in.ids = {5, 9, 14};
        HfModel m = load_hf_model(dir, in);
        Sampling s;
        s.temperature = T;
        s.seed = seed;
        s.top_k = 20;
        const Generation g = generate(m, 6, 3, s);
        std::vector<std::int64_t> ids;
        for (const GeneratedToken& t : g.tokens) {
            ids.push_back(t.chosen.id);
            if (T > 0) {
                CHECK(t.draw.kept.size() == 20);
                CHECK(t.draw.kept[t.draw.index].id == t.chosen.id);
            }
        }
        return ids;
    };
    CHECK(run(1.5, 7) == run(1.5, 7));
    // another seed, another sequence (six draws from 20 tokens at T 1.5: the same six by chance is unlikely
    // enough that a match means the seed is not used)
    CHECK(run(1.5, 7) != run(1.5, 8));
    ModelInput in;
    in.ids = {5, 9, 14};
    HfModel m = load_hf_model(dir, in);
    const Generation greedy = generate(m, 6, 3);
    std::vector<std::int64_t> ids;
    for (const GeneratedToken& t : greedy.tokens) ids.push_back(t.chosen.id);
    CHECK(run(0, 99) == ids);
}

TEST_CASE("attntrace decode --temperature: the distribution shown and written, refusals in one line, exit 2", "[sampling]") {
    const std::string dir = source_dir() + "/tests/models/tiny-gpt2";
    const std::vector<std::string> base = {"decode", "--model", dir, "--text", "the ring", "--generate", "2"};
    auto args = base;
    for (const char* a : {"--temperature", "0.8", "--top-p", "0.9", "--seed", "3", "--json"}) args.push_back(a);
    const auto r = run_cli(args);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["sampling"]["temperature"] == 0.8);
    CHECK(j["sampling"]["top_k"].is_null());
    for (const auto& t : j["generated"]) {
        const auto& d = t["drawn_from"];
        double sum = d["rest_probability"].get<double>();
        for (const auto& e : d["distribution"]) sum += e["probability"].get<double>();
        CHECK(sum == Approx(1).margin(1e-9));
        CHECK(d["distribution"][d["rank"].get<std::size_t>() - 1]["id"] == t["id"]);
    }
    args.pop_back();  // the text view names the draw
    CHECK(run_cli(args).out.find(" picks rank ") != std::string::npos);
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"--temperature", "-1"}, "--temperature: expected a number from 0 (greedy) up, found -1"},
        {{"--temperature", "1", "--top-p", "0"}, "--top-p: expected a number in (0, 1], found 0"},
        {{"--temperature", "1", "--top-p", "1.5"}, "--top-p: expected a number in (0, 1], found 1.5"},
        {{"--top-p", "0.5"}, "--top-p: expected --temperature above 0 beside it"},
        {{"--temperature", "0", "--seed", "4"}, "--seed: expected --temperature above 0 beside it"},
        {{"--temperature", "1", "--seed", "-1"}, "--seed: expected a non-negative whole number, found -1"},
        {{"--temperature", "1", "--seed", "99999999999999999999999"}, "--seed: expected"},
    };
    for (const auto& [extra, want] : bad) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        const auto e = run_cli(a);
        INFO(want);
        CHECK(e.status == 2);
        CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
        CHECK(e.err.find(want) != std::string::npos);
    }
    const auto no_generate = run_cli({"decode", "--model", dir, "--text", "the ring", "--temperature", "1"});
    CHECK(no_generate.status == 2);
    CHECK(no_generate.err.find("--temperature: expected --generate N beside it") != std::string::npos);
}

}  // namespace test_sampling
