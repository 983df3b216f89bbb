// A stream's symbol in the formulas and explanations of block b: "X" for the
// block's input whatever computed it (the embeddings or the block before),
// "X_mid", "attn_out", "LN1", "LN2", "LN_f", ... for the others.
#pragma once

#include <string>

namespace attntrace {

std::string stream_symbol(const std::string& step_name, int block);

}  // namespace attntrace
