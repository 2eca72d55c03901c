// The operators the engine knows: arity, shape function, kernel family, and what each device kind
// can run.
#pragma once

#include "ir/Attrs.h"
#include "ir/DeviceSet.h"
#include "ir/OpSemantics.h"
#include "ir/TensorType.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace placer {

/// What a shape function returns: the output types, or a sentence saying why there are none.
struct ShapeResult {
    std::vector<TensorType> outputs;
    std::string error; ///< empty on success

    static ShapeResult ok(std::vector<TensorType> outputs) { return {std::move(outputs), {}}; }
    static ShapeResult fail(std::string error) { return {{}, std::move(error)}; }
    bool failed() const { return !error.empty(); }
};

using ShapeFunction = std::function<ShapeResult(const std::vector<TensorType>&, const Attrs&)>;

/// Which operator set an op belongs to: Relay's (with shape functions here) or ONNX's (typed by
/// ONNX's own shape inference when a model is read).
enum class OpDialect : std::uint8_t { Relay, Onnx };

/// The special roles an op can have; everything else is an ordinary compute op.
enum class OpRole : std::uint8_t { Compute, Parameter, Constant, DeviceCopy };

/// Which element types a device kind has kernels for, per kernel family.
struct KernelCapability {
    DTypeMask cpu = 0;  ///< cpu and vcpu devices (the CPU backend)
    DTypeMask cuda = 0; ///< the CUDA backend

    constexpr DTypeMask of(DeviceKind kind) const { return kind == DeviceKind::Cuda ? cuda : cpu; }
};

/// What the backends can run, per family: the planner's model of a device kind. It is declared
/// here, not asked of the registered backends, because plans are made for machines other than
/// the one planning (a build without CUDA still plans for a GPU). Each backend's kernel table
/// must register a factory for exactly the families its kind has here; tst_kernels checks the
/// CPU backend and tst_cuda the CUDA one.
KernelCapability kernelCapability(KernelFamily family);

struct OpDef {
    std::string name;
    OpRole role = OpRole::Compute;
    int minInputs = 0;
    int maxInputs = 0; ///< -1: any number
    OpDialect dialect = OpDialect::Relay;
    /// Null for ONNX ops: their output types come from the model.
    ShapeFunction inferShape;
    /// The kernel family (and function) that computes it; None: no backend runs it.
    OpKernel kernel;
    /// Runs on the host device only (shape computations).
    bool hostOnly = false;
    /// Relay passes its inputs as one tuple argument: concatenate((%a, %b), axis=1).
    bool tupleInput = false;
    /// Control flow (If, Loop, Scan): its nodes carry bodies (Node::subgraphs), which run on the
    /// node's device. It has no kernel family; a device can run such a node when it can run
    /// every node of its bodies (nodeRunsOn in ir/Graph.h).
    bool hasBodies = false;

    /// Element types a device kind can run this op in (all of them for the executor's roles and
    /// for control flow, whose bodies decide).
    DTypeMask kernelDTypes(DeviceKind kind) const {
        return role != OpRole::Compute || hasBodies ? kAllDTypes | kStringDType
                                                    : kernelCapability(kernel.family).of(kind);
    }
    bool hasKernel(DeviceKind kind, DType dtype) const {
        return (kernelDTypes(kind) & dtypeBit(dtype)) != 0;
    }
    bool hasKernel(DeviceKind kind) const { return kernelDTypes(kind) != 0; }
    bool hasAnyKernel() const;
};

/// The process-wide registry of built-in ops. Readers may create extra OpDefs for ops they
/// cannot execute (ONNX ops without kernels); those are owned by the Graph that uses them.
class OpRegistry {
public:
    static const OpRegistry& global();

    /// The op with this name, or nullptr.
    const OpDef* find(std::string_view name) const;
    const OpDef& parameter() const { return *m_parameter; }
    const OpDef& constant() const { return *m_constant; }
    const OpDef& deviceCopy() const { return *m_deviceCopy; }
    /// All ops in registration order.
    std::vector<const OpDef*> all() const;

private:
    OpRegistry();
    const OpDef& add(OpDef def);

    std::vector<std::unique_ptr<OpDef>> m_ops;
    std::unordered_map<std::string_view, const OpDef*> m_byName;
    const OpDef* m_parameter = nullptr;
    const OpDef* m_constant = nullptr;
    const OpDef* m_deviceCopy = nullptr;
};

/// Registers every built-in Relay op with its shape function (ShapeFunctions.cpp).
void registerBuiltinOps(const std::function<void(OpDef)>& add);
/// Registers the ONNX operators the engine understands, by their ONNX names (OnnxOps.cpp).
void registerOnnxOps(const std::function<void(OpDef)>& add);
/// An op that no device can run, for operators an importer met but does not know.
std::unique_ptr<OpDef> makeUnsupportedOp(std::string name, OpDialect dialect);

} // namespace placer
