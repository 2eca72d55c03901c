// Reads ONNX models (opsets 11-17) into a Graph, through the ONNX protobuf schema, its checker and
// its shape inference.
#pragma once

#include "io/MappedFile.h"
#include "io/OnnxSequences.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/HostTensor.h"
#include "ir/Result.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// Reads an ONNX model from its bytes. `fileName` names it in errors; its folder is where
/// external data files are looked up (and the only folder they may come from).
///
/// Graph inputs become parameters (an input that is also an initializer is a constant),
/// initializers and Constant nodes become constants with their data, and every value's type comes
/// from the model and ONNX shape inference. An operator the engine does not know still loads,
/// with no kernel on any device (the planner reports it). Symbolic dimensions are taken as 1.
/// Things worth telling the user that are not errors go to *warnings.
///
/// A model written by writeOnnx() carries its device set, pins and DeviceCopy nodes (custom
/// domain "ai.placement_explorer"): device names are resolved against *devices, which the
/// model's own device set replaces when `devicesGiven` is false.
///
/// Bad input (not a model, truncated, invalid, absurd sizes, external data outside the model's
/// folder, cycles, dangling inputs) is a SourceError naming the file and the node or tensor,
/// found before any large allocation.
Result<Graph> readOnnx(std::string_view bytes, const std::string& fileName, DeviceSet* devices,
                       bool devicesGiven, std::vector<std::string>* warnings);

/// What a reader is told beyond the bytes.
struct OnnxReadOptions {
    /// Shapes for graph inputs, by name: fix symbolic dimensions (--input-shape x=1,3,224,224).
    /// A given shape must agree with every fixed dimension the model declares.
    std::map<std::string, std::vector<std::int64_t>> inputShapes;
    /// Values for graph inputs that set shapes (a Reshape's shape, a Slice's bounds, a Pad's
    /// pads): the plan is made for these values, as TensorRT builds for given shape tensors. A
    /// value given for an input that sets no shape is ignored here (it is run-time data).
    std::map<std::string, HostTensor> shapeInputValues;
    /// The data a run will give, by input name: an input whose shape the model leaves open is
    /// planned at the data's shape, and one whose value sets shapes for that value (as
    /// shapeInputValues). Data for no input, or that disagrees with a fixed dimension, is left
    /// for the run to refuse.
    std::map<std::string, HostTensor> runInputs;
    /// Sequence and optional inputs: how many elements each holds. Element k of sequence S is
    /// the tensor input "S[k]", whose shape inputShapes gives; an input not listed here takes
    /// its length from those names (io/OnnxSequences.h).
    std::map<std::string, OnnxSequenceInput> sequenceInputs;
    /// Loops of the main graph, by their first output, to unroll where their trip count is known
    /// at load. The reader adds a Loop whose body's shapes change from one iteration to the next
    /// (a carried value that grows) and reads the model again.
    std::set<std::string> unrollLoops;
    /// Loops of the main graph, by their first output, whose bodies' shapes change and whose
    /// trip count is not known at load: read with their carried values' shapes found at run
    /// time, and run node by node (vm/RunTimeBodies.h). The reader adds them after an
    /// unrolling that could not be done.
    std::set<std::string> runTimeLoops;
    /// Evaluate nodes whose inputs are all known at load (ir/ConstantFolding.h).
    bool foldConstants = true;
    /// Values (by ONNX name) whose nodes stay in the program although their inputs are known at
    /// load: values folded from the sizes that no expression of them gives (positions from a
    /// Range over the cache's length, a causal mask). They are computed at run time, on the
    /// host as shape functions are, so that the one read serves every size (io/ModelLoader.cpp
    /// finds them).
    std::set<std::string> keepComputed;
    /// The mapped file the model's bytes are (MappedFile::bytes()): large initializers then
    /// stay views into it instead of being copied. Without it they are copied out.
    std::shared_ptr<const MappedFile> bytesFile;
};

Result<Graph> readOnnx(std::string_view bytes, const std::string& fileName, DeviceSet* devices,
                       bool devicesGiven, std::vector<std::string>* warnings,
                       const OnnxReadOptions& options);

/// A graph input whose shape has symbolic or unknown dimensions: each dimension as the model
/// declares it ("batch", "?", "3").
struct SymbolicInput {
    std::string name;
    std::vector<std::string> dims;
};
/// The inputs of an ONNX model that --input-shape can fix (none when the bytes do not parse).
std::vector<SymbolicInput> onnxSymbolicInputs(std::string_view bytes);

/// A serialized onnx.TensorProto (the backend tests' input_0.pb) as a host tensor.
Result<HostTensor> readOnnxTensor(std::string_view bytes, const std::string& fileName);

/// True if `bytes` look like a serialized ONNX model rather than text.
bool looksLikeOnnx(std::string_view bytes);

} // namespace placer
