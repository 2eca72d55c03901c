// Generation token by token (session/Generate.h): the cache found and bound, the prompt
// checked, each step run on the plan made at open, and the figures of the steps.
#include "session/Generate.h"

#include "device/Ranks.h"
#include "io/Json.h"
#include "io/Npy.h"
#include "kernels/ElementFunctors.h"
#include "kernels/KernelSupport.h"
#include "plan/Planner.h"
#include "session/RunAdaptation.h"
#include "session/Session.h"
#include "session/SizedRunner.h"
#include "vm/ReferenceRun.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>

namespace placer {

namespace {

/// A graph input: its node, its planned type, and its dimensions as the model declares them.
struct ModelInput {
    std::string name;
    TensorType type;
    std::vector<std::string> declared; ///< empty when every dimension is fixed
};

std::vector<ModelInput> modelInputs(const Graph& graph) {
    std::vector<ModelInput> out;
    for (const Node& node : graph.nodes()) {
        if (node.role() != OpRole::Parameter || node.outputs.empty())
            continue;
        ModelInput input{node.name, node.outputs[0], {}};
        for (const OpenInput& open : graph.openInputs) {
            if (open.name == node.name)
                input.declared = open.declaredDims;
        }
        out.push_back(std::move(input));
    }
    return out;
}

std::string lower(std::string text) {
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

/// What names a cache tensor besides its past or present: its layer's number and whether it
/// is the key or the value ("present_key_3", "present.3.key", "past_key_values.3.value",
/// "present_3_v"): ("3", "key"). Empty where the name has no number.
std::pair<std::string, std::string> cacheSlot(const std::string& name) {
    std::string text = lower(name);
    for (const char* prefix : {"past_key_values", "past", "present"}) {
        if (const auto at = text.find(prefix); at != std::string::npos)
            text.erase(at, std::strlen(prefix));
    }
    std::string number;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(text[i]))) {
            while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
                number += text[i++];
            break;
        }
    }
    std::string kind;
    if (text.find("key") != std::string::npos)
        kind = "key";
    else if (text.find("value") != std::string::npos)
        kind = "value";
    else if (text.size() >= 2 && (text.ends_with("_k") || text.ends_with(".k")))
        kind = "key";
    else if (text.size() >= 2 && (text.ends_with("_v") || text.ends_with(".v")))
        kind = "value";
    return {number, kind};
}

bool isPast(const std::string& name) {
    return lower(name).starts_with("past");
}
bool isPresent(const std::string& name) {
    return lower(name).starts_with("present");
}

std::string shapeText(const std::vector<std::string>& declared, const TensorType& type) {
    if (declared.empty())
        return type.toShortString();
    std::string out;
    for (const std::string& dim : declared)
        out += (out.empty() ? "" : "x") + dim;
    return out + " " + std::string(dtypeName(type.dtype));
}

std::uint64_t nextRandom(std::uint64_t& state) { // splitmix64
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// The logits of the last position, as floats.
std::vector<float> lastLogits(const HostTensor& logits) {
    const std::int64_t vocabulary = logits.type.shape.back();
    const std::int64_t count = logits.type.elementCount();
    const std::int64_t first = count - vocabulary;
    std::vector<float> out(static_cast<std::size_t>(vocabulary));
    for (std::int64_t v = 0; v < vocabulary; ++v) {
        const std::int64_t e = first + v;
        switch (logits.type.dtype) {
        case DType::Float32:
            out[static_cast<std::size_t>(v)] = logits.as<float>()[e];
            break;
        case DType::Float16:
            out[static_cast<std::size_t>(v)] = halfToFloat(logits.as<std::uint16_t>()[e]);
            break;
        case DType::BFloat16:
            out[static_cast<std::size_t>(v)] = bfloat16ToFloat(logits.as<std::uint16_t>()[e]);
            break;
        case DType::Float64:
            out[static_cast<std::size_t>(v)] = static_cast<float>(logits.as<double>()[e]);
            break;
        default:
            break;
        }
    }
    return out;
}

HostTensor idsTensor(const std::vector<std::int64_t>& ids, DType dtype) {
    HostTensor out =
        HostTensor::zeros(TensorType{{1, static_cast<std::int64_t>(ids.size())}, dtype});
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (dtype == DType::Int32)
            out.as<std::int32_t>()[i] = static_cast<std::int32_t>(ids[i]);
        else
            out.as<std::int64_t>()[i] = ids[i];
    }
    return out;
}

