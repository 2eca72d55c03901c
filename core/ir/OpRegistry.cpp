// The process-wide op registry.
#include "ir/OpRegistry.h"

#include <cassert>

namespace placer {

bool OpDef::hasAnyKernel() const {
    for (DTypeMask mask : kernels) {
        if (mask != 0)
            return true;
    }
    return false;
}

std::unique_ptr<OpDef> makeUnsupportedOp(std::string name, OpDialect dialect) {
    auto op = std::make_unique<OpDef>();
    op->name = std::move(name);
    op->dialect = dialect;
    op->maxInputs = -1;
    return op; // kernels all zero: no device can run it
}

const OpRegistry& OpRegistry::global() {
    static const OpRegistry registry;
    return registry;
}

OpRegistry::OpRegistry() {
    registerBuiltinOps([this](OpDef def) { add(std::move(def)); });
    registerOnnxOps([this](OpDef def) { add(std::move(def)); });
    m_parameter = find("parameter");
    m_constant = find("constant");
    m_deviceCopy = find("device_copy");
    assert(m_parameter && m_constant && m_deviceCopy);
}

const OpDef& OpRegistry::add(OpDef def) {
    assert(!find(def.name) && "op registered twice");
    m_ops.push_back(std::make_unique<OpDef>(std::move(def)));
    m_byName.emplace(m_ops.back()->name, m_ops.back().get());
    return *m_ops.back();
}

const OpDef* OpRegistry::find(std::string_view name) const {
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : it->second;
}

std::vector<const OpDef*> OpRegistry::all() const {
    std::vector<const OpDef*> ops;
    ops.reserve(m_ops.size());
    for (const auto& op : m_ops)
        ops.push_back(op.get());
    return ops;
}

} // namespace placer
