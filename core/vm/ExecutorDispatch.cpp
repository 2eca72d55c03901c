// A run (vm/ExecutorImpl.h): every device's worker takes, of its ready instructions, the one with
// the highest priority, runs or issues it, and readies what depended on it; idle stretches and
// failures are recorded as they happen.
#include "vm/ExecutorImpl.h"

#include "kernels/KernelSupport.h"
#include "plan/ExecutionOrder.h"
#include "vm/ControlFlow.h"
#include "vm/MemoryCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace placer {

void Executor::Impl::fail(std::string message) {
    {
        std::lock_guard lock(errorMutex);
        if (error.empty())
            error = std::move(message);
        aborted.store(true);
    }
    for (auto& set : readySets) {
        std::lock_guard lock(set->mutex);
        set->wake.notify_all();
    }
}

void Executor::Impl::failDevice(std::size_t s, const DeviceFailure& failure) {
    {
        std::lock_guard lock(errorMutex);
        if (error.empty()) {
            faultStream = static_cast<int>(s);
            faultKind = failure.kind();
        }
    }
    fail(failure.what());
}

void Executor::Impl::injectFaults(const std::vector<InjectedFault>& faults, int number) {
    for (Stream& stream : streams) {
        stream.failing.clear();
        stream.slowdown = 1;
        for (const InjectedFault& fault : faults) {
            if (number < fault.iteration)
                continue;
            bool named = stream.device->name() == fault.device;
            for (DeviceId v : stream.virtuals)
                named = named || (*devices)[v].name == fault.device;
            if (!named)
                continue;
            const std::string what = " (injected: " + injectedFaultText(fault) + ")";
            switch (fault.kind) {
            case InjectedFault::Kind::Slow:
                stream.slowdown = std::max(stream.slowdown, fault.factor);
                break;
            case InjectedFault::Kind::OutOfMemory:
                stream.failing = stream.device->name() + " is out of memory" + what;
                stream.failingKind = DeviceFailure::Kind::OutOfMemory;
                break;
            case InjectedFault::Kind::Lost:
                stream.failing = stream.device->name() + " was lost" + what;
                stream.failingKind = DeviceFailure::Kind::Lost;
                break;
            case InjectedFault::Kind::Error:
                stream.failing = stream.device->name() + " failed" + what;
                stream.failingKind = DeviceFailure::Kind::Error;
                break;
            }
        }
    }
}

