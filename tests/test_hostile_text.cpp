// Hostile text: a token name, a title, a claim id, a step name in a trace or
// an argument may hold escape sequences (ESC [2J clears the screen, an OSC
// sets the window's title), CR and LF, C1 controls or invalid UTF-8. None of
// it reaches the terminal raw: every such string is printed through
// printable() (core/printable.hpp), in tables, heatmap labels, errors and
// progress alike, and an error stays one line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/printable.hpp"
#include "support.hpp"

using attntrace::printable;
using attntrace::test::CliResult;
using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_hostile_text {

namespace {

// Clears the screen, sets the window title (OSC ... BEL), returns the
// carriage, breaks the line, a C1 CSI (U+009B) asking for red, then a
// right-to-left override (U+202E) that would reverse the rest of the line.
const std::string kHostile = "\x1b[2J\x1b]0;pwned\x07\r\n\xc2\x9b" "31m\u202e";

// What no output may hold once the strings above went through it: ESC, BEL,
// CR, the C1 CSI and the override. (LF is checked by counting lines.)
void require_inert(const std::string& out) {
    INFO(out.substr(0, 2000));
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.find('\x07') == std::string::npos);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(out.find("\xc2\x9b") == std::string::npos);
    CHECK(out.find("\u202e") == std::string::npos);
}

// With --color always, the only escapes are our own colour sequences (SGR: ESC [ digits and ; m).
void require_only_colour_escapes(const std::string& out) {
    const std::string stripped = std::regex_replace(out, std::regex("\x1b\\[[0-9;]*m"), "");
    require_inert(stripped);
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

// A causal lesson (heatmaps, claims with quotes and notes, decode) with
// kHostile put into its title, description, source, tokens, claim ids,
// quotes and notes. Token names a claim uses in "at" follow the tokens.
std::string hostile_lesson(const std::string& dir) {
    json doc = json::parse(read_text(attntrace::test::lessons_dir() + "/002-causal-decode.json"));
    doc["title"] = kHostile + doc["title"].get<std::string>();
    doc["description"] = kHostile + doc["description"].get<std::string>();
    doc["source"]["section"] = kHostile;
    std::map<std::string, std::string> renamed;
    for (auto& t : doc["tokens"]) {
        const std::string now = t.get<std::string>() + kHostile;
        renamed[t.get<std::string>()] = now;
        t = now;
    }
    for (auto& c : doc["claims"]) {
        c["id"] = c["id"].get<std::string>() + kHostile;
        c["quote"] = kHostile + c["quote"].get<std::string>();
        c["note"] = kHostile + c["note"].get<std::string>();
        if (c.contains("at"))
            for (auto& [axis, v] : c["at"].items())
                if (v.is_string() && renamed.count(v.get<std::string>())) v = renamed[v.get<std::string>()];
    }
    const std::string file = dir + "/hostile.json";
    write_text(file, doc.dump());
    return file;
}

// A token with a C1 CSI (U+009B) asking for red and a DEL (U+007F): valid
// UTF-8 a JSON writer may leave raw, which a terminal showing the JSON acts on.
const std::string kC1Token = "a\xc2\x9b[31mb\x7f";  // "a\u009b[31mb\u007f"

// Whether `out` holds DEL or any C1 control (C2 80..C2 9F) raw.
bool holds_raw_c1_or_del(const std::string& out) {
    if (out.find('\x7f') != std::string::npos) return true;
    for (std::size_t i = 0; i + 1 < out.size(); ++i)
        if (out[i] == '\xc2' && static_cast<unsigned char>(out[i + 1]) >= 0x80 && static_cast<unsigned char>(out[i + 1]) <= 0x9f)
            return true;
    return false;
}

// Whether some string in `j`, a key or a value, is `s`.
bool holds_string(const json& j, const std::string& s) {
    if (j.is_string()) return j.get<std::string>() == s;
    if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it)
            if (it.key() == s || holds_string(it.value(), s)) return true;
    if (j.is_array())
        for (const auto& e : j)
            if (holds_string(e, s)) return true;
    return false;
}

}  // namespace

