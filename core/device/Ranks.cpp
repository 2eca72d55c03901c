// Ranks: the process's transport, rank-qualified device names, remote devices and the ranks'
// agreement check (device/Ranks.h).
#include "device/Ranks.h"

#include "device/HostEvent.h"
#include "device/WorkQueue.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace placer {

namespace {

std::shared_ptr<RankTransport>& transportSlot() {
    static std::shared_ptr<RankTransport> transport;
    return transport;
}

} // namespace

std::string Transfer::error() const {
    std::lock_guard lock(m_mutex);
    return m_error;
}

bool Transfer::wait(double seconds) const {
    if (done())
        return true;
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done(); });
}

void Transfer::whenDone(std::function<void()> then) {
    {
        std::lock_guard lock(m_mutex);
        if (!done()) {
            m_then = std::move(then);
            return;
        }
    }
    then();
}

void Transfer::finish() {
    std::function<void()> then;
    {
        std::lock_guard lock(m_mutex);
        m_state.store(kDone, std::memory_order_release);
        then = std::move(m_then);
    }
    m_changed.notify_all();
    if (then)
        then();
}

void Transfer::fail(std::string why) {
    std::function<void()> then;
    {
        std::lock_guard lock(m_mutex);
        m_error = std::move(why);
        m_state.store(kFailed, std::memory_order_release);
        then = std::move(m_then);
    }
    m_changed.notify_all();
    if (then)
        then();
}

void setRankTransport(std::shared_ptr<RankTransport> transport) {
    transportSlot() = std::move(transport);
}

RankTransport* rankTransport() {
    return transportSlot().get();
}

int localRank() {
    return rankTransport() ? rankTransport()->rank() : 0;
}

int rankCount() {
    return rankTransport() ? rankTransport()->size() : 1;
}

std::string describeRank(int rank) {
    std::string text = "rank " + std::to_string(rank);
    if (RankTransport* transport = rankTransport();
        transport && rank >= 0 && rank < transport->size())
        text += " (host " + transport->hostName(rank) + ")";
    return text;
}

double rankTimeoutSeconds() {
    if (const char* text = std::getenv("PLACER_RANK_TIMEOUT_S")) {
        char* end = nullptr;
        const double seconds = std::strtod(text, &end);
        if (end != text && seconds > 0)
            return seconds;
    }
    return 30;
}

Result<std::pair<int, std::string>> splitRank(std::string_view spec) {
    constexpr std::string_view kRank = "rank";
    const std::size_t slash = spec.find('/');
    if (!spec.starts_with(kRank) || slash == std::string_view::npos)
        return std::pair<int, std::string>{0, std::string(spec)};
    const std::string_view number = spec.substr(kRank.size(), slash - kRank.size());
    int rank = 0;
    bool valid = !number.empty() && number.size() <= 6;
    for (char c : number) {
        valid = valid && c >= '0' && c <= '9';
        rank = rank * 10 + (c - '0');
    }
    if (!valid || slash + 1 == spec.size())
        return SourceError::sentence("'" + std::string(spec) +
                                     "' is not a device of a rank: write rankN/DEVICE, as in "
                                     "rank1/vcpu1 or rank1/cuda:0");
    if (rank >= rankCount()) {
        const int ranks = rankCount();
        return SourceError::sentence(
            "'" + std::string(spec) + "' names rank " + std::to_string(rank) +
            ", but this run has " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") +
            (ranks == 1 ? " (start it with mpirun -np " + std::to_string(rank + 1) + ")" : ""));
    }
    return std::pair<int, std::string>{rank, std::string(spec.substr(slash + 1))};
}

RemoteDevice::RemoteDevice(int rank, std::string name, DeviceKind kind,
                           std::unique_ptr<Device> prototype)
    : m_rank(rank), m_name(std::move(name)), m_kind(kind), m_prototype(std::move(prototype)),
      m_worker(std::make_unique<WorkQueue>()) {}

RemoteDevice::~RemoteDevice() = default;

std::string RemoteDevice::description() const {
    return "on " + describeRank(m_rank);
}

