// Lesson: one worked example, as read from lessons/*.json (format documented in
// docs/lesson-format.md). Everything here is validated: shapes agree with the
// config, numbers are finite, claims name real steps. The pipeline trusts it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "io/data_dir.hpp"
#include "trace/steps.hpp"

namespace attntrace {

inline constexpr int kLessonFormatVersion = 1;

enum class MaskKind { none, causal };
enum class Activation { relu, gelu };
enum class Verdict { agrees, agrees_when_rounded, disagrees, not_checkable };

std::string_view verdict_name(Verdict v);
std::optional<Verdict> verdict_from_name(std::string_view s);
std::string_view mask_name(MaskKind m);
std::string_view activation_name(Activation a);

struct Config {
    std::size_t d_model = 0;
    std::size_t heads = 1;
    std::size_t kv_heads = 0;  // K/V heads; 0: as many as heads (MHA). Divides heads; 1 is MQA
    std::size_t d_ff = 0;  // 0: no FFN stage in this lesson
    MaskKind mask = MaskKind::none;
    bool scale = true;  // divide scores by sqrt(hs); off shows why it exists
    Activation activation = Activation::relu;
    double eps = 1e-5;  // LayerNorm, as PyTorch
};

struct Source {
    std::string document;  // file name in shared/seeds, or a citation
    std::string title;
    std::string section;
};

// What the article prints for one step, at its printed precision.
struct Claim {
    enum class Kind { values, row_sum, shape };
    std::string id;
    std::string step;
    std::vector<std::pair<Axis, std::size_t>> at;  // fixed indices, e.g. head 0, query 1
    Kind kind = Kind::values;
    int decimals = 2;
    Tensor values;                                       // as printed (kind values/row_sum)
    std::vector<std::pair<Axis, std::size_t>> shape;     // kind shape: axis -> extent
    Verdict expect = Verdict::agrees;
    std::string quote;  // the article's words around the number
    std::string note;   // the lesson author's explanation of the verdict
};

struct Lesson {
    std::string file;  // path it was read from, for messages
    std::string id;
    std::string title;
    std::string description;
    Source source;
    std::vector<std::string> tokens;
    std::vector<std::string> query_tokens;  // empty: the queries are the tokens
    std::vector<std::int64_t> token_ids;    // with inputs.embedding
    Config config;
    Stage from = Stage::embed;
    Stage to = Stage::norm2;
    std::map<std::string, Tensor> inputs;   // "X" (T, C) or "embedding" (vocab, C)
    std::map<std::string, Tensor> weights;  // "W_Q" (C, C), ... see docs/lesson-format.md
    std::map<std::string, Tensor> given;    // step name -> the article's values (step shape)
    std::map<std::string, int> document_rounding;  // step name -> decimals
    std::vector<Claim> claims;

    Dims dims() const;
    const std::vector<std::string>& query_labels() const {
        return query_tokens.empty() ? tokens : query_tokens;
    }
    bool runs(Stage s) const { return s >= from && s <= to; }
    // Whether the trace will hold this step: its stage runs (hook_embed only
    // with an embedding table), or it is given as an input before run.from.
    bool records(const StepDef& def) const;
    const Tensor* weight(const std::string& name) const;
};

// Reads and validates a lesson file. Throws InputError (one line: file, field
// path, expected, found) on anything wrong.
Lesson read_lesson(const std::string& path);
Lesson parse_lesson(const std::string& text, const std::string& file);

// Where lessons live: lessons_dir() in io/data_dir.hpp ($ATTNTRACE_LESSONS,
// else an installed share/attntrace/lessons, else the source tree's lessons/).
// "003-ring-fell" -> "<lessons_dir>/003-ring-fell.json"; a path is returned as is.
std::string resolve_lesson(const std::string& name_or_path);
std::vector<std::string> list_lesson_files();

}  // namespace attntrace
