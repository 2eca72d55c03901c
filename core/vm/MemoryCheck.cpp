// Refusing a program too large for its devices before anything is allocated
// (vm/MemoryCheck.h).
#include "vm/MemoryCheck.h"

#include <algorithm>
#include <limits>
#include <string>

namespace placer {

namespace {

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
    if (a > std::numeric_limits<std::int64_t>::max() - b)
        return std::numeric_limits<std::int64_t>::max();
    return a + b;
}

SourceError memoryError(std::string message) {
    return SourceError{"", 0, 0, std::move(message)};
}

/// What one physical device is asked to hold.
struct DeviceNeed {
    Device* device = nullptr;
    std::string virtualNames; ///< "gpu" or "gpu, vcpu1" when several map to it
    std::int64_t total = 0;
    int storages = 0;
    std::int32_t largest = -1; ///< storage id
    std::int64_t largestBytes = 0;
    std::int64_t kernelBytes = 0; ///< what its kernels take besides (in total)
};

} // namespace

std::int64_t hostInputOutputBytes(const Program& program) {
    std::int64_t bytes = 0;
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::LoadInput || instr.op == Opcode::Ret) {
            const std::vector<std::int32_t> registers =
                instr.op == Opcode::Ret ? instr.args : std::vector<std::int32_t>{instr.dst};
            for (std::int32_t r : registers) {
                if (r >= 0 && static_cast<std::size_t>(r) < program.registers.size())
                    bytes = saturatingAdd(
                        bytes, program.registers[static_cast<std::size_t>(r)].type.bytes());
            }
        }
    }
    return bytes;
}

