// Lifetime-based storage assignment per device, in one pass over the execution order.
//
// The order is the expected execution order (plan/ExecutionOrder.h), not the graph's. Steps: the
// node at position p runs at step 2p and the copies of its outputs at step 2p+1 (a constant's
// copies at 2p, just before their first reader runs: copySlot). A tensor's storage returns to its
// device's free pool after the step of its last use (so an op never writes over its own inputs).
// Releases are kept in per-step buckets (an intrusive list), so the whole plan is linear in the
// number of tensors apart from the free pools, which are keyed by size.
#include "plan/MemoryPlanner.h"

#include "plan/ExecutionOrder.h"
#include "plan/PlanWorkspace.h"

#include <algorithm>
#include <map>

namespace placer {

namespace {

constexpr std::int64_t kForever = INT64_MAX;

class MemoryPlanner {
public:
    MemoryPlanner(const Graph& graph, PlanWorkspace& workspace, const DeviceSet& devices,
                  const Plan& plan)
        : m_graph(graph), m_index(workspace.index), m_devices(devices), m_plan(plan),
          m_order(workspace.order), m_lastUse(workspace.lastUse), m_position(workspace.position),
          m_copyOffsets(workspace.copyOffsets), m_copyList(workspace.copyList),
          m_releaseHead(workspace.releaseHead), m_releaseNext(workspace.releaseNext),
          m_releaseStorage(workspace.releaseStorage), m_releaseBytes(workspace.releaseBytes) {}

    MemoryPlan run(MemoryPlan spare) {
        // A recycled plan's arrays, already in memory (PlanWorkspace::recycle).
        m_result.tensors = std::move(spare.tensors);
        m_result.tensors.clear();
        m_result.storages = std::move(spare.storages);
        m_result.storages.clear();
        m_result.tensors.reserve(m_index.valueBytes.size());
        const int deviceCount = m_devices.size();
        m_result.devices.resize(deviceCount);
        for (int d = 0; d < deviceCount; ++d)
            m_result.devices[d].device = DeviceId(d);
        m_free.resize(deviceCount);
        m_live.assign(deviceCount, 0);
        m_releaseHead.assign(2 * m_index.size() + 2, -1);
        m_releaseNext.clear();
        m_releaseStorage.clear();
        m_releaseBytes.clear();
        m_result.order =
            executionOrder(m_graph, m_index, m_plan, deviceCount, m_order, std::move(spare.order));
        m_position.assign(m_index.size(), 0);
        for (std::size_t p = 0; p < m_result.order.size(); ++p)
            m_position[m_result.order[p].index] = static_cast<std::int64_t>(p);
        fileCopies();
        computeLastUses();
        placeDedicatedTensors();
        placeSharedTensors();
        for (const StorageInfo& storage : m_result.storages) {
            DeviceMemory& memory = m_result.devices[storage.device.index];
            memory.peakBytes += storage.bytes;
            memory.storages.push_back(storage.id);
        }
        return std::move(m_result);
    }

private:
    std::int64_t nodeStep(std::uint32_t node) const { return 2 * m_position[node]; }

    /// Files each copy under the node it goes with, before it (a constant's, just before its
    /// first reader) or after it: per node, two lists in one array (counted, then filled).
    void fileCopies() {
        const std::size_t n = m_index.size();
        m_copyOffsets.assign(2 * n + 1, 0);
        std::vector<std::uint32_t> slotOf(m_plan.copies.size());
        for (std::size_t c = 0; c < m_plan.copies.size(); ++c) {
            const CopySlot at = copySlot(m_graph, m_plan.copies[c], m_position);
            slotOf[c] = 2 * at.node.index + (at.before ? 0 : 1);
            ++m_copyOffsets[slotOf[c] + 1];
        }
        for (std::size_t k = 1; k < m_copyOffsets.size(); ++k)
            m_copyOffsets[k] += m_copyOffsets[k - 1];
        m_copyList.resize(m_plan.copies.size());
        std::vector<std::uint32_t> fill(m_copyOffsets.begin(), m_copyOffsets.end() - 1);
        for (std::size_t c = 0; c < m_plan.copies.size(); ++c)
            m_copyList[fill[slotOf[c]]++] = static_cast<std::uint32_t>(c);
    }

    /// The copies filed before (0) or after (1) node i, as a range of m_copyList.
    std::pair<const std::uint32_t*, const std::uint32_t*> copiesAt(std::uint32_t i,
                                                                   int after) const {
        const std::size_t slot = 2 * static_cast<std::size_t>(i) + static_cast<std::size_t>(after);
        return {m_copyList.data() + m_copyOffsets[slot],
                m_copyList.data() + m_copyOffsets[slot + 1]};
    }

    std::uint32_t slot(ValueRef v) const { return m_index.valueSlot(v); }

