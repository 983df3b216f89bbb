// The read bandwidth a decode is held to: a streaming sum over a buffer far
// larger than the caches, on N threads (each sums its contiguous part), the
// figure bench/run_standard.sh's decode row divides a token's weight bytes by.
//
//   c++ -O3 -march=native -fopenmp -o read_bandwidth bench/read_bandwidth.cpp
//   OMP_NUM_THREADS=N OMP_WAIT_POLICY=PASSIVE ./read_bandwidth [MiB] [repeats]
//
// Prints one JSON object: the buffer's bytes, the threads, each pass's GB/s
// (1e9 bytes a second), their median and best. The buffer (default 1024 MiB)
// is written once before timing, so that every page is mapped; each pass reads
// it whole with 16 independent accumulators (the loads, not the adds, bound it).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 9;
    const std::size_t n = mib * (std::size_t{1} << 20) / sizeof(float) / 64 * 64;
    std::vector<float> buffer(n);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) buffer[i] = static_cast<float>(i % 7) * 1e-3f;
    std::vector<double> rates;
    double sink = 0;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        double total = 0;
#pragma omp parallel reduction(+ : total)
        {
            const std::size_t threads = omp_get_num_threads(), t = omp_get_thread_num();
            const std::size_t begin = n / 64 * t / threads * 64, end = n / 64 * (t + 1) / threads * 64;
            float acc[16] = {};
            for (std::size_t i = begin; i < end; i += 16)
                for (int j = 0; j < 16; ++j) acc[j] += buffer[i + j];
            for (float a : acc) total += a;
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rates.push_back(static_cast<double>(n * sizeof(float)) / s / 1e9);
        sink += total;
    }
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    std::printf("{\"format\": \"read-bandwidth\", \"bytes\": %zu, \"threads\": %d, \"gb_per_s\": [", n * sizeof(float),
                omp_get_max_threads());
    for (std::size_t i = 0; i < rates.size(); ++i) std::printf("%s%.2f", i ? ", " : "", rates[i]);
    std::printf("], \"median_gb_per_s\": %.2f, \"best_gb_per_s\": %.2f, \"sum\": %.1f}\n", sorted[sorted.size() / 2],
                sorted.back(), sink);
    return 0;
}
