#include "evaluate/printed_inputs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/decimal.hpp"

namespace attntrace {

namespace {

// One printed input value: which tensor, which cell, and how far it may move and still print the same.
struct InputValue {
    std::string key;  // "inputs.X" or "weights.W_Q"
    std::size_t cell = 0;
    float half = 0;   // kWithinRounding units of its last printed digit
};

Tensor& input_tensor(Lesson& l, const std::string& key) {
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
        if (!got.size()) continue;
        r.verdict = Verdict::agrees_when_rounded;
        r.document = got;
        r.reason = fmt::format("agrees from inputs that print as the article printed them ({}): it computed with more "
                               "digits than it printed",
                               which);
    }
}

}  // namespace attntrace
