// A guard in front of libsentencepiece: the pieces and the precompiled
// character maps of a tokenizer.model checked before the library is handed
// the bytes.
//
// The pieces (ModelProto field 1, each a message whose field 1 is the piece's
// bytes): libsentencepiece 0.1.97 builds its tries of pieces (Darts-clone)
// from NUL-ended keys, so a piece holding a NUL byte becomes a shorter key,
// and Darts throws its own exception ("zero-length key", "wrong key order")
// out of LoadFromSerializedProto (found by fuzzing: a piece "\0\0\x80").
// No trainer writes such a piece (the byte pieces are spelled "<0x00>").
//
// A SentencePiece model (a serialized ModelProto) may carry, in its
// normalizer_spec (field 3) and denormalizer_spec (field 5), a
// precompiled_charsmap (field 2 of each): a little-endian uint32 N, a
// Darts-clone double-array trie of N bytes (4-byte units), then the
// replacement strings, each ended by a NUL. libsentencepiece 0.1.97
// (Debian 12) walks that trie without bounds checks: a unit whose offset
// points past the array made it read out of bounds and crash (measured:
// SIGSEGV on a model whose root offset is 2^30 units), a leaf value past the
// strings makes it read them with strlen, and a size word larger than the
// bytes after it is taken as it is. Llama's and Mistral's models carry no
// map ("identity"); T5-style ones (nmt_nfkc) carry one of ~240 KB.
//
// So every node the library can reach is checked the way its
// commonPrefixSearch walks (Darts-clone's darts.h):
//   unit(u): has_leaf = (u >> 8) & 1, value = u & 0x7FFFFFFF,
//            label = u & 0x800000FF, offset = (u >> 10) << ((u & 0x200) >> 6)
//   pos = 0; pos ^= offset(unit[0]); for each byte c: pos ^= c; read unit[pos]; stop
//   unless label == c; pos ^= offset; if has_leaf: the value is unit[pos]'s
// so for each reached base, unit[base ^ c] must be inside the array for
// every byte c, and each leaf's value must start a NUL-ended string inside
// the replacement strings. The protobuf wire format is walked at the top
// level and inside those two messages only.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "model/sentencepiece.hpp"

namespace attntrace {

namespace {

// Maps larger than this are refused (nmt_nfkc's: ~240 KB): the check below
// visits each reached node's 256 children, so this bounds it to ~2^28 steps.
constexpr std::size_t kMaxCharsmapBytes = std::size_t{4} << 20;

struct Wire {
    std::string_view bytes;
    std::size_t at = 0;
    std::optional<std::uint64_t> varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
            const auto b = static_cast<unsigned char>(bytes[at++]);
            v |= std::uint64_t{b & 0x7Fu} << shift;
            if (!(b & 0x80)) return v;
        }
        return std::nullopt;
    }
};

// Calls f(field, wire type, payload) for each field of a message; false when
// the bytes are no message (the library then refuses them itself).
template <class F>
bool each_field(std::string_view msg, F&& f) {
    Wire w{msg};
    while (w.at < msg.size()) {
        const auto key = w.varint();
        if (!key) return false;
        const auto field = *key >> 3;
        const auto type = static_cast<int>(*key & 7);
        std::string_view payload;
        if (type == 0) {
            if (!w.varint()) return false;
        } else if (type == 1 || type == 5) {
            const std::size_t n = type == 1 ? 8 : 4;
            if (msg.size() - w.at < n) return false;
            w.at += n;
        } else if (type == 2) {
            const auto n = w.varint();
            if (!n || *n > msg.size() - w.at) return false;
            payload = msg.substr(w.at, static_cast<std::size_t>(*n));
            w.at += static_cast<std::size_t>(*n);
        } else {
            return false;  // groups (3, 4) and the unused types: no SentencePiece model has them
        }
        f(field, type, payload);
    }
    return true;
}

std::uint32_t unit_at(std::string_view trie, std::size_t i) {
    std::uint32_t u;
    std::memcpy(&u, trie.data() + 4 * i, 4);
    return u;  // little-endian, as the file and this machine
}

