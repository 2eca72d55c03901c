// Faults and slowdowns made on purpose, so that tests and demonstrations can show a run that
// survives a device failing or slowing down (session/RunAdaptation.h): off unless asked for.
//
//   PLACER_FAULT=DEVICE@ITERATION[:KIND][,...]   KIND: error (default), oom, lost
//   PLACER_SLOW=DEVICE@ITERATION:FACTOR[,...]
//
// DEVICE is a virtual device's name ("b") or a physical one's ("vcpu2"); ITERATION counts the
// run's measured iterations from 1 (warm-up iterations are not counted; a generation's steps
// from 1, the prompt's run being step 0). From that iteration on, every kernel on the device
// fails as a real failure of that kind would (kernels/Kernel.h DeviceFailure), or takes FACTOR
// times as long: its worker keeps its core busy for the difference, as a process competing for
// the core would.
#pragma once

#include "ir/Result.h"

#include <string>
#include <string_view>
#include <vector>

namespace placer {

struct InjectedFault {
    enum class Kind : std::uint8_t { Error, OutOfMemory, Lost, Slow };
    std::string device;
    int iteration = 1;
    Kind kind = Kind::Error;
    double factor = 1; ///< Kind::Slow: how many times its time each kernel takes
    /// As it was written ("b@5:oom"), for messages.
    std::string spelled;

    bool operator==(const InjectedFault&) const = default;
};

/// The faults of PLACER_FAULT's syntax (`faults`) and PLACER_SLOW's (`slowdowns`), either of
/// which may be empty; an error names the item that is wrong and says why.
Result<std::vector<InjectedFault>> parseInjectedFaults(std::string_view faults,
                                                       std::string_view slowdowns);

/// Those the environment asks for (PLACER_FAULT, PLACER_SLOW); none when neither is set.
Result<std::vector<InjectedFault>> injectedFaultsFromEnvironment();

/// "PLACER_FAULT=b@5:oom", "PLACER_SLOW=b@5:2.5".
std::string injectedFaultText(const InjectedFault& fault);

} // namespace placer
