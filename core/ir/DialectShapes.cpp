// The installed run-time shape functions of each dialect (ir/DialectShapes.h).
#include "ir/DialectShapes.h"

#include <atomic>
#include <mutex>

namespace placer {

namespace {

constexpr std::size_t kDialects = 2; // OpDialect::Relay, OpDialect::Onnx

/// Each dialect's functions; once installed they live as long as the process, so a pointer
/// handed out stays valid while another thread installs them again.
std::atomic<const DialectShapeFunctions*> installed[kDialects];

} // namespace

void setDialectShapeFunctions(OpDialect dialect, DialectShapeFunctions functions) {
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    installed[static_cast<std::size_t>(dialect)].store(
        new DialectShapeFunctions(std::move(functions)), std::memory_order_release);
}

const DialectShapeFunctions* dialectShapeFunctions(OpDialect dialect) {
    return installed[static_cast<std::size_t>(dialect)].load(std::memory_order_acquire);
}

} // namespace placer
