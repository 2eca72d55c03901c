// The process's load-time constant evaluator, installed by the runtime (ir/ConstantFolding.h).
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

} // namespace

const ConstantEvaluator& constantEvaluator() {
    std::lock_guard lock(evaluatorMutex());
    return evaluatorSlot();
}

void setConstantEvaluator(ConstantEvaluator evaluator) {
    std::lock_guard lock(evaluatorMutex());
    evaluatorSlot() = std::move(evaluator);
}

} // namespace placer
