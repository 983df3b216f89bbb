// The one loader of every family's checkpoint (model/family.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace attntrace {

class Checkpoint;
struct Family;
struct HfModel;
struct ModelSizes;

// Fills m.lesson (config, inputs, held weights, the weight source that
// converts each block's weights when its passes run) from the checkpoint's
// tensors as `family` declares them, for these ids. Refusals (exit 2) name
// the checkpoint file and the tensor: a missing one, one of the wrong shape,
// more float32 values than --max-memory, a text longer than a sliding window.
void build_family(HfModel& m, const Family& family, const ModelSizes& sizes, const Checkpoint& ckpt,
                  const std::vector<std::int64_t>& ids);

}  // namespace attntrace
