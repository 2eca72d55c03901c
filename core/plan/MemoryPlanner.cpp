// Lifetime-based storage assignment per device.
#include "plan/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <queue>

namespace placer {

namespace {

constexpr std::int64_t kForever = INT64_MAX;

/// One tensor instance to place: lives on `device` from step `def` to step `lastUse`.
struct TensorLife {
    ValueRef value;
    DeviceId device;
    std::int64_t bytes;
    std::int64_t def;
    std::int64_t lastUse;
    bool dedicated; ///< parameters, constants, replicas: never shared
};

class MemoryPlanner {
public:
    MemoryPlanner(const Graph& graph, const DeviceSet& devices, const Plan& plan)
        : m_graph(graph), m_devices(devices), m_plan(plan) {}

    MemoryPlan run() {
        collectTensors();
        m_result.devices.resize(m_devices.size());
        m_free.resize(m_devices.size());
        m_live.assign(m_devices.size(), 0);
        for (int d = 0; d < m_devices.size(); ++d)
            m_result.devices[d].device = DeviceId(d);
        assignStorages();
        return std::move(m_result);
    }

private:
    /// Execution steps: node i runs at step 2i, the copies of its outputs at 2i+1.
    static std::int64_t nodeStep(NodeId n) { return 2 * static_cast<std::int64_t>(n.index); }

    void collectTensors() {
        const std::size_t n = m_graph.size();
        // Home instances: last use by consumers on the same device, copies, results.
        std::vector<std::uint32_t> outputBase(n + 1, 0);
        for (std::size_t i = 0; i < n; ++i)
            outputBase[i + 1] =
                outputBase[i] + static_cast<std::uint32_t>(m_graph.nodes()[i].outputs.size());
        std::vector<std::int64_t> valueLastUse(outputBase[n], -1);
        auto slot = [&](ValueRef v) { return outputBase[v.node.index] + v.output; };
        for (std::uint32_t c = 0; c < n; ++c) {
            const Node& consumer = m_graph.nodes()[c];
            for (const ValueRef& input : consumer.inputs) {
                const bool sameDevice = m_plan.devices[c] == m_plan.devices[input.node.index] ||
                                        consumer.isDeviceCopy();
                if (sameDevice)
                    valueLastUse[slot(input)] =
                        std::max(valueLastUse[slot(input)], nodeStep(NodeId(c)));
            }
        }
        for (const CopyPlan& copy : m_plan.copies) {
            if (!copy.isExplicit)
                valueLastUse[slot(copy.value)] =
                    std::max(valueLastUse[slot(copy.value)], nodeStep(copy.value.node) + 1);
        }
        for (const GraphOutput& output : m_graph.outputs())
            valueLastUse[slot(output.value)] = kForever;

        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = m_graph.nodes()[i];
            const bool dedicated = node.isParameter() || node.isConstant();
            for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
                const ValueRef value{NodeId(i), k};
                const std::int64_t def = dedicated ? 0 : nodeStep(NodeId(i));
                const std::int64_t last =
                    dedicated ? kForever : std::max(valueLastUse[slot(value)], def);
                addTensor(
                    {value, m_plan.devices[i], node.outputs[k].bytes(), def, last, dedicated});
            }
        }
        for (const CopyPlan& copy : m_plan.copies) {
            if (copy.isExplicit)
                continue; // the device_copy node's own output is already a tensor
            std::int64_t last = nodeStep(copy.value.node) + 1;
            for (NodeId consumer : copy.consumers)
                last = std::max(last, nodeStep(consumer));
            if (copy.toOutput)
                last = kForever;
            addTensor(
                {copy.value, copy.to, copy.bytes, nodeStep(copy.value.node) + 1, last, false});
        }
        for (const Replica& replica : m_plan.replicas) {
            for (DeviceId device : replica.devices)
                addTensor({replica.value, device, m_graph.type(replica.value).bytes(), 0, kForever,
                           true});
        }
        std::stable_sort(m_tensors.begin(), m_tensors.end(),
                         [](const TensorLife& a, const TensorLife& b) { return a.def < b.def; });
    }

    void addTensor(TensorLife tensor) {
        if (tensor.device.valid() && tensor.bytes > 0)
            m_tensors.push_back(tensor);
    }

    void assignStorages() {
        // Tensors still alive, ordered by the step after which their storage is free again.
        using Release = std::pair<std::int64_t, std::int32_t>; // (lastUse, storage)
        std::priority_queue<Release, std::vector<Release>, std::greater<>> alive;
        for (const TensorLife& tensor : m_tensors) {
            while (!alive.empty() && alive.top().first < tensor.def) {
                const std::int32_t storage = alive.top().second;
                alive.pop();
                release(storage);
            }
            const std::int32_t storage = tensor.dedicated ? newStorage(tensor.device, tensor.bytes)
                                                          : acquire(tensor.device, tensor.bytes);
            m_result.tensors.push_back(TensorStorage{tensor.value, tensor.device, storage});
            DeviceMemory& memory = m_result.devices[tensor.device.index];
            m_live[tensor.device.index] += tensor.bytes;
            m_liveOf.resize(std::max<std::size_t>(m_liveOf.size(), storage + 1), 0);
            m_liveOf[storage] = tensor.bytes;
            memory.liveBytes = std::max(memory.liveBytes, m_live[tensor.device.index]);
            if (tensor.lastUse != kForever)
                alive.emplace(tensor.lastUse, storage);
        }
        for (const StorageInfo& storage : m_result.storages) {
            DeviceMemory& memory = m_result.devices[storage.device.index];
            memory.peakBytes += storage.bytes;
            memory.storages.push_back(storage.id);
        }
    }

    std::int32_t newStorage(DeviceId device, std::int64_t bytes) {
        const auto id = static_cast<std::int32_t>(m_result.storages.size());
        m_result.storages.push_back(StorageInfo{id, device, bytes});
        return id;
    }

    /// Best fit among the free storages of the device; else grow the largest; else a new one.
    std::int32_t acquire(DeviceId device, std::int64_t bytes) {
        auto& pool = m_free[device.index];
        if (pool.empty())
            return newStorage(device, bytes);
        auto it = pool.lower_bound(bytes);
        if (it == pool.end())
            it = std::prev(pool.end());
        const std::int32_t id = it->second;
        pool.erase(it);
        StorageInfo& storage = m_result.storages[id];
        storage.bytes = std::max(storage.bytes, bytes);
        return id;
    }

    void release(std::int32_t id) {
        const StorageInfo& storage = m_result.storages[id];
        m_live[storage.device.index] -= m_liveOf[id];
        m_free[storage.device.index].emplace(storage.bytes, id);
    }

    const Graph& m_graph;
    const DeviceSet& m_devices;
    const Plan& m_plan;
    std::vector<TensorLife> m_tensors;
    MemoryPlan m_result;
    std::vector<std::multimap<std::int64_t, std::int32_t>> m_free;
    std::vector<std::int64_t> m_live;
    std::vector<std::int64_t> m_liveOf;
};

} // namespace

MemoryPlan planMemory(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    return MemoryPlanner(graph, devices, plan).run();
}

} // namespace placer
