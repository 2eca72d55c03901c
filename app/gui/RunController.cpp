#include "gui/RunController.h"

#include "runtime/Schedule.h"

#include "runtime/Bytecode.h"
#include "runtime/MemoryCheck.h"
#include "passes/PassManager.h"
#include "runtime/RandomTensor.h"

#include <QtConcurrent/QtConcurrentRun>

namespace placer::gui {

RunController::RunController(QObject* parent)
    : QObject(parent), m_registry(std::make_unique<DeviceRegistry>()) {
    connect(&m_watcher, &QFutureWatcher<std::shared_ptr<RunOutcome>>::finished, this, [this] {
        m_outcome = m_watcher.result();
        emit finished();
    });
}

RunController::~RunController() {
    m_cancel = true;
    m_watcher.waitForFinished();
}

bool RunController::isRunning() const {
    return m_watcher.isRunning();
}

void RunController::cancel() {
    m_cancel = true;
}

void RunController::start(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                          RunOptions options, std::vector<std::string> physical,
                          const PlanOptions& planOptions) {
    if (isRunning())
        return;
    m_cancel = false;
    auto outcome = std::make_shared<RunOutcome>();
    outcome->userGraph = std::make_unique<Graph>(graph);
    outcome->devices = devices;
    outcome->userPlan = plan;
    outcome->planOptions = planOptions;
    outcome->options = options;
    // Defaults: cpu-kind devices on the host; every other device on its own virtual CPU, the
    // same one each run (vcpu<index+1>), so runs compare.
    physical.resize(static_cast<std::size_t>(devices.size()));
    for (int d = 0; d < devices.size(); ++d) {
        std::string& name = physical[static_cast<std::size_t>(d)];
        if (name.empty())
            name = devices[DeviceId(d)].kind == DeviceKind::Cpu ? "cpu"
                                                                : "vcpu" + std::to_string(d + 1);
    }
    outcome->physical = std::move(physical);
    m_watcher.setFuture(QtConcurrent::run([this, outcome] { return work(outcome); }));
}

std::shared_ptr<RunOutcome> RunController::work(std::shared_ptr<RunOutcome> outcome) {
    std::vector<DeviceMapRequest> maps;
    for (int d = 0; d < outcome->devices.size(); ++d)
        maps.push_back(
            {outcome->devices[DeviceId(d)].name, outcome->physical[static_cast<std::size_t>(d)]});
    std::vector<std::string> warnings;
    auto mapping = mapDevices(outcome->devices, maps, *m_registry, &warnings);
    if (!mapping) {
        outcome->error = QString::fromStdString(mapping.error().message);
        return outcome;
    }
    // What runs: the user's graph optimised for the devices it was mapped to.
    auto optimized = optimizeForDevices(*outcome->userGraph, outcome->devices, outcome->userPlan,
                                        outcome->planOptions, mapping.value());
    if (!optimized) {
        const std::string why = "not optimised: " + optimized.error().message;
        optimized = unoptimized(*outcome->userGraph, outcome->userPlan);
        optimized.value().notes = {why};
    }
    outcome->graph = std::make_unique<Graph>(std::move(optimized.value().graph));
    outcome->plan = std::move(optimized.value().plan);
    outcome->origin = std::move(optimized.value().origin);
    outcome->fusedInto = std::move(optimized.value().fusedInto);
    outcome->region = std::move(optimized.value().region);
    outcome->shard = std::move(optimized.value().shard);
    outcome->optimizations = std::move(optimized.value().notes);
    const Graph& graph = *outcome->graph;
    auto program = lowerToBytecode(graph, outcome->devices, outcome->plan);
    if (!program) {
        outcome->error = QString::fromStdString(program.error().message);
        return outcome;
    }
    // Each device orders its ready work by the plan's predicted times, as placer run does.
    program.value().nodeMicros =
        predictedNodeMicros(outcome->userPlan, outcome->origin, graph.size());
    const int opset = graph.onnxOpset();
    if (Status fits = checkMemoryFits(program.value(), outcome->devices, mapping.value(),
                                      hostInputOutputBytes(program.value()));
        !fits.ok()) {
        outcome->error = QString::fromStdString(fits.error().message);
        return outcome;
    }
    std::vector<HostTensor> inputs;
    for (std::size_t i = 0; i < program.value().inputs.size(); ++i)
        inputs.push_back(
            randomTensor(graph.node(program.value().inputs[i]).outputs[0], 1000003u + i));
    // The reference: the user's whole graph, unoptimised, on a CPU device of its own, same
    // inputs. It runs first and is gone before the run loads, so the two never hold memory at
    // once (its constants are the model's own bytes, not copies).
    auto reference = runReference(*outcome->userGraph, inputs, opset);
    int reported = -1;
    auto loaded = [this, &reported](std::int64_t done, std::int64_t total) {
        const int perMille = total > 0 ? static_cast<int>(done * 1000 / total) : 1000;
        if (perMille == reported)
            return;
        reported = perMille;
        QMetaObject::invokeMethod(
            this, [this, perMille] { emit loading(perMille); }, Qt::QueuedConnection);
    };
    auto executor =
        Executor::load(graph, outcome->devices, program.take(), mapping.value(), opset, loaded);
    if (!executor) {
        outcome->error = QString::fromStdString(executor.error().message);
        return outcome;
    }
    outcome->executor = executor.take();
    const int warmup = std::max(0, outcome->options.warmup);
    const int iterations = std::max(1, outcome->options.iterations);
    const int total = warmup + iterations;
    RunResult& all = outcome->result;
    for (int i = 0; i < total; ++i) {
        if (m_cancel) {
            outcome->cancelled = true;
            return outcome;
        }
        auto run = outcome->executor->run(inputs, RunOptions{0, 1});
        if (!run) {
            outcome->error = QString::fromStdString(run.error().message);
            return outcome;
        }
        QMetaObject::invokeMethod(
            this, [this, i, total] { emit progress(i + 1, total); }, Qt::QueuedConnection);
        if (i < warmup)
            continue;
        RunResult& one = run.value();
        if (all.streams.empty()) {
            all.streams = one.streams;
            all.instrMicros.resize(one.instrMicros.size());
        } else {
            for (std::size_t s = 0; s < all.streams.size(); ++s) {
                all.streams[s].busyMicros.insert(all.streams[s].busyMicros.end(),
                                                 one.streams[s].busyMicros.begin(),
                                                 one.streams[s].busyMicros.end());
                all.streams[s].peakBytes =
                    std::max(all.streams[s].peakBytes, one.streams[s].peakBytes);
                all.streams[s].livePeakBytes =
                    std::max(all.streams[s].livePeakBytes, one.streams[s].livePeakBytes);
            }
        }
        all.latencyMicros.insert(all.latencyMicros.end(), one.latencyMicros.begin(),
                                 one.latencyMicros.end());
        for (std::size_t k = 0; k < one.instrMicros.size(); ++k)
            all.instrMicros[k].insert(all.instrMicros[k].end(), one.instrMicros[k].begin(),
                                      one.instrMicros[k].end());
        all.trace = std::move(one.trace);
        all.memory = std::move(one.memory);
        all.idle = std::move(one.idle);
        all.traceOrigin = one.traceOrigin;
        all.traceEnd = one.traceEnd;
        all.outputs = std::move(one.outputs);
    }
    if (reference)
        outcome->reference = compareOutputs(all.outputs, reference.value());
    return outcome;
}

RunReportInput runReportInput(const RunOutcome& outcome) {
    RunReportInput input;
    input.graph = outcome.graph.get();
    input.devices = &outcome.devices;
    input.executor = outcome.executor.get();
    input.result = &outcome.result;
    input.options = outcome.options;
    input.reference = outcome.reference;
    input.optimizations = outcome.optimizations;
    input.splits = &outcome.userPlan.splits;
    input.nodeRegion = outcome.region;
    input.nodeShard = outcome.shard;
    return input;
}

MedianTimes userMedianTimes(const RunOutcome& outcome) {
    const MedianTimes ran = medianTimes(outcome.executor->program(), outcome.result,
                                        outcome.graph->size(), outcome.plan.copies.size());
    return placer::userMedianTimes(ran, *outcome.graph, outcome.plan, outcome.origin,
                                   outcome.userGraph->size(), outcome.userPlan);
}

} // namespace placer::gui