    /// The last step at which each value's home instance is read: by a consumer on the same
    /// device (or an explicit device_copy), by an inserted copy, or forever for a result.
    void computeLastUses() {
        const std::size_t n = m_index.size();
        m_lastUse.assign(m_index.valueBytes.size(), -1);
        for (std::uint32_t c = 0; c < n; ++c) {
            const bool isCopy = m_index.isDeviceCopy(c);
            for (std::uint32_t e = m_index.inputOffsets[c]; e < m_index.inputOffsets[c + 1]; ++e) {
                const std::uint32_t p = m_index.inputNode[e];
                if (!isCopy && m_plan.devices[c] != m_plan.devices[p])
                    continue;
                std::int64_t& last = m_lastUse[m_index.outputBase[p] + m_index.inputOutput[e]];
                last = std::max(last, nodeStep(c));
            }
        }
        // A copy runs on its destination whenever that device gets to it, at the latest before
        // its consumers there: the source stays until then, so the source device never waits
        // for the other one to pull before it can reuse the storage.
        for (const CopyPlan& copy : m_plan.copies) {
            if (copy.isExplicit)
                continue;
            std::int64_t last = nodeStep(copy.value.node.index) + 1;
            for (NodeId consumer : copy.consumers)
                last = std::max(last, nodeStep(consumer.index));
            m_lastUse[slot(copy.value)] = std::max(m_lastUse[slot(copy.value)], last);
        }
        doubleBufferPipelineCopies();
        for (const GraphOutput& output : m_graph.outputs())
            m_lastUse[slot(output.value)] = kForever;
    }

    /// In a pipeline (--micro-batches), a value that another device copies is double-buffered:
    /// micro-batch k's stays on its device until that device has written micro-batch k + 1's,
    /// so the two alternate between two storages. Otherwise the sender, one micro-batch ahead,
    /// would wait for the receiver (whose worker runs the copy between its own kernels) to pull
    /// k before it could compute k + 1, and the stages would run in lockstep. Micro-batches are
    /// clones of one another, so the j-th copy from one device to another in micro-batch k
    /// (in execution order) carries the same value as the j-th in k + 1.
    void doubleBufferPipelineCopies() {
        std::int32_t waves = 0;
        for (const Node& node : m_graph.nodes())
            waves = std::max(waves, node.microBatch + 1);
        if (waves < 2 || m_plan.copies.empty())
            return;
        struct Crossing {
            std::int32_t from, to, wave;
            std::int64_t step; ///< its source's
            std::size_t slot;
            auto operator<=>(const Crossing&) const = default;
        };
        std::vector<Crossing> crossings;
        for (const CopyPlan& copy : m_plan.copies) {
            const std::uint32_t source = copy.value.node.index;
            const std::int32_t wave = m_graph.nodes()[source].microBatch;
            const DeviceId from = m_plan.devices[source];
            if (copy.isExplicit || wave < 0 || !from.valid() || !copy.to.valid())
                continue;
            crossings.push_back(
                Crossing{from.index, copy.to.index, wave, nodeStep(source), slot(copy.value)});
        }
        std::sort(crossings.begin(), crossings.end());
        // Groups of one link and micro-batch, each in execution order.
        std::vector<std::size_t> groupStart;
        for (std::size_t c = 0; c < crossings.size(); ++c) {
            if (c == 0 || crossings[c].from != crossings[c - 1].from ||
                crossings[c].to != crossings[c - 1].to ||
                crossings[c].wave != crossings[c - 1].wave)
                groupStart.push_back(c);
        }
        groupStart.push_back(crossings.size());
        for (std::size_t g = 0; g + 2 < groupStart.size(); ++g) {
            const Crossing& first = crossings[groupStart[g]];
            const Crossing& next = crossings[groupStart[g + 1]];
            const std::size_t count = groupStart[g + 1] - groupStart[g];
            if (next.from != first.from || next.to != first.to || next.wave != first.wave + 1 ||
                groupStart[g + 2] - groupStart[g + 1] != count)
                continue; // not the same copies in the next micro-batch: nothing to pair
            for (std::size_t j = 0; j < count; ++j) {
                const Crossing& now = crossings[groupStart[g] + j];
                std::int64_t& last = m_lastUse[now.slot];
                last = std::max(last, crossings[groupStart[g + 1] + j].step);
            }
        }
    }

    /// Parameters, constants and replicas live for the whole run in storages of their own.
    void placeDedicatedTensors() {
        for (std::uint32_t i = 0; i < m_index.size(); ++i) {
            if (!m_index.isParameter(i) && !m_index.isConstant(i))
                continue;
            const ValueRef value{NodeId(i), 0};
            place(value, m_plan.devices[i], m_index.valueBytes[slot(value)], kForever, true);
        }
        for (const Replica& replica : m_plan.replicas) {
            for (DeviceId device : replica.devices)
                place(replica.value, device, m_index.valueBytes[slot(replica.value)], kForever,
                      true);
        }
    }

