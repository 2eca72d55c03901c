// A run as a Chrome trace (report/RunReport.h): a process per physical device, lanes for
// compute and copies, flows from producer to copy to consumer, memory counters.
#include "report/RunReport.h"

#include "report/RunViews.h"

namespace placer {

using namespace runview;

Json chromeTrace(const RunOutcome& input) {
    const Executor& executor = *input.executor;
    const Views v{input.graph(), input.devices, executor.program(), input.result};
    const double origin = v.result.traceOrigin;
    Json events = Json::array();
    auto meta = [&](const char* name, int pid, int tid, Json args) {
        Json e = Json::object();
        e.set("name", name);
        e.set("ph", "M");
        e.set("pid", pid);
        e.set("tid", tid);
        e.set("args", std::move(args));
        events.push(std::move(e));
    };
    // Threads: 1 compute, 2 input uploads, 3+ one per copy source.
    std::map<std::pair<int, std::string>, int> copyThreads;
    auto threadFor = [&](std::size_t k) {
        const Instruction& instr = v.at(k);
        const int pid = executor.streamOf(k) + 1;
        if (instr.op == Opcode::Invoke)
            return 1;
        if (instr.op == Opcode::LoadInput)
            return 2;
        const std::string from = v.devices[instr.srcDevice].name;
        auto [it, inserted] = copyThreads.emplace(std::pair{pid, from}, 0);
        if (inserted) {
            int next = 3;
            for (const auto& [key, tid] : copyThreads) {
                if (key.first == pid && tid >= next)
                    next = tid + 1;
            }
            it->second = next;
        }
        return it->second;
    };
    for (std::size_t s = 0; s < v.result.streams.size(); ++s) {
        const StreamInfo& stream = v.result.streams[s];
        std::string label = stream.physical + " (";
        for (std::size_t i = 0; i < stream.virtuals.size(); ++i)
            label += (i ? ", " : "") + v.devices[stream.virtuals[i]].name;
        label += ")";
        Json name = Json::object();
        name.set("name", label);
        meta("process_name", static_cast<int>(s) + 1, 0, std::move(name));
        Json sort = Json::object();
        sort.set("sort_index", static_cast<int>(s));
        meta("process_sort_index", static_cast<int>(s) + 1, 0, std::move(sort));
        Json compute = Json::object();
        compute.set("name", "compute");
        meta("thread_name", static_cast<int>(s) + 1, 1, std::move(compute));
        Json upload = Json::object();
        upload.set("name", "input upload (host -> " + stream.physical + ")");
        meta("thread_name", static_cast<int>(s) + 1, 2, std::move(upload));
    }
    // Which event produced / consumed each register, for flows.
    std::map<std::int32_t, const TimedEvent*> producer;
    std::map<std::int32_t, std::vector<const TimedEvent*>> consumers;
    for (const TimedEvent& event : v.result.trace) {
        const Instruction& instr = v.at(event.instruction);
        if (instr.op == Opcode::Invoke) {
            for (std::int32_t r : instr.results)
                producer[r] = &event;
            for (std::int32_t r : instr.args)
                consumers[r].push_back(&event);
        } else if (instr.op == Opcode::DeviceCopy) {
            producer[instr.dst] = &event;
            consumers[instr.src].push_back(&event);
        } else if (instr.op == Opcode::LoadInput) {
            producer[instr.dst] = &event;
        }
    }
    std::map<const TimedEvent*, int> tidOf;
    for (const TimedEvent& event : v.result.trace) {
        const std::size_t k = event.instruction;
        const Instruction& instr = v.at(k);
        const int pid = event.stream + 1;
        const int tid = threadFor(k);
        tidOf[&event] = tid;
        Json e = Json::object();
        Json args = Json::object();
        if (instr.op == Opcode::Invoke) {
            const Node& node = v.graph.node(instr.node);
            e.set("name", node.op->name);
            e.set("cat", "kernel");
            args.set("node", node.name);
            args.set("op", node.op->name);
            args.set("device", v.devices[instr.device].name);
            args.set("physical", v.result.streams[static_cast<std::size_t>(event.stream)].physical);
            args.set("kernel", executor.implementation(k));
            Json inputs = Json::array();
            for (std::int32_t r : instr.args)
                inputs.push(shapeJson(v.typeRan(r)));
            Json outputs = Json::array();
            for (std::int32_t r : instr.results)
                outputs.push(shapeJson(v.typeRan(r)));
            args.set("input_shapes", std::move(inputs));
            args.set("output_shapes", std::move(outputs));
        } else if (instr.op == Opcode::DeviceCopy) {
            const std::string from = v.devices[instr.srcDevice].name;
            const std::string to = v.devices[instr.device].name;
            e.set("name", "copy " + from + " -> " + to);
            e.set("cat", "copy");
            args.set("node", v.reg(instr.dst).name);
            args.set("value", v.graph.valueName(v.reg(instr.src).value));
            args.set("bytes", instr.bytes);
            args.set("from", from);
            args.set("to", to);
        } else {
            const Node& node = v.graph.node(instr.node);
            e.set("name", "input " + node.name);
            e.set("cat", "copy");
            args.set("node", node.name);
            args.set("bytes", instr.bytes);
            args.set("from", "host");
            args.set("to", v.devices[instr.device].name);
        }
        e.set("ph", "X");
        e.set("pid", pid);
        e.set("tid", tid);
        e.set("ts", event.start - origin);
        e.set("dur", std::max(0.0, event.end - event.start));
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    // Flows: producer -> copy, and copy -> each consumer.
    int flowId = 1;
    auto flow = [&](const TimedEvent* from, const TimedEvent* to) {
        // A flow starts at the producer ("s") and binds to the enclosing slice of its end ("f").
        for (const auto& [event, phase] : {std::pair{from, "s"}, std::pair{to, "f"}}) {
            Json mark = Json::object();
            mark.set("name", "dataflow");
            mark.set("cat", "dataflow");
            mark.set("ph", phase);
            if (event == to)
                mark.set("bp", "e");
            mark.set("id", flowId);
            mark.set("pid", event->stream + 1);
            mark.set("tid", tidOf[event]);
            mark.set("ts", event->start - origin);
            events.push(std::move(mark));
        }
        ++flowId;
    };
    for (const TimedEvent& event : v.result.trace) {
        const Instruction& instr = v.at(event.instruction);
        if (instr.op != Opcode::DeviceCopy)
            continue;
        if (auto it = producer.find(instr.src); it != producer.end())
            flow(it->second, &event);
        if (auto it = consumers.find(instr.dst); it != consumers.end()) {
            for (const TimedEvent* consumer : it->second)
                flow(&event, consumer);
        }
    }
    for (const IdleStretch& stretch : v.result.idle) {
        Json e = Json::object();
        e.set("name", "idle");
        e.set("cat", "idle");
        e.set("ph", "X");
        e.set("pid", stretch.stream + 1);
        e.set("tid", 1);
        e.set("ts", stretch.start - origin);
        e.set("dur", std::max(0.0, stretch.end - stretch.start));
        Json args = Json::object();
        args.set("waited_for", idleReasonIn(v, executor, stretch));
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    for (const MemorySample& sample : v.result.memory) {
        Json e = Json::object();
        e.set("name", "memory in use");
        e.set("ph", "C");
        e.set("pid", sample.stream + 1);
        e.set("ts", std::max(0.0, sample.time - origin));
        Json args = Json::object();
        args.set("bytes", sample.bytes);
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    Json trace = Json::object();
    trace.set("traceEvents", std::move(events));
    trace.set("displayTimeUnit", "ms");
    Json meta2 = Json::object();
    meta2.set("tool", "placer run");
    meta2.set("model", v.graph.name);
    // The trace is the last iteration's; what changed the plan before it is told here.
    if (!input.events.empty())
        meta2.set("events", runEventsJson(input.events));
    trace.set("otherData", std::move(meta2));
    return trace;
}

} // namespace placer
