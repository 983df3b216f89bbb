// What --set and --ablate changed, as text after the changed run's steps:
// each change, the steps whose values moved (from the comparison with the
// original run), and with a head the next tokens before and after.
#pragma once

#include <ostream>

#include "evaluate/intervened.hpp"

namespace attntrace {

// Wrapped to `width` display columns (0: not wrapped).
void render_interventions(std::ostream& out, const IntervenedEvaluation& e, std::size_t top_k, std::size_t width = 0);

}  // namespace attntrace