    void placeSharedTensors() {
        const auto& copies = m_plan.copies;
        const auto placeCopy = [&](const CopyPlan& copy, std::int64_t step) {
            std::int64_t last = step;
            for (NodeId consumer : copy.consumers)
                last = std::max(last, nodeStep(consumer.index));
            place(copy.value, copy.to, copy.bytes, copy.toOutput ? kForever : last, false);
        };
        for (const NodeId id : m_result.order) {
            const std::uint32_t i = id.index;
            releaseUpTo(nodeStep(i));
            // Copies of constants, just before their first reader.
            for (auto [c, end] = copiesAt(i, 0); c != end; ++c) {
                if (!copies[*c].isExplicit)
                    placeCopy(copies[*c], nodeStep(i));
            }
            if (!m_index.isParameter(i) && !m_index.isConstant(i)) {
                const std::uint32_t outputs = m_index.outputBase[i + 1] - m_index.outputBase[i];
                for (std::uint32_t k = 0; k < outputs; ++k) {
                    const ValueRef value{NodeId(i), k};
                    place(value, m_plan.devices[i], m_index.valueBytes[slot(value)],
                          std::max(m_lastUse[slot(value)], nodeStep(i)), false);
                }
            }
            // The copies of node i's outputs happen right after it.
            releaseUpTo(nodeStep(i) + 1);
            for (auto [c, end] = copiesAt(i, 1); c != end; ++c) {
                // An explicit device_copy node's own output is already a tensor.
                if (!copies[*c].isExplicit)
                    placeCopy(copies[*c], nodeStep(i) + 1);
            }
        }
    }

    void place(ValueRef value, DeviceId device, std::int64_t bytes, std::int64_t lastUse,
               bool dedicated) {
        if (!device.valid() || bytes <= 0)
            return;
        const std::int32_t storage = dedicated ? newStorage(device, bytes) : acquire(device, bytes);
        m_result.tensors.push_back(TensorStorage{value, device, storage});
        DeviceMemory& memory = m_result.devices[device.index];
        m_live[device.index] += bytes;
        memory.liveBytes = std::max(memory.liveBytes, m_live[device.index]);
        if (lastUse == kForever)
            return;
        // Released once step lastUse is over: filed under lastUse + 1.
        const auto event = static_cast<std::int32_t>(m_releaseStorage.size());
        m_releaseStorage.push_back(storage);
        m_releaseBytes.push_back(bytes);
        m_releaseNext.push_back(m_releaseHead[lastUse + 1]);
        m_releaseHead[lastUse + 1] = event;
    }

    /// Returns to the pools every storage whose tensor's last use is before `step`.
    void releaseUpTo(std::int64_t step) {
        for (std::int32_t event = m_releaseHead[step]; event >= 0; event = m_releaseNext[event]) {
            const std::int32_t id = m_releaseStorage[event];
            const StorageInfo& storage = m_result.storages[id];
            m_live[storage.device.index] -= m_releaseBytes[event];
            m_free[storage.device.index][storage.bytes].push_back(id);
        }
        m_releaseHead[step] = -1;
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
        const std::int32_t id = it->second.back();
        it->second.pop_back();
        if (it->second.empty())
            pool.erase(it);
        StorageInfo& storage = m_result.storages[id];
        storage.bytes = std::max(storage.bytes, bytes);
        return id;
    }

    const Graph& m_graph;
    const GraphIndex& m_index;
    const DeviceSet& m_devices;
    const Plan& m_plan;
    MemoryPlan m_result;

    OrderScratch& m_order;
    std::vector<std::int64_t>& m_lastUse;
    std::vector<std::int64_t>& m_position; ///< per node: its place in the order
    /// Per node i: the copies before it in m_copyList[m_copyOffsets[2i] .. [2i+1]), after it in
    /// [m_copyOffsets[2i+1] .. [2i+2]).
    std::vector<std::uint32_t>& m_copyOffsets;
    std::vector<std::uint32_t>& m_copyList;
    /// Free storages per device: size -> storage ids of that size.
    std::vector<std::map<std::int64_t, std::vector<std::int32_t>>> m_free;
    std::vector<std::int64_t> m_live;
    /// Release events filed by step: head per step, then a list through m_releaseNext.
    std::vector<std::int32_t>& m_releaseHead;
    std::vector<std::int32_t>& m_releaseNext;
    std::vector<std::int32_t>& m_releaseStorage;
    std::vector<std::int64_t>& m_releaseBytes;
};

} // namespace

CopySlot copySlot(const Graph& graph, const CopyPlan& copy,
                  const std::vector<std::int64_t>& position) {
    const NodeId source = copy.value.node;
    if (copy.isExplicit || !graph.node(source).isConstant() || copy.consumers.empty() ||
        copy.toOutput)
        return {source, false};
    NodeId first = copy.consumers.front();
    for (const NodeId consumer : copy.consumers) {
        if (position[consumer.index] < position[first.index])
            first = consumer;
    }
    return {first, true};
}

MemoryPlan planMemory(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    PlanWorkspace workspace;
    workspace.index.rebuild(graph);
    return planMemory(graph, workspace, devices, plan);
}

MemoryPlan planMemory(const Graph& graph, PlanWorkspace& workspace, const DeviceSet& devices,
                      const Plan& plan) {
    return MemoryPlanner(graph, workspace, devices, plan).run(std::move(workspace.spare.memory));
}

} // namespace placer
