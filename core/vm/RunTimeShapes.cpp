// Shape functions and kernels at run time (vm/RunTimeShapes.h): a signature of the inputs'
// types and shape-setting values, the op's shape function, and a kernel prepared for its answer.
#include "vm/RunTimeShapes.h"

#include "ir/DialectShapes.h"
#include "vm/ControlFlow.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace placer {

namespace {

/// The position in its format of the node's input `input` (optional inputs left out shift the
/// rest).
int onnxPosition(const Node& node, std::size_t input) {
    const auto positions = node.attrs.getInts(kInputPositionsAttr, {});
    if (positions && input < positions->size())
        return static_cast<int>((*positions)[input]);
    return static_cast<int>(input);
}

/// A key naming the inputs' types and the shape-setting values exactly.
std::string signatureOf(const std::vector<TensorType>& inputs,
                        const std::vector<std::shared_ptr<const TensorData>>& values) {
    std::string key;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        key += inputs[i].toShortString();
        if (i < values.size() && values[i]) {
            key += '=';
            key.append(values[i]->data(), values[i]->size());
        }
        key += ';';
    }
    return key;
}

/// An op whose every output is empty at this run (NonZero found nothing): there is nothing to
/// write, and libraries such as oneDNN refuse or fault on empty operands.
class EmptyOutputs final : public Kernel {
public:
    void run(const std::byte* const*, std::byte* const*) override {}
    std::string implementation() const override { return "none:empty-outputs"; }
};

bool allEmpty(const std::vector<TensorType>& types) {
    for (const TensorType& type : types) {
        if (type.elementCount() != 0)
            return false;
    }
    return !types.empty();
}

} // namespace

std::shared_ptr<const TensorData> readToHost(Device& device, const std::byte* data,
                                             std::int64_t bytes) {
    std::string copy(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), '\0');
    if (!copy.empty() && data) {
        if (device.hostAccessible()) {
            std::memcpy(copy.data(), data, copy.size());
        } else {
            device.finishLane();
            device.copyOut(copy.data(), data, bytes);
            device.finishLane();
        }
    }
    return std::make_shared<const TensorData>(std::move(copy));
}

bool inputSetsShapes(const Node& node, std::size_t input) {
    const DialectShapeFunctions* functions = dialectShapeFunctions(node.op->dialect);
    return functions && functions->inputSetsShapes &&
           functions->inputSetsShapes(node.op->name, onnxPosition(node, input));
}

Result<std::vector<TensorType>> runTimeTypes(const Node& node,
                                             const std::vector<TensorType>& inputs,
                                             const std::vector<const TensorData*>& values,
                                             int onnxOpset) {
    if (node.op->inferShape) {
        ShapeResult shapes = node.op->inferShape(inputs, node.attrs);
        if (!shapes.error.empty())
            return SourceError{"", 0, 0,
                               node.op->name + " node '" + node.name +
                                   "': at run time: " + shapes.error};
        return std::move(shapes.outputs);
    }
    const DialectShapeFunctions* functions = dialectShapeFunctions(node.op->dialect);
    if (!functions || !functions->types)
        return SourceError{"", 0, 0,
                           node.op->name + " node '" + node.name +
                               "': at run time: no shape function for its dialect (no reader "
                               "of its format was used in this process)"};
    return functions->types(node, inputs, values, onnxOpset);
}

