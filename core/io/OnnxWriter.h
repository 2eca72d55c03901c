// Writes a planned graph back to ONNX, so a plan travels with the model.
#pragma once

#include "io/OnnxProto.h"

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"

#include <string>
#include <vector>

#include <cstddef>

namespace onnx {
class NodeProto;
class TensorProto;
class ValueInfoProto;
} // namespace onnx

namespace placer {

/// Serializes `graph` (usually applyPlan()'s result for a model read from ONNX) as an ONNX model:
/// ONNX ops with their attributes, constants as initializers, inserted copies as DeviceCopy nodes
/// of the custom domain "ai.placement_explorer" (attributes src, dst, inserted), and the
/// placement in the model's metadata_props: placement.devices (the --devices list),
/// placement.default, placement.host, placement.device:<node> for every node and
/// placement.pin:<node> ("gpu", or "gpu!" when fixed) for the user's pins and for the planned
/// device of every op, so that reading the model back and planning it reproduces the plan.
/// Graphs with Relay ops, or constants without data, cannot be written: that is the error.
/// `docStrings` (optional, per node of `graph`) become the nodes' doc_string, which Netron shows
/// with each node: the way to carry per-node placement and timings into Netron.
Result<std::string> writeOnnx(const Graph& graph, const DeviceSet& devices,
                              const std::vector<std::string>& docStrings = {});

/// The --devices spelling of a device set: "cpu:cpu,gpu:cuda:mem=8589934592".
std::string deviceSetSpec(const DeviceSet& devices);

/// Names an ONNX value and gives it `type` (element type and static shape), replacing any type
/// it had.
void setOnnxType(onnx::ValueInfoProto* info, const std::string& name, const TensorType& type);

/// Writes a node's attributes as ONNX attributes (the reader's spellings of string lists and
/// one-element tensors undone; what no ONNX attribute holds left out).
void setOnnxAttributes(onnx::NodeProto* node, const Attrs& attrs);

/// Sets a tensor's elements from their bytes as `dtype` lays them out: raw data, or for strings
/// (handles into ir/StringPool.h) the strings themselves, as ONNX stores them.
void setOnnxTensorData(onnx::TensorProto* tensor, DType dtype, const char* data, std::size_t size);

} // namespace placer
