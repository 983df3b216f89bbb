// Golden comparison: a freshly computed trace against the one committed in
// golden/. Every step, shape, value and claim verdict must match.
#pragma once

#include <string>
#include <vector>

#include "trace/trace_json.hpp"

namespace attntrace {

// Values match when |fresh - golden| <= kGoldenAbsTol + kGoldenRelTol·|golden|.
// Why these: goldens are written from float32 and may be regenerated on
// another x86-64 machine whose kernels sum in another order (SIMD width, FMA
// contraction). For the lessons' sizes (sums of at most a few dozen O(1)
// terms) that moves a value by well under 1e-6; 1e-5 leaves room while any
// change to a formula (a wrong sign, a missing scale, another eps) moves
// values by far more.
inline constexpr double kGoldenAbsTol = 1e-5;
inline constexpr double kGoldenRelTol = 1e-5;

// One line per difference, at most `limit` (then a count of the rest).
// `regenerate` is the command that rewrites the golden, quoted in each line.
std::vector<std::string> compare_traces(const TraceData& golden, const TraceData& fresh,
                                        const std::string& regenerate, std::size_t limit = 20);

}  // namespace attntrace
