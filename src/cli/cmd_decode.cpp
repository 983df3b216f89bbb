// attntrace decode LESSON: a causal lesson generated one token at a time with
// a KV cache, each step held to its row of the causal run (decode/decode.hpp).
#include <CLI/CLI.hpp>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "render/decode_text.hpp"

namespace attntrace {

void add_decode_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        bool json = false;
        int precision = 4;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("decode", "Run a causal lesson's attention one token at a time with a KV cache, as "
                                             "a model generates: each step projects the new token alone, appends its "
                                             "key and value to the cache and attends over it. Each step is compared "
                                             "with its row of the causal run over the whole sequence (exit 1 if one "
                                             "differs). `attntrace check` runs the same comparison for every causal "
                                             "lesson.");
    cmd->add_option("lesson", opts->lesson, "Lesson id or file (its config.mask must be causal), or --model DIR");
    add_model_options(*cmd, opts->model, false);
    cmd->add_flag("--json", opts->json, "Print the steps as JSON (format attntrace-decode, docs/decode.md)");
    cmd->add_option("--precision", opts->precision, "Decimals shown")->check(CLI::Range(0, 8));
    cmd->footer("Examples:\n  attntrace decode 002-causal-decode\n  attntrace decode 002-causal-decode --json\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\"");
    cmd->callback([opts, &cli] {
        auto e = evaluate(lesson_or_model(opts->lesson, opts->model, "decode"));
        const DecodeReport r = decode_lesson(e->lesson, e->exact);
        if (!r.applicable)
            fail_file(e->lesson.file, "a lesson a KV cache can decode (causal self-attention from qkv to mix)",
                      "one where " + r.why_not);
        if (opts->json) cli.out << dump_readable(decode_json(e->lesson, r, true));
        else render_decode(cli.out, e->lesson, r, opts->precision);
        cli.status = r.matches() ? 0 : 1;
    });
}

}  // namespace attntrace
