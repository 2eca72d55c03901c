// Control flow whose shapes are found at run time (the Relay VM's If and Goto over sub-programs):
// an If, or a Loop, whose bodies hold a value no shape at load describes (NonMaxSuppression's
// selection, a branch that gives an empty tensor or a full one) runs here, on its device's worker,
// node by node. Every body node's shape function runs on the shapes its inputs have then, its
// kernel comes from a cache by signature (vm/RunTimeShapes.h), and its outputs take device
// memory that the body gives back when it ends. The executor copies the node's results into the
// registers it planned for them.
#pragma once

#include "device/Device.h"
#include "ir/Graph.h"
#include "vm/RunTimeShapes.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace placer {

/// A tensor in one device's memory: its type at this run and where its bytes are.
struct DeviceTensor {
    TensorType type;
    std::byte* data = nullptr;
};

/// Device memory taken during a body's run, given back together.
class DeviceBuffers {
public:
    explicit DeviceBuffers(Device& device) : m_device(&device) {}
    ~DeviceBuffers();
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;
    DeviceBuffers(DeviceBuffers&& other) noexcept;
    DeviceBuffers& operator=(DeviceBuffers&& other) noexcept;

    /// Memory for a tensor of `type`; throws KernelError naming `what` when the device cannot
    /// give it.
    std::byte* allocate(const TensorType& type, const std::string& what);
    /// Hands `data`, which these buffers own, to `to` (a body's result leaving it without a
    /// copy); false when these buffers do not own it.
    bool handOver(std::byte* data, DeviceBuffers& to);

private:
    void release();
    Device* m_device;
    std::vector<std::byte*> m_owned;
};

/// The If and Loop nodes of one instruction (and the control flow inside their bodies) run with
/// shapes found at run time on one device. Used from that device's worker only.
class RunTimeControlFlow {
public:
    RunTimeControlFlow(Device& device, int onnxOpset);
    ~RunTimeControlFlow();
    RunTimeControlFlow(const RunTimeControlFlow&) = delete;
    RunTimeControlFlow& operator=(const RunTimeControlFlow&) = delete;

    /// Runs control-flow `node` on `inputs` (its own, then the values its bodies capture): the
    /// results, in memory taken from `results`. Throws KernelError for what the data decides (a
    /// shape function that refuses the shapes it is given, a kernel's failure, memory the
    /// device cannot give), naming the node.
    std::vector<DeviceTensor> run(const Node& node, const std::vector<DeviceTensor>& inputs,
                                  DeviceBuffers& results);

private:
    std::vector<DeviceTensor> runIf(const Node& node, const std::vector<DeviceTensor>& inputs,
                                    DeviceBuffers& results);
    std::vector<DeviceTensor> runLoop(const Node& node, const std::vector<DeviceTensor>& inputs,
                                      DeviceBuffers& results);
    /// Runs every node of `body` with its parameters bound to `parameters`; its outputs are
    /// copied into memory from `results`, and everything else is given back.
    std::vector<DeviceTensor> runBody(const Graph& body,
                                      const std::vector<DeviceTensor>& parameters,
                                      DeviceBuffers& results, const std::string& where);
    std::vector<DeviceTensor> runNode(const Graph& body, const Node& node,
                                      const std::vector<DeviceTensor>& inputs,
                                      DeviceBuffers& memory);
    /// A constant of a body, uploaded on first use and kept.
    std::byte* constantOnDevice(const Node& node);
    /// Element 0 of a device tensor as an integer (bools: 0 or 1), read on the host.
    std::int64_t readScalar(const DeviceTensor& tensor, const std::string& what);
    DeviceTensor copyOf(const DeviceTensor& tensor, DeviceBuffers& memory, const std::string& what);

    Device& m_device;
    int m_onnxOpset = 0;
    std::map<const Node*, std::unique_ptr<RunTimeKernelCache>> m_kernels;
    std::map<const Node*, std::byte*> m_constants;
    std::int64_t m_iteration = 0; ///< a Loop's iteration number, read by the device
};

} // namespace placer
