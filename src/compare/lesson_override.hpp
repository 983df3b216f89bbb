// --set KEY=VALUE: a lesson with some of its fields changed, for `attntrace
// compare`. The change is made on the lesson's JSON tree and the result is
// read by the ordinary lesson reader, so whatever the reader accepts can be
// set (a config field added tomorrow included) and whatever it refuses is
// refused with the same one-line message, naming the --set it came from.
// The rules for people are in docs/compare.md.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// One parsed --set argument.
struct Setting {
    std::string text;  // as given: "scale=false"
    std::string key;   // as given: "scale", "config.mask", "given.blocks.0.attn.hook_q", "tokens[1]"
    nlohmann::json value;  // VALUE as JSON when it parses as JSON, else the string; null removes the field
};

// "KEY=VALUE" (split at the first '='). Throws InputError "--set: ..." when
// there is no '=' or no KEY.
Setting parse_setting(const std::string& arg);

// A setting as applied to one lesson: where it landed and what was there.
struct AppliedSetting {
    Setting setting;
    std::string path;                   // resolved, as the reader names fields: "config.scale", "tokens[1]"
    std::optional<nlohmann::json> before;  // the lesson's own value (A); none when the field was absent
    std::optional<nlohmann::json> after;   // B's value; none when the setting removes the field
};

// The lesson read twice: A as it is (claims and all), B with the settings
// applied and its claims and document_rounding removed (compare checks no
// claims and runs the exact arithmetic only, and a change of shape or of
// run.to would make them invalid). A --set under claims or
// document_rounding is refused: it would change nothing.
struct LessonPair {
    Lesson a, b;
    std::vector<AppliedSetting> settings;
    std::string sets;     // "--set K=V --set K2=V2", as given
    std::string b_label;  // "FILE (with --set K=V ...)": how errors and the output name B
};

// Resolution of KEY, in the lesson's JSON tree (docs/compare.md):
//  - '.' separates object keys, [N] (or a number after '.') indexes an array;
//    a key that holds dots itself (a step name under given or
//    document_rounding) is matched whole when the object has it, or when the
//    rest of the path is a step name;
//  - a bare KEY (no '.' or '[') is config.KEY when the lesson format has such
//    a config field (asked of the reader), else the top-level field KEY;
//  - missing objects on the way are created; a path through a value that is
//    not an object or array, or an index out of range, is refused.
// A KEY the reader does not know ("an unknown field") is refused as
// "--set: KEY: ...". A VALUE the reader refuses gives the reader's message
// with B's label: "FILE (with --set K=V): config.heads: expected ...".
// All errors are InputError (exit 2).
LessonPair read_lesson_pair(const std::string& file, const std::vector<Setting>& settings);

// What read_lesson_pair knows when the reader refuses B.
struct RefusalContext {
    std::string file;     // the lesson file, as the reader names it
    std::string b_label;  // "FILE (with --set K=V)"
    std::map<std::string, std::string> created;    // path of a field a --set added -> that --set's text
    std::map<std::string, InputError> bare_misses;  // bare KEY that is no config field -> the reader's refusal of config.KEY
};

// The reader's refusal `e` of B, as compare reports it: a key a --set added
// that the format lacks is that --set's error ("--set: K=V: config.nope:
// expected ..., found an unknown field"); anything else is B's, under B's
// label. Decided by e's fields (kind, file, path) alone, never its wording.
InputError map_refusal(const InputError& e, const RefusalContext& c);

}  // namespace attntrace
