#include "evaluate/printed_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/decimal.hpp"

namespace attntrace {

namespace {

// One printed input value: which tensor, which cell, and how far it may move and still print the same.
struct InputValue {
    std::string key;  // "inputs.X", "weights.W_Q" or "given.STEP"
    std::size_t cell = 0;
    float half = 0;   // kWithinRounding units of its last printed digit
};

// The tensor an input_decimals key names: "inputs.X", "weights.W_Q", "given.blocks.0.attn.hook_q".
Tensor& input_tensor(Lesson& l, const std::string& key) {
    if (key.rfind("given.", 0) == 0) return l.given.at(key.substr(6)).values;
    return key.rfind("inputs.", 0) == 0 ? l.inputs.at(key.substr(7)) : l.weights.at(key.substr(8));
}

// How far a value is moved, in units of its last printed digit: short of half a unit by more than float32's
// error and round_decimals' tie slack (core/decimal.hpp), so that every moved value prints as it was.
constexpr double kWithinRounding = 0.45;

// The fractions of the full move (every value by just under half its last digit) a claim's witness tries.
constexpr float kWitnessSteps[] = {1.0f, 0.5f, 0.25f, 0.125f};

bool agrees(const Tensor& computed, const Claim& c) {
    if (computed.size() != c.values.size()) return false;
    for (std::size_t i = 0; i < computed.size(); ++i)
        if (!agrees_as_printed(computed.data[i], c.values.data[i], c.precision_at(i))) return false;
    return true;
}

// A printed value's half unit of its precision (decimals or significant figures).
double half_unit(float printed, Precision p) {
    if (p.unit == Precision::Unit::decimals) return 0.5 * std::pow(10.0, -p.digits);
    const double mag = printed == 0 ? 1 : std::pow(10.0, std::floor(std::log10(std::fabs(printed))) - p.digits + 1);
    return 0.5 * mag;
}

// The linear model's target, in units of each cell's half unit: inside this much of it, so that the real
// run (not quite linear, and in float32) still prints as the claim.
constexpr double kSolveMargins[] = {0.8, 0.5};
// The projected gradient's iterations at most, and its work (iterations x cells x values) at most.
constexpr std::size_t kSolveIterations = 3000;
constexpr double kSolveWork = 6e7;

// Values u (each in [-1, 1], in units of its move) under which the linear model of the claim's cells,
// computed + slope·u, is within `margin` half units of each printed number: projected gradient descent
// (with momentum) on the squared excess. `half` holds each cell's half unit (0: a cell left out). Returns
// nothing when the model has no such u or the work is too much.
std::optional<std::vector<double>> solve_witness(const std::vector<double>& computed, const std::vector<double>& printed,
                                                 const std::vector<double>& half, const std::vector<std::vector<float>>& slope,
                                                 double margin) {
    const std::size_t V = slope.size(), C = computed.size();
    if (V == 0 || C == 0) return std::nullopt;
    const std::size_t iterations =
        std::min(kSolveIterations, static_cast<std::size_t>(kSolveWork / static_cast<double>(V * C)));
    if (iterations < 50) return std::nullopt;
    // the slopes in half units: S[i][v]
    std::vector<double> S(C * V, 0.0), target(C, 0.0);
    double lipschitz = 0;
    for (std::size_t i = 0; i < C; ++i) {
        if (half[i] <= 0) continue;
        target[i] = (printed[i] - computed[i]) / half[i];
        for (std::size_t v = 0; v < V; ++v) {
            S[i * V + v] = slope[v].size() == C ? slope[v][i] / half[i] : 0.0;
            lipschitz += S[i * V + v] * S[i * V + v];
        }
    }
    if (lipschitz == 0) return std::nullopt;
    const double step = 1.0 / (2.0 * lipschitz);
    std::vector<double> u(V, 0.0), prev(V, 0.0), y(V, 0.0), grad(V), r(C);
    double t = 1;
    for (std::size_t it = 0; it < iterations; ++it) {
        // the excess at y, and whether u itself is inside
        std::fill(grad.begin(), grad.end(), 0.0);
        double excess = 0;
        for (std::size_t i = 0; i < C; ++i) {
            if (half[i] <= 0) continue;
            double ri = -target[i];
            for (std::size_t v = 0; v < V; ++v) ri += S[i * V + v] * y[v];
            const double e = std::fabs(ri) - margin;
            if (e <= 0) continue;
            excess += e * e;
            const double g = 2 * e * (ri > 0 ? 1 : -1);
            for (std::size_t v = 0; v < V; ++v) grad[v] += g * S[i * V + v];
        }
        if (excess == 0) return y;
        prev = u;
        for (std::size_t v = 0; v < V; ++v) u[v] = std::clamp(y[v] - step * grad[v], -1.0, 1.0);
        const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
        for (std::size_t v = 0; v < V; ++v) y[v] = u[v] + (t - 1) / t_next * (u[v] - prev[v]);
        t = t_next;
    }
    return std::nullopt;
}

}  // namespace

void within_printed_inputs(const Lesson& lesson, CheckReport& report,
                           const std::function<CheckReport(const Lesson&)>& rerun) {
    if (lesson.input_decimals.empty()) return;
    std::vector<std::size_t> wrong;  // the claims that disagree, with values to move
    for (std::size_t k = 0; k < report.results.size(); ++k) {
        const ClaimResult& r = report.results[k];
        if (r.verdict == Verdict::disagrees && r.computed.size() && r.computed.size() == r.claim.values.size())
            wrong.push_back(k);
    }
    if (wrong.empty()) return;
    Lesson base = lesson;
    base.document_rounding.clear();  // the exact run's arithmetic, its inputs moved
    std::vector<InputValue> values;
    for (const auto& [key, decimals] : lesson.input_decimals) {
        const Tensor& t = input_tensor(base, key);
        const float half = static_cast<float>(kWithinRounding * std::pow(10.0, -decimals));
        for (std::size_t i = 0; i < t.size(); ++i)
            if (std::isfinite(t.data[i])) values.push_back({key, i, half});
    }
    if (values.empty() || values.size() > kMaxPrintedInputValues) return;
    // How each claim's cells move with each value, one run a value: (values) x (the claim's cells).
    std::vector<std::vector<std::vector<float>>> slope(wrong.size(), std::vector<std::vector<float>>(values.size()));
    for (std::size_t v = 0; v < values.size(); ++v) {
        Lesson moved = base;
        input_tensor(moved, values[v].key).data[values[v].cell] += values[v].half;
        const CheckReport r = rerun(moved);
        for (std::size_t w = 0; w < wrong.size(); ++w) {
            const Tensor& c = report.results[wrong[w]].computed;
            const Tensor& m = r.results.at(wrong[w]).computed;
            slope[w][v].assign(c.size(), 0.0f);
            if (m.size() == c.size())
                for (std::size_t i = 0; i < c.size(); ++i) slope[w][v][i] = m.data[i] - c.data[i];
        }
    }
    std::string which;
    for (const auto& [key, decimals] : lesson.input_decimals)
        which += fmt::format("{}{} at {}", which.empty() ? "" : ", ", key, decimals);
    for (std::size_t w = 0; w < wrong.size(); ++w) {
        ClaimResult& r = report.results[wrong[w]];
        const Claim& c = r.claim;
        // each cell pulled towards its printed number, in units of its printed precision
        std::vector<double> pull(r.computed.size());
        for (std::size_t i = 0; i < pull.size(); ++i) {
            const float x = r.computed.data[i], p = c.values.data[i];
            pull[i] = std::isfinite(x) && std::isfinite(p) ? (p - x) / half_unit(p, c.precision_at(i)) : 0;
        }
        std::vector<double> gain(values.size(), 0.0);
        for (std::size_t v = 0; v < values.size(); ++v)
            for (std::size_t i = 0; i < pull.size(); ++i) gain[v] += pull[i] * slope[w][v][i];
        // the whole move, then shorter ones (a cell already right may not be moved past its own rounding)
        Tensor got;
        for (const float step : kWitnessSteps) {
            Lesson moved = base;
            for (std::size_t v = 0; v < values.size(); ++v)
                if (gain[v] != 0) input_tensor(moved, values[v].key).data[values[v].cell] += (gain[v] > 0 ? step : -step) * values[v].half;
            got = rerun(moved).results.at(wrong[w]).computed;
            if (agrees(got, c)) break;
            got = Tensor{};
        }
        // else every cell at once: the values that the linear model puts inside each printed number's
        // rounding, then a real run from them
        for (const double margin : kSolveMargins) {
            if (got.size()) break;
            std::vector<double> computed(pull.size()), printed(pull.size()), half(pull.size(), 0.0);
            for (std::size_t i = 0; i < pull.size(); ++i) {
                const float x = r.computed.data[i], p = c.values.data[i];
                computed[i] = x;
                printed[i] = p;
                if (std::isfinite(x) && std::isfinite(p)) half[i] = half_unit(p, c.precision_at(i));
            }
            const auto u = solve_witness(computed, printed, half, slope[w], margin);
            if (!u) continue;
            Lesson moved = base;
            for (std::size_t v = 0; v < values.size(); ++v)
                input_tensor(moved, values[v].key).data[values[v].cell] += static_cast<float>((*u)[v]) * values[v].half;
            got = rerun(moved).results.at(wrong[w]).computed;
            if (!agrees(got, c)) got = Tensor{};
        }
        if (!got.size()) continue;
        r.verdict = Verdict::agrees_when_rounded;
        r.document = got;
        r.reason = fmt::format("agrees from inputs that print as the article printed them ({}): it computed with more "
                               "digits than it printed",
                               which);
    }
}

}  // namespace attntrace