/// An auxiliary input a decoder export may have, made for each step: the attention mask over
/// the cache and the new tokens (ones), the new tokens' positions, and a merged decoder's
/// "use the cache" switch (a bool, true once the cache holds tokens).
std::optional<HostTensor> auxiliaryInput(const ModelInput& input, std::int64_t cached,
                                         std::int64_t fresh) {
    const std::string name = lower(input.name);
    if (input.type.dtype == DType::Bool && input.type.elementCount() == 1 &&
        name.find("use_cache") != std::string::npos) {
        HostTensor out = HostTensor::zeros(input.type);
        out.data.data()[0] = static_cast<char>(cached > 0 ? 1 : 0);
        return out;
    }
    const bool integer = input.type.dtype == DType::Int64 || input.type.dtype == DType::Int32;
    if (!integer || input.type.rank() != 2)
        return std::nullopt;
    std::vector<std::int64_t> values;
    if (name.find("attention_mask") != std::string::npos)
        values.assign(static_cast<std::size_t>(cached + fresh), 1);
    else if (name.find("position_ids") != std::string::npos || name == "positions") {
        values.resize(static_cast<std::size_t>(fresh));
        std::iota(values.begin(), values.end(), cached);
    } else {
        return std::nullopt;
    }
    return idsTensor(values, input.type.dtype);
}

/// What a step gave: its outputs by name, its kernels' time and each device's busy time.
struct StepOutputs {
    std::map<std::string, HostTensor> outputs;
    double kernelsMs = 0;
    std::vector<std::pair<std::string, double>> busyMs;
    std::string mapping; ///< "a=vcpu1, b=vcpu2"
};

StepOutputs stepOutputs(RunResult result, const std::vector<std::string>& names,
                        const DeviceSet& devices) {
    StepOutputs out;
    for (std::size_t k = 0; k < names.size() && k < result.outputs.size(); ++k)
        out.outputs[names[k]] = std::move(result.outputs[k]);
    if (!result.latencyMicros.empty())
        out.kernelsMs = result.latencyMicros.back() / 1000.0;
    // By virtual device: the steps of one generation may run on other physical ones
    // (session/SizedRunner.h's program holds its own).
    for (const StreamInfo& stream : result.streams) {
        std::string name;
        for (const DeviceId v : stream.virtuals) {
            name += (name.empty() ? "" : "+") + devices[v].name;
            out.mapping +=
                (out.mapping.empty() ? "" : ", ") + devices[v].name + "=" + stream.physical;
        }
        out.busyMs.emplace_back(name.empty() ? stream.physical : name,
                                stream.busyMicros.empty() ? 0.0
                                                          : stream.busyMicros.back() / 1000.0);
    }
    return out;
}

/// Why two steps' outputs differ (a shape, or values beyond float rounding), or empty.
std::string sameOutputs(const StepOutputs& a, const StepOutputs& b) {
    for (const auto& [name, tensor] : b.outputs) {
        const auto it = a.outputs.find(name);
        if (it == a.outputs.end())
            return name + " is missing";
        const HostTensor& other = it->second;
        if (other.type != tensor.type)
            return name + " is " + other.type.toShortString() + ", not " +
                   tensor.type.toShortString();
        if (tensor.type.dtype != DType::Float32)
            continue;
        double largest = 0, diff = 0;
        for (std::int64_t e = 0; e < tensor.type.elementCount(); ++e) {
            largest = std::max(largest, static_cast<double>(std::fabs(tensor.as<float>()[e])));
            diff = std::max(
                diff, static_cast<double>(std::fabs(tensor.as<float>()[e] - other.as<float>()[e])));
        }
        if (diff > 1e-4 * std::max(1.0, largest))
            return name + " differs by " + std::to_string(diff);
    }
    return {};
}

} // namespace

