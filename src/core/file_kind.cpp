// non_regular_kind: a file type as the refusals name it.
#include "core/file_kind.hpp"

namespace attntrace {

std::string non_regular_kind(std::filesystem::file_type type) {
    using std::filesystem::file_type;
    switch (type) {
        case file_type::regular: return "";
        case file_type::directory: return "a directory";
        case file_type::fifo: return "a FIFO (named pipe)";
        case file_type::socket: return "a socket";
        case file_type::character: return "a character device";
        case file_type::block: return "a block device";
        case file_type::not_found: return "no such file";
        default: return "an unknown kind of file";
    }
}

}  // namespace attntrace
