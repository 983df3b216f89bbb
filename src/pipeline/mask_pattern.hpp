// Which keys each query may see: the pattern of config.mask as a rule per cell
// and as the (Tq, T) matrix M of 0 (visible) and -inf (blocked), or 1 and 0
// when it multiplies the weights (config.mask_at "weights"). mask.cpp adds M to
// the scores; explain asks the same rule why a cell is what it is.
//
// Positions: key j sits at position j; query i at p = i + (T - Tq) (with fewer
// queries than keys, the queries are the last Tq positions). The definitions
// (docs/lesson-format.md, Masks), for query position p and key j:
//   none          every key
//   causal        j <= p
//   window        symmetric: |p - j| <= (w-1)/2 (w odd); causal: p-w+1 <= j <= p
//   global_local  the symmetric window, or p global (its row sees all), or j global
//   block_sparse  j in p's block (blocks of b consecutive positions), or j the
//                 summary (first or last position) of its block
//   padding       j not a pad position (and j <= p with "causal": true)
//   custom        allowed[i][j] == 1
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Holds its own copy of the mask's kind and fields (a custom mask's allowed
// cells included: Tq·T bytes, beside the Tq·T floats of M it fills), so it
// may outlive the Config it was made from.
class MaskPattern {
public:
    MaskPattern(const Config& config, std::size_t Tq, std::size_t T);

    bool allows(std::size_t i, std::size_t j) const;  // query row i, key j
    std::size_t position(std::size_t i) const { return i + offset_; }

    // M: (Tq, T), 0 where allows(i, j), else -inf (added to the scores); with
    // config.mask_at "weights", 1 and 0 (multiplying the weights).
    void fill(float* m) const;

    // Why cell (i, j) is visible or blocked, one line per element of the rule,
    // naming positions; labels are the query's and the key's token names.
    std::vector<std::string> reason(std::size_t i, std::size_t j, const std::string& query,
                                    const std::string& key) const;

private:
    MaskKind kind_;
    MaskAt mask_at_;
    MaskSpec m_;
    std::size_t Tq_, T_, offset_;
    std::vector<char> special_;  // global_local: global positions; padding: pad positions (per position, T)
    std::size_t half_ = 0;       // symmetric windows: (w-1)/2
    bool in_block(std::size_t p, std::size_t j) const { return p / m_.block == j / m_.block; }
    bool is_summary(std::size_t j) const;
};

// The mask as the streaming kernel's per-query key range (none, causal and
// both windows); nullopt for the kinds it cannot express, which run materialised.
std::optional<KeyWindow> key_window(const Config& config);

// One phrase for the run header and docs: "window 3 (symmetric, |p - j| <= 1)".
std::string mask_text(const Config& config);

}  // namespace attntrace
