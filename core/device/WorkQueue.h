// One thread that runs tasks in the order they were enqueued: the worker behind every device.
// Hand-overs spin for a few tens of microseconds before they sleep (WorkQueue.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace placer {

class WorkQueue {
public:
    /// `onStart` runs first on the new thread (per-thread settings such as OpenMP's).
    explicit WorkQueue(std::function<void()> onStart = {});
    /// Runs what is queued, then stops the thread.
    ~WorkQueue();
    WorkQueue(const WorkQueue&) = delete;
    WorkQueue& operator=(const WorkQueue&) = delete;

    void enqueue(std::function<void()> task);
    /// Waits until everything enqueued so far has run.
    void drain();
    /// Whether the calling thread is this queue's worker.
    bool onWorker() const { return std::this_thread::get_id() == m_thread.get_id(); }

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<std::function<void()>> m_tasks;
    bool m_running = false; ///< a task is executing
    bool m_stop = false;
    // The same, readable without the lock while spinning: tasks queued, tasks queued or
    // running, and whether the queue is being destroyed.
    std::atomic<int> m_queued{0};
    std::atomic<int> m_outstanding{0};
    std::atomic<bool> m_stopping{false};
    std::thread m_thread;
};

} // namespace placer
