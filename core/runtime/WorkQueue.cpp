#include "runtime/WorkQueue.h"

namespace placer {

WorkQueue::WorkQueue(std::function<void()> onStart) {
    m_thread = std::thread([this, onStart = std::move(onStart)] {
        if (onStart)
            onStart();
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || !m_tasks.empty(); });
            if (m_tasks.empty())
                return;
            std::function<void()> task = std::move(m_tasks.front());
            m_tasks.pop_front();
            m_running = true;
            lock.unlock();
            task();
            lock.lock();
            m_running = false;
            if (m_tasks.empty())
                m_idle.notify_all();
        }
    });
}

WorkQueue::~WorkQueue() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

void WorkQueue::enqueue(std::function<void()> task) {
    {
        std::lock_guard lock(m_mutex);
        m_tasks.push_back(std::move(task));
    }
    m_wake.notify_one();
}

void WorkQueue::drain() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [&] { return m_tasks.empty() && !m_running; });
}

} // namespace placer
