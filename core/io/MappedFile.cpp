// Mapping model files read-only into memory, and noticing when a mapped file changes on disk.
#include "io/MappedFile.h"
#include "io/TextFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace placer {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SourceError{path, 0, 0, std::string("cannot open file: ") + std::strerror(errno)};
    struct stat info {};
    const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    std::shared_ptr<MappedFile> file(new MappedFile);
    if (regular && info.st_size > 0) {
        void* data = ::mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE, fd, 0);
        if (data != MAP_FAILED) {
            ::close(fd);
            file->m_data = static_cast<const char*>(data);
            file->m_size = static_cast<std::size_t>(info.st_size);
            file->m_mapped = true;
            file->m_path = path;
            file->m_stat = info;
            return std::shared_ptr<const MappedFile>(std::move(file));
        }
    }
    ::close(fd);
    if (regular && info.st_size == 0)
        return std::shared_ptr<const MappedFile>(std::move(file));
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    file->m_copy = text.take();
    file->m_data = file->m_copy.data();
    file->m_size = file->m_copy.size();
    return std::shared_ptr<const MappedFile>(std::move(file));
}

std::string MappedFile::changedOnDisk() const {
    struct stat now {};
    if (!m_mapped || ::stat(m_path.c_str(), &now) != 0 || now.st_dev != m_stat.st_dev ||
        now.st_ino != m_stat.st_ino)
        return {};
    if (now.st_size == m_stat.st_size && now.st_mtim.tv_sec == m_stat.st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == m_stat.st_mtim.tv_nsec)
        return {};
    return "'" + m_path + "' changed on disk since it was read (" + std::to_string(m_stat.st_size) +
           " bytes then, " + std::to_string(now.st_size) + " now); open the model again";
}

MappedFile::~MappedFile() {
    if (m_mapped)
        ::munmap(const_cast<char*>(m_data), m_size);
}

} // namespace placer
