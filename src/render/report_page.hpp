// What the report's page keeps of a large trace. A BERT-size run of 512
// tokens holds ~25M floats (~0.3 GB as JSON text): a browser cannot open that
// in seconds. Above kPageFullFloats the page keeps, of each step larger than
// kPageStepFloats, either its attention map pooled to at most kPageSide cells
// per token axis (hook_pattern, hook_mask: what the heatmaps, the model view
// and the masks draw) or the summary the trace policy "summary" keeps (min,
// max, mean, -inf count, row sums, a corner). Smaller traces are embedded
// whole, as `attntrace export` writes them. Pooling is for display only: the
// values pooled are the trace's, nothing of the model is computed again.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "check/check.hpp"
#include "core/tensor.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "trace/json_text.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// Above this many floats in the whole trace (~12 MB of JSON text at
// kJsonTextBytesPerFloat) the page is reduced: a page of that size parses and
// draws in about a second in headless Chromium here.
inline constexpr std::size_t kPageFullFloats = std::size_t{1} << 20;
// In a reduced page, steps of more floats than a 256 x 256 matrix are pooled or summarised.
inline constexpr std::size_t kPageStepFloats = 256 * 256;
// Cells kept per token axis of a pooled attention map: a heatmap of 256 x 256
// cells fills a 512-pixel canvas at 2 pixels a cell.
inline constexpr std::size_t kPageSide = 256;
// Pooled values are written with 4 significant digits: what the page shows of
// any number (a third less text than the shortest round-trip of a float).
inline constexpr int kPageSignificantDigits = 4;

enum class PoolOp { max, mean };

// `t` pooled by blocks: block[k] consecutive indices of axis k become one
// cell (the last block of an axis may be shorter), holding the max or the
// mean of the cells it covers. Shape: ceil(shape[k] / block[k]) per axis.
// max: a block of -inf cells is -inf (a fully masked block stays masked);
// mean: any -inf cell makes the block -inf.
Tensor pool(const Tensor& t, const std::vector<std::size_t>& block, PoolOp op);

// The block per axis that brings every token axis (pos, query, key) to at
// most `side` cells; 1 for every other axis.
std::vector<std::size_t> page_blocks(const Shape& shape, const std::vector<std::string>& axes, std::size_t side);

// How a reduced page keeps a step larger than kPageStepFloats (`base`: the
// name of its catalogue template, which says what it computes): an attention
// map (hook_pattern, hook_mask) with a token axis past kPageSide is pooled,
// every other one summarised. Steps up to kPageStepFloats are kept whole.
enum class PageKeep { whole, pooled, summary };
PageKeep page_keep(const std::string& base, const Shape& shape, const std::vector<std::string>& axes);
// The floats a page writes for a step kept so (a summary: its row sums and corner).
std::size_t page_floats(PageKeep keep, const Shape& shape, const std::vector<std::string>& axes);

// The page's size for the full run of `lesson`, estimated from the plan before
// the run with output_size's bytes per float and per step: what --max-output
// is held to (the export's estimate would refuse a page that is reduced).
std::size_t estimate_page_bytes(const Lesson& lesson, Arithmetic mode);

// What a reduced page kept, counted as its steps are reduced; note() is the
// page's "page" field (the banner at its top says it).
struct PageReduction {
    std::size_t floats = 0, pooled = 0, summarised = 0;
    OrderedJson note() const;
};
// One step's entry `sj` (its values not written yet) as a reduced page keeps
// it: a pooled step gets its pooled shape, labels and "pooled", and the
// pooled tensor is returned for the caller to write as its values; a
// summarised one gets "summary" and no values (null returned); a whole one is
// left as it is (null returned).
std::unique_ptr<Tensor> reduce_page_step(OrderedJson& sj, const std::string& name, const Tensor& value,
                                         const std::vector<std::string>& axes,
                                         const std::vector<std::vector<std::string>>& labels, PageReduction& r);

// The trace as the report embeds it: trace_to_json's tree with deferred values,
// reduced as above when the trace holds more than kPageFullFloats. Tensors
// the reduction makes are kept in `owned` (their addresses stay in `deferred`).
OrderedJson page_json(const Lesson& lesson, const Trace& trace, const CheckReport& report,
                      DeferredTensors& deferred, std::vector<std::unique_ptr<Tensor>>& owned);

}  // namespace attntrace
