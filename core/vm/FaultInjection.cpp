// Reading PLACER_FAULT and PLACER_SLOW (vm/FaultInjection.h).
#include "vm/FaultInjection.h"

#include <charconv>
#include <cstdlib>

namespace placer {

namespace {

SourceError itemError(std::string_view variable, std::string_view item, const std::string& why) {
    return SourceError::sentence(std::string(variable) + ": '" + std::string(item) + "': " + why);
}

/// "DEVICE@ITERATION" and what follows the first ':' after it (empty when nothing does).
Result<InjectedFault> deviceAndIteration(std::string_view variable, std::string_view item,
                                         std::string_view* rest) {
    const std::size_t at = item.find('@');
    if (at == std::string_view::npos || at == 0)
        return itemError(variable, item, "write DEVICE@ITERATION, such as b@5");
    InjectedFault fault;
    fault.device = std::string(item.substr(0, at));
    std::string_view number = item.substr(at + 1);
    *rest = {};
    if (const std::size_t colon = number.find(':'); colon != std::string_view::npos) {
        *rest = number.substr(colon + 1);
        number = number.substr(0, colon);
    }
    const auto [end, ec] =
        std::from_chars(number.data(), number.data() + number.size(), fault.iteration);
    if (ec != std::errc() || end != number.data() + number.size() || fault.iteration < 1)
        return itemError(variable, item,
                         "the iteration is a whole number from 1 (the first measured iteration)");
    fault.spelled = std::string(item);
    return fault;
}

template <typename Parse> Status eachItem(std::string_view list, Parse parse) {
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view item = list.substr(0, comma);
        if (!item.empty()) {
            if (Status status = parse(item); !status.ok())
                return status;
        }
        if (comma == std::string_view::npos)
            break;
        list = list.substr(comma + 1);
    }
    return Status();
}

} // namespace

Result<std::vector<InjectedFault>> parseInjectedFaults(std::string_view faults,
                                                       std::string_view slowdowns) {
    std::vector<InjectedFault> out;
    Status read = eachItem(faults, [&](std::string_view item) -> Status {
        std::string_view kind;
        auto fault = deviceAndIteration("PLACER_FAULT", item, &kind);
        if (!fault)
            return fault.error();
        if (kind.empty() || kind == "error")
            fault.value().kind = InjectedFault::Kind::Error;
        else if (kind == "oom")
            fault.value().kind = InjectedFault::Kind::OutOfMemory;
        else if (kind == "lost")
            fault.value().kind = InjectedFault::Kind::Lost;
        else
            return itemError("PLACER_FAULT", item, "the kind is error, oom or lost");
        out.push_back(fault.take());
        return Status();
    });
    if (!read.ok())
        return read.error();
    read = eachItem(slowdowns, [&](std::string_view item) -> Status {
        std::string_view factor;
        auto fault = deviceAndIteration("PLACER_SLOW", item, &factor);
        if (!fault)
            return fault.error();
        fault.value().kind = InjectedFault::Kind::Slow;
        const std::string spelled(factor);
        char* end = nullptr;
        const double value = spelled.empty() ? 0 : std::strtod(spelled.c_str(), &end);
        if (spelled.empty() || *end != '\0' || !(value >= 1) || value > 1000)
            return itemError("PLACER_SLOW", item,
                             "write DEVICE@ITERATION:FACTOR, a factor from 1 to 1000 (b@5:2.5)");
        fault.value().factor = value;
        out.push_back(fault.take());
        return Status();
    });
    if (!read.ok())
        return read.error();
    return out;
}

Result<std::vector<InjectedFault>> injectedFaultsFromEnvironment() {
    const char* faults = std::getenv("PLACER_FAULT");
    const char* slow = std::getenv("PLACER_SLOW");
    return parseInjectedFaults(faults ? faults : "", slow ? slow : "");
}

std::string injectedFaultText(const InjectedFault& fault) {
    return std::string(fault.kind == InjectedFault::Kind::Slow ? "PLACER_SLOW=" : "PLACER_FAULT=") +
           fault.spelled;
}

} // namespace placer
