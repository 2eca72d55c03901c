// What a device needs to run one operator: the node, its tensor types, and which inputs are
// constants (uploaded once, so a kernel may cache a transformed copy of them).
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace placer {

struct KernelSpec {
    const Node* node = nullptr;
    std::vector<TensorType> inputs;
    std::vector<TensorType> outputs;
    std::vector<bool> constantInputs; ///< per input: a constant (its bytes never change)
    /// Per input: the constant's bytes when the input is a constant with data, else null. Lets a
    /// kernel read small operands (axes, slice bounds) once at load time.
    std::vector<const TensorData*> constantData;
    int onnxOpset = 0; ///< the model's ONNX opset (0 for other formats)
};

/// A kernel prepared for one node on one device: shapes and library primitives are fixed at load
/// time, so running it only binds pointers.
class Kernel {
public:
    virtual ~Kernel() = default;
    /// Runs on the device's worker. Pointers are the device's memory for the node's inputs and
    /// outputs, in order. Throws KernelError for data-dependent failures (an index out of range).
    virtual void run(const std::byte* const* inputs, std::byte* const* outputs) = 0;
    /// Which implementation runs: "onednn:convolution", "plain:transpose", ...
    virtual std::string implementation() const = 0;
    /// Whether output k's extent depends on the data (NonZero, Unique, ...): its storage is
    /// planned for the most it can hold, and a run fills a prefix of it.
    virtual bool boundsOutput(std::size_t k) const {
        (void)k;
        return false;
    }
    /// For a kernel that bounds an output: the shapes of every output at the last run, else null.
    virtual const std::vector<std::vector<std::int64_t>>* ranShapes() const { return nullptr; }
};

/// A failure that depends on the data (an out-of-range gather index), raised by Kernel::run.
class KernelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A kernel or copy that failed because its device did, not because of its data: out of
/// memory, a device error (a CUDA error), or the device gone. A run that can go on without the
/// device does (vm/Executor.h RunOptions::faultsEndRun); any other failure ends the run.
class DeviceFailure : public KernelError {
public:
    enum class Kind : std::uint8_t { Error, OutOfMemory, Lost };
    DeviceFailure(Kind kind, const std::string& message) : KernelError(message), m_kind(kind) {}
    Kind kind() const { return m_kind; }

private:
    Kind m_kind;
};

/// "error", "out of memory", "lost".
inline const char* deviceFailureKindName(DeviceFailure::Kind kind) {
    switch (kind) {
    case DeviceFailure::Kind::OutOfMemory:
        return "out of memory";
    case DeviceFailure::Kind::Lost:
        return "lost";
    case DeviceFailure::Kind::Error:
        break;
    }
    return "error";
}

} // namespace placer
