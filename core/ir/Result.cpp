// Spelling a SourceError for people: file, line, column and sentence (ir/Result.h).
#include "ir/Result.h"

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

} // namespace placer
