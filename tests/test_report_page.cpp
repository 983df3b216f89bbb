// What the report's page keeps of a large trace (src/render/report_page.hpp):
// pooling checked against plain loops over the cells each pooled cell covers,
// and a large lesson's page checked against its own export.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "render/report_page.hpp"
#include "support.hpp"

using attntrace::PoolOp;
using attntrace::Tensor;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using nlohmann::json;

namespace test_report_page {

namespace {

// The pooled cell [a][b][c] of a rank-3 tensor by blocks (bh, bq, bk), by its definition:
// the max or mean (in double) of t[h][q][k] over the block's ranges, clipped to the shape.
double reference_cell(const Tensor& t, std::size_t a, std::size_t b, std::size_t c, std::size_t bh, std::size_t bq,
                      std::size_t bk, PoolOp op) {
    const std::size_t H = t.shape[0], Q = t.shape[1], K = t.shape[2];
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    std::size_t n = 0;
    for (std::size_t h = a * bh; h < std::min(H, (a + 1) * bh); ++h)
        for (std::size_t q = b * bq; q < std::min(Q, (b + 1) * bq); ++q)
            for (std::size_t k = c * bk; k < std::min(K, (c + 1) * bk); ++k) {
                const double x = t.data[(h * Q + q) * K + k];
                best = std::max(best, x), sum += x, ++n;
            }
    return op == PoolOp::max ? best : sum / double(n);
}

std::string embedded_data(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"trace\">";
    const auto start = html.find(open) + open.size();
    return html.substr(start, html.find("</script>", start) - start);
}

}  // namespace

TEST_CASE("pooling for the page: each cell is the max or mean of the cells it covers", "[report][pool]") {
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    Tensor t(attntrace::Shape{3, 7, 10});  // 7 and 10 are not multiples of the blocks: short last blocks
    for (float& x : t.data) x = u(gen);
    for (std::size_t q = 0; q < 7; ++q)  // a causal mask's -inf above the diagonal
        for (std::size_t k = q + 1; k < 10; ++k) t.data[(1 * 7 + q) * 10 + k] = attntrace::kNegInf;
    for (const auto& block : {std::vector<std::size_t>{1, 2, 3}, {1, 3, 4}, {2, 7, 10}, {1, 1, 1}})
        for (PoolOp op : {PoolOp::max, PoolOp::mean}) {
            INFO("block " << block[0] << " " << block[1] << " " << block[2] << (op == PoolOp::max ? " max" : " mean"));
            const Tensor p = attntrace::pool(t, block, op);
            REQUIRE(p.shape == attntrace::Shape{(3 + block[0] - 1) / block[0], (7 + block[1] - 1) / block[1],
                                                (10 + block[2] - 1) / block[2]});
            for (std::size_t a = 0; a < p.shape[0]; ++a)
                for (std::size_t b = 0; b < p.shape[1]; ++b)
                    for (std::size_t c = 0; c < p.shape[2]; ++c) {
                        const double want = reference_cell(t, a, b, c, block[0], block[1], block[2], op);
                        const float got = p.data[(a * p.shape[1] + b) * p.shape[2] + c];
                        if (std::isinf(want)) CHECK((std::isinf(got) && got < 0));  // a fully masked block stays masked
                        else CHECK(got == Approx(want).epsilon(1e-6));
                    }
        }
}

TEST_CASE("page blocks bring every token axis to at most the page's side, and no other axis", "[report][pool]") {
    using V = std::vector<std::size_t>;
    CHECK(attntrace::page_blocks({12, 512, 512}, {"head", "query", "key"}, 256) == V{1, 2, 2});
    CHECK(attntrace::page_blocks({12, 513, 100}, {"head", "query", "key"}, 256) == V{1, 3, 1});
    CHECK(attntrace::page_blocks({512, 768}, {"pos", "d_model"}, 256) == V{2, 1});
    CHECK(attntrace::page_blocks({64, 64}, {"query", "key"}, 256) == V{1, 1});
}

TEST_CASE("a large trace's page keeps its attention maps pooled and its other large steps as summaries",
          "[report][pool]") {
    TempDir dir;
    const std::string lesson = dir.file("l.json"), page = dir.file("p.html"), trace = dir.file("t.json");
    // 4 x 300 x 300 attention steps: ~2.3M floats in all, above the page's kPageFullFloats
    REQUIRE(run_cli({"random", "--tokens", "300", "--d-model", "16", "--heads", "4", "--d-ff", "16", "--mask", "causal",
                     "--seed", "5", "-o", lesson}).status == 0);
    REQUIRE(run_cli({"report", lesson, "-o", page}).status == 0);
    REQUIRE(run_cli({"export", lesson, "-o", trace}).status == 0);
    const json data = json::parse(embedded_data(read_text(page))), full = json::parse(read_text(trace));
    CHECK(data["page"]["reduced"] == true);
    CHECK(data["page"]["kept"].get<std::string>().find("max-pooled") != std::string::npos);
    REQUIRE(data["steps"].size() == full["steps"].size());
    std::size_t pooled = 0;
    for (std::size_t i = 0; i < full["steps"].size(); ++i) {
        const json &got = data["steps"][i], &want = full["steps"][i];
        INFO(want["name"]);
        CHECK(got["name"] == want["name"]);
        const std::size_t cells = want["values"].is_array() ? want["values"].flatten().size() : 0;
        if (cells <= attntrace::kPageStepFloats) {
            CHECK(got["values"] == want["values"]);  // small steps: every value, as exported
            continue;
        }
        if (!got.contains("pooled")) {
            CHECK_FALSE(got.contains("values"));
            CHECK(got["summary"]["max"].is_number());
            continue;
        }
        ++pooled;
        REQUIRE(got["pooled"]["from_shape"] == want["shape"]);
        const std::vector<std::size_t> shape = want["shape"], block = got["pooled"]["block"];
        REQUIRE(shape.size() >= 2);
        // every pooled cell: the max of the exported cells it covers ("-inf" when all are), to 4 digits
        const json& v = got["values"];
        const auto at = [&](const json& x, std::size_t r, std::size_t c, std::size_t h) -> const json& {
            return shape.size() == 3 ? x[h][r][c] : x[r][c];
        };
        const std::size_t heads = shape.size() == 3 ? shape[0] : 1, R = shape[shape.size() - 2], C = shape.back();
        const std::size_t br = block[block.size() - 2], bc = block.back();
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t r = 0; r < (R + br - 1) / br; ++r)
                for (std::size_t c = 0; c < (C + bc - 1) / bc; ++c) {
                    double best = -std::numeric_limits<double>::infinity();
                    for (std::size_t i2 = r * br; i2 < std::min(R, (r + 1) * br); ++i2)
                        for (std::size_t j2 = c * bc; j2 < std::min(C, (c + 1) * bc); ++j2) {
                            const json& x = at(want["values"], i2, j2, h);
                            if (x.is_number()) best = std::max(best, x.get<double>());
                        }
                    const json& g = at(v, r, c, h);
                    if (std::isinf(best)) CHECK(g == "-inf");
                    else CHECK(g.get<double>() == Approx(best).epsilon(1e-3));  // 4 significant digits
                }
    }
    CHECK(pooled == 2);  // hook_pattern and hook_mask
    // the export drawn as a trace, and the .npy folder: reduced the same way, from the same values
    REQUIRE(run_cli({"export", lesson, "--npy", dir.file("npy"), "-o", dir.file("unused.json")}).status == 0);
    for (const std::string& input : {trace, dir.file("npy")}) {
        INFO(input);
        const std::string other = dir.file("other.html");
        REQUIRE(run_cli({"report", input, "-o", other}).status == 0);
        const json again = json::parse(embedded_data(read_text(other)));
        CHECK(again["page"]["reduced"] == true);
        REQUIRE(again["steps"].size() == data["steps"].size());
        for (std::size_t i = 0; i < data["steps"].size(); ++i) {
            INFO(data["steps"][i]["name"]);
            CHECK(again["steps"][i].contains("pooled") == data["steps"][i].contains("pooled"));
            CHECK(again["steps"][i].contains("summary") == data["steps"][i].contains("summary"));
            if (data["steps"][i].contains("pooled")) CHECK(again["steps"][i]["values"] == data["steps"][i]["values"]);
        }
    }
    // --max-output is held to the page's estimate, made from the plan before the run: close to the page's data
    const double estimate = double(attntrace::estimate_page_bytes(attntrace::read_lesson(lesson), attntrace::Arithmetic::exact));
    const double actual = double(embedded_data(read_text(page)).size());
    constexpr double kEstimateTolerance = 0.25;  // as output_size's: an estimate for refusing absurd outputs
    CHECK(std::abs(estimate - actual) <= kEstimateTolerance * actual);
}

}  // namespace test_report_page
