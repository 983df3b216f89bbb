// The optional top-level `batch` of a lesson: B sequences of their own
// lengths, padded on the right to the longest (docs/lesson-format.md, Batches).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// Sequences in one batch: far above a teaching example, and small enough that
// B position-label lists and B traces stay bounded (the memory check does the rest).
inline constexpr std::int64_t kMaxBatch = 4096;

// Reads batch.pad_token and each sequence's tokens and token_ids (before the
// config is known). Every mistake is named by its path (batch.sequences[1].tokens).
Batch read_batch_tokens(const Fields& f, const json& v, std::int64_t max_tokens, std::int64_t max_vocab);

// How the lesson reader reads a matrix (inline, from a .npy file, or
// generated) of `shape` at `path`, refusing another shape in terms of `what`.
using ReadMatrix = std::function<Tensor(const json& v, const std::string& path, const Shape& shape, const std::string& what)>;

// Reads what needs d_model: each sequence's X (L_b, C) and pad_x (C) without
// an embedding table; with one (`embedding`), pad_id and no X. A sequence's X
// is read as inputs.X is, by `matrix`.
void read_batch_inputs(const Fields& f, const json& v, Batch& batch, std::size_t C, bool embedding,
                       const ReadMatrix& matrix);

// "p0".."p{T-1}": a batched trace's token labels (the sequences' tokens differ).
std::vector<std::string> batch_position_labels(std::size_t T);
// "b0".."b{B-1}": the labels of a batched trace's leading batch axis.
std::vector<std::string> batch_labels(std::size_t B);

// T: the longest sequence.
std::size_t batch_length(const Batch& batch);

}  // namespace attntrace
