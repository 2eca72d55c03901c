// Lowering: nodes in the memory plan's order (the expected execution order, plan/ExecutionOrder.h),
// each followed by the copies of its outputs, or a constant's copy just before its first reader
// (the order the memory planner assumed, plan/MemoryPlanner.h copySlot), registers per tensor
// instance, frees after last uses.
#include "vm/Bytecode.h"

#include "plan/MemoryPlanner.h"

#include <map>
#include <sstream>

namespace placer {

std::string_view opcodeName(Opcode op) {
    switch (op) {
    case Opcode::AllocStorage:
        return "alloc_storage";
    case Opcode::AllocTensor:
        return "alloc_tensor";
    case Opcode::LoadConst:
        return "load_const";
    case Opcode::LoadInput:
        return "load_input";
    case Opcode::Invoke:
        return "invoke";
    case Opcode::DeviceCopy:
        return "device_copy";
    case Opcode::Free:
        return "free";
    case Opcode::Ret:
        return "ret";
    }
    return "?";
}

namespace {

class Lowering {
public:
    Lowering(const Graph& graph, const DeviceSet& devices, const Plan& plan)
        : m_graph(graph), m_devices(devices), m_plan(plan) {}

    Result<Program> run() {
        if (m_plan.devices.size() != m_graph.size())
            return fail("the plan does not belong to this graph");
        for (const TensorStorage& tensor : m_plan.memory.tensors)
            m_storageOf[{key(tensor.value), tensor.device.index}] = tensor.storage;
        for (const StorageInfo& storage : m_plan.memory.storages) {
            Instruction alloc{Opcode::AllocStorage};
            alloc.device = storage.device;
            alloc.storage = storage.id;
            alloc.bytes = storage.bytes;
            m_load.push_back(alloc);
        }
        if (auto error = lowerDedicated())
            return *error;
        if (auto error = lowerBody())
            return *error;
        insertFrees();
        m_program.runStart = m_load.size();
        m_program.code = std::move(m_load);
        m_program.code.insert(m_program.code.end(), m_body.begin(), m_body.end());
        return std::move(m_program);
    }

private:
    static std::uint64_t key(ValueRef v) {
        return (static_cast<std::uint64_t>(v.node.index) << 16) | v.output;
    }

    SourceError fail(std::string message) const {
        return SourceError{"", 0, 0, std::move(message)};
    }

    std::int32_t storageOf(ValueRef value, DeviceId device) const {
        const auto it = m_storageOf.find({key(value), device.index});
        return it == m_storageOf.end() ? -1 : it->second;
    }

    /// A new register for `value` on `device`.
    std::int32_t newRegister(ValueRef value, DeviceId device) {
        Register reg;
        const DeviceId home = m_plan.devices[value.node.index];
        reg.name = m_graph.valueName(value);
        if (device != home)
            reg.name += "@" + m_devices[device].name;
        reg.type = m_graph.type(value);
        reg.device = device;
        reg.value = value;
        const Node& producer = m_graph.node(value.node);
        reg.constant = producer.isConstant();
        // The instances bound at load time (lowerDedicated); a copy made during a run is not.
        reg.dedicated = false;
        const auto id = static_cast<std::int32_t>(m_program.registers.size());
        m_program.registers.push_back(std::move(reg));
        m_instance[{key(value), device.index}] = id;
        return id;
    }

    Instruction allocTensor(std::int32_t reg) {
        Instruction alloc{Opcode::AllocTensor};
        alloc.dst = reg;
        alloc.device = m_program.registers[static_cast<std::size_t>(reg)].device;
        alloc.storage =
            storageOf(m_program.registers[static_cast<std::size_t>(reg)].value, alloc.device);
        alloc.bytes = m_program.registers[static_cast<std::size_t>(reg)].type.bytes();
        return alloc;
    }

