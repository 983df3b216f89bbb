// "decimals": 2, "decimals": [2, 3] (per row), "decimals": [[2, 2, 3], [2, 2, 3]]
// (per value), and the same forms of "sig".
#include "lesson/claim_precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace attntrace {

namespace {

struct DigitsField {
    const char* name;  // as the lesson writes it
    Precision::Unit unit;
    int lo, hi;
};
constexpr DigitsField kDecimals{"decimals", Precision::Unit::decimals, 0, kMaxDecimals};
constexpr DigitsField kSignificant{"sig", Precision::Unit::significant, 1, kMaxSignificant};

// The element of nested arrays `v` at row-major position `flat` of `shape`, and its path.
const json& element(const json& v, const Shape& shape, std::size_t flat, std::string& path) {
    const json* e = &v;
    std::size_t stride = numel(shape);
    for (std::size_t d : shape) {
        stride /= d;
        const std::size_t i = flat / stride % d;
        e = &(*e)[i];
        path = index(path, i);
    }
    return *e;
}

// What a precision array must look like, for its error: "one integer, a 2 array
// (one per row of values) or a 2x3 array (one per value)".
std::string expected_layout(const Shape& written) {
    if (written.empty()) return "one integer (values is a single number)";
    if (written.size() == 1) return fmt::format("one integer or {} (one per value)", array_text(written));
    const Shape rows(written.begin(), written.end() - 1);
    return fmt::format("one integer, {} (one per row of values) or {} (one per value)", array_text(rows),
                       array_text(written));
}

// One count of digits, in its field's range. Decimals past kMaxDecimals are refused saying what to write
// instead: float32 holds no more decimals, and a number that needs more digits is one to give in "sig".
int digits(const Fields& f, const json& e, const std::string& path, const DigitsField& field) {
    if (field.unit == Precision::Unit::decimals && e.is_number_integer() && e.get<std::int64_t>() > field.hi)
        f.fail(path,
               fmt::format("an integer from {} to {} (float32 holds no more decimals; for more digits, \"sig\": "
                           "significant figures, up to {})",
                           field.lo, field.hi, kMaxSignificant),
               e.dump());
    return static_cast<int>(f.integer(e, path, field.lo, field.hi));
}

}  // namespace

void read_precision(const Fields& f, const json& v, const std::string& path, const Shape& written, Claim& c) {
    const json* dec = f.optional(v, kDecimals.name);
    const json* sig = f.optional(v, kSignificant.name);
    if (dec && sig) f.fail(path, "either \"decimals\" or \"sig\"", "both");
    const DigitsField& field = sig ? kSignificant : kDecimals;
    const std::string p = join(path, field.name);
    const json& x = sig ? *sig : f.member(v, path, kDecimals.name);  // neither: "decimals" is missing
    if (!x.is_array()) {
        c.precision = {field.unit, digits(f, x, p, field)};
        return;
    }
    const Shape given = f.tensor(x, p, false).shape;  // rectangular numbers; each an integer in range below
    const Shape rows = written.empty() ? written : Shape(written.begin(), written.end() - 1);
    const bool per_value = given == written, per_row = written.size() >= 2 && given == rows;
    if (!per_value && !per_row) f.fail(p, expected_layout(written), array_text(given));
    const std::size_t repeat = per_value ? 1 : written.back();  // a row's digits hold for each of its values
    for (std::size_t i = 0; i < numel(given); ++i) {
        std::string cell = p;
        const json& e = element(x, given, i, cell);
        c.cell_digits.insert(c.cell_digits.end(), repeat, digits(f, e, cell, field));
    }
    c.precision = {field.unit, *std::max_element(c.cell_digits.begin(), c.cell_digits.end())};
}

}  // namespace attntrace
