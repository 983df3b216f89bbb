// A claim's printed precision (docs/lesson-format.md, Claims): "decimals" or
// "sig", one number, one per row or one per printed value. Internal to the
// claim reader.
#pragma once

#include <string>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Sets c.precision and c.cell_digits from the claim object `v` at `path`;
// `written`: the shape of its values as the lesson wrote them (a per-row
// list has that shape without its last axis, a per-value one that shape).
// Throws InputError.
void read_precision(const Fields& f, const json& v, const std::string& path, const Shape& written, Claim& c);

}  // namespace attntrace
