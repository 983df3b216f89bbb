// run_cli: the CLI11 app, one subcommand per mode, and errors mapped to exit
// statuses (0 fine, 1 a check failed, 2 bad input or usage, 3 a bug). Called
// once per process by main.cpp, and many times in one process by the tests.
#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <omp.h>

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/printable.hpp"

namespace attntrace {

namespace {

// Puts back what the global options change in the process, however the run
// ends, so that one in-process call cannot change the next one's results.
class GlobalsRestored {
public:
    GlobalsRestored() : threads_(omp_get_max_threads()) {}
    ~GlobalsRestored() {
        omp_set_num_threads(threads_);
        if (max_memory_set_) set_max_memory(0);  // 0: back to $ATTNTRACE_MAX_MEMORY or half the memory
    }
    GlobalsRestored(const GlobalsRestored&) = delete;
    GlobalsRestored& operator=(const GlobalsRestored&) = delete;
    void max_memory_set() { max_memory_set_ = true; }

private:
    int threads_;
    bool max_memory_set_ = false;
};

}  // namespace

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err, const CliHost& host) {
    CliContext cli{out, err, host};
    GlobalsRestored restored;
    CLI::App app{"attntrace: every number of a transformer's attention, computed in front of you and checked "
                 "against the articles that print them.\n\nWith no command, runs the flagship lesson (" +
                 std::string(kFlagshipLesson) + ": \"the ring fell\") step by step."};
    // --help's descriptions to the width (subcommands take the formatter from the app as they are added).
    app.formatter(wrapping_formatter(terminal_style("never", host).width));
    app.set_version_flag("--version", "attntrace " ATTNTRACE_VERSION);
    app.require_subcommand(0, 1);
    // --threads and --max-memory also after the command: `attntrace bench --threads 2`.
    app.fallthrough();
    app.footer("Examples:\n  attntrace\n  attntrace list\n  attntrace run 003-3.1-ring-fell --steps 'attn.*'\n"
               "  attntrace check lessons/*.json\n  attntrace export 002-cat-sat-down -o trace.json\n"
               "  attntrace diff trace.json mine.json\n  attntrace report 003-3.3-multi-head -o report.html\n"
               "  attntrace explain 003-3.1-ring-fell 'hook_pattern[0,ring,fell]'\n"
               "  attntrace compare 003-3.1-ring-fell --set scale=false\n"
               "  attntrace bench --help      (every command: its options and examples)");
    int threads = 0;
    app.add_option("--threads", threads, "Threads for the kernels (default: every core); results are identical "
                                         "whatever the number")
        ->check(CLI::Range(1, 1024));
    std::string max_memory;
    auto* max_memory_option = app.add_option("--max-memory", max_memory,
                   "Refuse a run whose estimated peak memory is above this (e.g. 512M, 8G; default: "
                   "$ATTNTRACE_MAX_MEMORY, else half the physical memory)");
    app.add_flag("-q,--quiet", cli.quiet,
                 "No progress line on standard error. It is shown only for long runs (bench; run, check, export or "
                 "golden of a large lesson) and only when standard error is a terminal; ATTNTRACE_NO_PROGRESS=1 also "
                 "turns it off");
    app.add_option("--color", cli.color,
                   "Colour in heatmaps, headings and verdicts: auto (the default: only when standard output is a "
                   "terminal, NO_COLOR is unset or empty and TERM is not dumb), always, never, or 24bit or 256 "
                   "(always, at that depth; otherwise 24-bit unless TERM names a 256-colour terminal and COLORTERM "
                   "does not say truecolor)")
        ->check(CLI::IsMember({"auto", "always", "never", "24bit", "256"}));
    add_run_command(app, cli);
    add_list_command(app, cli);
    add_steps_command(app, cli);
    add_check_command(app, cli);
    add_export_command(app, cli);
    add_golden_command(app, cli);
    add_random_command(app, cli);
    add_bench_command(app, cli);
    add_diff_command(app, cli);
    add_cost_command(app, cli);
    add_report_command(app, cli);
    add_explain_command(app, cli);
    add_compare_command(app, cli);
    add_decode_command(app, cli);
    add_draft_command(app, cli);
    add_patch_command(app, cli);
    app.parse_complete_callback([&] {
        if (threads > 0) omp_set_num_threads(threads);
        if (max_memory_option->count() > 0) {  // given, even as '': parse_size refuses an empty size
            restored.max_memory_set();
            set_max_memory(parse_size(max_memory, "--max-memory"));
        }
    });
    // CLI11 reads a C-style argv; argv[0] names the program in --help's usage line.
    std::vector<const char*> argv{host.program.c_str()};
    for (const auto& a : args) argv.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
        if (app.get_subcommands().empty()) {
            RunOptions flagship;
            flagship.lesson = kFlagshipLesson;
            cli.status = run_lesson_command(cli, flagship);
        }
        // A full disk or a closed pipe must not pass for success.
        out.flush();
        if (!out) {
            err << "attntrace: error: standard output: expected to write the output, found a write error\n";
            return 2;
        }
    } catch (const CLI::Success& e) {
        return app.exit(e, out, err);  // --help, --version
    } catch (const CLI::ParseError& e) {
        // CLI11 echoes the argument it refused: one line, escaped, whatever it holds.
        err << "attntrace: error: " << printable(e.what()) << " (see attntrace --help)\n";
        return 2;
    } catch (const InputError& e) {
        err << "attntrace: error: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        err << "attntrace: error: out of memory (lower the sizes, choose a lighter --trace, or lower --max-memory so that attntrace refuses before it runs)\n";
        return 2;
    } catch (const std::exception& e) {
        // Not the user's fault: a bug. Still one line and no abort.
        err << "attntrace: internal error: " << printable(e.what()) << " (please report it)\n";
        return 3;
    }
    return cli.status;
}

}  // namespace attntrace
