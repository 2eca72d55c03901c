// A file's bytes mapped read-only into memory: pages are read from disk when touched and can be
// dropped by the kernel under pressure, so holding a model's weights this way costs resident
// memory only for what is read.
#pragma once

#include "ir/Result.h"
#include "ir/TensorData.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <sys/stat.h>

namespace placer {

class MappedFile final : public MappedPages {
public:
    /// Maps the whole file (copy-on-write: a stray write changes this process's copy, never the
    /// file). A file that cannot be mapped (a pipe) is read into memory instead.
    static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
    ~MappedFile() override;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const char* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    std::string_view bytes() const { return {m_data, m_size}; }
    /// Whether the bytes are mapped pages rather than a copy in memory.
    bool mapped() const override { return m_mapped; }
    /// Why the mapped bytes can no longer be read: a read past the file's new end faulted (the
    /// pages from there on read as zeros since, instead of killing the process), or the file at
    /// the same path and inode has another size or modification time (rewritten in place). A
    /// file replaced by another (a new inode) leaves the mapping as it was, and is fine.
    std::string changedOnDisk() const override;

private:
    MappedFile() = default;

    const char* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_mapped = false;
    std::string m_copy;
    std::string m_path;
    struct stat m_stat {};
    int m_guard = -1; ///< its entry in the SIGBUS handler's table (MappedFile.cpp), or -1
};

} // namespace placer
