// --set KEY=VALUE applied to a lesson's JSON tree, then read by the ordinary
// lesson reader (lesson/lesson_reader.cpp). Nothing here knows the lesson
// format's fields: the reader decides what is a field and what is valid, so
// a field the format gains later can be set the day it exists.
#include "compare/lesson_override.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "trace/steps.hpp"

namespace attntrace {

namespace {

// One part of KEY: a field name, or an array index ([N]).
struct Part {
    std::string name;
    std::optional<std::size_t> index;
};

// "--set: K=V: expected E, found F": a --set refused before the reader sees it.
[[noreturn]] void fail_set(const Setting& s, const std::string& expected, const std::string& found) {
    fail_field("--set", s.text, expected, found);
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "given.blocks.0.attn.hook_q" -> given, blocks, 0, attn, hook_q (joined again
// where the tree has a key with dots); "tokens[1]" -> tokens, [1].
std::vector<Part> split_key(const Setting& s) {
    std::vector<Part> parts;
    const std::string& k = s.key;
    std::string cur;
    bool after_index = false;  // "a[1].b": the '.' after ']' separates nothing empty
    auto bad = [&](const std::string& found) {
        fail_set(s, "KEY as field names separated by '.', with [N] for an array index", found);
    };
    for (std::size_t i = 0; i < k.size(); ++i) {
        const char c = k[i];
        if (c == '.') {
            if (cur.empty() && !after_index) bad(fmt::format("an empty name at character {}", i));
            if (!cur.empty()) parts.push_back({cur, std::nullopt});
            cur.clear();
            after_index = false;
        } else if (c == '[') {
            if (!cur.empty()) parts.push_back({cur, std::nullopt});
            else if (parts.empty()) bad("an index with no field before it");
            cur.clear();
            const std::size_t close = k.find(']', i);
            const std::string n = close == std::string::npos ? "" : k.substr(i + 1, close - i - 1);
            if (!all_digits(n)) bad(fmt::format("\"{}\" at character {}", k.substr(i, close == std::string::npos ? std::string::npos : close - i + 1), i));
            parts.push_back({"", static_cast<std::size_t>(std::stoul(n))});
            i = close;
            after_index = true;
        } else {
            if (after_index) bad(fmt::format("'{}' right after ']' at character {}", c, i));
            cur += c;
        }
    }
    if (!cur.empty()) parts.push_back({cur, std::nullopt});
    else if (!after_index) bad(parts.empty() ? "an empty key" : "a key ending in '.'");
    return parts;
}

// Where a --set lands in the tree: the node (created on the way unless
// `removing`), its parent for removal, and the reader's path to it.
struct Place {
    nlohmann::json* node = nullptr;
    nlohmann::json* parent = nullptr;
    std::string key;  // in parent (object), or
    std::optional<std::size_t> index;  // in parent (array)
    std::string path;
    std::string created;  // the path of the first field this --set added ("" when it added none)
};

Place locate(nlohmann::json& doc, const Setting& s, const std::vector<Part>& parts, bool removing) {
    Place p;
    nlohmann::json* node = &doc;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const Part& part = parts[i];
        if (node->is_null() && !removing && !part.index) *node = nlohmann::json::object();  // created on the way
        const bool as_index = part.index || (node->is_array() && all_digits(part.name));
        if (as_index) {
            const std::size_t at = part.index ? *part.index : std::stoul(part.name);
            if (!node->is_array())
                fail_set(s, fmt::format("an array at {} to index", p.path.empty() ? "the top level" : p.path), describe(*node));
            if (at >= node->size())
                fail_set(s, fmt::format("an index below {} (the length of {})", node->size(), p.path), fmt::format("{}", at));
            p.parent = node, p.index = at, p.key.clear();
            p.path = index(p.path, at);
            node = &(*node)[at];
            continue;
        }
        if (!node->is_object())
            fail_set(s, fmt::format("an object at {} to hold \"{}\"", p.path, part.name), describe(*node));
        // The longest run of names that is a key here: step names hold dots.
        std::size_t last = i;
        while (last + 1 < parts.size() && !parts[last + 1].index) ++last;
        std::string name;
        std::size_t used = i;
        for (std::size_t j = last + 1; j-- > i;) {
            std::string joined;
            for (std::size_t m = i; m <= j; ++m) joined += (m > i ? "." : "") + parts[m].name;
            if (node->contains(joined)) {
                name = joined, used = j;
                break;
            }
        }
        if (name.empty()) {
            std::string rest;
            for (std::size_t m = i; m <= last; ++m) rest += (m > i ? "." : "") + parts[m].name;
            if (last > i && find_step(rest)) name = rest, used = last;  // a new step under given, document_rounding
            else name = part.name;
            if (removing)
                fail_set(s, "a field the lesson has (null removes it)", "no " + join(p.path, name));
            if (p.created.empty()) p.created = join(p.path, name);
        }
        p.parent = node, p.key = name, p.index.reset();
        p.path = join(p.path, name);
        node = &(*node)[name];
        i = used;
    }
    p.node = node;
    return p;
}

// Whether the reader refused a key of the lesson itself (not of a file it
// names) as one the format lacks: a field, or a step under given or
// document_rounding.
bool unknown_key(const InputError& e, const std::string& file) {
    const ErrorFields& f = e.fields();
    return f.within.empty() && f.file == file &&
           (f.kind == ErrorKind::unknown_field || f.kind == ErrorKind::unknown_step);
}

std::string dump(const nlohmann::json& doc) { return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Whether the lesson format has config.NAME: the reader is asked (it checks
// config's keys before their values, and A has already read).
std::optional<InputError> config_lacks(const nlohmann::json& doc, const std::string& name, const std::string& file) {
    if (!doc.contains("config") || !doc["config"].is_object()) return std::nullopt;
    nlohmann::json probe = doc;
    probe.erase("claims");
    probe["config"][name] = 0;
    try {
        (void)parse_lesson(dump(probe), file);
    } catch (const InputError& e) {
        if (unknown_key(e, file) && e.path() == "config." + name) return e;
    }
    return std::nullopt;
}

}  // namespace

Setting parse_setting(const std::string& arg) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos)
        fail_file("--set", "KEY=VALUE (e.g. config.scale=false)", fmt::format("\"{}\" with no '='", arg));
    Setting s;
    s.text = arg;
    s.key = arg.substr(0, eq);
    if (s.key.empty()) fail_file("--set", "KEY=VALUE with a KEY before '='", fmt::format("\"{}\"", arg));
    const std::string v = arg.substr(eq + 1);
    // JSON when it parses (false, 2, {"kind": "window"}, "none"), else the text as a string (causal).
    try {
        s.value = parse_json_text(v, "--set");
    } catch (const InputError&) {
        s.value = v;
    }
    return s;
}

InputError map_refusal(const InputError& e, const RefusalContext& c) {
    if (unknown_key(e, c.file)) {
        if (auto by = c.created.find(e.path()); by != c.created.end()) {
            // A bare key that is neither config.KEY nor a top-level field.
            if (auto miss = c.bare_misses.find(e.path()); miss != c.bare_misses.end()) {
                ErrorFields f;
                f.file = "--set";
                f.path = by->second;
                f.expected = "a field of config or of the lesson's top level";
                f.found = fmt::format("neither ({}; {})", miss->second.after_file(), e.after_file());
                return InputError(std::move(f));
            }
            // A key the --set added: its error, the reader's fields kept.
            ErrorFields f = e.fields();
            f.within = {ErrorPlace{"--set", by->second}};
            f.file.clear();
            return InputError(std::move(f));
        }
    }
    // B's error: the lesson's name becomes B's label.
    ErrorFields f = e.fields();
    std::string& outermost = f.within.empty() ? f.file : f.within.front().file;
    if (outermost == c.file) outermost = c.b_label;
    else f.within.insert(f.within.begin(), ErrorPlace{c.b_label, ""});
    return InputError(std::move(f));
}

LessonPair read_lesson_pair(const std::string& file, const std::vector<Setting>& settings) {
    LessonPair pair{read_lesson(file), {}, {}, {}, {}};
    const nlohmann::json original = load_json_file(file);
    nlohmann::json doc = original;
    RefusalContext refusal{file, "", {}, {}};
    std::string label;
    for (const Setting& s : settings) {
        label += (label.empty() ? "" : " ") + std::string("--set ") + s.text;
        std::vector<Part> parts = split_key(s);
        // Neither changes a value of the run, and B drops both (below).
        if (!parts[0].index && (parts[0].name == "claims" || parts[0].name == "document_rounding"))
            fail_set(s, "a field that changes the run",
                     parts[0].name + " (compare checks no claims and runs the exact arithmetic only)");
        const bool bare = parts.size() == 1 && !parts[0].index;
        if (bare) {
            auto miss = config_lacks(original, parts[0].name, file);
            if (!miss) parts.insert(parts.begin(), Part{"config", std::nullopt});
            else refusal.bare_misses.emplace(parts[0].name, *miss);
        }
        const bool removing = s.value.is_null();
        // What A holds there, looked up before anything is created.
        AppliedSetting applied{s, "", std::nullopt, std::nullopt};
        {
            nlohmann::json copy = original;
            try {
                Place before = locate(copy, s, parts, true);
                applied.before = *before.node;
            } catch (const InputError&) {
                // absent in A (or not reachable): B's locate below says what is wrong, if anything
            }
        }
        Place place = locate(doc, s, parts, removing);
        applied.path = place.path;
        if (!place.created.empty()) refusal.created.emplace(place.created, s.text);
        if (removing) {
            if (place.index) place.parent->erase(*place.index);
            else if (place.parent) place.parent->erase(place.key);
            else fail_set(s, "a field to remove", "the whole lesson");
        } else {
            *place.node = s.value;
            applied.after = s.value;
        }
        pair.settings.push_back(std::move(applied));
    }
    pair.sets = label;
    pair.b_label = fmt::format("{} (with {})", file, label);
    // Claims are not checked and only the exact arithmetic runs, and a change
    // of shape or of run.to would make claims and document_rounding invalid.
    doc.erase("claims");
    doc.erase("document_rounding");
    refusal.b_label = pair.b_label;
    try {
        pair.b = parse_lesson(dump(doc), file);
    } catch (const InputError& e) {
        throw map_refusal(e, refusal);
    }
    pair.b.file = pair.b_label;
    return pair;
}

}  // namespace attntrace
