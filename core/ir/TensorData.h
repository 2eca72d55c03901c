// A constant's bytes: owned, or a read-only view of memory someone else keeps alive (the pages of
// a memory-mapped model file), so that weights exist once however many places hold them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace placer {

/// A file's bytes mapped into memory copy-on-write (io/MappedFile.h), as a view sees them: the
/// kernel may take its pages back and read them again from the file, and the file may change
/// under them, which a device must not find out by reading a truncated page.
class MappedPages {
public:
    virtual ~MappedPages() = default;
    /// Whether the bytes are mapped pages (rather than a copy read into memory).
    virtual bool mapped() const = 0;
    /// Why the bytes can no longer be trusted (the file was truncated or rewritten in place
    /// since it was mapped), or empty.
    virtual std::string changedOnDisk() const = 0;
};

/// Raw little-endian tensor bytes. Owned bytes are a string, so importers can hand over their
/// buffers; a view points into memory its keeper holds (io/MappedFile.h), and reading it touches
/// only the pages read. Writing through data() turns a view into an owned copy first.
class TensorData {
public:
    TensorData() = default;
    TensorData(std::string bytes) : m_owned(std::move(bytes)) {} // NOLINT: implicit on purpose
    TensorData(std::size_t size, char fill) : m_owned(size, fill) {}
    TensorData(const char* data, std::size_t size) : m_owned(data, size) {}

    /// `size` bytes at `data`, valid while `keeper` lives.
    static TensorData view(std::shared_ptr<const void> keeper, const char* data, std::size_t size) {
        TensorData out;
        out.m_keeper = std::move(keeper);
        out.m_view = data;
        out.m_viewSize = size;
        return out;
    }
    /// `size` bytes at `data` inside `file`'s mapped bytes.
    static TensorData viewOfFile(const std::shared_ptr<const MappedPages>& file, const char* data,
                                 std::size_t size) {
        TensorData out = view(std::shared_ptr<const void>(file), data, size);
        out.m_file = file.get();
        return out;
    }

    bool isView() const { return m_keeper != nullptr; }
    /// Gives the pages wholly inside a view of a mapped file back to the kernel, once a device
    /// holds its own copy: they stop counting towards the process's resident memory, and are
    /// read again (from the page cache, or the file) if the bytes are read later. Nothing
    /// otherwise.
    void releasePages() const;
    /// Why a view of a mapped file can no longer be read (MappedPages::changedOnDisk), or empty.
    std::string changedOnDisk() const { return m_file ? m_file->changedOnDisk() : std::string(); }
    /// The mapped file a view reads, or null.
    const MappedPages* mappedFile() const { return m_file; }
    const char* data() const { return isView() ? m_view : m_owned.data(); }
    /// Writable bytes: a view is copied into owned bytes first.
    char* data() {
        materialize();
        return m_owned.data();
    }
    /// The same as std::byte, for device memory copies.
    const std::byte* raw() const { return reinterpret_cast<const std::byte*>(data()); }
    std::byte* raw() { return reinterpret_cast<std::byte*>(data()); }
    std::size_t size() const { return isView() ? m_viewSize : m_owned.size(); }
    bool empty() const { return size() == 0; }
    const char* begin() const { return data(); }
    const char* end() const { return data() + size(); }
    std::string_view bytes() const { return {data(), size()}; }
    char operator[](std::size_t i) const { return data()[i]; }
    operator std::string_view() const { return bytes(); } // NOLINT: reads like the string it was
    /// Resizes owned bytes (a view is copied first), zero-filling what it adds.
    void resize(std::size_t size) {
        materialize();
        m_owned.resize(size, '\0');
    }
    void swap(std::string& bytes) {
        materialize();
        m_owned.swap(bytes);
    }
    /// The bytes as a string (a view is copied), leaving this empty.
    std::string release() {
        materialize();
        return std::move(m_owned);
    }
    bool operator==(const TensorData& other) const { return bytes() == other.bytes(); }

private:
    void materialize() {
        if (!isView())
            return;
        m_owned.assign(m_view, m_viewSize);
        m_keeper.reset();
        m_file = nullptr;
        m_view = nullptr;
        m_viewSize = 0;
    }

    std::string m_owned;
    std::shared_ptr<const void> m_keeper;
    const char* m_view = nullptr;
    std::size_t m_viewSize = 0;
    const MappedPages* m_file = nullptr; ///< the keeper, when it is a mapped file
};

} // namespace placer