TEST_CASE("printable escapes control characters and invalid UTF-8, and keeps valid text as it is", "[hostile]") {
    // Text without controls is unchanged, Unicode included (the formulas' symbols, accents, emoji).
    for (const char* same : {"", "plain ascii ~!@#", "é √ Σ ≤ · × → ░▒▓█ 🙂", "back\\slash", "A[i,j] = e[i,j] / Σ_i"})
        CHECK(printable(same) == same);
    CHECK(printable("a\nb\rc\td") == "a\\nb\\rc\\td");
    CHECK(printable(std::string("\x1b[2J\x07\x7f\x00z", 8)) == "\\x1b[2J\\x07\\x7f\\x00z");
    CHECK(printable("\xc2\x9b" "31m \xc2\x85") == "\\u009b31m \\u0085");  // C1 controls: CSI, NEL
    CHECK(printable("\xc2\xa0") == "\xc2\xa0");                            // U+00A0, the first after C1: kept
    // Invalid UTF-8, byte by byte: a stray continuation, a truncated sequence,
    // overlong forms, a surrogate, above U+10FFFF, bytes that never occur.
    CHECK(printable("a\x80z") == "a\\x80z");
    CHECK(printable("\xe2\x88") == "\\xe2\\x88");       // √ cut short
    CHECK(printable("\xe2\x88z") == "\\xe2\\x88z");
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");       // overlong '/'
    CHECK(printable("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // U+D800
    CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
    CHECK(printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(printable("\xf0\x9f\x99\x82") == "\xf0\x9f\x99\x82");  // 🙂, four bytes, valid
    // Bidirectional overrides, isolates and marks reorder what follows them on
    // the line ("Trojan Source"); the line and paragraph separators break it.
    CHECK(printable("ab\u202ecd\u202c") == "ab\\u202ecd\\u202c");
    CHECK(printable("\u2066x\u2069 \u200e\u200f\u061c") == "\\u2066x\\u2069 \\u200e\\u200f\\u061c");
    CHECK(printable("a\u2028b\u2029") == "a\\u2028b\\u2029");
    CHECK(printable("\u2065\u206a\u2027\u202f\u200d") == "\u2065\u206a\u2027\u202f\u200d");  // their neighbours: kept
    // Kept line breaks, for a block of lines composed elsewhere.
    CHECK(printable("a\nb\x1b", true) == "a\nb\\x1b");
}

TEST_CASE("a lesson's hostile text reaches run, check, list, decode and explain only escaped", "[hostile]") {
    TempDir dir;
    const std::string file = hostile_lesson(dir.path());
    const std::string clean = attntrace::test::lessons_dir() + "/002-causal-decode.json";
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"run"}, {"check"}, {"decode"}, {"explain", "", "hook_pattern[0,2,1]", "hook_z[2,0,0]"}, {"compare", "", "--set", "scale=false"}}) {
        auto with = [&](const std::string& lesson) {
            std::vector<std::string> a = args;
            if (a.size() == 1) a.push_back(lesson);
            else a[1] = lesson;
            a.insert(a.begin(), {"--color", "never"});
            // Prose is wrapped to the width, and the escaped text is longer: wide enough that nothing wraps,
            // so that a line more can only be a line break that got through.
            return run_cli(a, {"COLUMNS=99999"});
        };
        INFO(args[0]);
        const CliResult hostile = with(file), plain = with(clean);
        INFO(hostile.err);
        CHECK(hostile.status == plain.status);
        require_inert(hostile.out);
        require_inert(hostile.err);
        CHECK(hostile.out.find("\\x1b[2J\\x1b]0;pwned\\x07\\r") != std::string::npos);
        // Not one line more than the lesson without the hostile text: no LF got
        // through, explain's included (its labels are escaped one by one).
        CHECK(lines(hostile.out) == lines(plain.out));
    }
    // With colour, the only escapes left are our own colour sequences.
    const CliResult colour = run_cli({"--color", "always", "run", file});
    CHECK(colour.status == 0);
    CHECK(colour.out.find("\x1b[48;2;") != std::string::npos);
    require_only_colour_escapes(colour.out);
    // `list` reads the lessons folder.
    const CliResult list = run_cli({"list"}, {"ATTNTRACE_LESSONS=" + dir.path(), "COLUMNS=99999"});  // nothing wrapped
    CHECK(list.status == 0);
    require_inert(list.out);
    CHECK(lines(list.out) == 4);  // the lesson's two lines, a blank line, the count
}

TEST_CASE("a trace's hostile step names reach diff's table only escaped", "[hostile]") {
    TempDir dir;
    json a = {{"format", "attntrace-trace"}, {"version", 2}, {"steps", json::array()}};
    for (const std::string& name : {std::string("blocks.0.attn.hook_q"), kHostile + "mine"})
        a["steps"].push_back({{"name", name}, {"shape", {2}}, {"values", {1.0, 2.0}}});
    json b = a;
    b["steps"][0]["values"] = {1.0, 3.0};
    b["steps"].push_back({{"name", "only-b" + kHostile}, {"shape", {1}}, {"values", {1.0}}});
    write_text(dir.file("a.json"), a.dump());
    write_text(dir.file("b.json"), b.dump());
    const CliResult r = run_cli({"diff", dir.file("a.json"), dir.file("b.json")});
    CHECK(r.status == 1);
    require_inert(r.out);
    CHECK(r.out.find("\\x1b[2J") != std::string::npos);
    CHECK(r.out.find("only in B (1): only-b\\x1b[2J") != std::string::npos);
}