Result<std::vector<std::int64_t>> promptFromText(const std::string& text) {
    std::vector<std::int64_t> out;
    if (text.ends_with(".npy")) {
        auto tensor = readNpy(text);
        if (!tensor)
            return tensor.error();
        const HostTensor& ids = tensor.value();
        if (ids.type.dtype != DType::Int64 && ids.type.dtype != DType::Int32)
            return SourceError::sentence(text + ": the ids are " +
                                         std::string(dtypeName(ids.type.dtype)) +
                                         ", not int64 or int32");
        for (std::int64_t e = 0; e < ids.type.elementCount(); ++e)
            out.push_back(ids.type.dtype == DType::Int64 ? ids.as<std::int64_t>()[e]
                                                         : ids.as<std::int32_t>()[e]);
        return out;
    }
    const char* at = text.data();
    const char* end = text.data() + text.size();
    while (at < end) {
        while (at < end && (*at == ',' || *at == ' '))
            ++at;
        if (at == end)
            break;
        std::int64_t id = 0;
        const auto [next, ec] = std::from_chars(at, end, id);
        if (ec != std::errc())
            return SourceError::sentence("'" + text +
                                         "' is neither a .npy file nor token ids written out "
                                         "('1,2,3'): position " +
                                         std::to_string(at - text.data()) + " is no number");
        out.push_back(id);
        at = next;
    }
    return out;
}

std::int64_t pickToken(const float* logits, std::int64_t vocabulary, const Sampling& sampling,
                       std::uint64_t& state) {
    if (sampling.temperature <= 0) {
        std::int64_t best = 0;
        for (std::int64_t v = 1; v < vocabulary; ++v) {
            if (logits[v] > logits[best])
                best = v;
        }
        return best;
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(vocabulary));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return logits[a] > logits[b]; });
    std::size_t keep = order.size();
    if (sampling.topK > 0)
        keep = std::min(keep, static_cast<std::size_t>(sampling.topK));
    std::vector<double> weight(keep);
    const double top = logits[order[0]];
    double total = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        weight[i] = std::exp((logits[order[i]] - top) / sampling.temperature);
        total += weight[i];
    }
    if (sampling.topP < 1) {
        double sum = 0;
        std::size_t kept = 0;
        while (kept < keep && sum < sampling.topP * total)
            sum += weight[kept++];
        keep = std::max<std::size_t>(kept, 1);
        total = sum;
    }
    const double draw =
        static_cast<double>(nextRandom(state) >> 11) * (1.0 / 9007199254740992.0) * total;
    double sum = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        sum += weight[i];
        if (draw < sum)
            return order[i];
    }
    return order[keep - 1];
}

