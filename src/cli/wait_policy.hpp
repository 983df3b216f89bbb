// How the kernels' threads wait between parallel regions: sleeping, unless
// the user chose otherwise (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
#pragma once

namespace attntrace {

// The OMP_WAIT_POLICY the program sets when the user set neither variable.
inline constexpr const char* kPassiveWaitPolicy = "PASSIVE";

// Call first thing in main, with main's argv. When neither OMP_WAIT_POLICY
// nor GOMP_SPINCOUNT is set, sets OMP_WAIT_POLICY=PASSIVE and runs this
// program again from its start (same process id, arguments, descriptors):
// libgomp reads both variables once, in its own constructor before main, so
// setting them any later has no effect. Returns when the user chose (their
// choice stands) or when the program cannot run itself again (no
// /proc/self/exe): then threads keep libgomp's default, spinning ~300000
// rounds before they sleep.
void prefer_passive_waiting(char** argv);

}  // namespace attntrace
