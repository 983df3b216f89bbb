// attntrace draft ARTICLE: a lesson written from an article's printed numbers.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "core/error.hpp"

#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/terminal.hpp"
#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "draft/scan.hpp"
#include "io/files.hpp"
#include "render/draft_view.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

void add_draft_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string article, out = "-";
        bool explain = false;
        std::size_t example = 0;  // 0: every example
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
    cmd->add_option("--example", opts->example,
                    "Write only the Nth worked example's lesson (1 is the first); by default every example's, one lesson "
                    "each: to OUT when the article has one, else OUT with -1, -2, ... before its extension. Standard "
                    "output takes one lesson: the first, or the Nth")
        ->check(non_negative())
        ->check(CLI::Range(std::size_t{1}, kMaxPrintedArrays));  // no article has more examples than arrays
    cmd->footer("Example:\n  attntrace draft docs/examples/tiny-attention.md -o tiny.json --explain\n"
                "  attntrace check tiny.json");
    cmd->callback([opts, &cli] {
        std::vector<Draft> drafts = draft_lessons(read_article(opts->article));
        if (opts->example > drafts.size())
            fail_field("", "--example", fmt::format("an example of the article's {} (1 to {})", drafts.size(), drafts.size()),
                       std::to_string(opts->example));
        if (opts->example) drafts = {std::move(drafts[opts->example - 1])};
        else if (opts->out == "-") drafts.resize(1);
        // A file per example: a bound on the files one run writes (each written whole beside its folder's
        // other files); an article of more examples is drafted one example at a time.
        constexpr std::size_t kMaxLessonFiles = 256;
        if (drafts.size() > kMaxLessonFiles)
            fail_field(opts->article, "",
                       fmt::format("at most {} worked examples to write as lessons (--example N writes the Nth alone)",
                                   kMaxLessonFiles),
                       fmt::format("{} examples", drafts.size()));
        std::vector<std::string> written;
        if (opts->out == "-") {
            written.push_back("-");
        } else {
            const std::filesystem::path out(opts->out);
            for (std::size_t x = 0; x < drafts.size(); ++x)
                written.push_back(drafts.size() == 1 ? opts->out
                                                     : (out.parent_path() / (out.stem().string() + "-" + std::to_string(x + 1) +
                                                                             out.extension().string())).string());
        }
        // every lesson written before any report line, each file whole (written atomically)
        for (std::size_t x = 0; x < drafts.size(); ++x) {
            const std::string text = dump_readable(drafts[x].lesson);
            if (written[x] == "-") cli.out << text;
            else write_file_atomic(written[x], text);
        }
        render_drafts(opts->out == "-" ? cli.err : cli.out, drafts, opts->article, written, opts->explain,
                      terminal_style(cli.color, cli.host).width);
        cli.status = 0;
    });
}

}  // namespace attntrace
