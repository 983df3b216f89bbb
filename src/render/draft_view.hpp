// `attntrace draft`'s report: the lesson written, each claim with its step
// and verdict, the arrays it could not place with the nearest step; with
// --explain, why each array was read as an input, a weight or a claim, and
// every convention tried with the printed numbers its run agreed with.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "draft/draft.hpp"

namespace attntrace {

// `written`: where the lesson went ("-" for standard output). `check_line`: end with the command that checks it.
// `width`: display columns (0: no limit); the claims' table folds its positions and notes under each claim when
// it is wider.
void render_draft(std::ostream& out, const Draft& d, const std::string& article, const std::string& written, bool explain,
                  std::size_t width, bool check_line = true);
// Several examples' lessons: a line for all, each example's report under its own heading, one command checking them all.
void render_drafts(std::ostream& out, const std::vector<Draft>& drafts, const std::string& article,
                   const std::vector<std::string>& written, bool explain, std::size_t width);

}  // namespace attntrace
