// attntrace: the command line. A thin door over the library: it builds the
// CLI::App, one subcommand per mode, and maps errors to exit statuses
// (0 fine, 1 a check failed, 2 bad input or usage).
#include <CLI/CLI.hpp>
#include <omp.h>

#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/terminal.hpp"
#include "cli/wait_policy.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/files.hpp"

int main(int argc, char** argv) {
    using namespace attntrace;
    prefer_passive_waiting(argv);  // before any thread starts; may run the program again
    CLI::App app{"attntrace: every number of a transformer's attention, computed in front of you and checked "
                 "against the articles that print them.\n\nWith no command, runs the flagship lesson (" +
                 std::string(kFlagshipLesson) + ": \"the ring fell\") step by step."};
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
    app.add_option("--max-memory", max_memory,
                   "Refuse a run whose estimated peak memory is above this (e.g. 512M, 8G; default: "
                   "$ATTNTRACE_MAX_MEMORY, else half the physical memory)");
    bool quiet = false;
    app.add_flag("-q,--quiet", quiet,
                 "No progress line on standard error. It is shown only for long runs (bench; run, check, export or "
                 "golden of a large lesson) and only when standard error is a terminal; ATTNTRACE_NO_PROGRESS=1 also "
                 "turns it off");
    std::string color = "auto";
    app.add_option("--color", color,
                   "Colour in heatmaps: auto (the default: only when standard output is a terminal, NO_COLOR is "
                   "unset or empty and TERM is not dumb), always, or never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    int status = 0;
    add_run_command(app, status);
    add_list_command(app, status);
    add_check_command(app, status);
    add_export_command(app, status);
    add_golden_command(app, status);
    add_random_command(app, status);
    add_bench_command(app, status);
    add_diff_command(app, status);
    add_cost_command(app, status);
    add_report_command(app, status);
    add_explain_command(app, status);
    add_compare_command(app, status);
    add_decode_command(app, status);
    app.parse_complete_callback([&] {
        if (threads > 0) omp_set_num_threads(threads);
        set_quiet(quiet);
        set_color_choice(color);
        if (!max_memory.empty()) set_max_memory(parse_size(max_memory, "--max-memory"));
    });
    remove_partial_files_on_signals();
    try {
        app.parse(argc, argv);
        if (app.get_subcommands().empty()) {
            RunOptions flagship;
            flagship.lesson = kFlagshipLesson;
            status = run_lesson_command(flagship);
        }
        // A full disk or a closed pipe must not pass for success.
        std::cout.flush();
        if (!std::cout) {
            std::cerr << "attntrace: error: standard output: expected to write the output, found a write error\n";
            return 2;
        }
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        std::cerr << "attntrace: error: " << e.what() << " (see attntrace --help)\n";
        return 2;
    } catch (const InputError& e) {
        std::cerr << "attntrace: error: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "attntrace: error: out of memory (lower the sizes, choose a lighter --trace, or lower --max-memory so that attntrace refuses before it runs)\n";
        return 2;
    } catch (const std::exception& e) {
        // Not the user's fault: a bug. Still one line and no abort.
        std::cerr << "attntrace: internal error: " << e.what() << " (please report it)\n";
        return 3;
    }
    return status;
}
