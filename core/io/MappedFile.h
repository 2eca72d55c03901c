// A file's bytes mapped read-only into memory: pages are read from disk when touched and can be
// dropped by the kernel under pressure, so holding a model's weights this way costs resident
// memory only for what is read.
#pragma once

#include "io/SourceError.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace placer {

class MappedFile {
public:
    /// Maps the whole file (copy-on-write: a stray write changes this process's copy, never the
    /// file). A file that cannot be mapped (a pipe) is read into memory instead.
    static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const char* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    std::string_view bytes() const { return {m_data, m_size}; }
    /// Whether the bytes are mapped pages rather than a copy in memory.
    bool mapped() const { return m_mapped; }

private:
    MappedFile() = default;

    const char* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_mapped = false;
    std::string m_copy;
};

} // namespace placer
