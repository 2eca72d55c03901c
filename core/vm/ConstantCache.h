// Constants as their devices hold them, kept from one load to the next: a weight packed into
// oneDNN's blocked layout, or uploaded to a GPU, is written once and used by every executor that
// loads the same bytes in the same layout on the same device (each step of a generation, a plan
// run again at other sizes). The runtime's counterpart of ONNX Runtime's prepacked weights
// shared across sessions.
#pragma once

#include "device/Device.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace placer {

/// One constant on one device: its memory, freed when no executor and no cache holds it.
class CachedConstant {
public:
    CachedConstant(Device* device, std::byte* data, std::int64_t bytes)
        : m_device(device), m_data(data), m_bytes(bytes) {}
    ~CachedConstant() { m_device->free(m_data); }
    CachedConstant(const CachedConstant&) = delete;
    CachedConstant& operator=(const CachedConstant&) = delete;
    std::byte* data() const { return m_data; }
    std::int64_t bytes() const { return m_bytes; }
    /// Written: an executor loaded it (a half-written one is never found).
    bool written = false;
    /// The host bytes it was written from, kept alive while it is: no other constant can come
    /// to lie at their address and be taken for them.
    std::shared_ptr<const void> source;

private:
    Device* m_device;
    std::byte* m_data;
    std::int64_t m_bytes;
};

class ConstantCache {
public:
    /// What a constant is on a device: where its bytes are on the host (a model's constants
    /// stay at one address while it is loaded), how many, in which layout ("" for as they are).
    struct Key {
        const void* source = nullptr;
        std::int64_t bytes = 0;
        std::string layout;
        Device* device = nullptr;
        bool operator<(const Key& other) const {
            return std::tie(source, bytes, layout, device) <
                   std::tie(other.source, other.bytes, other.layout, other.device);
        }
    };

    /// The constant written earlier under `key`, or null.
    std::shared_ptr<CachedConstant> find(const Key& key);
    /// Memory for a constant to be written under `key` (CachedConstant::written once it is), or
    /// why the device cannot give it.
    Result<std::shared_ptr<CachedConstant>> allocate(const Key& key,
                                                     std::shared_ptr<const void> source);
    /// A load is done with what it used: those are kept for the next load; what only earlier
    /// loads used goes once their executors do (the cache holds one program's constants).
    void keepOnly(const std::vector<std::shared_ptr<CachedConstant>>& used);

    std::int64_t bytesKept() const;
    /// How many constants were found written, and how many written, since the cache was made.
    int hits() const { return m_hits; }
    int writes() const { return m_writes; }

private:
    mutable std::mutex m_mutex;
    std::map<Key, std::weak_ptr<CachedConstant>> m_byKey;
    std::vector<std::shared_ptr<CachedConstant>> m_kept;
    int m_hits = 0, m_writes = 0;
};

} // namespace placer
