// Small questions about ONNX protobuf graphs that the reader and the sequence lowering both ask.
#pragma once

#include "ir/DType.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnx {
class NodeProto;
class ISchemaRegistry;
} // namespace onnx

namespace placer {

/// The domain of the DeviceCopy nodes the writer writes and the reader reads back.
constexpr const char* kCopyDomain = "ai.placement_explorer";

/// ONNX Runtime's contrib operators' domain: those placer runs (io/ContribSchemas.cpp) are
/// read as ops of the engine, named "com.microsoft.NAME"; others of it, as of any domain it does
/// not know, are named with their domain at load.
constexpr const char* kContribDomain = "com.microsoft";

/// ONNX's schema registry with the contrib operators placer runs registered in it: what the
/// checker and shape inference are given.
const onnx::ISchemaRegistry* onnxSchemas();

/// An op's ONNX domain and type from its name in the engine: "com.microsoft.MatMulNBits" is
/// ("com.microsoft", "MatMulNBits"); a standard operator's name has no domain ("", "MatMul").
std::pair<std::string, std::string> onnxDomainAndType(const std::string& opName);

/// ONNX's TensorProto element type of a dtype, and the dtype of an element type (nothing for
/// one the engine has no dtype for): one table read both ways.
int onnxElementType(DType dtype);
std::optional<DType> dtypeFromOnnx(int elementType);

/// True if the node is of ONNX's default domain ("" or "ai.onnx").
bool onnxStandardDomain(const onnx::NodeProto& node);

/// True if input `input` of the standard ONNX operator `op` sets the shape of its outputs (a
/// Reshape's shape, a Slice's bounds): values given for graph inputs there bind them
/// (OnnxReadOptions::shapeInputValues).
bool onnxInputSetsShapes(const std::string& op, int input);

/// The values a node's bodies (its graph attributes, at any depth) read from the graphs around
/// it, in order of first use.
std::vector<std::string> onnxOuterNames(const onnx::NodeProto& node);

} // namespace placer
