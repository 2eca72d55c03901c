// Reading whole files into memory (io/TextFile.h).
#include "io/TextFile.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace placer {

Result<std::string> readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return SourceError{path, 0, 0, std::string("cannot open file: ") + std::strerror(errno)};
    const std::streamoff size = in.tellg();
    if (size < 0)
        return SourceError{path, 0, 0, "cannot read file (not a regular file?)"};
    std::string contents(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    in.read(contents.data(), size);
    if (in.gcount() != size)
        return SourceError{path, 0, 0, "cannot read file"};
    return contents;
}

} // namespace placer
