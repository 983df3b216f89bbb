// JSON text for people, written as it is made: objects indented, arrays on one
// line when they fit (kInlineWidth), floats in their shortest round-trip form.
// Text goes to a TextSink in chunks of about kFlushBytes, so a trace of any
// size is written with a bounded buffer, and a tensor can be written straight
// from its floats without first becoming a JSON tree (a float as a JSON node
// costs 16 bytes; a trace of 1.2 GiB of floats would need ~5 GiB as a tree).
#pragma once

#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "io/text_sink.hpp"  // TextSink, StringSink, StreamSink

namespace attntrace {

// Fields keep the order they are written in (format and version first, steps in pipeline order).
using OrderedJson = nlohmann::ordered_json;

// A tensor a deferred node writes: one held in memory, or one computed when
// it is written and freed after (a derived step's values: trace/derived.hpp),
// so that a trace's derived steps never exist as buffers all at once.
struct DeferredTensor {
    const Tensor* held = nullptr;
    std::function<Tensor()> make;
};
using DeferredTensors = std::vector<DeferredTensor>;

// A tensor written later, in place: a JSON binary node whose subtype is its
// index in `deferred` (JSON text never holds binary nodes otherwise).
OrderedJson deferred_tensor(const Tensor& t, DeferredTensors& deferred);
OrderedJson deferred_tensor(std::function<Tensor()> make, DeferredTensors& deferred);

// `j` as readable text and a final newline; deferred_tensor nodes are written
// from `deferred`'s tensors, exactly as tensor_to_json would have written them.
void write_readable(const OrderedJson& j, TextSink& out, const DeferredTensors& deferred = {});
std::string dump_readable(const OrderedJson& j);

// `j` as nlohmann's dump(indent) writes it (invalid UTF-8 replaced by U+FFFD),
// with DEL (U+007F) and the C1 controls (U+0080..U+009F) written as \u
// escapes: dump writes them raw, and a terminal showing the JSON would act on
// them (U+009B is a CSI on some). The text decodes to the same strings. Every
// JSON text this attntrace writes goes through it (write_readable included).
std::string dump_terminal_safe(const OrderedJson& j, int indent = -1);

// A tensor as nested arrays; -inf as the string "-inf" (JSON has no infinity).
OrderedJson tensor_to_json(const Tensor& t);

}  // namespace attntrace
