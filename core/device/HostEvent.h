// An event on a host-clocked device: an epoch counter the waiter blocks on (device/Device.h).
#pragma once

#include "device/Device.h"
#include "device/EpochCounter.h"

namespace placer {

class HostEvent final : public Event {
public:
    void record(std::uint32_t epoch) override {
        m_time = hostClockMicros();
        m_epoch.publish(epoch);
    }
    void wait(std::uint32_t epoch) const override { m_epoch.waitFor(epoch, kSpins); }
    bool reached(std::uint32_t epoch) const override { return m_epoch.reached(epoch); }
    double timestamp() const override { return m_time; }

private:
    static constexpr int kSpins = 4000;
    EpochCounter m_epoch;
    double m_time = 0;
};

} // namespace placer
