// Parsing the plan options as people write them (session/PlanOptionText.h).
#include "session/PlanOptionText.h"

#include "plan/Split.h"

#include <charconv>

namespace placer {

const std::vector<std::string>& planOptionNames() {
    static const std::vector<std::string> kNames = {
        "format", "input-shape", "devices", "default", "host",      "pin",          "pin-fixed",
        "rule",   "fallback",    "split",   "mode",    "constants", "micro-batches"};
    return kNames;
}

std::optional<std::string> takePlanOption(std::string_view name, const std::string& value,
                                          ModelSource* source, PlanRequest* request) {
    const std::string option = "--" + std::string(name);
    PlanOptions& options = request->options;
    if (name == "format") {
        const auto format = parseGraphFormat(value);
        if (!format)
            return "--format must be relay, json, onnx or auto, not '" + value + "'";
        source->format = *format;
    } else if (name == "input-shape") {
        auto shape = parseInputShape(value);
        if (!shape)
            return "--input-shape " + shape.error().message;
        source->inputShapes[shape.value().first] = shape.value().second;
    } else if (name == "devices") {
        request->devices = value;
    } else if (name == "default") {
        request->defaultDevice = value;
    } else if (name == "host") {
        request->hostDevice = value;
    } else if (name == "pin" || name == "pin-fixed") {
        auto split = splitAssignment(value);
        if (!split)
            return option + " " + split.error().message;
        request->pins.push_back({split.value().lhs, split.value().rhs, name == "pin-fixed"});
    } else if (name == "split") {
        auto split = parseSplitRequest(value);
        if (!split)
            return split.error().message;
        options.splits.push_back(split.take());
    } else if (name == "rule") {
        auto split = splitAssignment(value);
        if (!split)
            return "--rule " + split.error().message;
        options.rules.push_back({split.value().lhs, split.value().rhs});
    } else if (name == "fallback") {
        options.fallbackDevice = value;
    } else if (name == "mode") {
        const auto mode = parsePlanMode(value);
        if (!mode)
            return "--mode must be demand, unify or auto, not '" + value + "'";
        options.mode = *mode;
    } else if (name == "constants") {
        if (value != "replicate" && value != "copy")
            return "--constants must be replicate or copy, not '" + value + "'";
        options.constants = value == "replicate" ? ConstantPolicy::Replicate : ConstantPolicy::Copy;
    } else if (name == "micro-batches") {
        int count = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
        if (ec != std::errc() || end != value.data() + value.size() || count < 1 || count > 4096)
            return "--micro-batches must be a whole number from 1 to 4096, not '" + value + "'";
        options.microBatches = count;
    } else {
        return "unknown option '" + option + "'";
    }
    return std::nullopt;
}

} // namespace placer
