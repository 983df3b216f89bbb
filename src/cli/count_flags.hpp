// Flags that take a count or a seed, held in an unsigned type. CLI11 reads
// such a value with strtoull, which accepts a minus sign and wraps: "-1"
// becomes 18446744073709551615, "-18446744073709551615" becomes 1 (inside
// any range check); and a number past 2^64 - 1 becomes 2^64 - 1.
// non_negative() refuses both as written, before that reading, so that the
// refusal says "found -1".
#pragma once

#include <CLI/CLI.hpp>

namespace attntrace {

// A validator for an unsigned option, put before its range check:
// "--seed: expected a non-negative whole number, found -1".
const CLI::Validator& non_negative();

}  // namespace attntrace