Result<GenerationReport> Session::generate(std::shared_ptr<const PlannedModel> planned,
                                           const GenerateRequest& request,
                                           const TokenCallback& onToken) {
    // Held while the steps run: a device that fails has `planned` made again without it.
    const std::shared_ptr<const PlannedModel> opened = planned;
    const Graph& graph = opened->model.graph;
    const std::vector<ModelInput> inputs = modelInputs(graph);
    GenerationReport report;
    report.prompt = request.prompt;
    report.sampling = request.sampling;
    const auto inputNamed = [&](const std::string& name) -> const ModelInput* {
        for (const ModelInput& input : inputs) {
            if (input.name == name)
                return &input;
        }
        return nullptr;
    };
    const auto outputNamed = [&](const std::string& name) -> const GraphOutput* {
        for (const GraphOutput& output : graph.outputs()) {
            if (output.name == name)
                return &output;
        }
        return nullptr;
    };
    std::string inputList, outputList;
    for (const ModelInput& input : inputs)
        inputList += (inputList.empty() ? "" : ", ") + input.name;
    for (const GraphOutput& output : graph.outputs())
        outputList += (outputList.empty() ? "" : ", ") + output.name;

    // The token ids: named, or input_ids, or the one integer input of rank 2 that is no cache.
    const ModelInput* ids = nullptr;
    if (!request.idsInput.empty()) {
        ids = inputNamed(request.idsInput);
        if (!ids)
            return SourceError::sentence(
                "--ids-input " + request.idsInput +
                ": the model has no input of that name (inputs: " + inputList + ")");
    } else {
        ids = inputNamed("input_ids");
        for (const ModelInput& input : inputs) {
            if (ids)
                break;
            const bool integer =
                input.type.dtype == DType::Int64 || input.type.dtype == DType::Int32;
            if (integer && input.type.rank() == 2 && !isPast(input.name) &&
                !auxiliaryInput(input, 0, 1))
                ids = &input;
        }
        if (!ids)
            return SourceError::sentence(
                "the model has no input of token ids (input_ids, or an integer input of rank "
                "2; inputs: " +
                inputList + "); name it with --ids-input");
    }
    if ((ids->type.dtype != DType::Int64 && ids->type.dtype != DType::Int32) ||
        ids->type.rank() != 2)
        return SourceError::sentence("input " + ids->name + " takes " +
                                     shapeText(ids->declared, ids->type) +
                                     ", not token ids (int64 or int32 of rank 2, [1, tokens])");
    report.idsInput = ids->name;

    // The logits: named, or "logits", or the first output that is no cache.
    const GraphOutput* logits = nullptr;
    if (!request.logitsOutput.empty()) {
        logits = outputNamed(request.logitsOutput);
        if (!logits)
            return SourceError::sentence(
                "--logits " + request.logitsOutput +
                ": the model has no output of that name (outputs: " + outputList + ")");
    } else {
        logits = outputNamed("logits");
        for (const GraphOutput& output : graph.outputs()) {
            if (!logits && !isPresent(output.name))
                logits = &output;
        }
        if (!logits)
            return SourceError::sentence("the model has no logits output (outputs: " + outputList +
                                         "); name it with --logits");
    }
    report.logitsOutput = logits->name;
    const TensorType& logitsType = graph.node(logits->value.node).outputs[logits->value.output];
    if (logitsType.rank() < 2 || !isFloatingPoint(logitsType.dtype) || logitsType.shape.back() <= 0)
        return SourceError::sentence("output " + logits->name + " is " +
                                     logitsType.toShortString() +
                                     ", not logits (floating point, the vocabulary last)");
    report.vocabulary = logitsType.shape.back();

    // The cache: each present output with the past input of its slot, then the given pairs,
    // each replacing what named its past input.
    for (const GraphOutput& output : graph.outputs()) {
        if (!isPresent(output.name))
            continue;
        const auto slot = cacheSlot(output.name);
        for (const ModelInput& input : inputs) {
            if (isPast(input.name) && cacheSlot(input.name) == slot) {
                report.cache.emplace_back(output.name, input.name);
                break;
            }
        }
    }
    for (const auto& [present, past] : request.cache) {
        if (!outputNamed(present))
            return SourceError::sentence("--bind " + present + "=" + past +
                                         ": the model has no output " + present +
                                         " (outputs: " + outputList + ")");
        if (!inputNamed(past))
            return SourceError::sentence("--bind " + present + "=" + past +
                                         ": the model has no input " + past +
                                         " (inputs: " + inputList + ")");
        const std::string& bound = past; // a lambda takes no structured binding (clang)
        std::erase_if(report.cache, [&](const auto& pair) { return pair.second == bound; });
        report.cache.emplace_back(present, past);
    }
    for (const ModelInput& input : inputs) {
        if (!isPast(input.name))
            continue;
        const bool bound = std::any_of(report.cache.begin(), report.cache.end(),
                                       [&](const auto& pair) { return pair.second == input.name; });
        if (!bound)
            return SourceError::sentence(
                "cache input " + input.name + ": no present output pairs with it (outputs: " +
                outputList + "); bind it with --bind PRESENT=" + input.name);
    }

    // Every other input is one generation cannot make: said, not filled with random data.
    for (const ModelInput& input : inputs) {
        const bool known = &input == ids || auxiliaryInput(input, 0, 1) ||
                           std::any_of(report.cache.begin(), report.cache.end(),
                                       [&](const auto& pair) { return pair.second == input.name; });
        if (!known)
            return SourceError::sentence(
                "input " + input.name + " (" + shapeText(input.declared, input.type) +
                ") is neither the token ids (" + ids->name +
                "), a cache input, an attention mask, positions nor a use_cache switch: "
                "generation cannot make it");
    }

    // The prompt.
    if (request.prompt.empty())
        return SourceError::sentence("the prompt is empty: generation needs at least one token");
    for (std::size_t i = 0; i < request.prompt.size(); ++i) {
        const std::int64_t id = request.prompt[i];
        if (id < 0 || id >= report.vocabulary)
            return SourceError::sentence(
                "prompt: token " + std::to_string(i) + " is id " + std::to_string(id) +
                ", outside the vocabulary of " + std::to_string(report.vocabulary) +
                " (the last dimension of " + logits->name + "): input " + ids->name +
                " takes ids 0.." + std::to_string(report.vocabulary - 1));
    }
    if (request.maxLength > 0 &&
        static_cast<std::int64_t>(request.prompt.size()) > request.maxLength)
        return SourceError::sentence("prompt: " + std::to_string(request.prompt.size()) +
                                     " tokens, longer than the maximum length " +
                                     std::to_string(request.maxLength) + " (--max-length)");

    // The cache at a length: every dimension the ids' batch names is 1, every other named one
    // the length (0: the empty cache before the prompt).
    const std::string batchName = ids->declared.empty() ? std::string() : ids->declared[0];
    const auto cacheAt = [&](const ModelInput& input,
                             std::int64_t length) -> std::optional<HostTensor> {
        TensorType type = input.type;
        bool grows = false;
        for (std::size_t a = 0; a < type.shape.size(); ++a) {
            const std::string dim = a < input.declared.size() ? input.declared[a] : std::string();
            if (dim.empty() || std::isdigit(static_cast<unsigned char>(dim[0])))
                continue;
            if (dim == batchName) {
                type.shape[a] = 1;
            } else {
                type.shape[a] = length;
                grows = true;
            }
        }
        if (!grows)
            return std::nullopt;
        return HostTensor::zeros(type);
    };
    std::map<std::string, HostTensor> state;
    for (const auto& [present, past] : report.cache) {
        const ModelInput& input = *inputNamed(past);
        auto empty = cacheAt(input, 0);
        if (!empty)
            return SourceError::sentence("cache input " + past + " takes " +
                                         shapeText(input.declared, input.type) +
                                         ": it has no dimension that grows with the tokens");
        state[past] = std::move(*empty);
    }
    // A step's inputs: the new tokens, the auxiliary inputs for them, and the cache.
    const auto stepInputs = [&](const std::vector<std::int64_t>& tokens, std::int64_t length,
                                std::map<std::string, HostTensor> cache) {
        std::vector<std::pair<std::string, HostTensor>> out;
        out.emplace_back(ids->name, idsTensor(tokens, ids->type.dtype));
        for (const ModelInput& input : inputs) {
            if (auto aux = auxiliaryInput(input, length, static_cast<std::int64_t>(tokens.size())))
                out.emplace_back(input.name, std::move(*aux));
        }
        for (auto& [name, tensor] : cache)
            out.emplace_back(name, std::move(tensor));
        return out;
    };

    // Every step runs one program made for every length (session/SizedRunner.h), as the Relay
    // VM runs one: lowered here, before the prompt, at a decode step's sizes (one token after
    // the prompt), its constants placed on their devices, as ONNX Runtime's session is made
    // before its first run. The prompt's step checks it against the plan instantiated at the
    // prompt's sizes (its weights packed as the program's are, which it shares);
    // where it cannot be made, or disagrees, every step runs the plan instantiated at its sizes.
    const auto clock = [] { return std::chrono::steady_clock::now(); };
    std::unique_ptr<SizedRunner> sized;
    // Makes that program for a plan (made again without a device that failed, below).
    std::function<Result<std::unique_ptr<SizedRunner>>(std::shared_ptr<const PlannedModel>, bool*,
                                                       const std::vector<DeviceMapRequest>&)>
        makeSized;
    // Faults asked for, by step; a device that fails in one is left out and the step runs again
    // (session/RunAdaptation.h), unless the request says not to or there is nowhere to go.
    auto asked = injectedFaultsFromEnvironment();
    if (!asked)
        return asked.error();
    const std::vector<InjectedFault>& requestedFaults = request.faults;
    std::vector<InjectedFault> faults = requestedFaults;
    faults.insert(faults.end(), asked.value().begin(), asked.value().end());
    const bool canMove = rankCount() <= 1 && planned->model.devices.size() > 1;
    const bool failover = request.failover && canMove;
    // The speed watch over decode steps (the prompt's is another size of work), and the
    // slowdown per physical device the plan that runs was made with.
    std::optional<SpeedWatch> watch;
    std::map<std::string, double> slowdowns;
    const auto watchPlan = [&] {
        watch->follow(withPrediction(*planned,
                                     [&] {
                                         return costs(planned->model.devices, request.maps,
                                                      request.optimize);
                                     }),
                      slowdowns);
    };
    // A plan made again and its program: what moved, and the time since `from` the swap took.
    const auto swapIn = [&](std::shared_ptr<const PlannedModel> again,
                            std::unique_ptr<SizedRunner> program,
                            std::chrono::steady_clock::time_point from, RunEvent* event) {
        event->moved = movedText(graph, planned->model.devices, planned->plan, again->plan,
                                 &event->nodesMoved);
        planned = std::move(again);
        sized = std::move(program);
        event->replanMs = std::chrono::duration<double, std::milli>(clock() - from).count();
    };
    // Wall time per decode step since the last re-placement: its before and after.
    std::vector<double> sincePlan;
    std::optional<std::size_t> replacedAt; // the last re-placement's event, its after open
    const auto closeEvent = [&] {
        if (replacedAt && !sincePlan.empty())
            report.events[*replacedAt].afterMs = median(sincePlan);
        replacedAt.reset();
    };
    {
        const auto preparing = clock();
        // With a maximum length, the program is made for the last step it allows (the cache
        // one short of it, one new token): its memory plan holds every step, none grows a
        // storage, and a plan that does not fit its devices there is refused before the prompt.
        // Without one, at the first decode step's, its storages growing with the cache.
        const auto promptLength = static_cast<std::int64_t>(request.prompt.size());
        const std::int64_t madeAt = request.maxLength > 0 ? request.maxLength - 1 : promptLength;
        bool overCapacity = false;
        // Made again for a new plan, the devices stay where they ran (`maps`: the program's
        // mapping), as a run's re-placement keeps its mapping.
        makeSized = [this, &request, madeAt, &report, &cacheAt, &inputNamed,
                     &stepInputs](std::shared_ptr<const PlannedModel> plan, bool* over,
                                  const std::vector<DeviceMapRequest>& maps) {
            std::map<std::string, HostTensor> decodeCache;
            for (const auto& [present, past] : report.cache)
                decodeCache[past] = *cacheAt(*inputNamed(past), madeAt);
            return SizedRunner::make(*this, std::move(plan), maps, request.optimize,
                                     stepInputs({0}, madeAt, std::move(decodeCache)), over);
        };
        auto runner = makeSized(planned, &overCapacity, request.maps);
        if (!runner && overCapacity && request.maxLength > 0)
            return SourceError::sentence(
                "--max-length " + std::to_string(request.maxLength) + ": the last step (" +
                std::to_string(madeAt) +
                " tokens in the cache, one new) does not fit: " + runner.error().message);
        report.storage = request.maxLength > 0
                             ? "planned at the maximum length " +
                                   std::to_string(request.maxLength) + ": no step grows a storage"
                             : "grown from the devices as the cache grows (no maximum length)";
        if (runner) {
            sized = runner.take();
            for (const DeviceMapRequest& map : sized->mapping())
                report.mapping +=
                    (report.mapping.empty() ? "" : ", ") + map.device + "=" + map.physical;
        } else
            report.warnings.push_back("each step runs the plan instantiated at its sizes: " +
                                      runner.error().message);
        report.prepareMs = std::chrono::duration<double, std::milli>(clock() - preparing).count();
    }

    std::uint64_t random = request.sampling.seed;
    std::vector<std::int64_t> next = request.prompt;
    std::int64_t cached = 0;
    report.stopReason = "max-new-tokens";
    for (int step = 0; step < request.maxNewTokens; ++step) {
        const auto started = clock();
        RunRequest run;
        run.maps = request.maps;
        run.optimize = request.optimize;
        run.reference = false;
        run.warmup = 0;
        run.iterations = 1;
        run.inputs = stepInputs(next, cached, std::move(state));
        state.clear();
        const auto where = [&](const std::string& what) {
            return SourceError::sentence("step " + std::to_string(step) + " (" +
                                         std::to_string(next.size()) + " tokens after " +
                                         std::to_string(cached) + "): " + what);
        };
        // The plan instantiated at the step's sizes: every step where no program runs them
        // all, and the check of the prompt's step.
        const auto instantiated = [&](RunRequest request) -> Result<StepOutputs> {
            // The run adds those the environment asks for itself.
            request.faults = requestedFaults;
            request.failover = failover;
            request.firstIteration = step;
            auto ran = this->run(planned, request);
            if (!ran)
                return where(ran.error().message);
            RunOutcome& outcome = *ran.value();
            // A device failed and the run went on without it: so do the steps after.
            if (!outcome.events.empty()) {
                auto again = std::make_shared<PlannedModel>(*planned);
                leaveOut(outcome.planOptions.outOfService, again.get());
                again->plan = outcome.userPlan;
                planned = again;
                report.events.insert(report.events.end(), outcome.events.begin(),
                                     outcome.events.end());
            }
            std::vector<std::string> names;
            for (const GraphOutput& output : outcome.userGraph->outputs())
                names.push_back(output.name);
            // What a step says once is said once; that the plan runs at the step's sizes is
            // what generation does, not news.
            for (const std::string& warning : outcome.warnings) {
                if (!warning.starts_with("the plan made at") &&
                    std::find(report.warnings.begin(), report.warnings.end(), warning) ==
                        report.warnings.end())
                    report.warnings.push_back(warning);
            }
            return stepOutputs(std::move(outcome.result), names, planned->model.devices);
        };
        StepOutputs made;
        bool madeBySized = false;
        std::vector<SpeedDrift> drifts;
        std::vector<StreamInfo> driftStreams;
        if (sized) {
            std::optional<RunRequest> reference;
            if (step == 0)
                reference = run;
            auto result = sized->run(run.inputs, faults, step, failover);
            // A device failed in the step: planned again without it, the program made again,
            // and the step run again on the same data.
            while (result && result.value().fault) {
                const auto swapping = clock();
                RunEvent event;
                event.kind = RunEvent::Kind::DeviceFailed;
                event.iteration = step;
                event.device = result.value().fault->physical;
                auto again = std::make_shared<PlannedModel>(*planned);
                event.reason = leaveOut(*result.value().fault, again.get());
                again->plan = planDevices(again->model.graph, again->model.devices, again->options);
                ++m_counters.plansMade;
                auto pins = checkReplanned(*again, event.reason, "step " + std::to_string(step));
                if (!pins)
                    return where(pins.error().message);
                if (!pins.value().empty())
                    report.warnings.push_back(pins.take());
                const std::vector<DeviceMapRequest> mapping = sized->mapping();
                sized.reset(); // its devices' memory, before the new program takes its own
                auto remade = makeSized(again, nullptr, mapping);
                if (!remade)
                    return where(event.reason +
                                 "; the program without it: " + remade.error().message);
                swapIn(std::move(again), remade.take(), swapping, &event);
                report.events.push_back(std::move(event));
                if (watch)
                    watchPlan();
                result = sized->run(run.inputs, faults, step, failover);
            }
            std::string differs;
            if (!result) {
                if (step > 0)
                    return where(result.error().message);
                differs = result.error().message;
            } else {
                if (request.adapt && canMove && step > 0) {
                    if (!watch) {
                        watch.emplace();
                        watchPlan();
                    }
                    drifts = watch->observe(result.value());
                    if (!drifts.empty())
                        driftStreams = result.value().streams;
                }
                made = stepOutputs(std::move(result.value()), sized->outputNames(),
                                   planned->model.devices);
                madeBySized = true;
            }
            // The prompt's step: checked, or run instantiated where the program failed.
            if (step == 0 && (request.checkFirstStep || !differs.empty())) {
                reference->maps = sized->mapping();
                auto expected = instantiated(std::move(*reference));
                if (!expected)
                    return expected.error();
                if (differs.empty())
                    differs = sameOutputs(made, expected.value());
                if (!differs.empty()) {
                    report.warnings.push_back(
                        "each step runs the plan instantiated at its sizes: the program made "
                        "once for every size gave other outputs for the prompt (" +
                        differs + ")");
                    sized.reset();
                    made = std::move(expected.value());
                    madeBySized = false;
                }
            }
        } else {
            auto expected = instantiated(std::move(run));
            if (!expected)
                return expected.error();
            made = std::move(expected.value());
        }
        report.sizedSteps += madeBySized ? 1 : 0;
        if (report.mapping.empty())
            report.mapping = made.mapping;
        std::map<std::string, HostTensor>& outputs = made.outputs;
        const auto outputOf = [&](const std::string& name) -> HostTensor* {
            const auto it = outputs.find(name);
            return it == outputs.end() ? nullptr : &it->second;
        };
        for (const auto& [present, past] : report.cache) {
            HostTensor* produced = outputOf(present);
            const ModelInput& input = *inputNamed(past);
            if (!produced)
                return SourceError::sentence("step " + std::to_string(step) + ": output " +
                                             present + " was not made");
            const bool fits =
                produced->type.dtype == input.type.dtype &&
                (input.declared.empty() ? produced->type.shape == input.type.shape
                                        : shapeFitsDeclared(input.declared, produced->type.shape));
            if (!fits)
                return SourceError::sentence(
                    "cache pairing " + present + " -> " + past + ": " + present + " is " +
                    produced->type.toShortString() + " after step " + std::to_string(step) +
                    ", but " + past + " takes " + shapeText(input.declared, input.type));
            state[past] = std::move(*produced);
        }
        const HostTensor* scores = outputOf(logits->name);
        if (!scores || scores->type.rank() < 1 || scores->type.shape.back() != report.vocabulary)
            return SourceError::sentence("step " + std::to_string(step) + ": output " +
                                         logits->name + " is not " +
                                         std::to_string(report.vocabulary) + " logits wide");
        const std::vector<float> last = lastLogits(*scores);
        const std::int64_t token =
            pickToken(last.data(), report.vocabulary, request.sampling, random);
        GenerateStep figures;
        figures.tokens = static_cast<int>(next.size());
        figures.wallMs = std::chrono::duration<double, std::milli>(clock() - started).count();
        figures.kernelsMs = made.kernelsMs;
        figures.busyMs = std::move(made.busyMs);
        if (step > 0)
            sincePlan.push_back(figures.wallMs);
        report.steps.push_back(std::move(figures));
        report.tokens.push_back(token);
        cached += static_cast<std::int64_t>(next.size());
        next = {token};
        if (onToken && !onToken(token, step)) {
            report.stopReason = "cancelled";
            break;
        }
        if (std::find(request.stopTokens.begin(), request.stopTokens.end(), token) !=
            request.stopTokens.end()) {
            report.stopReason = "stop token " + std::to_string(token);
            break;
        }
        if (request.maxLength > 0 && cached + 1 >= request.maxLength) {
            report.stopReason = "max length " + std::to_string(request.maxLength);
            break;
        }
        // A device drifted: the plan made again for its speed, the new program swapped in
        // before the next step (this one's outputs stand).
        if (!drifts.empty() && step + 1 < request.maxNewTokens) {
            const auto swapping = clock();
            RunEvent event;
            event.kind = RunEvent::Kind::Replaced;
            event.iteration = step + 1;
            auto again = std::make_shared<PlannedModel>(*planned);
            const auto streak = static_cast<std::size_t>(
                describeDrifts(drifts, again->model.devices, &event, &slowdowns, "steps"));
            // Before: the steps that showed the drift.
            const std::size_t shown = std::min(sincePlan.size(), std::max<std::size_t>(streak, 1));
            event.beforeMs =
                shown == 0 ? 0
                           : median(std::vector<double>(sincePlan.end() - static_cast<long>(shown),
                                                        sincePlan.end()));
            CostModel model = again->options.costs
                                  ? *again->options.costs
                                  : costs(again->model.devices, request.maps, request.optimize);
            applySlowdowns(slowdowns, driftStreams, &model);
            again->options.mode = PlanMode::Auto;
            again->options.costs = std::make_shared<const CostModel>(std::move(model));
            again->plan = planDevices(again->model.graph, again->model.devices, again->options);
            ++m_counters.plansMade;
            // The new program is made while the old one still holds its memory: where it
            // cannot be, the generation goes on as it was planned.
            auto remade = makeSized(again, nullptr, sized->mapping());
            if (!remade) {
                report.warnings.push_back(event.reason + "; planned again, but " +
                                          remade.error().message + ": the plan stays");
            } else {
                swapIn(std::move(again), remade.take(), swapping, &event);
                closeEvent();
                report.events.push_back(std::move(event));
                replacedAt = report.events.size() - 1;
                sincePlan.clear();
            }
            watchPlan();
        }
    }
    closeEvent();
    return report;
}

} // namespace placer