TEST_CASE("an argument holding controls or invalid UTF-8 is echoed in a one-line error, escaped", "[hostile]") {
    const std::string lesson = attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json";
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"run", kHostile + "nope.json"},                         // a file that is not there
             {"run", "\xff\xfe" "bad\xc3.json"},                      // a file name that is not UTF-8
             {"run", lesson, "--steps", kHostile},                    // a step pattern that names none
             {"explain", lesson, kHostile + "[0]"},                   // a cell that is no step
             {"run", lesson, "--" + kHostile},                        // an option CLI11 does not know
             {"--max-memory", kHostile, "run", lesson},               // a size that is no size
             {"compare", lesson, "--set", kHostile + "=1"}}) {        // a setting that is no field
        INFO(printable(args[0] + " " + args[1]));
        const CliResult r = run_cli(args);
        INFO(r.err);
        CHECK(r.status == 2);
        CHECK(lines(r.err) == 1);
        CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
        require_inert(r.err);
        CHECK(r.out.empty());
    }
    const CliResult r = run_cli({"run", "\xff\xfe" "bad\xc3.json"});
    CHECK(r.err.find("\\xff\\xfebad\\xc3.json") != std::string::npos);
}

TEST_CASE("the report's script writes the lesson's text as text, never as markup", "[hostile][report]") {
    // The report's scripts build the page with createElement, append (text nodes) and
    // setAttribute; markup from a string would let a token name inject
    // elements. The one innerHTML parses a constant to learn the SVG namespace.
    std::string js;  // every script of the page (CMakeLists.txt's ATTNTRACE_REPORT_JS)
    for (const char* file : {"report.js", "report_claims.js", "report_canvas.js", "report_views.js", "report_main.js"})
        js += read_text(std::string(ATTNTRACE_SOURCE_DIR) + "/src/render/report_assets/" + file);
    std::size_t inner = 0;
    for (std::size_t at = js.find("innerHTML"); at != std::string::npos; at = js.find("innerHTML", at + 1)) {
        ++inner;
        CHECK(js.compare(at, 24, "innerHTML = \"<svg></svg>") == 0);
    }
    CHECK(inner == 1);
    for (const char* sink : {"outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc"})
        CHECK(js.find(sink) == std::string::npos);
    // Links built from names are fragments of this page (#step-..., #claim-...), never a scheme.
    const std::regex href("href: `([^`]*)`");
    for (auto it = std::sregex_iterator(js.begin(), js.end(), href); it != std::sregex_iterator(); ++it)
        CHECK((*it)[1].str().rfind("#", 0) == 0);
}

TEST_CASE("JSON on standard output writes DEL and the C1 controls as \\u escapes, and reads back the same strings", "[hostile]") {
    TempDir dir;
    json doc = json::parse(read_text(attntrace::test::lessons_dir() + "/002-causal-decode.json"));
    const std::string first = doc["tokens"][0].get<std::string>();
    doc["tokens"][0] = kC1Token;
    doc["title"] = kC1Token;
    doc["claims"][0]["id"] = "c" + kC1Token;  // what check --format json names
    for (auto& c : doc["claims"])
        if (c.contains("at"))
            for (auto& [axis, v] : c["at"].items())
                if (v.is_string() && v.get<std::string>() == first) v = kC1Token;
    const std::string file = dir.file("c1.json");
    write_text(file, doc.dump());
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"export", file, "-o", "-"}, {"run", file, "--json"}, {"check", file, "--format", "json"},
             {"decode", file, "--json"}, {"compare", file, "--set", "scale=false", "--json"}}) {
        INFO(args[0]);
        const CliResult r = run_cli(args);
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(!holds_raw_c1_or_del(r.out));
        CHECK(r.out.find("\\u009b[31mb\\u007f") != std::string::npos);
        const json back = json::parse(r.out);  // still valid JSON, the same strings
        CHECK((holds_string(back, kC1Token) || holds_string(back, "c" + kC1Token)));
    }
    // diff --json names the steps it compares: a step name holding them
    json a = {{"format", "attntrace-trace"}, {"version", 2}, {"steps", json::array()}};
    a["steps"].push_back({{"name", "mine" + kC1Token}, {"shape", {2}}, {"values", {1.0, 2.0}}});
    json b = a;
    b["steps"][0]["values"] = {1.0, 3.0};
    write_text(dir.file("a.json"), a.dump());
    write_text(dir.file("b.json"), b.dump());
    const CliResult d = run_cli({"diff", dir.file("a.json"), dir.file("b.json"), "--json"});
    CHECK(d.status == 1);
    CHECK(!holds_raw_c1_or_del(d.out));
    CHECK(holds_string(json::parse(d.out), "mine" + kC1Token));
}

}  // namespace test_hostile_text
