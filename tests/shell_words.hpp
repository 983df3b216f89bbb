// A command line as a shell splits it into words, for the tests that run the
// commands the docs show: spaces separate, '...' and "..." group (the docs'
// commands need no more).
#pragma once

#include <string>
#include <vector>

namespace attntrace::test {

inline std::vector<std::string> shell_words(const std::string& line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;  // a quote opens a word even when it stays empty
    char quote = 0;
    for (char c : line) {
        if (quote) {
            if (c == quote) quote = 0;
            else word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == ' ') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(word);
    return words;
}

}  // namespace attntrace::test