void Executor::Impl::makeReady(std::uint32_t k) {
    thread_local std::vector<std::uint32_t>* othersWork = nullptr;
    if (rankRole[k] == RankRole::Remote) {
        if (othersWork) {
            othersWork->push_back(k);
            return;
        }
        std::vector<std::uint32_t> work{k};
        othersWork = &work;
        while (!work.empty()) {
            const std::uint32_t r = work.back();
            work.pop_back();
            if (eventOf[r] >= 0)
                events[static_cast<std::size_t>(eventOf[r])]->record(epoch);
            finishedElsewhere(static_cast<std::size_t>(streamOf[r]));
            for (std::uint32_t next : schedule.succs[r]) {
                if (remaining[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                    makeReady(next);
            }
        }
        othersWork = nullptr;
        return;
    }
    if (rankRole[k] == RankRole::Send && !sendPosted[k] &&
        mapping[program.code[k].srcDevice.index]->hostAccessible()) {
        // Posted now, by the thread whose work made its source ready, so that the other
        // rank can take the bytes while this one's cores are busy; the stream's thread
        // waits for the transport to be done with them (execute).
        try {
            postSend(k);
        } catch (const std::exception& e) {
            fail(e.what());
        }
        sendPosted[k] = true;
    }
    if (rankRole[k] == RankRole::Receive) {
        postReceive(k);
        // Ready once its data (or, for a size found at run time, its shape) is here: the
        // transport's thread says so, and no worker polls for it.
        const std::shared_ptr<Transfer>& awaited =
            headerTransfers[k] ? headerTransfers[k] : transfers[k];
        if (awaited && !awaited->done()) {
            const std::uint32_t run = runNumber.load();
            awaited->whenDone([this, k, run] {
                if (runNumber.load() == run)
                    insertReady(k);
            });
            return;
        }
    }
    insertReady(k);
}

void Executor::Impl::finishedElsewhere(std::size_t s) {
    ReadySet& set = *readySets[s];
    if (set.finished.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        streams[s].instructions.size()) {
        std::lock_guard lock(set.mutex);
        if (set.sleeping)
            set.wake.notify_one();
    }
}

void Executor::Impl::insertReady(std::uint32_t k) {
    ReadySet& set = *readySets[static_cast<std::size_t>(streamOf[k])];
    const double now = hostClockMicros();
    std::lock_guard lock(set.mutex);
    readyAt[k] = now; // read by the stream's thread after it takes k under this lock
    const auto at = std::upper_bound(
        set.ready.begin(), set.ready.end(), k,
        [this](std::uint32_t a, std::uint32_t b) { return schedule.before(a, b); });
    set.ready.insert(at, k);
    set.count.store(static_cast<int>(set.ready.size()), std::memory_order_release);
    if (set.sleeping)
        set.wake.notify_one();
}

bool Executor::Impl::runnable(std::uint32_t k, bool asynchronous) const {
    if (asynchronous)
        return true;
    for (std::uint32_t p : schedule.waits[k]) {
        if (!events[static_cast<std::size_t>(eventOf[p])]->reached(epoch))
            return false;
    }
    return true;
}

std::int64_t Executor::Impl::take(std::size_t s, bool asynchronous) {
    constexpr double kSpinMicros = 50;
    ReadySet& set = *readySets[s];
    double spinStart = 0;
    const std::size_t all = streams[s].instructions.size();
    for (int spins = 0;; ++spins) {
        if (aborted.load(std::memory_order_relaxed))
            return -1;
        if (set.finished.load(std::memory_order_acquire) >= all)
            return kAllDone;
        if (set.count.load(std::memory_order_acquire) > 0) {
            std::unique_lock lock(set.mutex);
            for (std::size_t i = 0; i < set.ready.size(); ++i) {
                const std::uint32_t k = set.ready[i];
                if (runnable(k, asynchronous)) {
                    set.ready.erase(set.ready.begin() + static_cast<std::ptrdiff_t>(i));
                    set.count.store(static_cast<int>(set.ready.size()), std::memory_order_release);
                    set.finished.fetch_add(1, std::memory_order_acq_rel);
                    return k;
                }
            }
            // Everything ready waits for a GPU (or lane) result: poll for it.
            lock.unlock();
            if (spins > 64)
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            continue;
        }
        // Nothing ready: spin for a while (another device's result is often a few tens of
        // microseconds away, and waking a sleeping thread costs as much), then sleep. The
        // spin yields: with more threads than cores, the producer it waits for may need
        // this very core.
        if ((spins & 7) != 7)
            continue;
        std::this_thread::yield();
        if (spinStart == 0)
            spinStart = hostClockMicros();
        if (hostClockMicros() - spinStart < kSpinMicros)
            continue;
        TransportWait waiting(crossTransport);
        std::unique_lock lock(set.mutex);
        set.sleeping = true;
        // Woken by work made ready; a second at most, to see receives overdue.
        set.wake.wait_for(lock, std::chrono::seconds(1), [&] {
            return !set.ready.empty() || aborted.load() ||
                   set.finished.load(std::memory_order_acquire) >= all;
        });
        set.sleeping = false;
        if (set.ready.empty() && !aborted.load()) {
            lock.unlock();
            if (const std::int64_t late = overdueReceiveOf(s); late >= 0)
                fail(receiveOverdue(static_cast<std::size_t>(late)));
        }
        spins = 0;
        spinStart = 0;
    }
}

std::string Executor::Impl::ownerName(std::int32_t r) const {
    Device* owner = regOwner[static_cast<std::size_t>(r)];
    return owner ? owner->name() : std::string("no device (not allocated)");
}

void Executor::Impl::checkOwner(std::int32_t r, const Device* device,
                                const std::string& offender) const {
    if (regOwner[static_cast<std::size_t>(r)] == device)
        return;
    throw KernelError("tensor " + reg(r).name + " is owned by " + ownerName(r) + " but " +
                      offender + " on " + device->name() + " used it without a device copy");
}

void Executor::Impl::execute(std::size_t k, Stream& stream) {
    const Instruction& instr = program.code[k];
    Device* device = stream.device;
    switch (rankRole[k]) {
    case RankRole::Remote:
        return; // another rank's
    case RankRole::Send:
        sendToRank(k);
        return;
    case RankRole::Receive:
        if (headerTransfers[k]) {
            receiveFoundSize(k, device);
            return;
        }
        if (transfers[k] && transfers[k]->failed())
            throw KernelError(describeCopy(k) + ": " + transfers[k]->error());
        checkOwner(instr.dst, device, describeCopy(k));
        if (!staging[k].empty())
            device->copyIn(regData[static_cast<std::size_t>(instr.dst)], staging[k].data(),
                           instr.bytes);
        return;
    case RankRole::Local:
        break;
    }
    switch (instr.op) {
    case Opcode::AllocTensor: {
        stream.live += instr.bytes;
        stream.livePeak = std::max(stream.livePeak, stream.live);
        break;
    }
    case Opcode::Free:
        stream.live -= instr.bytes;
        // A host device has run every reader by now; a GPU's readers may still be queued,
        // so its buffers wait for the next run or the end.
        // A program run at other sizes keeps its buffers for the next run (the same tensors,
        // a little larger).
        if (!device->timesAsynchronously() && !sizesAtRun)
            releaseRunBuffer(instr.dst);
        break;
    case Opcode::LoadInput: {
        const HostTensor& input = (*inputs)[static_cast<std::size_t>(instr.index)];
        std::int64_t bytes = instr.bytes;
        if (shapeAtRun[static_cast<std::size_t>(instr.dst)]) {
            // Its shape is the run's (Executor::load's sizesAtRun).
            memoryAtRun(instr.dst, input.type, device);
            ranShape[static_cast<std::size_t>(instr.dst)] = input.type.shape;
            bytes = input.type.bytes();
        }
        if (bytes > 0)
            device->copyIn(regData[static_cast<std::size_t>(instr.dst)], input.data.data(), bytes);
        break;
    }
    case Opcode::Invoke: {
        const Node& node = graph->node(instr.node);
        const std::string offender = node.op->name + " '" + node.name + "'";
        if (runTimeKernels[k]) {
            invokeAtRunTime(k, device, offender);
            break;
        }
        if (runTimeBodies[k]) {
            controlFlowAtRunTime(k, device, offender);
            break;
        }
        auto& args = argPointers[k];
        auto& results = resultPointers[k];
        for (std::size_t i = 0; i < instr.args.size(); ++i) {
            checkOwner(instr.args[i], device, offender);
            args[i] = regData[static_cast<std::size_t>(instr.args[i])];
        }
        for (std::size_t i = 0; i < instr.results.size(); ++i) {
            checkOwner(instr.results[i], device, offender);
            results[i] = regData[static_cast<std::size_t>(instr.results[i])];
        }
        kernels[k]->run(args.data(), results.data());
        if (const auto* shapes = kernels[k]->ranShapes()) {
            // What a kernel found is known once it ran: on a device with lanes, after its
            // lane's work is done.
            if (device->timesAsynchronously())
                device->finishLane();
            for (std::size_t i = 0; i < instr.results.size() && i < shapes->size(); ++i)
                ranShape[static_cast<std::size_t>(instr.results[i])] = (*shapes)[i];
        }
        break;
    }
    case Opcode::DeviceCopy: {
        Device* source = mapping[instr.srcDevice.index];
        const std::string offender = "the copy to " + reg(instr.dst).name;
        checkOwner(instr.src, source, offender + " (reading from " + source->name() + ")");
        std::int64_t bytes = instr.bytes;
        if (shapeAtRun[static_cast<std::size_t>(instr.src)]) {
            // As much as the source holds at this run, into memory that holds it.
            const TensorType type = typeAtRun(instr.src);
            bytes = type.bytes();
            memoryAtRun(instr.dst, type, device);
            ranShape[static_cast<std::size_t>(instr.dst)] =
                ranShape[static_cast<std::size_t>(instr.src)];
        }
        checkOwner(instr.dst, device, offender);
        if (bytes > 0)
            device->copyPeer(regData[static_cast<std::size_t>(instr.dst)], *source,
                             regData[static_cast<std::size_t>(instr.src)], bytes);
        break;
    }
    default:
        break;
    }
}

void Executor::Impl::runStream(std::size_t s) {
    Stream& stream = streams[s];
    Device* device = stream.device;
    const bool async = device->timesAsynchronously();
    const bool laned = device->laneCount() > 1;
    stream.live = 0;
    stream.stalled = 0;
    stream.lastEnd = runStartedAt;
    if (async)
        device->resetMarks();
    // On an asynchronous device `start` and `end` hold marker ids until finishStream.
    auto stamp = [&] { return async ? static_cast<double>(device->mark()) : device->now(); };
    for (;;) {
        const std::int64_t taken = take(s, async);
        if (taken == kAllDone)
            return;
        if (taken < 0)
            return; // aborted: what was issued records its events, nothing else is issued
        const auto k = static_cast<std::size_t>(taken);
        const int lane = laneOf[k];
        if (laned && lane >= 0)
            device->setLane(lane);
        try {
            for (std::uint32_t p : schedule.waits[k])
                device->waitFor(*events[static_cast<std::size_t>(eventOf[p])], epoch);
        } catch (const std::exception& e) {
            fail(e.what());
        }
        if (!aborted.load(std::memory_order_relaxed)) {
            const Opcode op = program.code[k].op;
            // A copy between ranks is timed by its sender, from the post to the transport's
            // end; another rank's work by that rank.
            const bool timed =
                (rankRole[k] == RankRole::Local || rankRole[k] == RankRole::Send) &&
                (op == Opcode::Invoke || op == Opcode::DeviceCopy || op == Opcode::LoadInput);
            // A send posted where it became ready is timed from its post.
            const double start = !timed                                           ? 0
                                 : rankRole[k] == RankRole::Send && sendPosted[k] ? postedAt[k]
                                                                                  : stamp();
            // Ready, the device free, and not started yet: the worker was woken late or its
            // core was taken (what a competing process costs beyond its kernels' time).
            if (timed && !async && rankRole[k] == RankRole::Local)
                stream.stalled += std::max(0.0, start - std::max(readyAt[k], stream.lastEnd));
            try {
                if (op == Opcode::Invoke && !stream.failing.empty())
                    throw DeviceFailure(stream.failingKind, stream.failing);
                execute(k, stream);
                if (op == Opcode::Invoke && stream.slowdown > 1 && !async) {
                    // A device slowed by other work: its worker keeps the core busy for the
                    // difference, as a competing process would.
                    const double until = start + (stamp() - start) * stream.slowdown;
                    while (device->now() < until) {
                    }
                }
            } catch (const DeviceFailure& e) {
                failDevice(s, e);
            } catch (const std::exception& e) {
                fail(e.what());
            }
            if (timed) {
                const double end = stamp();
                if (!async)
                    stream.lastEnd = end;
                stream.timed.push_back(
                    TimedEvent{k, static_cast<int>(s), start, end, std::max(0, lane)});
            } else if (tracing && rankRole[k] == RankRole::Local &&
                       (op == Opcode::AllocTensor || op == Opcode::Free)) {
                stream.memory.push_back(MemorySample{static_cast<int>(s), stamp(), stream.live});
            }
        }
        if (eventOf[k] >= 0)
            events[static_cast<std::size_t>(eventOf[k])]->record(epoch);
        for (std::uint32_t next : schedule.succs[k]) {
            if (remaining[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                makeReady(next);
        }
    }
}

void Executor::Impl::startRun() {
    readyAt.assign(program.code.size(), 0);
    runStartedAt = hostClockMicros();
    for (auto& set : readySets) {
        set->ready.clear();
        set->count.store(0);
        set->finished.store(0);
    }
    std::fill(sendPosted.begin(), sendPosted.end(), 0);
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (streamOf[k] < 0)
            continue;
        remaining[k].store(static_cast<int>(schedule.deps[k].size()), std::memory_order_relaxed);
    }
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (streamOf[k] >= 0 && schedule.deps[k].empty())
            makeReady(static_cast<std::uint32_t>(k));
    }
}

std::vector<IdleStretch> Executor::Impl::idleStretches(double runStart, double runEnd) const {
    const std::size_t n = program.code.size();
    std::vector<double> endOf(n, -1);
    for (const Stream& stream : streams)
        for (const TimedEvent& event : stream.timed)
            endOf[event.instruction] = event.end;
    // The timed work k waited for: its dependencies, through untimed bookkeeping.
    auto latestProducer = [&](std::size_t k) {
        std::int64_t best = -1;
        std::vector<std::uint32_t> stack(schedule.deps[k].begin(), schedule.deps[k].end());
        std::vector<std::uint32_t> seen;
        while (!stack.empty()) {
            const std::uint32_t d = stack.back();
            stack.pop_back();
            if (std::find(seen.begin(), seen.end(), d) != seen.end())
                continue;
            seen.push_back(d);
            if (endOf[d] >= 0) {
                if (best < 0 || endOf[d] > endOf[static_cast<std::size_t>(best)])
                    best = d;
            } else {
                stack.insert(stack.end(), schedule.deps[d].begin(), schedule.deps[d].end());
            }
        }
        return best;
    };
    std::vector<IdleStretch> idle;
    for (std::size_t s = 0; s < streams.size(); ++s) {
        std::vector<TimedEvent> timed = streams[s].timed;
        if (timed.empty())
            continue;
        std::sort(timed.begin(), timed.end(),
                  [](const TimedEvent& a, const TimedEvent& b) { return a.start < b.start; });
        double busyUntil = runStart;
        for (const TimedEvent& event : timed) {
            if (event.start - busyUntil >= kMinIdleMicros)
                idle.push_back(IdleStretch{static_cast<int>(s), busyUntil, event.start,
                                           latestProducer(event.instruction)});
            busyUntil = std::max(busyUntil, event.end);
        }
        if (runEnd - busyUntil >= kMinIdleMicros)
            idle.push_back(IdleStretch{static_cast<int>(s), busyUntil, runEnd, -1});
    }
    return idle;
}

void Executor::Impl::finishStream(Stream& stream) {
    Device* device = stream.device;
    if (device->timesAsynchronously()) {
        for (TimedEvent& event : stream.timed) {
            event.start = device->markTime(static_cast<int>(event.start));
            event.end = device->markTime(static_cast<int>(event.end));
        }
        for (MemorySample& sample : stream.memory)
            sample.time = device->markTime(static_cast<int>(sample.time));
    }
    std::vector<std::pair<double, double>> intervals;
    intervals.reserve(stream.timed.size());
    for (const TimedEvent& event : stream.timed)
        intervals.emplace_back(event.start, event.end);
    std::sort(intervals.begin(), intervals.end());
    stream.busy = 0;
    double coveredUntil = -1e300;
    for (const auto& [start, end] : intervals) {
        const double from = std::max(start, coveredUntil);
        if (end > from)
            stream.busy += end - from;
        coveredUntil = std::max(coveredUntil, end);
    }
}

} // namespace placer
