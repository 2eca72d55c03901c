// Loading a model file in any supported format, with the device set it is planned for.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace placer {

enum class GraphFormat { Auto, Relay, Json, Onnx };

/// "relay", "json", "onnx" or "auto"; std::nullopt otherwise.
std::optional<GraphFormat> parseGraphFormat(std::string_view name);

/// The devices used when neither the user nor the file names any: cpu:cpu,gpu:cuda.
DeviceSet defaultDeviceSet();

struct LoadedModel {
    Graph graph;
    DeviceSet devices;
    /// Things the user should hear that are not errors (symbolic dimensions, unknown ops, ...).
    std::vector<std::string> warnings;
};

/// Reads a model from its contents. The format is guessed from the file name (.relay/.rly →
/// Relay, .json → JSON graph, .onnx → ONNX) or the content when `format` is Auto. `devices`, when
/// given, is the set the model is read against (Relay meta[VirtualDevice][i] indexes it); otherwise
/// a JSON graph's own devices, else defaultDeviceSet().
///
/// `inputShapes` fixes the shapes of graph inputs by name (an ONNX model's symbolic dimensions);
/// other formats have static shapes and refuse them.
///
/// `runInputs` is the data a run will give, by input name: an ONNX model's open inputs are
/// planned at its shapes, and inputs that set shapes for its values (OnnxReadOptions::runInputs).
using InputShapes = std::map<std::string, std::vector<std::int64_t>>;
using RunInputs = std::map<std::string, HostTensor>;
Result<LoadedModel> loadModelText(std::string_view text, const std::string& fileName,
                                  GraphFormat format, const std::optional<DeviceSet>& devices,
                                  const InputShapes& inputShapes = {},
                                  const RunInputs& runInputs = {});

/// loadModelText() on the contents of a file, mapped into memory rather than read.
Result<LoadedModel> loadModelFile(const std::string& path, GraphFormat format,
                                  const std::optional<DeviceSet>& devices,
                                  const InputShapes& inputShapes = {},
                                  const RunInputs& runInputs = {});

/// "NAME=1,3,224,224" as a name and dimensions (--input-shape).
Result<std::pair<std::string, std::vector<std::int64_t>>> parseInputShape(std::string_view text);

} // namespace placer
