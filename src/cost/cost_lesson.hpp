// Cost lessons: what the articles print about attention's cost (000's memory
// table, 002's "16 billion attention scores", 004's sliding-window saving),
// as claims checked against cost/cost.hpp's closed forms at the printed
// precision, with the same verdicts as the pipeline lessons. The format is
// documented in docs/cost.md ("Cost lessons"); `attntrace check` reads both
// kinds of lesson.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cost/cost.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

inline constexpr int kCostLessonFormatVersion = 1;

// What a claim counts. The first two are the intermediates the others are
// made of (an article may round them before going on); the FLOP and memory
// totals come straight from estimate_cost().
enum class CostQuantity {
    matrix_entries,       // E = n·n: one head's score matrix, one layer
    scores_needed,        // N = the query-key pairs the window lets through, one head
    matrix_bytes,         // one head's stored matrix at dtype (E·bytes; N·bytes with a window)
    model_scores,         // E·NH·L·B
    model_scores_needed,  // N·NH·L·B
    model_matrix_bytes,   // every head, layer and sequence at once, at dtype
    layer_flops,          // one layer, one sequence
    model_flops,          // x L x B
    full_trace_bytes,     // `attntrace run --trace full`, one layer's attention
    materialized_bytes,   // a plain implementation's peak
    streaming_bytes,      // FlashAttention-style online softmax
};

// How a printed number is scaled: "million" is 1e6, "Mi" 2^20, "GB" 1e9
// bytes, "GiB" 2^30 bytes, "x" a ratio.
struct CostUnit {
    std::string name;  // as the lesson writes it
    double scale = 1;
    enum class Kind { count, bytes, ratio } kind = Kind::count;
};

// An intermediate the article rounded before going on: "16 million" for 4096².
struct CostRounding {
    CostQuantity quantity = CostQuantity::matrix_entries;  // matrix_entries or scores_needed
    CostUnit unit;
    int decimals = 0;
    bool down = false;  // truncated ("mode": "down"), as 002 takes 16.8 million to 16; default to nearest
};

struct CostClaim {
    std::string id;
    CostSpec spec;                        // the lesson's spec with the claim's overrides
    std::optional<CostSpec> over;         // a ratio: quantity(spec) / quantity(over)
    CostQuantity quantity = CostQuantity::matrix_entries;
    CostUnit unit;
    int decimals = 0;
    double value = 0;                     // as printed
    std::vector<CostRounding> round_first;
    Verdict expect = Verdict::agrees;
    bool answer = false;                  // a question the article asks: computed and shown, no verdict
    std::string quote, note;
};

struct CostLesson {
    std::string file, id, title, description;
    Source source;
    CostSpec spec;  // the defaults every claim starts from
    std::vector<CostClaim> claims;
};

// True when the JSON document says it is a cost lesson ("format").
bool is_cost_lesson(const nlohmann::json& doc);
// Throws InputError (file, field path, expected, found) on anything wrong.
CostLesson parse_cost_lesson(const nlohmann::json& doc, const std::string& file);
CostLesson read_cost_lesson(const std::string& path);
// lessons_dir()/cost/*.json, sorted (none: empty).
std::vector<std::string> list_cost_lesson_files();

// Owns a copy of its claim, so a report outlives the lesson it was checked from.
struct CostClaimResult {
    CostClaim claim;
    double exact = 0;                  // in the claim's unit
    std::optional<double> document;    // with round_first applied, in the claim's unit
    Verdict verdict = Verdict::not_checkable;
    bool as_expected() const { return claim.answer || verdict == claim.expect; }
};

struct CostCheckReport {
    std::vector<CostClaimResult> results;
    bool all_as_expected() const;
};

CostCheckReport check_cost_lesson(const CostLesson& lesson);

const char* cost_quantity_name(CostQuantity q);
// "n 4096, heads 32, layers 32, fp32": the spec's fields that matter, for people.
std::string describe_spec(const CostSpec& s);

}  // namespace attntrace
