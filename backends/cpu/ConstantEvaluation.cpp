// The CPU kernels as the readers' constant evaluator: a known node run once at load.
#include "backends/cpu/ConstantEvaluation.h"

#include "backends/cpu/CpuKernels.h"

#include <cstring>
#include <mutex>

namespace placer {

Result<std::vector<TensorData>> evaluateOnCpu(const Node& node,
                                              const std::vector<TensorType>& inputTypes,
                                              const std::vector<const TensorData*>& inputs,
                                              const std::vector<TensorType>& outputTypes,
                                              int onnxOpset) {
    // One context for every evaluation: a oneDNN engine is not free to make.
    static std::mutex mutex;
    static CpuKernelContext* context = new CpuKernelContext();
    std::lock_guard lock(mutex);
    const ScopedOmpThreads one(1); // on the caller's thread, which keeps no helper threads
    KernelSpec spec;
    spec.node = &node;
    spec.inputs = inputTypes;
    spec.outputs = outputTypes;
    spec.constantInputs.assign(inputs.size(), true);
    spec.constantData = inputs;
    spec.onnxOpset = onnxOpset;
    auto kernel = makeCpuKernel(spec, *context);
    if (!kernel)
        return kernel.error();
    // Kernels read their operands with their element types: copy into 16-byte aligned buffers.
    std::vector<std::vector<std::max_align_t>> in(inputs.size()), out(outputTypes.size());
    std::vector<const std::byte*> inPointers;
    std::vector<std::byte*> outPointers;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const std::size_t bytes = inputs[k] ? inputs[k]->size() : 0;
        in[k].resize(bytes / sizeof(std::max_align_t) + 1);
        if (bytes > 0)
            std::memcpy(in[k].data(), inputs[k]->data(), bytes);
        inPointers.push_back(reinterpret_cast<const std::byte*>(in[k].data()));
    }
    for (std::size_t k = 0; k < outputTypes.size(); ++k) {
        const auto bytes = static_cast<std::size_t>(outputTypes[k].bytes());
        out[k].resize(bytes / sizeof(std::max_align_t) + 1);
        outPointers.push_back(reinterpret_cast<std::byte*>(out[k].data()));
    }
    // A kernel's data-dependent failure (an index out of range) is the model's error; anything
    // else it throws is a bug, and is not dressed up as one.
    try {
        kernel.value()->run(inPointers.data(), outPointers.data());
    } catch (const KernelError& error) {
        return SourceError{"", 0, 0, error.what()};
    } catch (const dnnl::error& error) { // oneDNN failing to run (its memory, its limits)
        return SourceError::sentence(std::string("oneDNN failed folding a constant: ") +
                                     error.what());
    } catch (const std::bad_alloc&) {
        return SourceError::sentence(
            "out of memory folding a constant of " +
            std::to_string(outputTypes.empty() ? 0 : outputTypes[0].bytes()) + " bytes");
    }
    std::vector<TensorData> results;
    for (std::size_t k = 0; k < outputTypes.size(); ++k)
        results.emplace_back(reinterpret_cast<const char*>(outPointers[k]),
                             static_cast<std::size_t>(outputTypes[k].bytes()));
    return results;
}

void installConstantFolding() {
    setConstantEvaluator(evaluateOnCpu);
}

} // namespace placer
