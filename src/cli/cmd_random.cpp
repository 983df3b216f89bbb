// attntrace random: a lesson of any size from a seed.
#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/count_flags.hpp"
#include "io/files.hpp"
#include "lesson/config_fields.hpp"
#include "lesson/random_lesson.hpp"
#include "trace/trace_json.hpp"

namespace attntrace {

namespace {

// An option's values from the config field table's spellings: "relu|gelu|..." and the map CLI11 checks against.
std::string spelling_choices(std::span<const Spelling> s) {
    std::string out;
    for (const Spelling& e : s) {
        if (!out.empty()) out += '|';
        out += e.name;
    }
    return out;
}
template <class E>
std::map<std::string, E> spelling_map(std::span<const Spelling> s) {
    std::map<std::string, E> out;
    for (const Spelling& e : s) out.emplace(e.name, static_cast<E>(e.value));
    return out;
}

}  // namespace

void add_random_options(CLI::App& cmd, RandomSpec& spec) {
    // Defaults shown in --help are this command's (bench starts from BERT-base).
    cmd.add_option("--tokens", spec.tokens, "Tokens (T)")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 20));
    cmd.add_option("--d-model", spec.d_model, "Model width (C)")
        ->capture_default_str()
        ->check(non_negative())
        ->check(CLI::Range(1, 1 << 16));
    cmd.add_option("--heads", spec.heads, "Heads (NH); must divide d_model")
        ->capture_default_str()
        ->check(non_negative())
        ->check(CLI::Range(1, 1 << 12));
    cmd.add_option("--kv-heads", spec.kv_heads,
                   "K/V heads (KVH); must divide --heads: 1 is multi-query, fewer than --heads grouped-query "
                   "attention (default: as many as --heads)")
        ->check(non_negative())
        ->check(CLI::Range(1, 1 << 12));
    cmd.add_option("--d-ff", spec.d_ff, "FFN hidden width (F)")->capture_default_str()->check(non_negative())->check(CLI::Range(1, 1 << 18));
    cmd.add_option("--seed", spec.seed, "Seed of X and of every weight")->capture_default_str()->check(non_negative());
    cmd.add_option_function<std::string>(
           "--mask", [&spec](const std::string& m) { spec.mask = static_cast<MaskKind>(*spelling_value(mask_kinds(), m)); },
           "none or causal (default: causal with --decoder, whose self-attention is causal; else none)")
        ->option_text("none|causal")
        ->check(CLI::IsMember({"none", "causal"}));
    cmd.add_option("--activation", spec.activation, "relu (default), gelu (erf), gelu_tanh or swiglu")
        ->option_text(spelling_choices(activations()))
        ->transform(CLI::CheckedTransformer(spelling_map<Activation>(activations())));
    cmd.add_option("--norm", spec.norm, "The kind of every norm pass, as config.norm (default " +
                                            std::string(norm_name(RandomSpec{}.norm)) + ")")
        ->option_text(spelling_choices(norm_kinds()))
        ->transform(CLI::CheckedTransformer(spelling_map<NormKind>(norm_kinds())));
    cmd.add_option("--blocks", spec.arch.blocks, "Blocks stacked (steps blocks.i.*)")
        ->capture_default_str()
        ->check(non_negative())
        ->check(CLI::Range(std::size_t{1}, kMaxBlocks));
    cmd.add_flag("--norm-first", spec.arch.norm_first, "Pre-norm blocks (LayerNorm before each sub-block)");
    cmd.add_flag("--decoder", spec.arch.decoder,
                 "Decoder blocks: causal self-attention, cross-attention over a random memory of --tokens rows, FFN");
}

void add_random_command(CLI::App& app, CliContext& cli) {
    struct Opts {
        RandomSpec spec;
        std::string out = "-";
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("random", "Make a lesson of any size from a seed: random X and weights scaled as a "
                                             "real initialisation (softmax rows not saturated). The lesson holds "
                                             "generators, not numbers, so it stays small; run, check, export and "
                                             "bench take it like any other.");
    add_random_options(*cmd, opts->spec);
    cmd->add_option("-o,--out", opts->out, "Lesson file to write ('-': standard output)");
    cmd->footer("Examples:\n  attntrace random --tokens 512 --d-model 768 --heads 12 --d-ff 3072 --seed 7 -o bert.json\n"
                "  attntrace run bert.json --steps hook_pattern\n"
                "  attntrace random --tokens 6 --d-model 8 --heads 2 --d-ff 16 --mask causal --activation gelu\n"
                "  attntrace random --tokens 512 --d-model 768 --heads 12 --kv-heads 4 -o gqa.json\n"
                "  attntrace random --tokens 16 --d-model 32 --heads 4 --blocks 4 --norm-first --mask causal -o gpt.json");
    cmd->callback([opts, &cli] {
        if (opts->spec.d_model % opts->spec.heads != 0)
            throw CLI::ValidationError("--heads", "must divide --d-model");
        if (opts->spec.kv_heads && opts->spec.heads % opts->spec.kv_heads != 0)
            throw CLI::ValidationError("--kv-heads", "must divide --heads");
        std::string text = dump_readable(random_lesson_json(opts->spec));
        if (opts->out == "-") cli.out << text;
        else write_file_atomic(opts->out, text);
        cli.status = 0;
    });
}

}  // namespace attntrace
