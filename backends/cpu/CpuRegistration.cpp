// The CPU backend announces itself as the program starts: linked whole into every program that
// links placer_backend_cpu (its CMakeLists.txt), so that linking the backend is all it takes.
#include "backends/cpu/CpuBackend.h"

namespace placer {
namespace {

[[maybe_unused]] const bool registered = [] {
    registerCpuBackend();
    return true;
}();

} // namespace
} // namespace placer
