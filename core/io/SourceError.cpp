// Source errors and file reading.
#include "io/SourceError.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace placer {

std::string SourceError::toString() const {
    std::string out = file;
    if (line > 0) {
        out += (out.empty() ? "line " : ":") + std::to_string(line);
        if (column > 0)
            out += ":" + std::to_string(column);
    }
    if (!out.empty())
        out += ": ";
    return out + message;
}

Result<std::string> readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return SourceError{path, 0, 0, std::string("cannot open file: ") + std::strerror(errno)};
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad())
        return SourceError{path, 0, 0, "cannot read file"};
    return buffer.str();
}

} // namespace placer
