// Kernels for shapes found while a program runs (TVM's Relay VM way: a shape function on the
// host, then the allocation, then the kernel). An Invoke whose inputs have shapes known only at
// run time (after NonZero, NonMaxSuppression, Unique, Compress), or whose outputs the model sizes
// from values it computes (a Reshape's shape, a TopK's k), cannot be prepared at load. At run time
// the executor asks this cache for it with the shapes its inputs have then and the values of its
// shape-setting inputs: the cache runs the op's shape function, prepares a kernel for exactly
// those types on the device's worker, and keeps both for the next run with the same signature.
#pragma once

#include "device/Device.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "kernels/Kernel.h"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace placer {

/// Whether input `input` of `node` sets the shape of its outputs, so that a kernel prepared at
/// run time must be given its value (a Reshape's shape, a Slice's bounds, a TopK's k).
bool inputSetsShapes(const Node& node, std::size_t input);

/// The output types of `node` for inputs of `inputs`' types, `values[i]` being input i's bytes
/// where it sets shapes (null elsewhere): the op's own shape function for Relay ops, ONNX's for
/// ONNX ops. A data-dependent output (NonZero's) comes at the most it can hold. An error says why
/// a shape cannot be found.
Result<std::vector<TensorType>> runTimeTypes(const Node& node,
                                             const std::vector<TensorType>& inputs,
                                             const std::vector<const TensorData*>& values,
                                             int onnxOpset);

/// Whether every node of `sized` (a graph instantiated at other sizes of its named dimensions,
/// ir/Graph.h instantiateAtSizes) whose types depend on those sizes has the types its op's shape
/// function gives it from its inputs there: the fit the instantiation evaluates is checked at
/// the sizes it is used at (a clamp such as min(seq, 512) follows seq at small sizes only). An
/// error names the first node that differs, or that cannot be checked (control flow whose
/// results follow the sizes).
Status checkTypesAtSizes(const Graph& sized, int onnxOpset);

/// The `bytes` bytes at `data` in `device`'s memory, on the host: a shape-setting value a shape
/// function reads. From the device's worker, after what wrote them was issued (a device with
/// lanes is waited for).
std::shared_ptr<const TensorData> readToHost(Device& device, const std::byte* data,
                                             std::int64_t bytes);

/// What one Invoke needs at run time for one signature (its inputs' types and shape-setting
/// values): its outputs' types and a kernel prepared for them.
struct RunTimeKernel {
    std::vector<TensorType> outputs;
    std::unique_ptr<Kernel> kernel;
    /// The shape-setting values the kernel was prepared with (it may point at them).
    std::vector<std::shared_ptr<const TensorData>> values;
    std::uint64_t lastUse = 0; ///< when it was last found (RunTimeKernelCache's count)
};

/// The kernels of one Invoke at run time, by signature, the kMaxSignatures used last: a long
/// session over data of ever new shapes keeps a bounded set. Used from the device's worker only.
class RunTimeKernelCache {
public:
    static constexpr std::size_t kMaxSignatures = 64;
    /// The kernel for `node` on `device` for inputs of `inputs`' types; `values[i]` holds input
    /// i's bytes where it sets shapes (null elsewhere), and `constants[i]` a constant input's
    /// bytes (null elsewhere). Prepared on first use of the signature. An error (no shape
    /// function answer, no kernel) names the node.
    Result<const RunTimeKernel*> find(Device& device, const Node& node,
                                      const std::vector<TensorType>& inputs,
                                      const std::vector<std::shared_ptr<const TensorData>>& values,
                                      const std::vector<const TensorData*>& constants,
                                      int onnxOpset,
                                      const std::vector<TensorType>* outputs = nullptr);
    /// (`outputs`, when given: the output types, known without the shape function: a node's
    /// shapes in the named dimensions evaluated at the run's sizes.)
    /// How many signatures are kept, and how many were let go for newer ones.
    std::size_t size() const { return m_kernels.size(); }
    std::size_t evicted() const { return m_evicted; }
    /// The implementation of the kernel found last ("run-time:onednn:matmul:..."), or empty
    /// before the first run.
    std::string implementation() const {
        return m_last ? "run-time:" + m_last->kernel->implementation() : std::string();
    }

private:
    std::map<std::string, RunTimeKernel> m_kernels;
    const RunTimeKernel* m_last = nullptr;
    std::uint64_t m_uses = 0;
    std::size_t m_evicted = 0;
};

} // namespace placer
