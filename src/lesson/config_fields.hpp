// config_fields: each field of a lesson's `config` declared once: its JSON
// name, what it takes (for an enumerated field: its spellings, each with its
// meaning), its default, the steps its values add and a one-line doc. The
// config reader, config_records, the trace's config, `attntrace random` and
// docs/lesson-format.md's config table (checked by tests/test_config_fields.cpp)
// all read this table.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lesson/lesson.hpp"

namespace attntrace {

// One spelling of an enumerated value: the enum's value (as int), its JSON
// text, the short note an error message puts beside it (may be empty), its
// one-line meaning and the name a view gives it (a norm kind's "RMSNorm" in
// the report's pipeline; empty: the views write its spelling).
struct Spelling {
    int value;
    std::string_view name;
    std::string_view hint;
    std::string_view meaning;
    std::string_view display = {};
};

// A step a config value adds (or removes), when, and the words a message
// says when a lesson claims it without that config.
struct ConfigStep {
    Leaf leaf;
    bool (*records)(const Config&);
    std::string_view when;
};

struct ConfigField {
    std::string_view name;                // under "config"
    std::string_view type;                // the JSON it takes
    std::span<const Spelling> spellings;  // an enumerated field's values; empty otherwise
    std::string_view default_value;       // as docs/lesson-format.md's table writes it
    std::span<const ConfigStep> steps;    // the steps its values add or remove; empty: none
    std::string_view doc;                 // one line
};

// Every field, in the order an unknown field's message lists them.
std::span<const ConfigField> config_fields();
std::vector<std::string> config_field_names();
// The field named `name` (one of config_fields(); a programming error otherwise).
const ConfigField& config_field(std::string_view name);

// The enumerated kinds, beside their spellings.
std::span<const Spelling> mask_kinds();      // MaskKind: "none", "causal", then the object kinds
std::span<const Spelling> activations();     // Activation
std::span<const Spelling> norm_kinds();      // NormKind
std::string_view norm_display_name(NormKind n);  // "RMSNorm": its display name (its spelling when it has none)
std::span<const Spelling> weight_layouts();  // WeightLayout
std::span<const Spelling> normalizers();     // Normalizer
std::span<const Spelling> variances();       // Variance
std::span<const Spelling> mask_placements(); // MaskAt
std::span<const Spelling> position_kinds();  // PositionKind

// "\"a\" (hint), \"b\" or \"c\"": what a field of these spellings expects.
std::string spellings_expected(std::span<const Spelling> s);
std::string_view spelling_name(std::span<const Spelling> s, int value);
std::optional<int> spelling_value(std::span<const Spelling> s, std::string_view name);

template <class E>
std::string_view spelling_of(std::span<const Spelling> s, E value) {
    return spelling_name(s, static_cast<int>(value));
}

}  // namespace attntrace
