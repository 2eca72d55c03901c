// Gathering a run's results from every rank (vm/RankResults.h).
#include "vm/RankResults.h"

#include "device/Ranks.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace placer {

namespace {

/// The bytes one rank sends: plain values in this machine's layout (every rank runs the same
/// build, which the ranks checked before the run).
class Writer {
public:
    template <typename T> void put(const T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        m_bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    void putBytes(const void* data, std::size_t size) {
        put<std::uint64_t>(size);
        m_bytes.append(static_cast<const char*>(data), size);
    }
    template <typename T> void putVector(const std::vector<T>& values) {
        putBytes(values.data(), values.size() * sizeof(T));
    }
    std::string take() { return std::move(m_bytes); }

private:
    std::string m_bytes;
};

class Reader {
public:
    explicit Reader(const std::string& bytes) : m_bytes(bytes) {}
    template <typename T> T get() {
        T value{};
        if (m_at + sizeof value > m_bytes.size()) {
            m_bad = true;
            return value;
        }
        std::memcpy(&value, m_bytes.data() + m_at, sizeof value);
        m_at += sizeof value;
        return value;
    }
    template <typename T> std::vector<T> getVector() {
        const auto size = static_cast<std::size_t>(get<std::uint64_t>());
        if (m_bad || size % sizeof(T) != 0 || m_at + size > m_bytes.size()) {
            m_bad = true;
            return {};
        }
        std::vector<T> values(size / sizeof(T));
        std::memcpy(values.data(), m_bytes.data() + m_at, size);
        m_at += size;
        return values;
    }
    bool bad() const { return m_bad; }

private:
    const std::string& m_bytes;
    std::size_t m_at = 0;
    bool m_bad = false;
};

/// Per rank, its clock minus rank 0's: sampled right after a collective that every rank leaves
/// at about the same moment, three times, the median kept.
Result<std::vector<double>> clockOffsets(RankTransport& transport) {
    const auto ranks = static_cast<std::size_t>(transport.size());
    std::vector<std::vector<double>> samples(ranks);
    for (int round = 0; round < 3; ++round) {
        if (auto barrier = transport.allGather(std::string()); !barrier)
            return barrier.error();
        const double now = hostClockMicros();
        auto clocks =
            transport.allGather(std::string(reinterpret_cast<const char*>(&now), sizeof now));
        if (!clocks)
            return clocks.error();
        double first = 0;
        std::memcpy(&first, clocks.value()[0].data(), sizeof first);
        for (std::size_t r = 0; r < ranks; ++r) {
            double theirs = 0;
            if (clocks.value()[r].size() == sizeof theirs)
                std::memcpy(&theirs, clocks.value()[r].data(), sizeof theirs);
            samples[r].push_back(theirs - first);
        }
    }
    std::vector<double> offsets(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        std::sort(samples[r].begin(), samples[r].end());
        offsets[r] = samples[r][samples[r].size() / 2];
    }
    return offsets;
}

std::string describe(const RunResult& result, int me) {
    Writer out;
    out.putVector(result.latencyMicros);
    std::uint32_t timed = 0;
    for (const auto& times : result.instrMicros)
        timed += times.empty() ? 0 : 1;
    out.put(timed);
    for (std::size_t k = 0; k < result.instrMicros.size(); ++k) {
        if (result.instrMicros[k].empty())
            continue;
        out.put(static_cast<std::uint32_t>(k));
        out.putVector(result.instrMicros[k]);
    }
    std::uint32_t own = 0;
    for (const StreamInfo& stream : result.streams)
        own += stream.rank == me ? 1 : 0;
    out.put(own);
    for (std::size_t s = 0; s < result.streams.size(); ++s) {
        const StreamInfo& stream = result.streams[s];
        if (stream.rank != me)
            continue;
        out.put(static_cast<std::uint32_t>(s));
        out.putVector(stream.busyMicros);
        out.put(stream.peakBytes);
        out.put(stream.livePeakBytes);
        out.put(stream.constantUploads);
    }
    out.putVector(result.trace);
    out.putVector(result.memory);
    std::vector<IdleStretch> idle;
    for (const IdleStretch& stretch : result.idle) {
        if (result.streams[static_cast<std::size_t>(stretch.stream)].rank == me)
            idle.push_back(stretch);
    }
    out.putVector(idle);
    out.put(result.traceOrigin);
    out.put(result.traceEnd);
    std::uint32_t held = 0;
    for (std::size_t i = 0; i < result.outputRanks.size(); ++i)
        held += result.outputRanks[i] == me ? 1 : 0;
    out.put(held);
    for (std::size_t i = 0; i < result.outputs.size() && i < result.outputRanks.size(); ++i) {
        if (result.outputRanks[i] != me)
            continue;
        const HostTensor& tensor = result.outputs[i];
        out.put(static_cast<std::uint32_t>(i));
        out.put(tensor.type.dtype);
        out.putVector(tensor.type.shape);
        out.putBytes(tensor.data.data(), tensor.data.size());
    }
    return out.take();
}

/// Adds rank `rank`'s part (`bytes`), whose clock runs `offset` µs ahead of rank 0's.
bool merge(RunResult& result, const std::string& bytes, int rank, double offset) {
    Reader in(bytes);
    const std::vector<double> latency = in.getVector<double>();
    for (std::size_t i = 0; i < latency.size() && i < result.latencyMicros.size(); ++i)
        result.latencyMicros[i] = std::max(result.latencyMicros[i], latency[i]);
    const auto timed = in.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < timed && !in.bad(); ++i) {
        const auto k = in.get<std::uint32_t>();
        std::vector<double> times = in.getVector<double>();
        if (k < result.instrMicros.size() && result.instrMicros[k].empty())
            result.instrMicros[k] = std::move(times);
    }
    const auto own = in.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < own && !in.bad(); ++i) {
        const auto s = in.get<std::uint32_t>();
        std::vector<double> busy = in.getVector<double>();
        const auto peak = in.get<std::int64_t>();
        const auto livePeak = in.get<std::int64_t>();
        const auto uploads = in.get<int>();
        if (s >= result.streams.size())
            return false;
        StreamInfo& stream = result.streams[s];
        stream.busyMicros = std::move(busy);
        stream.peakBytes = peak;
        stream.livePeakBytes = livePeak;
        stream.constantUploads = uploads;
    }
    for (TimedEvent event : in.getVector<TimedEvent>()) {
        event.start -= offset;
        event.end -= offset;
        result.trace.push_back(event);
    }
    for (MemorySample sample : in.getVector<MemorySample>()) {
        sample.time -= offset;
        result.memory.push_back(sample);
    }
    for (IdleStretch stretch : in.getVector<IdleStretch>()) {
        stretch.start -= offset;
        stretch.end -= offset;
        result.idle.push_back(stretch);
    }
    const double origin = in.get<double>() - offset;
    const double end = in.get<double>() - offset;
    if (!result.trace.empty()) {
        result.traceOrigin = std::min(result.traceOrigin, origin);
        result.traceEnd = std::max(result.traceEnd, end);
    }
    const auto held = in.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < held && !in.bad(); ++i) {
        const auto index = in.get<std::uint32_t>();
        HostTensor tensor;
        tensor.type.dtype = in.get<DType>();
        tensor.type.shape = in.getVector<std::int64_t>();
        const std::vector<char> data = in.getVector<char>();
        tensor.data = TensorData(data.data(), data.size());
        if (index >= result.outputs.size() || result.outputRanks[index] != rank)
            return false;
        result.outputs[index] = std::move(tensor);
    }
    return !in.bad();
}

} // namespace

