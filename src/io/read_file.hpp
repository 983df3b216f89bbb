// A whole small file read into memory, its size held to a cap before any of
// it is read (the tokenizers' merges.txt, vocab.txt, tokenizer.model).
#pragma once

#include <cstdint>
#include <string>

namespace attntrace {

// The file's bytes. Refused (InputError naming `path`): missing or unreadable,
// a directory, more than `max_bytes` (checked from its size, before reading),
// a read error or a file shorter than its size. `what` is what the file
// should be, for the messages ("a SentencePiece model").
std::string read_small_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what = "a readable file");

}  // namespace attntrace
