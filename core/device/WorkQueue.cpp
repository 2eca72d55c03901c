// The worker thread behind every device: tasks in order, hand-overs that spin, then sleep.
#include "device/WorkQueue.h"

#include <chrono>
#include <thread>

namespace placer {

namespace {

/// Spins until `done()` or for at most `micros` microseconds; whether `done()` came true. A
/// thread put to sleep on a condition variable takes tens of microseconds to wake on some
/// machines (a virtual machine's idle CPU), more than a small model's whole run: the queue's
/// two hand-overs per run (the task in, the drain out) spin briefly first.
template <typename Done> bool spinFor(double micros, Done done) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(micros);
    for (int k = 0;; ++k) {
        if (done())
            return true;
        if ((k & 7) == 7 && std::chrono::steady_clock::now() >= until)
            return false;
        // Yielding, so that a spinner never keeps a runnable thread (the very worker it waits
        // for, on a machine with fewer cores than threads) off its core.
        std::this_thread::yield();
    }
}

constexpr double kSpinMicros = 50;

} // namespace

WorkQueue::WorkQueue(std::function<void()> onStart) {
    m_thread = std::thread([this, onStart = std::move(onStart)] {
        if (onStart)
            onStart();
        std::unique_lock lock(m_mutex);
        for (;;) {
            if (m_tasks.empty() && !m_stop) {
                lock.unlock();
                spinFor(kSpinMicros, [&] {
                    return m_queued.load(std::memory_order_acquire) > 0 ||
                           m_stopping.load(std::memory_order_acquire);
                });
                lock.lock();
            }
            m_wake.wait(lock, [&] { return m_stop || !m_tasks.empty(); });
            if (m_tasks.empty())
                return;
            std::function<void()> task = std::move(m_tasks.front());
            m_tasks.pop_front();
            m_queued.fetch_sub(1, std::memory_order_acq_rel);
            m_running = true;
            lock.unlock();
            task();
            lock.lock();
            m_running = false;
            m_outstanding.fetch_sub(1, std::memory_order_acq_rel);
            if (m_tasks.empty())
                m_idle.notify_all();
        }
    });
}

WorkQueue::~WorkQueue() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_stopping.store(true, std::memory_order_release);
    }
    m_wake.notify_all();
    m_thread.join();
}

void WorkQueue::enqueue(std::function<void()> task) {
    {
        std::lock_guard lock(m_mutex);
        m_tasks.push_back(std::move(task));
        m_outstanding.fetch_add(1, std::memory_order_acq_rel);
        m_queued.fetch_add(1, std::memory_order_acq_rel);
    }
    m_wake.notify_one();
}

void WorkQueue::drain() {
    if (!onWorker() &&
        spinFor(kSpinMicros, [&] { return m_outstanding.load(std::memory_order_acquire) == 0; })) {
        // Everything ran; taking the lock orders what the tasks wrote before what follows.
        std::lock_guard lock(m_mutex);
        return;
    }
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [&] { return m_tasks.empty() && !m_running; });
}

} // namespace placer