Status checkTypesAtSizes(const Graph& sized, int onnxOpset) {
    // The values something reads: an optional output the model leaves out (held as an empty
    // float32 that nothing reads) has no type to check.
    std::set<std::pair<std::uint32_t, std::uint32_t>> read;
    for (std::uint32_t i = 0; i < sized.size(); ++i) {
        for (const ValueRef& input : sized.node(NodeId(i)).inputs)
            read.emplace(input.node.index, input.output);
    }
    for (const GraphOutput& output : sized.outputs())
        read.emplace(output.value.node.index, output.value.output);
    const auto leftOut = [&](std::uint32_t node, std::size_t k) {
        const TensorType& type = sized.node(NodeId(node)).outputs[k];
        return type.shape == std::vector<std::int64_t>{0} && type.dtype == DType::Float32 &&
               !read.count({node, static_cast<std::uint32_t>(k)});
    };
    // Which values' types follow the sizes: symbolic ones, and what is computed from them.
    std::vector<char> follows(sized.size(), 0);
    for (std::uint32_t i = 0; i < sized.size(); ++i) {
        const Node& node = sized.node(NodeId(i));
        bool depends = !node.symbolicShapes.empty() || !node.symbolicData.empty() || node.tiledData;
        bool standIn = false;
        for (const ValueRef& input : node.inputs) {
            depends = depends || follows[input.node.index] != 0;
            standIn = standIn || sized.node(input.node).runTimeShape(input.output);
        }
        follows[i] = depends ? 1 : 0;
        if (!depends || node.isParameter() || node.isConstant() || node.isDeviceCopy() ||
            node.anyRunTimeShape() || standIn)
            continue;
        if (node.op->hasBodies)
            return SourceError::sentence(node.op->name + " node '" + node.name +
                                         "': control flow whose types follow the sizes is not "
                                         "checked at other sizes");
        std::vector<TensorType> inputs;
        std::vector<const TensorData*> values;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const Node& producer = sized.node(node.inputs[k].node);
            inputs.push_back(producer.outputs[node.inputs[k].output]);
            values.push_back(inputSetsShapes(node, k) && producer.isConstant() ? producer.data.get()
                                                                               : nullptr);
        }
        auto types = runTimeTypes(node, inputs, values, onnxOpset);
        if (!types)
            return types.error();
        for (std::size_t k = 0; k < node.outputs.size() && k < types.value().size(); ++k) {
            if (types.value()[k].shape != node.outputs[k].shape && !leftOut(i, k))
                return SourceError::sentence(node.op->name + " node '" + node.name + "' gives " +
                                             types.value()[k].toShortString() + " there, not " +
                                             node.outputs[k].toShortString() +
                                             " as its fitted shape says");
        }
    }
    return Status{};
}

Result<const RunTimeKernel*>
RunTimeKernelCache::find(Device& device, const Node& node, const std::vector<TensorType>& inputs,
                         const std::vector<std::shared_ptr<const TensorData>>& values,
                         const std::vector<const TensorData*>& constants, int onnxOpset,
                         const std::vector<TensorType>* known) {
    std::string key = signatureOf(inputs, values);
    if (const auto found = m_kernels.find(key); found != m_kernels.end()) {
        found->second.lastUse = ++m_uses;
        return m_last = &found->second;
    }
    // What the shape function reads: every shape-setting input's value, a constant's included.
    std::vector<const TensorData*> given(inputs.size(), nullptr);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i < values.size() && values[i])
            given[i] = values[i].get();
        else if (i < constants.size() && inputSetsShapes(node, i))
            given[i] = constants[i];
    }
    auto outputs = known ? Result<std::vector<TensorType>>(*known)
                         : runTimeTypes(node, inputs, given, onnxOpset);
    if (!outputs)
        return outputs.error();
    if (outputs.value().size() != node.outputs.size())
        return SourceError{"", 0, 0,
                           node.op->name + " node '" + node.name + "': its shape function gave " +
                               std::to_string(outputs.value().size()) + " outputs, not " +
                               std::to_string(node.outputs.size())};
    KernelSpec spec;
    spec.node = &node;
    spec.onnxOpset = onnxOpset;
    spec.inputs = inputs;
    spec.outputs = outputs.value();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const TensorData* data =
            given[i] ? given[i] : (i < constants.size() ? constants[i] : nullptr);
        // A shape-setting value is fixed for this signature: the kernel may read it once.
        spec.constantInputs.push_back(data != nullptr);
        spec.constantData.push_back(data);
    }
    auto kernel = allEmpty(spec.outputs) && node.subgraphs.empty()
                      ? Result<std::unique_ptr<Kernel>>(std::make_unique<EmptyOutputs>())
                      : prepareKernelOn(device, spec);
    if (!kernel) {
        std::string types;
        for (const TensorType& input : inputs)
            types += (types.empty() ? "" : ", ") + input.toShortString();
        return SourceError{"", 0, 0,
                           node.op->name + " node '" + node.name + "': at run time, for inputs " +
                               types + ": " + kernel.error().message};
    }
    if (m_kernels.size() >= kMaxSignatures) {
        // The least recently used signature goes (a detector sees a new count of boxes on
        // almost every image). Its kernel may still be running in the device's lane: that work
        // is waited for first.
        auto oldest = m_kernels.begin();
        for (auto it = m_kernels.begin(); it != m_kernels.end(); ++it) {
            if (it->second.lastUse < oldest->second.lastUse)
                oldest = it;
        }
        device.finishLane();
        if (m_last == &oldest->second)
            m_last = nullptr;
        m_kernels.erase(oldest);
        ++m_evicted;
    }
    RunTimeKernel entry;
    entry.outputs = outputs.take();
    entry.kernel = kernel.take();
    entry.values = values;
    entry.lastUse = ++m_uses;
    const auto [at, inserted] = m_kernels.emplace(std::move(key), std::move(entry));
    (void)inserted;
    return m_last = &at->second;
}

} // namespace placer