    /// Parameters and constants (with their replicas) are bound at load time; constants are
    /// uploaded there too.
    std::optional<SourceError> lowerDedicated() {
        std::vector<std::vector<DeviceId>> replicas(m_graph.size());
        for (const Replica& replica : m_plan.replicas)
            replicas[replica.value.node.index] = replica.devices;
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            const Node& node = m_graph.nodes()[i];
            if (!node.isParameter() && !node.isConstant())
                continue;
            std::vector<DeviceId> where{m_plan.devices[i]};
            where.insert(where.end(), replicas[i].begin(), replicas[i].end());
            for (DeviceId device : where) {
                if (!device.valid())
                    return fail("node '" + node.name + "' has no device in the plan");
                const std::int32_t reg = newRegister(ValueRef{NodeId(i), 0}, device);
                m_program.registers[static_cast<std::size_t>(reg)].dedicated = true;
                m_load.push_back(allocTensor(reg));
                if (node.isConstant()) {
                    if (!node.data && node.outputs[0].bytes() > 0)
                        return fail("constant '" + node.name +
                                    "' has no data (the model was read without weights)");
                    Instruction load{Opcode::LoadConst};
                    load.device = device;
                    load.dst = reg;
                    load.node = NodeId(i);
                    load.bytes = node.outputs[0].bytes();
                    m_load.push_back(load);
                }
            }
            if (node.isParameter()) {
                m_inputIndexOf[i] = static_cast<std::int32_t>(m_program.inputs.size());
                m_program.inputs.push_back(NodeId(i));
            }
        }
        return std::nullopt;
    }

    /// The register a node on `device` reads for `value`.
    std::optional<std::int32_t> instance(ValueRef value, DeviceId device) const {
        const auto it = m_instance.find({key(value), device.index});
        if (it != m_instance.end())
            return it->second;
        return std::nullopt;
    }

    std::optional<SourceError> lowerBody() {
        const auto& copies = m_plan.copies;
        std::vector<NodeId> order = m_plan.memory.order;
        if (order.size() != m_graph.size()) {
            order.clear();
            for (std::uint32_t i = 0; i < m_graph.size(); ++i)
                order.push_back(NodeId(i));
        }
        std::vector<std::int64_t> position(m_graph.size(), 0);
        for (std::size_t p = 0; p < order.size(); ++p)
            position[order[p].index] = static_cast<std::int64_t>(p);
        // Each copy where the memory plan has it (plan/MemoryPlanner.h, copySlot).
        std::vector<std::vector<std::uint32_t>> copiesAfter(m_graph.size());
        std::vector<std::vector<std::uint32_t>> copiesBefore(m_graph.size());
        for (std::size_t c = 0; c < copies.size(); ++c) {
            const CopySlot at = copySlot(m_graph, copies[c], position);
            (at.before ? copiesBefore : copiesAfter)[at.node.index].push_back(
                static_cast<std::uint32_t>(c));
        }
        for (const NodeId id : order) {
            const std::uint32_t i = id.index;
            const Node& node = m_graph.nodes()[i];
            for (const std::uint32_t copyIndex : copiesBefore[i]) {
                if (auto failed = emitCopy(copyIndex))
                    return failed;
            }
            const DeviceId device = m_plan.devices[i];
            if (node.isParameter()) {
                Instruction load{Opcode::LoadInput};
                load.device = device;
                load.dst = *instance(ValueRef{NodeId(i), 0}, device);
                load.node = NodeId(i);
                load.index = m_inputIndexOf[i];
                load.bytes = node.outputs[0].bytes();
                m_body.push_back(load);
            } else if (node.isDeviceCopy()) {
                const ValueRef input = node.inputs[0];
                const DeviceId from = m_plan.devices[input.node.index];
                const auto src = instance(input, from);
                if (!src)
                    return fail("device_copy '" + node.name + "' reads a value with no instance");
                const std::int32_t dst = newRegister(ValueRef{NodeId(i), 0}, device);
                m_body.push_back(allocTensor(dst));
                Instruction copy{Opcode::DeviceCopy};
                copy.device = device;
                copy.srcDevice = from;
                copy.src = *src;
                copy.dst = dst;
                copy.node = NodeId(i);
                copy.bytes = node.outputs[0].bytes();
                m_body.push_back(copy);
            } else if (!node.isConstant()) {
                Instruction invoke{Opcode::Invoke};
                invoke.device = device;
                invoke.node = NodeId(i);
                for (const ValueRef input : node.inputs) {
                    const auto reg = instance(input, device);
                    if (!reg)
                        return fail("node '" + node.name + "' on " + m_devices[device].name +
                                    " reads " + m_graph.valueName(input) + ", which is on " +
                                    m_devices[m_plan.devices[input.node.index]].name +
                                    ", and the plan has no copy for it");
                    invoke.args.push_back(*reg);
                }
                for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
                    const std::int32_t reg = newRegister(ValueRef{NodeId(i), k}, device);
                    m_body.push_back(allocTensor(reg));
                    invoke.results.push_back(reg);
                }
                m_body.push_back(std::move(invoke));
            }
            for (const std::uint32_t copyIndex : copiesAfter[i]) {
                if (auto failed = emitCopy(copyIndex))
                    return failed;
            }
        }
        Instruction ret{Opcode::Ret};
        for (const GraphOutput& output : m_graph.outputs()) {
            const DeviceId home = m_plan.devices[output.value.node.index];
            const DeviceId want = output.device.valid() ? output.device : home;
            auto reg = instance(output.value, want);
            if (!reg)
                reg = instance(output.value, home);
            if (!reg)
                return fail("result " + m_graph.valueName(output.value) + " has no instance");
            ret.args.push_back(*reg);
        }
        m_body.push_back(std::move(ret));
        return std::nullopt;
    }

