// Runs that span ranks (vm/ExecutorImpl.h): which rank does what with each instruction, and the
// messages of copies between ranks, their shapes first where those are found at run time.
#include "vm/ExecutorImpl.h"

#include "kernels/KernelSupport.h"
#include "plan/ExecutionOrder.h"
#include "vm/ControlFlow.h"
#include "vm/MemoryCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace placer {

int Executor::Impl::rankOf(DeviceId d) const {
    const int remote = mapping[d.index]->remoteRank();
    return remote >= 0 ? remote : localRank();
}

void Executor::Impl::assignRankRoles() {
    const std::size_t n = program.code.size();
    rankRole.assign(n, RankRole::Local);
    tagOf.assign(n, -1);
    transfers.resize(n);
    staging.resize(n);
    postedAt.assign(n, 0);
    sendPosted.assign(n, 0);
    int tags = 0;
    const int me = localRank();
    headers.resize(n);
    headerTransfers.resize(n);
    mayVary.assign(program.registers.size(), false);
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::DeviceCopy) {
            mayVary[static_cast<std::size_t>(instr.dst)] =
                mayVary[static_cast<std::size_t>(instr.src)];
            continue;
        }
        if (instr.op != Opcode::Invoke)
            continue;
        const Node& node = graph->node(instr.node);
        bool varies = node.anyRunTimeShape() || node.op->hasBodies ||
                      node.op->kernel.family == KernelFamily::Selection;
        for (std::int32_t r : instr.args)
            varies = varies || mayVary[static_cast<std::size_t>(r)];
        for (std::int32_t r : instr.results)
            mayVary[static_cast<std::size_t>(r)] = varies;
    }

    for (std::size_t k = 0; k < n; ++k) {
        const Instruction& instr = program.code[k];
        if (!instr.device.valid())
            continue;
        const int rank = rankOf(instr.device);
        if (instr.op == Opcode::DeviceCopy) {
            const int source = rankOf(instr.srcDevice);
            if (source != rank)
                tagOf[k] = tags++;
            if (source == me && rank != me)
                rankRole[k] = RankRole::Send;
            else if (source != me && rank == me)
                rankRole[k] = RankRole::Receive;
            else if (rank != me)
                rankRole[k] = RankRole::Remote;
            continue;
        }
        if (rank != me)
            rankRole[k] = RankRole::Remote;
    }
    copyTags = tags;
    crossTransport = tags > 0 ? rankTransport() : nullptr;
}

std::optional<SourceError> Executor::Impl::checkCopiesBetweenRanks() const {
    RankTransport* transport = rankTransport();
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (tagOf[k] < 0)
            continue;
        const Instruction& instr = program.code[k];
        const std::string what = "the copy of " + reg(instr.src).name + " from " +
                                 mapping[instr.srcDevice.index]->name() + " to " +
                                 mapping[instr.device.index]->name();
        if (!transport)
            return SourceError{"", 0, 0, what + " crosses ranks, but this process runs alone"};
        if (2 * tagOf[k] + 1 > transport->maxTag())
            return SourceError{"", 0, 0,
                               what + " is copy " + std::to_string(tagOf[k]) +
                                   " between ranks, more than the transport can tag"};
    }
    return std::nullopt;
}

std::int64_t Executor::Impl::overdueReceiveOf(std::size_t s) const {
    for (std::size_t k : streams[s].instructions) {
        if (rankRole[k] != RankRole::Receive)
            continue;
        const std::shared_ptr<Transfer>& awaited =
            headerTransfers[k] ? headerTransfers[k] : transfers[k];
        if (awaited && !awaited->done() &&
            hostClockMicros() - postedAt[k] > rankTimeoutSeconds() * 1e6)
            return static_cast<std::int64_t>(k);
    }
    return -1;
}

void Executor::Impl::postReceive(std::size_t k) {
    const Instruction& instr = program.code[k];
    transfers[k].reset();
    headerTransfers[k].reset();
    postedAt[k] = hostClockMicros();
    if (mayVary[static_cast<std::size_t>(instr.src)]) {
        // Its shape first; the bytes are received once memory for that shape is had.
        headers[k].assign(kHeaderWords, 0);
        headerTransfers[k] =
            rankTransport()->receive(rankOf(instr.srcDevice), copyTags + tagOf[k],
                                     headers[k].data(), kHeaderWords * sizeof(std::int64_t));
        return;
    }
    if (instr.bytes <= 0)
        return;
    Device* device = mapping[instr.device.index];
    void* into = regData[static_cast<std::size_t>(instr.dst)];
    if (!device->hostAccessible()) {
        staging[k].resize(static_cast<std::size_t>(instr.bytes));
        into = staging[k].data();
    }
    transfers[k] = rankTransport()->receive(rankOf(instr.srcDevice), tagOf[k], into, instr.bytes);
}

