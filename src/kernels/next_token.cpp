#include "kernels/next_token.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attntrace {

std::vector<double> next_token_probabilities(const float* logits, std::size_t V) {
    const double mx = *std::max_element(logits, logits + V);
    std::vector<double> p(V);
    double sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += p[v] = std::exp(static_cast<double>(logits[v]) - mx);
    for (double& x : p) x /= sum;
    return p;
}

std::vector<NextToken> next_tokens(const float* logits, std::size_t V, std::size_t k) {
    return next_tokens(logits, V, k, next_token_probabilities(logits, V));
}

std::size_t top_token(const float* logits, std::size_t V) {
    std::size_t best = 0;
    for (std::size_t v = 1; v < V; ++v)
        if (logits[v] > logits[best]) best = v;  // strictly larger: the lower id stays on a tie
    return best;
}

std::vector<NextToken> next_tokens(const float* logits, std::size_t V, std::size_t k, const std::vector<double>& p) {
    std::vector<std::size_t> order(V);
    std::iota(order.begin(), order.end(), std::size_t{0});
    k = std::min(k, V);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t a, std::size_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
    std::vector<NextToken> top;
    for (std::size_t i = 0; i < k; ++i) top.push_back({static_cast<std::int64_t>(order[i]), logits[order[i]], p[order[i]]});
    return top;
}

}  // namespace attntrace
