// peak_rss OUT ERR ARGS...: runs the attntrace binary with ARGS (standard
// output to OUT, error to ERR) and prints "PEAK_KIB STATUS": the child's
// peak resident memory and its exit status.
//
// Why a program of its own: Linux carries the resident size of the process
// that execs into the new program's peak (ru_maxrss), so a child spawned from
// the test process (hundreds of MB after the 40 MB inputs) would report at
// least the test's size. Spawned from this small program, it reports its own.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "peak_rss: expected OUT ERR ARGS...\n");
        return 2;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0) _exit(127);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<char*> args{const_cast<char*>(ATTNTRACE_BINARY)};
        for (int i = 3; i < argc; ++i) args.push_back(argv[i]);
        args.push_back(nullptr);
        ::execv(ATTNTRACE_BINARY, args.data());
        _exit(127);
    }
    int status = 0;
    struct rusage ru {};
    if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return 2;
    std::printf("%ld %d\n", ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
