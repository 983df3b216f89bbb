// attntrace golden [LESSON...] [--update]: compare the lessons' traces with
// golden/, or (only with --update) rewrite them.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <ostream>
#include <set>

#include "evaluate/evaluate.hpp"
#include "model/model_lesson.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "render/wrap.hpp"
#include "export/trace_export.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "io/data_dir.hpp"
#include "io/files.hpp"
#include "io/outputs.hpp"
#include "core/json_field.hpp"
#include "trace/golden.hpp"

namespace attntrace {

namespace {

// The trace, with a line saying what the file is and how it is made.
std::string golden_text(const Evaluation& e) {
    OrderedJson trace = trace_to_json(e.lesson, e.exact, &e.report);
    OrderedJson j;
    for (auto it = trace.begin(); it != trace.end(); ++it) {
        j[it.key()] = it.value();
        if (it.key() == "generator")
            j["about"] = fmt::format("Expected trace of lesson {}, written by `attntrace golden --update {}`. The golden test "
                             "recomputes it and compares every value within the tolerances in src/trace/golden.hpp.",
                                     e.lesson.id, e.lesson.id);
    }
    return dump_readable(j);
}

}  // namespace

void add_golden_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::vector<std::string> lessons;
        bool update = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("golden", "Compare each lesson's trace with its golden file ID.json in the golden "
                                             "folder: $ATTNTRACE_GOLDEN when set, else share/attntrace/golden beside "
                                             "an installed attntrace, else the source tree's golden/. Prints ok or "
                                             "MISMATCH per file, with the step and cell that differ; exit 1 on any "
                                             "difference. Only --update rewrites goldens, and only when every lesson "
                                             "loads and checks as expected.");
    cmd->add_option("lessons", opts->lessons, "Lesson ids or files (default: every lesson)");
    cmd->add_flag("--update", opts->update, "Rewrite the golden files from the current computation");
    cmd->footer("Examples:\n  attntrace golden\n  attntrace golden 003-3.1-ring-fell 002-cat-sat-down\n"
                "  attntrace golden --update 003-3.1-ring-fell");
    cmd->callback([opts, &cli] {
        std::vector<std::string> files;
        if (opts->lessons.empty()) files = list_lesson_files();
        for (const auto& l : opts->lessons) files.push_back(resolve_lesson(l));
        namespace fs = std::filesystem;
        std::vector<std::unique_ptr<Evaluation>> evals;
        std::set<std::string> ids;
        for (const auto& f : files) {
            Lesson lesson = read_any_lesson(f);
            ProgressLine progress(cli, long_run(lesson), lesson.id);
            evals.push_back(evaluate(std::move(lesson), {}, progress.callback()));
            // golden/ID.json is named after the id: a lesson must not write another's golden.
            const std::string& id = evals.back()->lesson.id;
            if (fs::path(f).stem().string() != id)
                fail_field(f, "id", fmt::format("the file's name without .json (\"{}\"), which names its golden file",
                                                fs::path(f).stem().string()),
                           "\"" + id + "\"");
            if (!ids.insert(id).second) fail_field(f, "id", "an id no other lesson of this run has", "\"" + id + "\" again");
        }
        if (opts->update) {
            for (const auto& e : evals)
                if (!e->report.all_as_expected())
                    fail_file(e->lesson.file, "every claim to check as the lesson expects before goldens are rewritten",
                              "a verdict that differs (see attntrace check)");
            // Every golden prepared before any is replaced (io/outputs.hpp): one that
            // cannot be written (its path a folder) leaves all of them as they were.
            Outputs outputs;
            std::vector<std::string> written;
            for (const auto& e : evals) {
                written.push_back((fs::path(golden_dir()) / (e->lesson.id + ".json")).string());
                AtomicFile& f = outputs.file(written.back());
                f.write(golden_text(*e));
                f.prepare();  // whole on disk and closed: one descriptor open at a time
            }
            outputs.commit();
            for (const auto& path : written) cli.out << "wrote " << printable(path) << "\n";
            cli.status = 0;
            return;
        }
        bool ok = true;
        for (const auto& e : evals) {
            std::string path = (fs::path(golden_dir()) / (e->lesson.id + ".json")).string();
            TraceData golden = read_trace_file(path);
            // Compared as it would be written, so the text form is under test too.
            TraceData fresh = parse_trace(parse_json_text(golden_text(*e), "(computed)"), "(computed)");
            auto diffs = compare_traces(golden, fresh, "attntrace golden --update " + e->lesson.id);
            // Step names from the golden file: printable. Wrapped to the width, "step NAME[i,j]:" and the
            // command to rewrite it each kept whole.
            const std::size_t width = terminal_style(cli.color, cli.host).width;
            for (const auto& d : diffs) {
                std::string line = printable(d);
                auto glue = [&line](std::size_t from, std::size_t to) {
                    line = line.substr(0, from) + unbroken(line.substr(from, to - from)) + line.substr(to);
                };
                if (const std::size_t at = line.find(" (if intended: "); at != std::string::npos) glue(at + 1, line.size());
                if (const std::size_t at = line.find(": step "); at != std::string::npos)
                    glue(at + 2, std::min(line.find(": ", at + 2), line.size()));
                cli.out << wrap_text(line, width, "", "    ");
            }
            cli.out << fmt::format("{} {}\n", diffs.empty() ? "ok      " : "MISMATCH", printable(path));
            ok = ok && diffs.empty();
        }
        cli.status = ok ? 0 : 1;
    });
}

}  // namespace attntrace
