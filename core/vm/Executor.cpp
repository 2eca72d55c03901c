// The executor: load (storages, constants, kernels) and runs. A run is dataflow with a static
// priority (vm/Schedule.h says why): every physical device's worker takes, of its
// instructions whose dependencies have been issued, the one with the highest priority, runs it
// (or, on an asynchronous device, issues it into the lane it belongs to), and makes ready what
// depended on it. Where work depends on an asynchronous device's work on another lane, it waits
// for that work's event: a GPU in its stream (the worker does not block), a host worker by taking
// other ready work until the event is reached. So no worker sits idle while it has an instruction
// whose inputs are ready, and a copy into a device is taken as soon as its source is written,
// never ahead of that device's unrelated compute.
// Events are reusable across runs: a run has an epoch number and an event is "reached" once it
// was recorded with this run's epoch.
// The state and each job have files of their own (vm/ExecutorImpl.h lists them); this one is
// the public interface.
#include "vm/Executor.h"

#include "kernels/KernelSupport.h"
#include "vm/ExecutorImpl.h"
#include "vm/MemoryCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

namespace placer {

Executor::Executor() : m_impl(std::make_unique<Impl>()) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::load(const Graph& graph, const DeviceSet& devices,
                                                 Program program, std::vector<Device*> mapping,
                                                 int onnxOpset, const LoadProgress& progress,
                                                 std::shared_ptr<ConstantCache> constants,
                                                 bool sizesAtRun) {
    if (static_cast<int>(mapping.size()) != devices.size())
        return SourceError{"", 0, 0, "every virtual device needs a physical device"};
    std::unique_ptr<Executor> executor(new Executor());
    Impl& impl = *executor->m_impl;
    impl.graph = &graph;
    impl.devices = &devices;
    impl.program = std::move(program);
    impl.mapping = std::move(mapping);
    impl.onnxOpset = onnxOpset;
    impl.progress = &progress;
    impl.constantCache = std::move(constants);
    impl.sizesAtRun = sizesAtRun;
    // Nothing is allocated before the whole program is known to fit, host copies included.
    if (Status status = checkMemoryFits(impl.program, devices, impl.mapping,
                                        hostInputOutputBytes(impl.program), &graph, onnxOpset);
        !status.ok())
        return status.error();
    auto error = impl.loadAll();
    impl.progress = nullptr;
    if (error)
        return *error;
    return executor;
}

const Program& Executor::program() const {
    return m_impl->program;
}

const Schedule& Executor::schedule() const {
    return m_impl->schedule;
}

int Executor::streamOf(std::size_t instruction) const {
    return m_impl->streamOf[instruction];
}

std::string Executor::implementation(std::size_t instruction) const {
    if (const auto& atRun = m_impl->runTimeKernels[instruction])
        return atRun->implementation();
    if (m_impl->runTimeBodies[instruction])
        return "run-time:control flow, node by node";
    const auto& kernel = m_impl->kernels[instruction];
    return kernel ? kernel->implementation() : std::string();
}

Result<RunResult> Executor::run(const std::vector<HostTensor>& inputs, const RunOptions& options) {
    Impl& impl = *m_impl;
    const Program& program = impl.program;
    if (inputs.size() != program.inputs.size())
        return SourceError{"", 0, 0,
                           "the program takes " + std::to_string(program.inputs.size()) +
                               " inputs, not " + std::to_string(inputs.size())};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Node& node = impl.graph->node(program.inputs[i]);
        // An input whose sizes the run brings: its element type and rank are the program's.
        const bool sized = i < impl.inputSized.size() && impl.inputSized[i];
        const bool fits =
            sized ? inputs[i].type.dtype == node.outputs[0].dtype &&
                        inputs[i].type.rank() == node.outputs[0].rank() &&
                        static_cast<std::int64_t>(inputs[i].data.size()) == inputs[i].type.bytes()
                  : inputs[i].type == node.outputs[0] &&
                        static_cast<std::int64_t>(inputs[i].data.size()) == node.outputs[0].bytes();
        if (!fits)
            return SourceError{"", 0, 0,
                               "input '" + node.name + "' must be " +
                                   node.outputs[0].toShortString() + ", not " +
                                   inputs[i].type.toShortString()};
    }
    if (impl.sizesAtRun) {
        if (auto error = impl.evaluateSizedConstants(options.sizes))
            return *error;
    }
    impl.inputs = &inputs;
    RunResult result;
    result.instrMicros.resize(program.code.size());
    for (Impl::Stream& stream : impl.streams) {
        stream.device->resetPeak();
        StreamInfo info;
        info.physical = stream.device->name();
        info.rank = stream.device->remoteRank() >= 0 ? stream.device->remoteRank() : localRank();
        info.virtuals = stream.virtuals;
        info.constantUploads = stream.constantUploads;
        result.streams.push_back(std::move(info));
    }
    const int total = std::max(0, options.warmup) + std::max(1, options.iterations);
    int completed = 0;
    bool faulted = false;
    impl.faultStream = -1;
    RankTransport* ranks = options.acrossRanks ? rankTransport() : nullptr;
    for (int iteration = 0; iteration < total; ++iteration) {
        bool cancelled = options.cancelled && options.cancelled();
        if (ranks && ranks->size() > 1) {
            // The ranks start together (so that a copy between them measures the copy, not one
            // rank waiting for the other's previous iteration) and stop together.
            auto all = ranks->allGather(cancelled ? "cancel" : "");
            if (!all)
                return all.error();
            for (const std::string& said : all.value())
                cancelled = cancelled || !said.empty();
        }
        if (cancelled) {
            result.cancelled = true;
            break;
        }
        if (iteration > 0 && options.progress)
            options.progress(iteration, total);
        ++completed;
        const bool measured = iteration >= options.warmup;
        const bool last = iteration == total - 1;
        ++impl.epoch;
        impl.runNumber.store(impl.epoch);
        impl.tracing = last;
        for (Impl::Stream& stream : impl.streams) {
            stream.timed.clear();
            stream.memory.clear();
        }
        // Measured iterations are numbered from options.firstIteration; warm-up ones before it.
        const int number = options.firstIteration + iteration - std::max(0, options.warmup);
        if (!options.faults.empty())
            impl.injectFaults(options.faults, number);
        impl.startRun();
        const double start = hostClockMicros();
        for (std::size_t s = 0; s < impl.streams.size(); ++s) {
            if (!impl.streams[s].instructions.empty())
                impl.streams[s].device->enqueue([&impl, s] { impl.runStream(s); });
        }
        for (Impl::Stream& stream : impl.streams)
            stream.device->synchronize();
        const double end = hostClockMicros();
        for (Impl::Stream& stream : impl.streams) {
            // Times first: a device whose timing failed says so in its asynchronous error.
            impl.finishStream(stream);
            std::string asyncError = stream.device->takeAsyncError();
            if (!asyncError.empty())
                impl.fail(std::move(asyncError));
        }
        // Weights read in place from a file that was cut short (the pages past its end read as
        // zeros, io/MappedFile.h) or rewritten during the run: the run's results are not the
        // model's.
        for (const MappedPages* file : impl.readInPlace) {
            if (std::string why = file->changedOnDisk(); !why.empty())
                impl.fail("the run read weights in place: " + why);
        }
        if (impl.aborted.load()) {
            impl.aborted.store(false);
            std::string message;
            std::swap(message, impl.error);
            const int failed = std::exchange(impl.faultStream, -1);
            if (!options.faultsEndRun || failed < 0)
                return SourceError{"", 0, 0, message};
            const Impl::Stream& stream = impl.streams[static_cast<std::size_t>(failed)];
            result.fault = DeviceFault{failed,
                                       stream.device->name(),
                                       stream.virtuals,
                                       number,
                                       deviceFailureKindName(impl.faultKind),
                                       std::move(message)};
            faulted = true;
            break;
        }
        if (!measured)
            continue;
        const int measuredIteration = static_cast<int>(result.latencyMicros.size());
        result.latencyMicros.push_back(end - start);
        for (std::size_t r = 0; r < impl.ranShape.size(); ++r) {
            if (!impl.ranShape[r])
                continue;
            auto& seen = result.ranShapes[static_cast<std::int32_t>(r)];
            if (seen.empty() || seen.back().shape != *impl.ranShape[r])
                seen.push_back(RunResult::RanShape{measuredIteration, *impl.ranShape[r]});
        }
        for (std::size_t s = 0; s < impl.streams.size(); ++s) {
            Impl::Stream& stream = impl.streams[s];
            result.streams[s].busyMicros.push_back(stream.busy);
            result.streams[s].stalledMicros.push_back(stream.stalled);
            result.streams[s].livePeakBytes =
                std::max(result.streams[s].livePeakBytes, stream.livePeak);
            for (const TimedEvent& event : stream.timed)
                result.instrMicros[event.instruction].push_back(event.end - event.start);
            if (last) {
                result.trace.insert(result.trace.end(), stream.timed.begin(), stream.timed.end());
                result.memory.insert(result.memory.end(), stream.memory.begin(),
                                     stream.memory.end());
            }
        }
        if (last) {
            result.traceOrigin = start;
            result.traceEnd = end;
            result.idle = impl.idleStretches(start, end);
        } else if (options.afterIteration && options.afterIteration(result)) {
            result.stopped = true;
            break;
        }
    }
    for (std::size_t s = 0; s < impl.streams.size(); ++s)
        result.streams[s].peakBytes = impl.streams[s].device->peakBytes();
    if (options.progress && !result.cancelled && !result.stopped && !faulted)
        options.progress(total, total);
    // The results, copied out to the host: one task per device that holds some, all of them
    // in flight at once (a decoder's step returns its logits and every layer's cache).
    struct CopyOut {
        Device* owner;
        std::size_t output;
        const std::byte* src;
    };
    std::vector<CopyOut> copies;
    const Instruction& ret = program.code.back();
    for (std::int32_t r : ret.args) {
        if (completed == 0 || faulted)
            break; // cancelled before anything ran, or a device failed: no outputs
        // Another rank's result comes from that rank (the session gathers it).
        const int holder = impl.rankOf(impl.reg(r).device);
        result.outputRanks.push_back(holder);
        if (holder != localRank()) {
            result.outputs.push_back(HostTensor{impl.reg(r).type, {}});
            continue;
        }
        // A data-dependent result fills a prefix of its planned storage.
        result.outputs.push_back(HostTensor::zeros(impl.typeAtRun(r)));
        Device* owner = impl.regOwner[static_cast<std::size_t>(r)];
        const std::byte* src = impl.regData[static_cast<std::size_t>(r)];
        if (owner && src && !result.outputs.back().data.empty())
            copies.push_back(CopyOut{owner, result.outputs.size() - 1, src});
    }
    std::vector<Device*> owners;
    for (const CopyOut& copy : copies) {
        if (std::find(owners.begin(), owners.end(), copy.owner) == owners.end())
            owners.push_back(copy.owner);
    }
    std::vector<std::string> errors(owners.size());
    for (std::size_t o = 0; o < owners.size(); ++o) {
        owners[o]->enqueue([&, o] {
            try {
                for (const CopyOut& copy : copies) {
                    if (copy.owner != owners[o])
                        continue;
                    TensorData& out = result.outputs[copy.output].data;
                    owners[o]->copyOut(out.data(), copy.src, static_cast<std::int64_t>(out.size()));
                }
            } catch (const std::exception& e) {
                errors[o] = e.what();
            }
        });
    }
    for (Device* owner : owners)
        owner->synchronize();
    for (const std::string& error : errors) {
        if (!error.empty())
            return SourceError{"", 0, 0, "copying the results out: " + error};
    }
    std::sort(result.trace.begin(), result.trace.end(),
              [](const TimedEvent& a, const TimedEvent& b) { return a.start < b.start; });
    return result;
}

} // namespace placer
