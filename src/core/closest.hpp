// What a mistyped name could have meant: the nearest of the names that exist,
// by edit distance, for an error line's "found" part ("\"d_modle\" (closest:
// d_model)"). One definition for every name a user types: steps, fields of a
// lesson, lesson ids.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attntrace {

// Names longer than this get no suggestions (the distance is quadratic in the length).
inline constexpr std::size_t kMaxSuggestedNameLength = 200;

// How a name is held to a candidate. A name of k parts (split at
// `separator`) is held to k parts of the candidate: its last k
// ("1.attn.hook_patern" to "1.attn.hook_pattern", a whole name to whole
// names), or with `any_run` any k in a row ("ring-fell" and "cat-sat" to
// "003-3.1-ring-fell" and "002-cat-sat-down"). A one-part name is also held to
// a candidate's last part without `optional_prefix` ("patern" to "hook_pattern").
struct NameParts {
    char separator = '.';
    bool any_run = false;
    std::string_view optional_prefix;
};

// The at most `n` candidates nearest to `name`, within a third of the name's
// length (at least 2 edits); best first, ties in the candidates' order.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t n = 3, const NameParts& parts = {});

// " (closest: a, b)" to follow a quoted name in an error line, or "" when none is near.
std::string closest_note(const std::vector<std::string>& closest);

}  // namespace attntrace
