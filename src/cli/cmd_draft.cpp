// attntrace draft ARTICLE: a lesson written from an article's printed numbers.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "io/files.hpp"
#include "render/draft_view.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

void add_draft_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string article, out = "-";
        bool explain = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand(
        "draft", "Write a lesson from an article's text (Markdown, HTML, a Jupyter notebook, LaTeX or plain text): its "
                 "tokens, X and weights, the conventions under which the most printed numbers agree, and a claim for "
                 "every printed array placed on a step; then `attntrace check` gives each its verdict.");
    cmd->add_option("article", opts->article, "The article: .md, .html, .ipynb, .tex, or text")->required();
    cmd->add_option("-o,--out", opts->out, "Lesson file to write ('-': standard output, the report then on standard error)");
    cmd->add_flag("--explain", opts->explain, "Say why each array was read as an input, a weight or a claim, and the "
                                               "conventions tried with how many printed numbers each run agreed with");
    cmd->footer("Example:\n  attntrace draft docs/examples/tiny-attention.md -o tiny.json --explain\n"
                "  attntrace check tiny.json");
    cmd->callback([opts, &cli] {
        const Draft d = draft_lesson(read_article(opts->article));
        const std::string text = dump_readable(d.lesson);
        if (opts->out == "-") {
            cli.out << text;
            render_draft(cli.err, d, opts->article, "-", opts->explain);
        } else {
            write_file_atomic(opts->out, text);
            render_draft(cli.out, d, opts->article, opts->out, opts->explain);
        }
        cli.status = 0;
    });
}

}  // namespace attntrace
