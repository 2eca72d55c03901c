// The payloads of an ONNX model's large initializers, found in the serialized bytes without
// parsing them: the model is parsed from a copy that leaves them out, so that weights are never
// copied into protobuf strings just to read a graph.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// Where one payload lies in the serialized model.
struct PayloadRange {
    std::size_t offset = 0;
    std::size_t length = 0;
};

/// A serialized onnx.ModelProto with the raw_data of every initializer of its main graph that
/// holds at least `threshold` bytes replaced by `marker(k)` (k counting the payloads left out, in
/// the order they appear), and where each left-out payload lies in `model`. std::nullopt when the
/// bytes are not well-formed protobuf (the caller parses them as they are and reports why).
std::optional<std::string>
stripInitializerPayloads(std::string_view model, std::size_t threshold,
                         const std::function<std::string(std::size_t)>& marker,
                         std::vector<PayloadRange>* payloads);

} // namespace placer