Result<std::byte*> RemoteDevice::allocate(std::int64_t bytes) {
    (void)bytes;
    return SourceError::sentence(m_name + " is " + describeRank(m_rank) +
                                 "'s: this rank allocates nothing on it");
}

void RemoteDevice::free(std::byte* data) {
    (void)data;
}

std::int64_t RemoteDevice::allocatableBytes() const {
    return std::numeric_limits<std::int64_t>::max();
}

void RemoteDevice::copyIn(std::byte* dst, const void* src, std::int64_t bytes) {
    (void)dst, (void)src, (void)bytes;
    throw std::runtime_error(m_name + " is another rank's device: no copy reaches it but a send");
}

void RemoteDevice::copyOut(void* dst, const std::byte* src, std::int64_t bytes) {
    copyIn(nullptr, dst, bytes), (void)src;
}

void RemoteDevice::copyPeer(std::byte* dst, Device& source, const std::byte* src,
                            std::int64_t bytes) {
    (void)source, (void)src;
    copyIn(dst, nullptr, bytes);
}

bool RemoteDevice::hostAccessible() const {
    return m_prototype ? m_prototype->hostAccessible() : m_kind != DeviceKind::Cuda;
}

bool RemoteDevice::bindsHostConstants() const {
    return m_prototype && m_prototype->bindsHostConstants();
}

std::string RemoteDevice::packedLayout(const KernelSpec& spec, std::size_t input) {
    return m_prototype ? m_prototype->packedLayout(spec, input) : std::string();
}

bool RemoteDevice::takesViews(const KernelSpec& spec) {
    return m_prototype && m_prototype->takesViews(spec);
}

Result<std::unique_ptr<Kernel>> RemoteDevice::prepare(const KernelSpec& spec) {
    (void)spec;
    return SourceError::sentence(m_name + " is " + describeRank(m_rank) +
                                 "'s: its kernels are prepared there");
}

void RemoteDevice::enqueue(std::function<void()> task) {
    m_worker->enqueue(std::move(task));
}

void RemoteDevice::synchronize() {
    m_worker->drain();
}

std::unique_ptr<Event> RemoteDevice::createEvent() {
    return std::make_unique<HostEvent>();
}

double RemoteDevice::now() const {
    return hostClockMicros();
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed) {
    std::uint64_t hash = seed;
    for (char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash;
}

std::string buildIdentity() {
    return std::string("placer ") + PLACER_VERSION_TEXT + " built " + __DATE__ + " " + __TIME__;
}

Status checkRanksAgree(std::uint64_t modelHash, std::uint64_t planHash) {
    RankTransport* transport = rankTransport();
    if (!transport || transport->size() < 2)
        return {};
    auto hex = [](std::uint64_t value) {
        char text[17];
        std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
        return std::string(text);
    };
    const std::string mine = buildIdentity() + "\n" + hex(modelHash) + "\n" + hex(planHash);
    auto all = transport->allGather(mine);
    if (!all)
        return all.error();
    const auto& fingerprints = all.value();
    auto part = [](const std::string& text, int index) {
        std::size_t start = 0;
        for (int i = 0; i < index; ++i)
            start = text.find('\n', start) + 1;
        return text.substr(start, text.find('\n', start) - start);
    };
    for (int r = 1; r < static_cast<int>(fingerprints.size()); ++r) {
        const std::string& theirs = fingerprints[static_cast<std::size_t>(r)];
        const std::string& first = fingerprints[0];
        if (theirs == first)
            continue;
        std::string what;
        if (part(theirs, 0) != part(first, 0))
            what = "it runs another build (" + part(theirs, 0) + ", rank 0 runs " + part(first, 0) +
                   ")";
        else if (part(theirs, 1) != part(first, 1))
            what = "it read another model (its file differs from rank 0's)";
        else
            what = "it made another plan (its options or devices differ from rank 0's)";
        return SourceError::sentence(describeRank(r) + " differs from " + describeRank(0) + ": " +
                                     what + "; the run stops");
    }
    return {};
}

} // namespace placer