std::string Executor::Impl::describeCopy(std::size_t k) const {
    const Instruction& instr = program.code[k];
    return "the copy of " + reg(instr.src).name + " (" + formatBytes(instr.bytes) + ") from " +
           mapping[instr.srcDevice.index]->name() + " to " + mapping[instr.device.index]->name();
}

std::string Executor::Impl::receiveOverdue(std::size_t k) const {
    const int source = rankOf(program.code[k].srcDevice);
    return describeCopy(k) + ": " + describeRank(source) + " sent nothing for " +
           formatSeconds(rankTimeoutSeconds()) + " (it stopped, failed or stopped answering)";
}

std::string Executor::Impl::formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f s", seconds);
    return text;
}

void Executor::Impl::postSend(std::size_t k) {
    const Instruction& instr = program.code[k];
    postedAt[k] = hostClockMicros();
    transfers[k].reset();
    headerTransfers[k].reset();
    const int peer = rankOf(instr.device);
    std::int64_t bytes = instr.bytes;
    if (mayVary[static_cast<std::size_t>(instr.src)]) {
        // The shape it has at this run first, then that many bytes.
        const TensorType type = shapeAtRun[static_cast<std::size_t>(instr.src)]
                                    ? typeAtRun(instr.src)
                                    : reg(instr.src).type;
        if (type.shape.size() + 1 > kHeaderWords)
            throw KernelError(describeCopy(k) + ": rank " + std::to_string(type.shape.size()) +
                              " is more than a copy between ranks carries");
        headers[k].assign(kHeaderWords, 0);
        headers[k][0] = type.rank();
        std::copy(type.shape.begin(), type.shape.end(), headers[k].begin() + 1);
        headerTransfers[k] = rankTransport()->send(peer, copyTags + tagOf[k], headers[k].data(),
                                                   kHeaderWords * sizeof(std::int64_t));
        bytes = type.bytes();
    }
    if (bytes > 0) {
        Device* source = mapping[instr.srcDevice.index];
        checkOwner(instr.src, source, describeCopy(k));
        const std::byte* from = regData[static_cast<std::size_t>(instr.src)];
        if (!source->hostAccessible()) {
            staging[k].resize(static_cast<std::size_t>(bytes));
            source->copyOut(staging[k].data(), from, bytes);
            from = staging[k].data();
        }
        transfers[k] = rankTransport()->send(peer, tagOf[k], from, bytes);
    }
}

void Executor::Impl::sendToRank(std::size_t k) {
    if (!sendPosted[k])
        postSend(k);
    const int peer = rankOf(program.code[k].device);
    for (const std::shared_ptr<Transfer>& sent : {headerTransfers[k], transfers[k]}) {
        if (!sent)
            continue;
        TransportWait waiting(sent->done() ? nullptr : crossTransport);
        if (!sent->wait(rankTimeoutSeconds()))
            throw KernelError(describeCopy(k) + ": " + describeRank(peer) + " took nothing for " +
                              formatSeconds(rankTimeoutSeconds()) +
                              " (it stopped, failed or stopped answering)");
        if (sent->failed())
            throw KernelError(describeCopy(k) + ": " + sent->error());
    }
}

void Executor::Impl::receiveFoundSize(std::size_t k, Device* device) {
    const Instruction& instr = program.code[k];
    if (headerTransfers[k]->failed())
        throw KernelError(describeCopy(k) + ": " + headerTransfers[k]->error());
    const std::vector<std::int64_t>& header = headers[k];
    const std::int64_t rank = header[0];
    TensorType type = reg(instr.dst).type;
    if (rank < 0 || static_cast<std::size_t>(rank) + 1 > kHeaderWords)
        throw KernelError(describeCopy(k) + ": the sender's shape has rank " +
                          std::to_string(rank));
    type.shape.assign(header.begin() + 1, header.begin() + 1 + rank);
    for (std::int64_t extent : type.shape) {
        if (extent < 0)
            throw KernelError(describeCopy(k) + ": the sender's shape has a negative extent");
    }
    const std::int64_t bytes = type.bytes();
    memoryAtRun(instr.dst, type, device);
    ranShape[static_cast<std::size_t>(instr.dst)] = type.shape;
    if (bytes <= 0)
        return;
    void* into = regData[static_cast<std::size_t>(instr.dst)];
    if (!device->hostAccessible()) {
        staging[k].resize(static_cast<std::size_t>(bytes));
        into = staging[k].data();
    }
    const int source = rankOf(instr.srcDevice);
    transfers[k] = rankTransport()->receive(source, tagOf[k], into, bytes);
    TransportWait waiting(crossTransport);
    if (!transfers[k]->wait(rankTimeoutSeconds()))
        throw KernelError(receiveOverdue(k));
    if (transfers[k]->failed())
        throw KernelError(describeCopy(k) + ": " + transfers[k]->error());
    if (!staging[k].empty())
        device->copyIn(regData[static_cast<std::size_t>(instr.dst)], staging[k].data(), bytes);
}

} // namespace placer
