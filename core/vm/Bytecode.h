// Lowering a planned graph to bytecode for a small register VM whose memory instructions carry
// their (virtual) device. A register holds one tensor instance: a value on one device.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace placer {

enum class Opcode : std::uint8_t {
    AllocStorage, ///< load: storage `storage` of `bytes` on `device` (from the memory plan)
    AllocTensor,  ///< register `dst` now lives in storage `storage` on `device`
    LoadConst,    ///< load: upload constant `node` into register `dst` on `device`
    LoadInput,    ///< run: copy graph input `index` from the host into register `dst`
    Invoke,       ///< run kernel of `node` on `device`: reads `args`, writes `results`
    DeviceCopy,   ///< copy register `src` on `srcDevice` into `dst` on `device`
    Free,         ///< register `dst` is dead; its storage may hold the next tenant
    Ret,          ///< the graph's results are `args`
};

std::string_view opcodeName(Opcode op);

struct Instruction {
    Opcode op = Opcode::Ret;
    DeviceId device;    ///< where it runs; for memory instructions, whose memory
    DeviceId srcDevice; ///< DeviceCopy: the source device
    std::int32_t storage = -1;
    std::int64_t bytes = 0;
    std::int32_t dst = -1;   ///< AllocTensor, LoadConst, LoadInput, Free: the register
    std::int32_t src = -1;   ///< DeviceCopy: the source register
    NodeId node;             ///< Invoke, LoadConst; DeviceCopy: the producer of the value copied
    std::int32_t index = -1; ///< LoadInput: which graph input; DeviceCopy: the copy's
                             ///< index in Plan::copies (-1 for an explicit device_copy)
    std::vector<std::int32_t> args;    ///< Invoke: input registers; Ret: result registers
    std::vector<std::int32_t> results; ///< Invoke: output registers
};

struct Register {
    std::string name; ///< "%3", "%3@gpu" for an instance away from its producer's device
    TensorType type;
    DeviceId device;
    ValueRef value;
    bool constant = false;  ///< holds a constant (uploaded at load time)
    bool dedicated = false; ///< parameter or constant: bound for the whole program
};

struct Program {
    std::vector<Register> registers;
    /// Load section first (AllocStorage, AllocTensor of dedicated tensors, LoadConst), then the
    /// run section, which ends with Ret.
    std::vector<Instruction> code;
    std::size_t runStart = 0;
    std::vector<NodeId> inputs; ///< graph inputs (parameter nodes) in LoadInput index order
    /// Per graph node: its kernel's predicted time in µs (the plan's cost model), which the
    /// executor's priorities use instead of its own estimate; empty, or < 0 for a node, where
    /// there is none.
    std::vector<double> nodeMicros;
};

/// Lowers `graph` as planned by `plan` (which must include its memory plan). Fails when a node
/// reads a value that the plan leaves on another device without a copy.
Result<Program> lowerToBytecode(const Graph& graph, const DeviceSet& devices, const Plan& plan);

/// The program as text, one instruction a line, e.g.
///   invoke nn.conv2d %3 <- (%0, %1@gpu) on gpu
std::string printBytecode(const Program& program, const Graph& graph, const DeviceSet& devices);

} // namespace placer
