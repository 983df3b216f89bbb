// attntrace report: one self-contained HTML page per lesson. These tests read
// the file as text; tests/report/run_report_test.sh opens it in headless
// Chromium (ctest -R report_chromium) and checks what the script draws.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "evaluate/evaluate.hpp"
#include "lesson/config_fields.hpp"
#include "render/report.hpp"
#include "render/report_assets.hpp"
#include "support.hpp"

using attntrace::test::read_text;
using attntrace::test::run_cli;
using attntrace::test::TempDir;
using attntrace::test::write_text;
using nlohmann::json;

namespace test_report {

namespace {

// The text of the page's data element (`id` "vocabulary": the words its views draw with).
std::string embedded_data(const std::string& html, const std::string& id = "trace") {
    const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
    auto start = html.find(open);
    REQUIRE(start != std::string::npos);
    start += open.size();
    auto end = html.find("</script>", start);
    REQUIRE(end != std::string::npos);
    return html.substr(start, end - start);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("report writes one HTML file holding every step and claim of the lesson, as the export has them",
          "[report]") {
    for (const auto& lesson : attntrace::test::lesson_files()) {
        INFO(lesson);
        TempDir dir;
        auto r = run_cli({"report", lesson, "-o", dir.file("report.html")});
        REQUIRE(r.status == 0);
        CHECK(r.err.empty());
        CHECK(dir.entries() == std::vector<std::string>{"report.html"});  // no temporary left behind
        const std::string html = read_text(dir.file("report.html"));
        CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
        CHECK(html.size() < (std::size_t{2} << 20));  // the lessons' pages stay small

        // The data is the export's JSON value (only '<' is written differently).
        REQUIRE(run_cli({"export", lesson, "-o", dir.file("trace.json")}).status == 0);
        const json exported = json::parse(read_text(dir.file("trace.json")));
        const json data = json::parse(embedded_data(html));
        CHECK(data == exported);
        for (const auto& step : exported["steps"]) CHECK(html.find(step["name"].get<std::string>()) != std::string::npos);
        for (const auto& claim : exported["claims"])
            CHECK(html.find("\"id\": \"" + claim["id"].get<std::string>() + "\"") != std::string::npos);
    }
}

TEST_CASE("the report loads nothing: no URL, no external script, style or image", "[report]") {
    for (const auto& lesson : attntrace::test::lesson_files()) {
        INFO(lesson);
        TempDir dir;
        REQUIRE(run_cli({"report", lesson, "-o", dir.file("r.html")}).status == 0);
        const std::string html = read_text(dir.file("r.html"));
        for (const char* pattern : {"http://", "https://", "src=\"//", "<link", "@import", "url("})
            CHECK(html.find(pattern) == std::string::npos);
        // The page forbids every fetch itself: a stray URL would be refused by the browser.
        CHECK(html.find("content=\"default-src 'none';") != std::string::npos);
        // Three scripts (the data, the vocabulary, the code), each closed once.
        CHECK(occurrences(html, "<script") == 3);
        CHECK(occurrences(html, "</script>") == 3);
    }
}

TEST_CASE("text in a lesson cannot close the report's script element or inject markup", "[report]") {
    std::string text = read_text(attntrace::test::lessons_dir() + "/003-3.1-ring-fell.json");
    const std::string evil = "</script><script>alert(1)</script><!-- & \\\"quoted\\\"";
    auto at = text.find("\"title\": \"");
    REQUIRE(at != std::string::npos);
    text.insert(at + 10, evil);
    auto e = attntrace::evaluate(attntrace::parse_lesson(text, "evil.json"));
    std::string html;
    attntrace::StringSink sink(html);
    attntrace::write_report_html(sink, e->lesson, e->exact, e->report);
    CHECK(occurrences(html, "</script>") == 3);
    CHECK(html.find("<!--") == std::string::npos);
    CHECK(html.find("<title>attntrace: &lt;/script&gt;&lt;script&gt;alert(1)") != std::string::npos);
    const json data = json::parse(embedded_data(html));
    CHECK(data["lesson"]["title"].get<std::string>().rfind("</script><script>alert(1)</script><!-- & \"quoted\"", 0) == 0);
}

TEST_CASE("the page draws with the tables words: boxes from the step table, norm and position names from the config table",
          "[report]") {
    const json vocabulary = json::parse(attntrace::report_vocabulary().dump());
    // each norm kind the config table spells, by the name it declares for it
    json norms = json::object();
    for (const attntrace::Spelling& s : attntrace::norm_kinds()) norms[std::string(s.name)] = std::string(s.display);
    CHECK(vocabulary["norms"] == norms);
    CHECK(vocabulary["norms"]["rmsnorm"] == "RMSNorm");
    CHECK(vocabulary["norm_default"] == "layernorm");  // what an export leaves unwritten (trace_export.cpp)
    json positions = json::object();
    for (const attntrace::Spelling& s : attntrace::position_kinds())
        positions[std::string(s.name)] = std::string(s.display.empty() ? s.name : s.display);
    CHECK(vocabulary["positions"] == positions);
    CHECK(vocabulary["positions"]["alibi"] == "ALiBi");
    // the script keeps no word of its own: none of the labels is written in it
    const std::string_view script = attntrace::report_js();
    std::vector<std::string> words;
    for (const auto& [tail, label] : vocabulary["boxes"].items())
        if (label.get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
            words.push_back(label.get<std::string>());  // "Q, K, V", "mix A·V", "RoPE": not a plain identifier
    for (const auto& [kind, name] : norms.items()) words.push_back(name.get<std::string>());
    words.push_back(positions["rope"].get<std::string>());
    REQUIRE(words.size() > 8);
    for (const std::string& w : words) {
        INFO(w);
        CHECK(script.find("\"" + w + "\"") == std::string_view::npos);
    }
    // every page carries it, and every step of every lesson has a box in it (a norm's: its kind's name)
    for (const auto& lesson : attntrace::test::lesson_files()) {
        INFO(lesson);
        TempDir dir;
        REQUIRE(run_cli({"report", lesson, "-o", dir.file("r.html")}).status == 0);
        const std::string html = read_text(dir.file("r.html"));
        CHECK(json::parse(embedded_data(html, attntrace::kReportVocabularyId)) == vocabulary);
        for (const auto& step : json::parse(embedded_data(html))["steps"]) {
            const std::string name = step["name"].get<std::string>(), tail = name.substr(name.rfind('.') + 1);
            const bool norm = name.find(".ln") != std::string::npos || name.rfind("ln", 0) == 0;
            INFO(name);
            CHECK((norm || vocabulary["boxes"].contains(tail)));
        }
    }
}

TEST_CASE("report with a bad lesson exits 2 with one line and leaves no file", "[report]") {
    TempDir dir;
    write_text(dir.file("bad.json"), "{\"format\": \"attntrace-lesson\", \"version\": 1, \"id\": ");
    auto r = run_cli({"report", dir.file("bad.json"), "-o", dir.file("r.html")});
    CHECK(r.status == 2);
    CHECK(r.err.rfind("attntrace: error: ", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(dir.entries() == std::vector<std::string>{"bad.json"});

    auto missing = run_cli({"report", "no-such-lesson", "-o", dir.file("r.html")});
    CHECK(missing.status == 2);
    CHECK(dir.entries() == std::vector<std::string>{"bad.json"});
}

TEST_CASE("an existing report survives a failed run untouched", "[report]") {
    TempDir dir;
    REQUIRE(run_cli({"report", "003-3.1-ring-fell", "-o", dir.file("r.html")}).status == 0);
    const std::string before = read_text(dir.file("r.html"));
    write_text(dir.file("bad.json"), "[]");
    auto r = run_cli({"report", dir.file("bad.json"), "-o", dir.file("r.html")});
    CHECK(r.status == 2);
    CHECK(read_text(dir.file("r.html")) == before);
    CHECK(dir.entries() == std::vector<std::string>{"bad.json", "r.html"});
}

TEST_CASE("report -o - writes the page to standard output", "[report]") {
    auto r = run_cli({"report", "003-3.3-multi-head", "-o", "-"});
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(json::parse(embedded_data(r.out))["config"]["heads"] == 2);
}

TEST_CASE("the report commands in README.md run as shown and write their page", "[report][docs]") {
    const std::string readme = read_text(attntrace::test::source_dir() + "/README.md");
    const std::vector<std::vector<std::string>> commands = {
        {"003-3.3-multi-head", "report.html"},
        {"lessons/004-causal-mask-example.json", "causal.html"},
    };
    TempDir dir;
    for (const auto& c : commands) {
        const std::string line = "attntrace report " + c[0] + " -o " + c[1];
        INFO(line);
        CHECK(readme.find("\n" + line + "\n") != std::string::npos);
        const std::string lesson = c[0].rfind("lessons/", 0) == 0 ? attntrace::test::source_dir() + "/" + c[0] : c[0];
        CHECK(run_cli({"report", lesson, "-o", dir.file(c[1])}).status == 0);
        CHECK(read_text(dir.file(c[1])).find("id=\"trace\"") != std::string::npos);
    }
    // a trace's page: the README's three lines, in a folder of their own
    for (const char* line : {"\nattntrace export 002-gqa-groups --npy gqa-npy -o gqa.json\n",
                             "\nattntrace report gqa.json -o gqa.html ", "\nattntrace report gqa-npy -o gqa-npy.html "})
        CHECK(readme.find(line) != std::string::npos);
    CHECK(run_cli({"export", "002-gqa-groups", "--npy", dir.file("gqa-npy"), "-o", dir.file("gqa.json")}).status == 0);
    CHECK(run_cli({"report", dir.file("gqa.json"), "-o", dir.file("gqa.html")}).status == 0);
    CHECK(run_cli({"report", dir.file("gqa-npy"), "-o", dir.file("gqa-npy.html")}).status == 0);
}

TEST_CASE("report draws a trace without its lesson: an export as it is, a minimal trace and an npy folder filled in",
          "[report]") {
    TempDir dir;
    const std::string exported = dir.file("t.json");
    REQUIRE(run_cli({"export", "002-gqa-groups", "-o", exported}).status == 0);
    SECTION("an export: its document is the page's data, value for value") {
        const std::string page = dir.file("t.html");
        REQUIRE(run_cli({"report", exported, "-o", page}).status == 0);
        CHECK(json::parse(embedded_data(read_text(page))) == json::parse(read_text(exported)));
    }
    SECTION("an npy folder: the same steps and values, axes and labels from the catalogue, no claims") {
        const std::string folder = dir.file("npy"), page = dir.file("n.html");
        REQUIRE(run_cli({"export", "002-gqa-groups", "--npy", folder, "-o", dir.file("unused.json")}).status == 0);
        REQUIRE(run_cli({"report", folder, "-o", page}).status == 0);
        const json data = json::parse(embedded_data(read_text(page))), want = json::parse(read_text(exported));
        REQUIRE(data["steps"].size() == want["steps"].size());
        for (std::size_t i = 0; i < want["steps"].size(); ++i) {
            const json &got = data["steps"][i], &exp = want["steps"][i];
            INFO(exp["name"]);
            CHECK(got["name"] == exp["name"]);
            CHECK(got["shape"] == exp["shape"]);
            CHECK(got["axes"] == exp["axes"]);  // the catalogue's axes, found from the name alone
            if (exp["values"].is_array()) {
                // float32 values through .npy: equal to the export's (which prints them with 9 digits)
                const auto g = got["values"].flatten(), e = exp["values"].flatten();
                REQUIRE(g.size() == e.size());
                for (auto it = e.begin(); it != e.end(); ++it)
                    if (it->is_number()) CHECK(g[it.key()].get<double>() == Approx(it->get<double>()).epsilon(1e-7));
            }
        }
        CHECK(data["claims"].empty());
    }
    SECTION("a minimal trace: numbered tokens and labels, an unknown step's axes numbered") {
        const std::string minimal = dir.file("m.json"), page = dir.file("m.html");
        write_text(minimal, R"({"format": "attntrace-trace", "version": 2, "steps": [
            {"name": "blocks.3.cross_attn.hook_pattern", "shape": [1, 2, 3], "values": [[[1, 0, 0], [0.5, 0.25, 0.25]]]},
            {"name": "mine.out", "shape": [2, 2], "values": [[1, 2], [3, 4]]}]})");
        REQUIRE(run_cli({"report", minimal, "-o", page}).status == 0);
        const json data = json::parse(embedded_data(read_text(page)));
        CHECK(data["steps"][0]["axes"] == json{"head", "query", "key"});
        CHECK(data["steps"][0]["labels"][2] == json{"t0", "t1", "t2"});
        CHECK(data["steps"][1]["axes"] == json{"axis0", "axis1"});
        CHECK(data["tokens"] == json{"t0", "t1", "t2"});
        CHECK(data["steps"][1]["source"] == "computed");
    }
    SECTION("what is not a trace: one line, exit 2, no page") {
        const std::string page = dir.file("bad.html");
        std::filesystem::create_directories(dir.file("empty"));
        for (const std::string& arg : {dir.file("empty"), std::string("no-such-trace.json")}) {
            INFO(arg);
            auto r = run_cli({"report", arg, "-o", page});
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK_FALSE(std::filesystem::exists(page));
        }
        write_text(dir.file("steps-missing.json"), R"({"format": "attntrace-trace", "version": 2, "steps": [{"name": "x"}]})");
        auto r = run_cli({"report", dir.file("steps-missing.json"), "-o", page});
        CHECK(r.status == 2);
        CHECK(r.err.find("steps[0].shape") != std::string::npos);
    }
}

TEST_CASE("report A B draws |A - B| per step and names where B first diverges", "[report][diff]") {
    TempDir dir;
    const std::string a = dir.file("a.json"), b = dir.file("b.json"), page = dir.file("d.html");
    REQUIRE(run_cli({"export", "003-3.1-ring-fell", "-o", a}).status == 0);
    REQUIRE(run_cli({"export", "003-3.1-ring-fell", "--arithmetic", "document", "-o", b}).status == 0);
    REQUIRE(run_cli({"report", a, b, "-o", page}).status == 0);
    const json data = json::parse(embedded_data(read_text(page)));
    const json ja = json::parse(read_text(a)), jb = json::parse(read_text(b));
    REQUIRE(data["steps"].size() == ja["steps"].size());
    std::string first;  // the first step whose |A - B| exceeds diff's tolerances somewhere (1e-4 + 1e-4·|a|)
    for (std::size_t i = 0; i < ja["steps"].size(); ++i) {
        const json &sa = ja["steps"][i], &sb = jb["steps"][i], &sd = data["steps"][i];
        INFO(sa["name"]);
        REQUIRE(sd["name"] == sa["name"]);
        const auto fa = sa["values"].flatten(), fb = sb["values"].flatten(), fd = sd["values"].flatten();
        REQUIRE(fd.size() == fa.size());
        for (auto it = fa.begin(); it != fa.end(); ++it) {
            if (!it->is_number()) continue;  // -inf on both sides: 0
            const double want = std::fabs(it->get<double>() - fb[it.key()].get<double>());
            CHECK(fd[it.key()].get<double>() == Approx(want).margin(1e-6));
            if (first.empty() && want > 1e-4 + 1e-4 * std::fabs(it->get<double>())) first = sa["name"];
        }
    }
    REQUIRE_FALSE(first.empty());  // the document run rounds some step away from the exact one
    CHECK(data["diff"]["first_divergence"] == first);
    // each cell's verdict beside its |A - B| (1: beyond 1e-4 + 1e-4·|a|), and the page's one scale:
    // the tolerance and the largest |A - B| of every step
    double largest = 0;
    std::size_t beyond = 0;
    for (std::size_t i = 0; i < ja["steps"].size(); ++i) {
        const json &sa = ja["steps"][i], &sb = jb["steps"][i], &sd = data["steps"][i];
        INFO(sa["name"]);
        const auto fa = sa["values"].flatten(), fb = sb["values"].flatten(), fd = sd["values"].flatten();
        REQUIRE(sd.contains("beyond"));
        const auto off = sd["beyond"].flatten();
        REQUIRE(off.size() == fa.size());
        for (auto it = fa.begin(); it != fa.end(); ++it) {
            if (!it->is_number()) continue;
            const double va = it->get<double>(), d = std::fabs(va - fb[it.key()].get<double>());
            largest = std::max(largest, fd[it.key()].get<double>());
            const bool far = d > 1e-4 + 1e-4 * std::fabs(va);
            beyond += far;
            CHECK(off[it.key()].get<double>() == (far ? 1.0 : 0.0));
        }
    }
    CHECK(beyond > 0);
    CHECK(data["diff"]["atol"] == 1e-4);
    CHECK(data["diff"]["rtol"] == 1e-4);
    CHECK(data["diff"]["largest"].get<double>() == Approx(largest));
    CHECK(data["lesson"]["description"].get<std::string>().find("first divergence: " + first) != std::string::npos);
    // not a trace: one line, exit 2
    auto r = run_cli({"report", a, dir.file("missing"), "-o", page + "2"});
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a model's page holds the next tokens the run computed, as run --json prints them", "[report][model]") {
    TempDir dir;
    const std::string model = attntrace::test::source_dir() + "/tests/models/tiny-gpt2", text = "the ring fell and the";
    REQUIRE(run_cli({"report", "--model", model, "--text", text, "-o", dir.file("m.html")}).status == 0);
    auto run = run_cli({"run", "--model", model, "--text", text, "--json"});
    REQUIRE(run.status == 0);
    const json page = json::parse(embedded_data(read_text(dir.file("m.html"))));
    const json want = json::parse(run.out)["model"]["next_tokens"];
    REQUIRE(want.size() == 10);  // run's default --top-k
    CHECK(page["model"]["next_tokens"] == want);
    // an export drawn as a page keeps them too
    REQUIRE(run_cli({"export", "--model", model, "--text", text, "-o", dir.file("t.json")}).status == 0);
    REQUIRE(run_cli({"report", dir.file("t.json"), "-o", dir.file("t.html")}).status == 0);
    CHECK(json::parse(embedded_data(read_text(dir.file("t.html"))))["model"]["next_tokens"] == want);
    // an encoder has no next token: its page has no table
    REQUIRE(run_cli({"report", "--model", attntrace::test::source_dir() + "/tests/models/tiny-bert", "--text", "the ring fell",
                     "-o", dir.file("b.html")}).status == 0);
    CHECK_FALSE(json::parse(embedded_data(read_text(dir.file("b.html")))).contains("model"));
}

}  // namespace test_report
