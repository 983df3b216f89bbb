// A lesson from the shapes an article states (printed.hpp's PrintedShape):
// the article that says "Q: [B, H, T, D_h]" or prints torch.Size([2, 10, 64])
// has its shapes checked on a run of random embeddings and weights of the
// sizes it names.
//
// Each stated shape is read against the orders articles write a step's axes
// in (a batch first or not; heads before the positions or not: (B, H, T, D_h),
// (batch, n, d_k), (T, D)); the order whose sizes' names fit it best says
// which axis each size is. The sizes are the ones the article assigns
// (`seq_len = 10`, `d_model = 512`, `h = 8`), else the numbers its shapes
// print, else chosen small and distinct (5 tokens, 2 heads of 4) so that a
// size written in the wrong place shows as a wrong extent. The batch is not
// traced: a run is one sequence, and the claim names the other axes.
#pragma once

#include <optional>
#include <string>

#include "draft/draft.hpp"
#include "draft/printed.hpp"

namespace attntrace {

// The lesson `id` checking every shape the article states for a step, or
// nullopt when it states none a step can be found for.
std::optional<Draft> draft_shapes(const Article& art, const std::string& id);

// The step a stated shape's name (and the words after it: "# After softmax")
// points to ("blocks.0.attn.hook_q", ...), or "".
std::string shape_step(const std::string& name, const std::string& note);

}  // namespace attntrace
