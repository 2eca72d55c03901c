// Parsing the plan options as people write them (session/PlanOptionText.h).
#include "session/PlanOptionText.h"

#include "io/TextFile.h"
#include "plan/Glob.h"
#include "plan/MachineFile.h"
#include "plan/Split.h"

#include <charconv>

namespace placer {

const std::vector<std::string>& planOptionNames() {
    static const std::vector<std::string> kNames = {
        "format",    "input-shape",   "devices",  "default", "host",   "pin",
        "pin-fixed", "rule",          "fallback", "split",   "shard",  "mode",
        "constants", "micro-batches", "stream",   "cost-at", "machine"};
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
        if (request->machine)
            return "--devices: the machine file " + value + " gives the devices; leave one out";
        request->devices = value;
    } else if (name == "machine") {
        if (request->devices)
            return "--machine " + value +
                   ": the machine file gives the devices; leave --devices "
                   "out";
        auto text = readTextFile(value);
        if (!text)
            return "--machine " + text.error().toString();
        auto machine = parseMachineFile(text.value(), value);
        if (!machine)
            return "--machine " + machine.error().toString();
        request->devices = machine.value().deviceSpec();
        request->machine = std::make_shared<const MachineFile>(machine.take());
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
    } else if (name == "shard") {
        auto shard = parseSplitRequest(value, "--shard");
        if (!shard)
            return shard.error().message;
        SplitRequest request = shard.take();
        request.tensor = true;
        options.splits.push_back(std::move(request));
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

namespace {

/// "1GiB", "512MiB", "12KiB" or plain bytes: what parseByteSize() reads back exactly.
std::string byteSizeText(std::int64_t bytes) {
    static const std::pair<std::int64_t, const char*> kUnits[] = {{std::int64_t{1} << 40, "TiB"},
                                                                  {std::int64_t{1} << 30, "GiB"},
                                                                  {std::int64_t{1} << 20, "MiB"},
                                                                  {std::int64_t{1} << 10, "KiB"}};
    for (const auto& [unit, name] : kUnits) {
        if (bytes > 0 && bytes % unit == 0)
            return std::to_string(bytes / unit) + name;
    }
    return std::to_string(bytes);
}

/// A pattern that matches `name` alone: its wildcard characters in brackets.
std::string literalPattern(const std::string& name) {
    if (!isGlob(name))
        return name;
    std::string pattern;
    for (char c : name) {
        if (c == '*' || c == '?' || c == '[')
            pattern += std::string("[") + c + "]";
        else
            pattern += c;
    }
    return pattern;
}

std::string joinNumbers(const std::vector<std::int64_t>& numbers) {
    std::string text;
    for (std::size_t i = 0; i < numbers.size(); ++i)
        text += (i ? "," : "") + std::to_string(numbers[i]);
    return text;
}

} // namespace

std::vector<std::string> planArguments(const Graph& graph, const DeviceSet& devices,
                                       const PlanOptions& options, const InputShapes& inputShapes) {
    std::vector<std::string> words;
    auto add = [&](const char* name, std::string value) {
        words.emplace_back(name);
        words.push_back(std::move(value));
    };
    for (const auto& [input, dims] : inputShapes)
        add("--input-shape", input + "=" + joinNumbers(dims));
    if (!devices.empty()) {
        std::string spec;
        int kindCounts[kDeviceKindCount] = {};
        for (const VirtualDevice& device : devices.devices()) {
            spec += (spec.empty() ? "" : ",") + device.name + ":" +
                    std::string(deviceKindName(device.kind));
            if (device.memoryCapacity)
                spec += ":mem=" + byteSizeText(*device.memoryCapacity);
            int& nth = kindCounts[static_cast<int>(device.kind)];
            if (device.ordinal != nth)
                spec += ":ordinal=" + std::to_string(device.ordinal);
            ++nth;
            if (!device.target.empty())
                spec += ":target=" + device.target;
            if (!device.memoryScope.empty())
                spec += ":scope=" + device.memoryScope;
            if (device.computeType != DType::Float32)
                spec += ":dtype=" + std::string(computeTypeWord(device.computeType));
        }
        add("--devices", spec);
        if (devices.defaultDevice().valid())
            add("--default", devices[devices.defaultDevice()].name);
        if (devices.hostDevice().valid())
            add("--host", devices[devices.hostDevice()].name);
    }
    for (const Node& node : graph.nodes()) {
        if (node.pin.kind == PinKind::None || !node.pin.device.valid() ||
            node.pin.device.index >= devices.size())
            continue;
        add(node.pin.kind == PinKind::Fixed ? "--pin-fixed" : "--pin",
            literalPattern(node.name) + "=" + devices[node.pin.device].name);
    }
    for (const OpRule& rule : options.rules)
        add("--rule", rule.opPattern + "=" + rule.device);
    if (!options.fallbackDevice.empty())
        add("--fallback", options.fallbackDevice);
    for (const SplitRequest& split : options.splits) {
        if (!split.microBatches)
            add(split.tensor ? "--shard" : "--split", formatSplitRequest(split));
    }
    if (options.mode != PlanMode::Demand)
        add("--mode", std::string(planModeName(options.mode)));
    if (options.constants == ConstantPolicy::Copy)
        add("--constants", "copy");
    if (options.microBatches > 1)
        add("--micro-batches", std::to_string(options.microBatches));
    if (options.streamBatches > 1)
        add("--stream", std::to_string(options.streamBatches));
    if (!options.costAt.empty()) {
        std::string text;
        for (const auto& [name, size] : options.costAt)
            text += (text.empty() ? "" : ",") + name + "=" + std::to_string(size);
        add("--cost-at", text);
    }
    if (options.exact)
        words.emplace_back("--exact");
    return words;
}

std::string shellCommandLine(const std::vector<std::string>& words) {
    std::string line;
    for (const std::string& word : words) {
        if (!line.empty())
            line += ' ';
        const bool plain =
            !word.empty() &&
            word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR"
                                   "STUVWXYZ0123456789_-./:=,@%+") == std::string::npos;
        if (plain) {
            line += word;
            continue;
        }
        line += '\'';
        for (char c : word) {
            if (c == '\'')
                line += "'\\''";
            else
                line += c;
        }
        line += '\'';
    }
    return line;
}

} // namespace placer
