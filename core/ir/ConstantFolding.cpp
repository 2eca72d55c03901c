// The process's load-time constant evaluator, offered by a backend and installed by the session
// (ir/ConstantFolding.h).
#include "ir/ConstantFolding.h"

#include <mutex>

namespace placer {

namespace {

std::mutex& evaluatorMutex() {
    static std::mutex mutex;
    return mutex;
}

ConstantEvaluator& evaluatorSlot() {
    static ConstantEvaluator evaluator;
    return evaluator;
}

ConstantEvaluator& offeredSlot() {
    static ConstantEvaluator evaluator;
    return evaluator;
}

} // namespace

const ConstantEvaluator& constantEvaluator() {
    std::lock_guard lock(evaluatorMutex());
    return evaluatorSlot();
}

void setConstantEvaluator(ConstantEvaluator evaluator) {
    std::lock_guard lock(evaluatorMutex());
    evaluatorSlot() = std::move(evaluator);
}

void offerConstantEvaluator(ConstantEvaluator evaluator) {
    std::lock_guard lock(evaluatorMutex());
    offeredSlot() = std::move(evaluator);
}

bool installOfferedConstantEvaluator() {
    std::lock_guard lock(evaluatorMutex());
    if (!offeredSlot())
        return false;
    evaluatorSlot() = offeredSlot();
    return true;
}

} // namespace placer
