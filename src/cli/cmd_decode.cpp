// attntrace decode LESSON: a causal lesson generated one token at a time with
// a KV cache, each step held to its row of the causal run (decode/decode.hpp).
#include <CLI/CLI.hpp>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/terminal.hpp"
#include "core/error.hpp"
#include "decode/generate.hpp"
#include "model/hf_model.hpp"
#include "render/decode_text.hpp"
#include "render/generate_text.hpp"

namespace attntrace {

void add_decode_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        bool json = false;
        int precision = 4;
        std::optional<std::int64_t> generate;  // signed, as generate() takes it: a count never wraps
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("decode", "Run a causal lesson's attention one token at a time with a KV cache, as "
                                             "a model generates: each step projects the new token alone, appends its "
                                             "key and value to the cache and attends over it. Each step is compared "
                                             "with its row of the causal run over the whole sequence (exit 1 if one "
                                             "differs). `attntrace check` runs the same comparison for every causal "
                                             "lesson.");
    cmd->add_option("lesson", opts->lesson, "Lesson id or file (its config.mask must be causal), or --model DIR");
    add_model_options(*cmd, opts->model, true);
    cmd->add_option("--generate", opts->generate,
                    "With --model: continue the text greedily for N tokens (1..1024) with the KV cache, each the argmax "
                    "of the last position's logits, shown with its top-k alternatives (causal models only)")
        ->check(non_negative());
    cmd->add_flag("--json", opts->json, "Print the steps as JSON (format attntrace-decode, docs/decode.md)");
    cmd->add_option("--precision", opts->precision, "Decimals shown")->check(CLI::Range(0, 8));
    cmd->footer("Examples:\n  attntrace decode 002-causal-decode\n  attntrace decode 002-causal-decode --json\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\"\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\" --generate 5");
    cmd->callback([opts, &cli] {
        if (opts->generate) {
            if (!opts->model.given())
                fail_file("--generate", "--model DIR beside it (a lesson has no unembedding to pick a next token)",
                          "no --model");
            if (!opts->lesson.empty()) fail_file("--generate", "--model DIR instead of a lesson", opts->lesson);
            HfModel m = load_model_option(opts->model);
            const Generation g = generate(m, *opts->generate, opts->model.top_k);
            if (opts->json) cli.out << dump_readable(generation_json(m, g));
            else render_generation(cli.out, m, g, terminal_style(cli.color, cli.host).width);
            cli.status = 0;
            return;
        }
        auto e = evaluate(lesson_or_model(opts->lesson, opts->model, "decode"));
        const DecodeReport r = decode_lesson(e->lesson, e->exact);
        if (!r.applicable)
            fail_file(e->lesson.file, "a lesson a KV cache can decode (causal self-attention from qkv to mix)",
                      "one where " + r.why_not);
        if (opts->json) cli.out << dump_readable(decode_json(e->lesson, r, true));
        else render_decode(cli.out, e->lesson, r, opts->precision, terminal_style(cli.color, cli.host).width);
        cli.status = r.matches() ? 0 : 1;
    });
}

}  // namespace attntrace
