// attntrace decode LESSON: a causal lesson generated one token at a time with
// a KV cache, each step held to its row of the causal run (decode/decode.hpp).
#include <CLI/CLI.hpp>
#include <ostream>

#include "evaluate/evaluate.hpp"
#include "evaluate/intervened.hpp"
#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "cli/terminal.hpp"
#include "core/error.hpp"
#include "decode/generate.hpp"
#include "model/hf_model.hpp"
#include "render/decode_text.hpp"
#include "render/generate_text.hpp"
#include "render/intervention_view.hpp"

namespace attntrace {

void add_decode_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        std::string lesson;
        ModelOptions model;
        bool json = false;
        int precision = 4;
        std::optional<std::int64_t> generate;  // signed, as generate() takes it: a count never wraps
        std::optional<double> temperature, top_p;
        std::optional<std::uint64_t> seed;
        InterventionOptions interventions;
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
    add_intervention_options(*cmd, opts->interventions);
    cmd->add_option("--generate", opts->generate,
                    "With --model: continue the text greedily for N tokens (1..1024) with the KV cache, each the argmax "
                    "of the last position's logits, shown with its top-k alternatives (causal models only)")
        ->check(non_negative());
    cmd->add_option("--temperature", opts->temperature,
                    "With --generate: draw each token from softmax(logits / T) instead of taking the argmax (0: greedy); "
                    "--top-k K then also keeps only the K most likely, and each token shows the distribution it was "
                    "drawn from");
    cmd->add_option("--top-p", opts->top_p,
                    "With --temperature: keep the most likely tokens until their mass reaches P, in (0, 1] (nucleus "
                    "sampling)");
    cmd->add_option("--seed", opts->seed, "With --temperature: the generator's seed (default 0): the same seed draws "
                                          "the same tokens")
        ->check(non_negative());
    cmd->add_flag("--json", opts->json, "Print the steps as JSON (format attntrace-decode, docs/decode.md)");
    cmd->add_option("--precision", opts->precision, "Decimals shown")->check(CLI::Range(0, 8));
    cmd->footer("Examples:\n  attntrace decode 002-causal-decode\n  attntrace decode 002-causal-decode --json\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\"\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\" --generate 5\n"
                "  attntrace decode --model tests/models/tiny-gpt2 --text \"the ring fell\" --generate 5 --temperature 0.8 "
                "--top-k 20 --top-p 0.9 --seed 7");
    CLI::Option* top_k = cmd->get_option("--top-k");
    cmd->callback([opts, top_k, &cli] {
        // the sampling flags need what they act on beside them
        const auto need = [](bool has, const char* flag, const char* expected) {
            if (has) fail_file(flag, expected, "none");
        };
        need(!opts->generate && opts->temperature, "--temperature", "--generate N beside it");
        const bool sampling = opts->temperature && *opts->temperature != 0;
        need(!sampling && opts->top_p.has_value(), "--top-p", "--temperature above 0 beside it (greedy takes the argmax)");
        need(!sampling && opts->seed.has_value(), "--seed", "--temperature above 0 beside it (greedy draws nothing)");
        if (opts->generate) {
            if (opts->interventions.any())
                fail_file(opts->interventions.set.empty() ? "--ablate" : "--set",
                          "a decode of the text alone (without --generate: a step's cells name the text's positions, "
                          "and generated positions have none)",
                          "--generate beside it");
            if (!opts->model.given())
                fail_file("--generate", "--model DIR beside it (a lesson has no unembedding to pick a next token)",
                          "no --model");
            if (!opts->lesson.empty()) fail_file("--generate", "--model DIR instead of a lesson", opts->lesson);
            Sampling s;
            s.temperature = opts->temperature.value_or(0);
            s.top_k = sampling && top_k->count() ? opts->model.top_k : 0;  // given: it cuts as it shows
            s.top_p = opts->top_p.value_or(1);
            s.seed = opts->seed.value_or(0);
            if (const SamplingRefusal r = sampling_refusal(s); !r.flag.empty()) fail_file(r.flag, r.expected, r.found);
            HfModel m = load_model_option(opts->model);
            const Generation g = generate(m, *opts->generate, opts->model.top_k, s);
            if (opts->json) cli.out << dump_readable(generation_json(m, g));
            else render_generation(cli.out, m, g, terminal_style(cli.color, cli.host).width);
            cli.status = 0;
            return;
        }
        // With interventions the changed run is decoded: each window applies them to its rows.
        const CommandEvaluation run = evaluate_command(lesson_or_model(opts->lesson, opts->model, "decode"), {},
                                                       intervention_args(opts->interventions));
        const Evaluation* e = &run.shown();
        const IntervenedEvaluation* intervened = run.intervened.get();
        const DecodeReport r = decode_lesson(e->lesson, e->exact);
        if (!r.applicable)
            fail_file(e->lesson.file, "a lesson a KV cache can decode (causal self-attention from qkv to mix)",
                      "one where " + r.why_not);
        const std::size_t width = terminal_style(cli.color, cli.host).width;
        if (opts->json) {
            OrderedJson j = decode_json(e->lesson, r, true);
            if (intervened) j["interventions"] = interventions_json(*intervened, opts->model.top_k);
            cli.out << dump_readable(j);
        } else {
            render_decode(cli.out, e->lesson, r, opts->precision, width);
            if (intervened) render_interventions(cli.out, *intervened, opts->model.top_k, width);
        }
        cli.status = r.matches() ? 0 : 1;
    });
}

}  // namespace attntrace
