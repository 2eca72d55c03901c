#include "store/RunRecordBuilder.h"

#include "runtime/Run.h"

#include <algorithm>
#include <thread>

namespace placer::store {

RunRecord runRecord(const RunReportInput& run) {
    const DeviceSet& devices = *run.devices;
    const RunResult& result = *run.result;
    RunRecord record;
    for (int d = 0; d < devices.size(); ++d) {
        for (const StreamInfo& stream : result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), DeviceId(d)) !=
                stream.virtuals.end())
                record.mapping += (record.mapping.empty() ? "" : ", ") + devices[DeviceId(d)].name +
                                  "=" + stream.physical;
        }
    }
    record.machine = std::to_string(std::thread::hardware_concurrency()) + " cores";
    record.iterations = static_cast<int>(result.latencyMicros.size());
    record.latencyMs = median(result.latencyMicros) / 1000.0;
    record.report = runReportJson(run).dump(-1);
    return record;
}

} // namespace placer::store
