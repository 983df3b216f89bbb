// attntrace: the command line. All of it is in run_cli (cli/cli.hpp); this
// file only hands it the process: its arguments, its standard streams and
// terminal, and the signal handlers that remove half-written files.
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/wait_policy.hpp"
#include "io/files.hpp"

int main(int argc, char** argv) {
    using namespace attntrace;
    prefer_passive_waiting(argv);  // before any thread starts; may run the program again
    remove_partial_files_on_signals();
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return run_cli(args, std::cout, std::cerr, host_of_this_process(argc > 0 ? argv[0] : nullptr));
}