Status checkMemoryFits(const Program& program, const DeviceSet& devices,
                       const std::vector<Device*>& mapping, std::int64_t hostBytesBesides,
                       const Graph* graph, int onnxOpset) {
    // The first tensor bound to each storage names it in messages.
    std::vector<std::string> tenant;
    for (const Instruction& instr : program.code) {
        if (instr.op != Opcode::AllocTensor || instr.storage < 0 || instr.dst < 0)
            continue;
        const auto s = static_cast<std::size_t>(instr.storage);
        if (tenant.size() <= s)
            tenant.resize(s + 1);
        if (tenant[s].empty() && static_cast<std::size_t>(instr.dst) < program.registers.size())
            tenant[s] = program.registers[static_cast<std::size_t>(instr.dst)].name;
    }
    auto describe = [&](std::int32_t storage, std::int64_t bytes) {
        const auto s = static_cast<std::size_t>(storage);
        std::string text = "storage " + std::to_string(storage);
        if (s < tenant.size() && !tenant[s].empty())
            text += " (holding " + tenant[s] + ")";
        return text + " of " + formatBytes(bytes);
    };

    std::vector<DeviceNeed> needs; // in the order devices first appear: deterministic messages
    for (const Instruction& instr : program.code) {
        if (instr.op != Opcode::AllocStorage)
            continue;
        const std::uint32_t v = instr.device.index;
        if (v >= mapping.size() || !mapping[v])
            return memoryError(describe(instr.storage, instr.bytes) +
                               " is on a virtual device without a physical device");
        Device* device = mapping[v];
        if (device->remoteRank() >= 0)
            continue; // its rank checks it
        auto it = std::find_if(needs.begin(), needs.end(),
                               [&](const DeviceNeed& need) { return need.device == device; });
        if (it == needs.end()) {
            needs.push_back({device, {}, 0, 0, -1, 0});
            it = needs.end() - 1;
        }
        const std::string& name = devices[instr.device].name;
        if (it->virtualNames.find(name) == std::string::npos)
            it->virtualNames += (it->virtualNames.empty() ? "" : ", ") + name;
        it->total = saturatingAdd(it->total, instr.bytes);
        ++it->storages;
        if (instr.bytes > it->largestBytes || it->largest < 0) {
            it->largest = instr.storage;
            it->largestBytes = instr.bytes;
        }
    }

    // What the kernels take besides the storages, per physical device: their specs as the
    // executor will prepare them.
    if (graph) {
        std::vector<std::pair<Device*, std::vector<KernelSpec>>> specs;
        for (const Instruction& instr : program.code) {
            if (instr.op != Opcode::Invoke || !instr.node.valid() ||
                instr.node.index >= graph->size() || !instr.device.valid() ||
                static_cast<std::size_t>(instr.device.index) >= mapping.size() ||
                !mapping[static_cast<std::size_t>(instr.device.index)])
                continue;
            Device* device = mapping[static_cast<std::size_t>(instr.device.index)];
            if (device->remoteRank() >= 0)
                continue;
            auto it = std::find_if(specs.begin(), specs.end(),
                                   [&](const auto& entry) { return entry.first == device; });
            if (it == specs.end()) {
                specs.emplace_back(device, std::vector<KernelSpec>{});
                it = specs.end() - 1;
            }
            const Node& node = graph->node(instr.node);
            KernelSpec spec;
            spec.node = &node;
            spec.onnxOpset = onnxOpset;
            for (std::int32_t r : instr.args) {
                if (r < 0 || static_cast<std::size_t>(r) >= program.registers.size())
                    continue;
                const Register& input = program.registers[static_cast<std::size_t>(r)];
                spec.inputs.push_back(input.type);
                spec.constantInputs.push_back(input.constant);
                spec.constantData.push_back(input.constant && input.value.node.valid()
                                                ? graph->node(input.value.node).data.get()
                                                : nullptr);
            }
            spec.outputs = node.outputs;
            it->second.push_back(std::move(spec));
        }
        for (auto& entry : specs) {
            Device* device = entry.first; // not a structured binding: lambdas capture it
            const std::int64_t bytes = device->kernelMemoryBytes(entry.second);
            if (bytes <= 0)
                continue;
            auto it = std::find_if(needs.begin(), needs.end(),
                                   [&](const DeviceNeed& need) { return need.device == device; });
            if (it == needs.end()) {
                needs.push_back({device, {}, 0, 0, -1, 0});
                it = needs.end() - 1;
            }
            it->kernelBytes = bytes;
            it->total = saturatingAdd(it->total, bytes);
        }
    }

    std::int64_t hostTotal = hostBytesBesides;
    std::string hostParts;
    for (const DeviceNeed& need : needs) {
        const std::string where =
            need.device->name() + " (virtual device " + need.virtualNames + ")";
        const std::int64_t room = need.device->allocatableBytes();
        if (need.largestBytes > room)
            return memoryError(describe(need.largest, need.largestBytes) + " does not fit on " +
                               where + ", which can allocate " + formatBytes(room));
        if (need.total > room) {
            const std::string kernels = need.kernelBytes > 0
                                            ? " and " + formatBytes(need.kernelBytes) +
                                                  " for its kernels (workspaces and scratch)"
                                            : std::string();
            if (need.largest < 0)
                return memoryError("the plan needs " + formatBytes(need.total) + " on " + where +
                                   " for its kernels (workspaces and scratch), but it can "
                                   "allocate " +
                                   formatBytes(room));
            return memoryError("the plan needs " + formatBytes(need.total) + " on " + where +
                               " in " + std::to_string(need.storages) + " storages" + kernels +
                               ", the largest " + describe(need.largest, need.largestBytes) +
                               ", but it can allocate " + formatBytes(room));
        }
        if (need.device->hostAccessible()) {
            hostTotal = saturatingAdd(hostTotal, need.total);
            hostParts += need.device->name() + " " + formatBytes(need.total) + ", ";
        }
    }
    const std::int64_t host = hostAvailableMemory();
    if (hostTotal > host)
        return memoryError("the run needs " + formatBytes(hostTotal) + " of host memory (" +
                           hostParts + "inputs and outputs " + formatBytes(hostBytesBesides) +
                           "), but the host has " + formatBytes(host) + " available");
    return {};
}

} // namespace placer