    /// The instructions of inserted copy `copyIndex` (none for an explicit one, whose node is
    /// its own copy, or where a replica is already there).
    std::optional<SourceError> emitCopy(std::uint32_t copyIndex) {
        const CopyPlan& copy = m_plan.copies[copyIndex];
        if (copy.isExplicit)
            return std::nullopt;
        const auto src = instance(copy.value, copy.from);
        if (!src)
            return fail("a copy of " + m_graph.valueName(copy.value) +
                        " has no source instance on " + m_devices[copy.from].name);
        if (instance(copy.value, copy.to))
            return std::nullopt; // a replica is already there
        const std::int32_t dst = newRegister(copy.value, copy.to);
        m_body.push_back(allocTensor(dst));
        Instruction instr{Opcode::DeviceCopy};
        instr.device = copy.to;
        instr.srcDevice = copy.from;
        instr.src = *src;
        instr.dst = dst;
        instr.node = copy.value.node;
        instr.index = static_cast<std::int32_t>(copyIndex);
        instr.bytes = copy.bytes;
        m_body.push_back(instr);
        return std::nullopt;
    }

    /// A Free after the last instruction that reads each non-dedicated register that is not
    /// a result.
    void insertFrees() {
        const std::size_t registers = m_program.registers.size();
        std::vector<std::int64_t> last(registers, -1);
        std::vector<bool> result(registers, false);
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            const Instruction& instr = m_body[k];
            for (std::int32_t r : instr.args)
                last[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(k);
            for (std::int32_t r : instr.results)
                last[static_cast<std::size_t>(r)] =
                    std::max(last[static_cast<std::size_t>(r)], static_cast<std::int64_t>(k));
            if (instr.op == Opcode::DeviceCopy) {
                last[static_cast<std::size_t>(instr.src)] = static_cast<std::int64_t>(k);
                last[static_cast<std::size_t>(instr.dst)] = std::max(
                    last[static_cast<std::size_t>(instr.dst)], static_cast<std::int64_t>(k));
            }
            if (instr.op == Opcode::Ret) {
                for (std::int32_t r : instr.args)
                    result[static_cast<std::size_t>(r)] = true;
            }
        }
        std::vector<std::vector<std::int32_t>> freesAfter(m_body.size());
        for (std::size_t r = 0; r < registers; ++r) {
            if (m_program.registers[r].dedicated || result[r] || last[r] < 0)
                continue;
            freesAfter[static_cast<std::size_t>(last[r])].push_back(static_cast<std::int32_t>(r));
        }
        std::vector<Instruction> body;
        body.reserve(m_body.size() + registers);
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            body.push_back(std::move(m_body[k]));
            for (std::int32_t r : freesAfter[k]) {
                Instruction free{Opcode::Free};
                free.dst = r;
                free.device = m_program.registers[static_cast<std::size_t>(r)].device;
                free.bytes = m_program.registers[static_cast<std::size_t>(r)].type.bytes();
                body.push_back(free);
            }
        }
        m_body = std::move(body);
    }

    const Graph& m_graph;
    const DeviceSet& m_devices;
    const Plan& m_plan;
    Program m_program;
    std::vector<Instruction> m_load;
    std::vector<Instruction> m_body;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::int32_t> m_storageOf;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::int32_t> m_instance;
    std::map<std::uint32_t, std::int32_t> m_inputIndexOf; ///< parameter node -> input index
};

} // namespace

