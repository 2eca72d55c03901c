// Parsing the plan options as people write them (session/PlanOptionText.h).
#include "session/PlanOptionText.h"

#include "plan/Split.h"

#include <charconv>

namespace placer {

const std::vector<std::string>& planOptionNames() {
    static const std::vector<std::string> kNames = {
        "format", "input-shape", "devices",       "default",  "host",
        "pin",    "pin-fixed",   "rule",          "fallback", "split",
        "mode",   "constants",   "micro-batches", "stream",   "cost-at"};
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
    } else if (name == "stream") {
        int count = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
        if (ec != std::errc() || end != value.data() + value.size() || count < 1 || count > 4096)
            return "--stream must be a whole number of batches from 1 to 4096, not '" + value + "'";
        options.streamBatches = count;
    } else if (name == "cost-at") {
        // NAME=SIZE[,NAME=SIZE...]: the named dimensions' sizes auto mode costs at.
        std::string_view rest = value;
        while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            const std::string_view item = rest.substr(0, comma);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            const std::size_t equals = item.find('=');
            std::int64_t size = 0;
            const char* first =
                equals == std::string_view::npos ? nullptr : item.data() + equals + 1;
            const auto [end, ec] =
                first ? std::from_chars(first, item.data() + item.size(), size)
                      : std::from_chars_result{nullptr, std::errc::invalid_argument};
            if (equals == 0 || !first || ec != std::errc() || end != item.data() + item.size() ||
                size < 1)
                return "--cost-at takes NAME=SIZE[,NAME=SIZE...] with sizes of at least 1, as "
                       "in seq=128,batch=8; '" +
                       std::string(item) + "' is not one";
            options.costAt[std::string(item.substr(0, equals))] = size;
        }
    } else {
        return "unknown option '" + option + "'";
    }
    return std::nullopt;
}

} // namespace placer
