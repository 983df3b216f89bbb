// Where text goes as it is written: a string, a stream, or a file being
// written whole or not at all (io/files.hpp: AtomicFile). The trace's JSON
// writer (trace/json_text.hpp) writes to one in chunks.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace attntrace {

class TextSink {
public:
    virtual ~TextSink() = default;
    virtual void write(std::string_view text) = 0;
};

class StringSink final : public TextSink {
public:
    explicit StringSink(std::string& out) : out_(out) {}
    void write(std::string_view text) override { out_.append(text); }

private:
    std::string& out_;
};

class StreamSink final : public TextSink {
public:
    explicit StreamSink(std::ostream& out) : out_(out) {}
    void write(std::string_view text) override { out_.write(text.data(), static_cast<std::streamsize>(text.size())); }

private:
    std::ostream& out_;
};

}  // namespace attntrace
