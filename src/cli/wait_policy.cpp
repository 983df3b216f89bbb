// Why threads sleep when they wait: libgomp's default lets a thread that
// reaches the end of a parallel region first spin for ~300000 rounds (a few
// ms) before it sleeps. With another process holding one of two cores, the
// spinning thread takes the core its partner needs to finish, at every
// region: `attntrace decode` of a 128-token BERT-size causal lesson took
// 24-53 s instead of ~1.4 s (docs/performance.md, "Waiting threads").
// PASSIVE makes a waiting thread sleep at once.
#include "cli/wait_policy.hpp"

#include <unistd.h>

#include <cstdlib>

namespace attntrace {

void prefer_passive_waiting(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;  // the user's choice stands
    // Reading the variable again after start-up changes nothing in libgomp:
    // the only way to a setting libgomp sees is a new start of the program.
    // After it OMP_WAIT_POLICY is set, so the program does not start a third time.
    if (setenv("OMP_WAIT_POLICY", kPassiveWaitPolicy, 1) != 0) return;
    execv("/proc/self/exe", argv);
    // No /proc: run on with the default policy, and leave no trace of the attempt.
    unsetenv("OMP_WAIT_POLICY");
}

}  // namespace attntrace
