// What the passes did, as counters (LLVM's STATISTIC, kept per device): structured records that
// reports, the run record and tests read, and from which each pass writes its sentences.
#pragma once

#include "ir/Ids.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

struct PassCounter {
    std::string pass;    ///< "post-op fusion"
    DeviceId device;     ///< the virtual device it counts on
    std::string counter; ///< "convolutions", "element-wise ops"
    std::int64_t value = 0;
    bool operator==(const PassCounter&) const = default;
};

class PassStatistics {
public:
    /// Adds `by` to the counter (made at 0 when new).
    void add(std::string_view pass, DeviceId device, std::string_view counter,
             std::int64_t by = 1);
    /// The counter's value, 0 when it was never counted.
    std::int64_t get(std::string_view pass, DeviceId device, std::string_view counter) const;
    /// The devices a pass counted anything on, in device order.
    std::vector<DeviceId> devicesOf(std::string_view pass) const;
    /// Every counter, in the order first counted (passes run in a fixed order: deterministic).
    const std::vector<PassCounter>& counters() const { return m_counters; }
    bool empty() const { return m_counters.empty(); }

private:
    std::vector<PassCounter> m_counters;
};

} // namespace placer
