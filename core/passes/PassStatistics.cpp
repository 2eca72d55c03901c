// The passes' counters (passes/PassStatistics.h).
#include "passes/PassStatistics.h"

#include <algorithm>

namespace placer {

void PassStatistics::add(std::string_view pass, DeviceId device, std::string_view counter,
                         std::int64_t by) {
    for (PassCounter& known : m_counters) {
        if (known.pass == pass && known.device == device && known.counter == counter) {
            known.value += by;
            return;
        }
    }
    m_counters.push_back(PassCounter{std::string(pass), device, std::string(counter), by});
}

std::int64_t PassStatistics::get(std::string_view pass, DeviceId device,
                                 std::string_view counter) const {
    for (const PassCounter& known : m_counters) {
        if (known.pass == pass && known.device == device && known.counter == counter)
            return known.value;
    }
    return 0;
}

std::vector<DeviceId> PassStatistics::devicesOf(std::string_view pass) const {
    std::vector<DeviceId> devices;
    for (const PassCounter& known : m_counters) {
        if (known.pass == pass &&
            std::find(devices.begin(), devices.end(), known.device) == devices.end())
            devices.push_back(known.device);
    }
    std::sort(devices.begin(), devices.end(),
              [](DeviceId a, DeviceId b) { return a.index < b.index; });
    return devices;
}

} // namespace placer
