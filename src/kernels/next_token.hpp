// The next token from one position's row of logits: the probabilities
// (softmax over the whole vocabulary, in double) and the top-k entries.
// run's next-token table, decode --generate's greedy choice and the check of
// a next-token claim all ask these, so they rank and round alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attntrace {

struct NextToken {
    std::int64_t id = 0;
    float logit = 0;
    double probability = 0;  // softmax over the whole vocabulary, in double
};

// p = softmax(logits)   logits: (V)   p: (V), in double, shifted by the row's max
std::vector<double> next_token_probabilities(const float* logits, std::size_t V);

// The k most likely entries, by logit (ties: the lower id first), with their probabilities.
std::vector<NextToken> next_tokens(const float* logits, std::size_t V, std::size_t k);
// The same with p = next_token_probabilities(logits, V) already computed (a decode's token asks for both).
std::vector<NextToken> next_tokens(const float* logits, std::size_t V, std::size_t k, const std::vector<double>& p);
// The most likely entry's index by next_tokens' ranking (the largest logit, the lower id on a tie), in one
// pass with no probabilities: a greedy decode's choice. V > 0.
std::size_t top_token(const float* logits, std::size_t V);

}  // namespace attntrace
