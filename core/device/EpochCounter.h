// The run number an event was last recorded for, shared between the thread that records it and
// the threads that wait: what every Event (device/Device.h) keeps on the host, whatever else its
// device tracks (a GPU's own event, say).
#pragma once

#include <atomic>
#include <cstdint>

namespace placer {

class EpochCounter {
public:
    /// Marks run `epoch` recorded and wakes every waiter.
    void publish(std::uint32_t epoch) {
        m_epoch.store(epoch, std::memory_order_release);
        m_epoch.notify_all();
    }
    /// Whether run `epoch` (or a later one) was recorded.
    bool reached(std::uint32_t epoch) const {
        const std::uint32_t seen = m_epoch.load(std::memory_order_acquire);
        return seen != kNever && seen >= epoch;
    }
    /// Blocks until run `epoch` (or a later one) was recorded: spinning `spins` times first
    /// (cross-device waits are usually short, and waking a sleeping thread costs tens of
    /// microseconds on some machines), then sleeping on the counter.
    void waitFor(std::uint32_t epoch, int spins = 0) const {
        for (int spin = 0; spin < spins; ++spin) {
            if (reached(epoch))
                return;
        }
        for (;;) {
            const std::uint32_t seen = m_epoch.load(std::memory_order_acquire);
            if (seen != kNever && seen >= epoch)
                return;
            m_epoch.wait(seen, std::memory_order_acquire);
        }
    }

private:
    static constexpr std::uint32_t kNever = UINT32_MAX;
    std::atomic<std::uint32_t> m_epoch{kNever};
};

} // namespace placer
