// select_steps: the steps a user's patterns pick, by the ways of naming in
// step_lookup.hpp, each tried only when the ones before it picked nothing.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "trace/policy.hpp"
#include "trace/step_lookup.hpp"

namespace attntrace {

namespace {

constexpr std::string_view kHook = "hook_";
// Longer than any step number could be: "123456789012" is a name, not a step.
constexpr std::size_t kMaxNumberDigits = 9;

std::string_view last_part(std::string_view name) {
    const std::size_t dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

std::string_view without_hook(std::string_view s) { return s.substr(0, kHook.size()) == kHook ? s.substr(kHook.size()) : s; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A title's words, lower case: runs of ASCII letters and digits ("Attention
// weights A" -> attention, weights, a).
std::vector<std::string> title_words(std::string_view title) {
    std::vector<std::string> words;
    std::string word;
    for (char c : std::string(title) + " ") {
        if (std::isalnum(static_cast<unsigned char>(c))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!word.empty()) words.push_back(std::exchange(word, {}));
    }
    return words;
}

bool same_word(std::string_view word, std::string_view p) {
    return word == p || (word.size() == p.size() + 1 && word.back() == 's' && word.substr(0, p.size()) == p) ||
           (p.size() == word.size() + 1 && p.back() == 's' && p.substr(0, word.size()) == word);
}

// "softmax.*", "blocks.1.attn.softmax.*": a glob whose last part before
// ".*" is a stage's name picks that stage's steps whose names the part before
// it matches, its output among them (hook_pattern, which is not named
// "softmax.hook_pattern"), besides what the glob matches by name.
bool in_stage_glob(const NamedStep& s, std::string_view p) {
    if (!s.def || p.size() < 3 || p.substr(p.size() - 2) != ".*") return false;
    const std::string_view head = p.substr(0, p.size() - 2);
    const std::size_t dot = head.rfind('.');
    const std::string_view stage = dot == std::string_view::npos ? head : head.substr(dot + 1);
    if (stage_name(s.def->stage) != stage) return false;
    if (dot == std::string_view::npos) return true;
    return step_matches(s.name, {std::string(head.substr(0, dot)) + ".*"});
}

// Whole dotted parts of the name, not its last: "ln1", "attn", "blocks.1", "0.attn".
bool names_parts(std::string_view name, std::string_view p) {
    if (p.empty() || p.front() == '.' || p.back() == '.') return false;
    const std::string_view head = name.substr(0, name.size() - last_part(name).size());  // "blocks.0.attn."
    for (std::size_t at = head.find(p); at != std::string_view::npos; at = head.find(p, at + 1))
        if ((at == 0 || head[at - 1] == '.') && at + p.size() < head.size() && head[at + p.size()] == '.') return true;
    return false;
}

// The step names, stages and title words an unknown pattern may have meant, each once.
std::vector<std::string> candidates(const std::vector<NamedStep>& steps) {
    std::vector<std::string> out;
    auto add = [&](std::string s) {
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    };
    for (const NamedStep& s : steps) add(s.name);
    for (const NamedStep& s : steps)
        if (s.def) add(std::string(stage_name(s.def->stage)));
    for (const NamedStep& s : steps)
        if (s.def)
            for (std::string& w : title_words(s.title.empty() ? s.def->title : s.title))
                if (w.size() > kMinNamePiece) add(std::move(w));
    return out;
}

}  // namespace

StepSelection select_steps(const std::vector<NamedStep>& steps, const std::vector<std::string>& patterns) {
    StepSelection out;
    out.count = steps.size();
    std::vector<bool> picked(steps.size(), false);
    for (const std::string& p : patterns) {
        std::vector<std::size_t> hits;
        const bool number = !p.empty() && p.size() <= kMaxNumberDigits && p.find_first_not_of("0123456789") == std::string::npos;
        if (number) {
            std::size_t n = 0;
            std::from_chars(p.data(), p.data() + p.size(), n);
            if (n < 1 || n > steps.size()) {
                out.unknown = p;
                out.number = true;
                return out;
            }
            hits.push_back(n - 1);
        }
        // Each way of naming only when the ones before it picked nothing.
        auto pick = [&](auto&& matches) {
            if (!hits.empty() || p.empty()) return;
            for (std::size_t k = 0; k < steps.size(); ++k)
                if (matches(steps[k])) hits.push_back(k);
        };
        const std::string_view bare = without_hook(p);
        const std::string low = lower(p);
        pick([&](const NamedStep& s) { return step_matches(s.name, {p}) || in_stage_glob(s, p); });
        pick([&](const NamedStep& s) { return without_hook(last_part(s.name)) == bare; });
        // One way, not three in turn: "scores" is both a stage (its output, the raw scores) and a piece of
        // the names of the scaled and masked scores, and means all of them.
        pick([&](const NamedStep& s) {
            return (s.def && stage_name(s.def->stage) == p) || names_parts(s.name, p) ||
                   (bare.size() >= kMinNamePiece && without_hook(last_part(s.name)).find(bare) != std::string_view::npos);
        });
        pick([&](const NamedStep& s) {
            if (!s.def) return false;
            const std::vector<std::string> words = title_words(s.title.empty() ? s.def->title : s.title);
            return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return same_word(w, low); });
        });
        if (hits.empty()) {
            out.unknown = p;
            out.closest = closest_steps(p, candidates(steps));
            return out;
        }
        for (std::size_t k : hits) picked[k] = true;
    }
    for (std::size_t k = 0; k < steps.size(); ++k)
        if (picked[k]) out.names.push_back(steps[k].name);
    return out;
}

StepSelection select_steps(const Trace& trace, const std::vector<std::string>& patterns) {
    std::vector<NamedStep> steps;
    for (const Step& s : trace.steps) steps.push_back({s.name, s.def, s.title_text});
    return select_steps(steps, patterns);
}

std::string selection_found(const StepSelection& s) {
    if (s.number) return fmt::format("\"{}\" (steps are numbered 1 to {})", s.unknown, s.count);
    return fmt::format("\"{}\"{}", s.unknown, closest_note(s.closest));
}

}  // namespace attntrace