Result<Program> lowerToBytecode(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    // A plan that splits runs its sharded graph (passes/PassManager.h unoptimized() gives it).
    if (plan.sharded)
        return SourceError::sentence("the plan splits regions across devices: lower the "
                                     "sharded graph it holds, not the user's graph");
    return Lowering(graph, devices, plan).run();
}

std::string printBytecode(const Program& program, const Graph& graph, const DeviceSet& devices) {
    std::ostringstream out;
    auto reg = [&](std::int32_t r) { return program.registers[static_cast<std::size_t>(r)].name; };
    auto list = [&](const std::vector<std::int32_t>& regs) {
        std::string text = "(";
        for (std::size_t i = 0; i < regs.size(); ++i)
            text += (i ? ", " : "") + reg(regs[i]);
        return text + ")";
    };
    auto dev = [&](DeviceId d) { return d.valid() ? devices[d].name : std::string("?"); };
    out << "# " << program.registers.size() << " registers, " << program.code.size()
        << " instructions\n";
    for (std::size_t k = 0; k < program.code.size(); ++k) {
        if (k == 0)
            out << "load:\n";
        if (k == program.runStart)
            out << "run:\n";
        const Instruction& i = program.code[k];
        out << "  " << opcodeName(i.op);
        switch (i.op) {
        case Opcode::AllocStorage:
            out << " s" << i.storage << " " << formatBytes(i.bytes) << " on " << dev(i.device);
            break;
        case Opcode::AllocTensor:
            out << " " << reg(i.dst) << " "
                << program.registers[static_cast<std::size_t>(i.dst)].type.toShortString()
                << " in s" << i.storage << " on " << dev(i.device);
            break;
        case Opcode::LoadConst:
            out << " " << reg(i.dst) << " <- " << graph.node(i.node).name << " ("
                << formatBytes(i.bytes) << ") on " << dev(i.device);
            break;
        case Opcode::LoadInput:
            out << " " << reg(i.dst) << " <- input " << i.index << " '" << graph.node(i.node).name
                << "' on " << dev(i.device);
            break;
        case Opcode::Invoke:
            out << " " << graph.node(i.node).op->name << " " << list(i.results) << " <- "
                << list(i.args) << " on " << dev(i.device);
            break;
        case Opcode::DeviceCopy:
            out << " " << reg(i.dst) << " <- " << reg(i.src) << " " << dev(i.srcDevice) << " -> "
                << dev(i.device) << " (" << formatBytes(i.bytes) << ")";
            break;
        case Opcode::Free:
            out << " " << reg(i.dst) << " on " << dev(i.device);
            break;
        case Opcode::Ret:
            out << " " << list(i.args);
            break;
        }
        out << "\n";
    }
    return out.str();
}

} // namespace placer
