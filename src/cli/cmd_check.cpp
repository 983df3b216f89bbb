// attntrace check LESSON...: every claim's verdict; exit 1 when one is not what its lesson expects.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "model/model_lesson.hpp"
#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "cost/cost_lesson.hpp"
#include "render/cost_check.hpp"
#include "render/decode_text.hpp"
#include "render/text.hpp"
#include "render/wrap.hpp"
#include "export/trace_export.hpp"

namespace attntrace {

void add_check_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::vector<std::string> lessons;
        std::string format = "table";
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("check", "Compare each claim of the lessons with the computation at the claim's "
                                            "printed precision: agrees, agrees-when-rounded (only once an "
                                            "intermediate is rounded as the article printed it), disagrees (with the "
                                            "right values), not-checkable. Exits 1 when a verdict differs from the "
                                            "one its lesson expects.");
    cmd->add_option("lessons", opts->lessons, "Lesson ids or files")->required();
    cmd->add_option("--format", opts->format, "table or json")->check(CLI::IsMember({"table", "json"}));
    cmd->footer("Example:\n  attntrace check lessons/*.json\n  attntrace check 002-cat-sat-down --format json\n  attntrace check 000-memory-table\n  attntrace check lessons/cost/*.json");
    cmd->callback([opts, &cli] {
        // Read every lesson first: a bad one stops the run before anything is printed.
        // A lesson is a pipeline lesson or a cost lesson (docs/cost.md), by its "format".
        struct Checked {
            std::unique_ptr<Evaluation> eval;
            std::unique_ptr<CostLesson> cost;
            CostCheckReport cost_report;
            DecodeReport decode;  // causal lessons: decoded with a KV cache and held to the causal run
        };
        std::vector<Checked> checked;
        for (const auto& l : opts->lessons) {
            const std::string file = resolve_lesson(l);
            Checked c;
            if (is_cost_lesson(load_json_file(file, lesson_json_limits()))) {
                c.cost = std::make_unique<CostLesson>(read_cost_lesson(file));
                c.cost_report = check_cost_lesson(*c.cost);
            } else {
                Lesson lesson = read_any_lesson(file);
                ProgressLine progress(cli, long_run(lesson), lesson.id);
                c.eval = evaluate(std::move(lesson), {}, progress.callback());
                if (c.eval->lesson.config.mask == MaskKind::causal) c.decode = decode_lesson(c.eval->lesson, c.eval->exact);
            }
            checked.push_back(std::move(c));
        }
        bool ok = true;
        std::size_t counts[5] = {0, 0, 0, 0, 0};  // per Verdict
        CheckReport all;  // every pipeline lesson's results, for the summary
        OrderedJson out = OrderedJson::array();
        for (const auto& c : checked) {
            if (c.cost) {
                ok = ok && c.cost_report.all_as_expected();
                for (const auto& r : c.cost_report.results)
                    if (!r.claim.answer) ++counts[static_cast<int>(r.verdict)];
                if (opts->format == "json") out.push_back(cost_check_json(*c.cost, c.cost_report));
                else render_cost_check(cli.out, *c.cost, c.cost_report, terminal_style(cli.color, cli.host).width);
                continue;
            }
            const auto& e = c.eval;
            ok = ok && e->report.all_as_expected() && (!c.decode.applicable || c.decode.matches());
            for (const auto& r : e->report.results) {
                ++counts[static_cast<int>(r.verdict)];
                all.results.push_back(r);
            }
            if (opts->format == "json") {
                OrderedJson j = trace_to_json(e->lesson, e->exact, &e->report);
                OrderedJson entry;
                entry["lesson"] = e->lesson.id;
                entry["file"] = e->lesson.file;
                entry["kind"] = "pipeline";
                entry["as_expected"] = e->report.all_as_expected();
                entry["claims"] = j["claims"];
                if (c.decode.applicable) entry["decode"] = decode_json(e->lesson, c.decode, false);
                out.push_back(std::move(entry));
            } else {
                render_check(cli.out, e->lesson, e->exact, e->report, terminal_style(cli.color, cli.host));
                render_decode_check(cli.out, c.decode, terminal_style(cli.color, cli.host).width);
            }
        }
        if (opts->format == "json") {
            OrderedJson doc;
            doc["format"] = "attntrace-check";
            doc["version"] = 1;
            doc["lessons"] = out;
            cli.out << dump_readable(doc);
        } else {
            auto n = [&](Verdict v) { return counts[static_cast<int>(v)]; };
            cli.out << "\n"
                    << wrap_text(fmt::format("{} lesson{}: {} agree, {} agree only from the article's given values, {} "
                                             "agree when rounded as printed, {} disagree, {} not checkable{}; {}",
                                             checked.size(), checked.size() == 1 ? "" : "s", n(Verdict::agrees), n(Verdict::agrees_from_given),
                                             n(Verdict::agrees_when_rounded), n(Verdict::disagrees),
                                             n(Verdict::not_checkable), given_note(all),
                                             unbroken(ok ? "every verdict as its lesson expects"
                                                         : "SOME VERDICTS ARE NOT AS EXPECTED")),
                                 terminal_style(cli.color, cli.host).width, "", "    ");
        }
        cli.status = ok ? 0 : 1;
    });
}

}  // namespace attntrace
