// A tensor in host memory with its type: a run's inputs and outputs, a model's known values at
// load. Its bytes are a TensorData, the one type of tensor bytes in core (owned, or a view of a
// mapped file's pages).
#pragma once

#include "ir/TensorData.h"
#include "ir/TensorType.h"

namespace placer {

struct HostTensor {
    TensorType type;
    TensorData data;

    /// A zero-filled tensor of `type`.
    static HostTensor zeros(const TensorType& type) {
        return {type, TensorData(static_cast<std::size_t>(type.bytes()), '\0')};
    }
    /// The elements, read as T (the caller knows the dtype).
    template <typename T> const T* as() const { return reinterpret_cast<const T*>(data.data()); }
    template <typename T> T* as() { return reinterpret_cast<T*>(data.data()); }
};

} // namespace placer