void check_charsmap(std::string_view blob, const std::string& path, const std::string& field) {
    auto refuse = [&](const std::string& expected, const std::string& found) { fail_field(path, field, expected, found); };
    if (blob.size() > kMaxCharsmapBytes)
        refuse(fmt::format("a character map of at most {} bytes", kMaxCharsmapBytes), fmt::format("{} bytes", blob.size()));
    if (blob.size() < 4 + 4) refuse("a trie's size, at least one trie unit, then its strings", fmt::format("{} bytes", blob.size()));
    std::uint32_t trie_bytes;
    std::memcpy(&trie_bytes, blob.data(), 4);
    if (trie_bytes < 4 || trie_bytes > blob.size() - 4)
        refuse(fmt::format("a trie size from 4 to the {} bytes after it", blob.size() - 4), fmt::format("{}", trie_bytes));
    const std::string_view trie = blob.substr(4, trie_bytes), strings = blob.substr(4 + trie_bytes);
    const std::size_t n = trie.size() / 4;
    auto offset = [](std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); };
    std::vector<bool> seen(n, false);
    std::vector<std::size_t> todo;
    const std::size_t root = offset(unit_at(trie, 0));
    todo.push_back(root);
    while (!todo.empty()) {
        const std::size_t base = todo.back();
        todo.pop_back();
        if (base >= n || (base | 0xFF) >= n)
            refuse(fmt::format("a trie whose nodes stay within its {} units", n),
                   fmt::format("a node whose children are at units {} to {}", base & ~std::size_t{0xFF}, base | 0xFF));
        if (seen[base]) continue;
        seen[base] = true;
        for (std::uint32_t c = 0; c < 256; ++c) {
            const std::size_t pos = base ^ c;
            const std::uint32_t u = unit_at(trie, pos);
            if ((u & 0x800000FFu) != c) continue;
            const std::size_t next = pos ^ offset(u);
            if ((u >> 8) & 1) {
                if (next >= n)
                    refuse(fmt::format("a trie whose leaves stay within its {} units", n), fmt::format("a leaf at unit {}", next));
                const std::uint32_t value = unit_at(trie, next) & 0x7FFFFFFFu;
                if (value >= strings.size() || strings.find('\0', value) == std::string_view::npos)
                    refuse(fmt::format("leaf values that start a NUL-ended string within its {} bytes of strings", strings.size()),
                           fmt::format("the value {} (unit {})", value, next));
            }
            todo.push_back(next);
        }
    }
}

}  // namespace

void check_sentencepiece_model(const std::string& bytes, const std::string& path) {
    // The last precompiled_charsmap of each spec is the one the library keeps
    // (protobuf merges a repeated message field; a later bytes field replaces).
    std::optional<std::string_view> maps[2];
    std::size_t piece_index = 0;
    const bool ok = each_field(bytes, [&](std::uint64_t field, int type, std::string_view payload) {
        if (field == 1 && type == 2) {
            const std::size_t i = piece_index++;
            each_field(payload, [&](std::uint64_t inner, int t, std::string_view p) {
                if (inner != 1 || t != 2) return;
                if (const std::size_t nul = p.find('\0'); nul != std::string_view::npos)
                    fail_field(path, fmt::format("pieces[{}].piece", i), "a piece without NUL bytes",
                               fmt::format("a NUL at byte {} of its {}", nul, p.size()));
            });
            return;
        }
        if ((field != 3 && field != 5) || type != 2) return;
        each_field(payload, [&](std::uint64_t inner, int t, std::string_view p) {
            if (inner == 2 && t == 2) maps[field == 3 ? 0 : 1] = p;
        });
    });
    if (!ok) return;  // not a protobuf message: LoadFromSerializedProto refuses it
    if (maps[0] && !maps[0]->empty()) check_charsmap(*maps[0], path, "normalizer_spec.precompiled_charsmap");
    if (maps[1] && !maps[1]->empty()) check_charsmap(*maps[1], path, "denormalizer_spec.precompiled_charsmap");
}

}  // namespace attntrace