Status gatherRankResults(RunResult& result) {
    RankTransport* transport = rankTransport();
    if (!transport || transport->size() < 2)
        return {};
    auto offsets = clockOffsets(*transport);
    if (!offsets)
        return offsets.error();
    const int me = transport->rank();
    auto parts = transport->allGather(me == 0 ? std::string() : describe(result, me));
    if (!parts)
        return parts.error();
    if (me != 0)
        return {};
    // Rank 0's own idle stretches of other ranks' streams say nothing: those ranks' replace them.
    std::erase_if(result.idle, [&](const IdleStretch& stretch) {
        return result.streams[static_cast<std::size_t>(stretch.stream)].rank != 0;
    });
    for (int r = 1; r < transport->size(); ++r) {
        if (!merge(result, parts.value()[static_cast<std::size_t>(r)], r,
                   offsets.value()[static_cast<std::size_t>(r)]))
            return SourceError::sentence("the results of " + describeRank(r) +
                                         " do not fit rank 0's run");
    }
    std::sort(result.trace.begin(), result.trace.end(),
              [](const TimedEvent& a, const TimedEvent& b) { return a.start < b.start; });
    std::sort(result.memory.begin(), result.memory.end(),
              [](const MemorySample& a, const MemorySample& b) { return a.time < b.time; });
    return {};
}

std::uint64_t graphFingerprint(const Graph& graph) {
    constexpr std::size_t kSample = 4096;
    std::uint64_t hash = fnv1a(graph.name);
    for (const Node& node : graph.nodes()) {
        hash = fnv1a(node.op->name, hash);
        hash = fnv1a(node.name, hash);
        for (const ValueRef& input : node.inputs) {
            const std::uint64_t ref = (std::uint64_t(input.node.index) << 8) ^ input.output;
            hash = fnv1a(std::string_view(reinterpret_cast<const char*>(&ref), sizeof ref), hash);
        }
        for (const TensorType& type : node.outputs)
            hash = fnv1a(type.toShortString(), hash);
        if (node.data) {
            const std::size_t size = node.data->size();
            hash = fnv1a(std::to_string(size), hash);
            const char* bytes = node.data->data();
            hash = fnv1a(std::string_view(bytes, std::min(size, kSample)), hash);
            if (size > kSample)
                hash = fnv1a(std::string_view(bytes + size - kSample, kSample), hash);
        }
    }
    return hash;
}

} // namespace placer
