// `attntrace draft`'s report: the lesson written, each claim with its step
// and verdict, the arrays it could not place with the nearest step; with
// --explain, why each array was read as an input, a weight or a claim, and
// every convention tried with the printed numbers its run agreed with.
#pragma once

#include <ostream>
#include <string>

#include "draft/draft.hpp"

namespace attntrace {

// `written`: where the lesson went ("-" for standard output).
void render_draft(std::ostream& out, const Draft& d, const std::string& article, const std::string& written, bool explain);

}  // namespace attntrace
