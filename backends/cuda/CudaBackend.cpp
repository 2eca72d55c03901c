// The CUDA backend of the registry: finding the GPUs once, and making their devices.
#include "backends/cuda/CudaBackend.h"

#include "backends/cuda/CudaDevice.h"
#include "backends/cuda/CudaError.h"
#include "backends/cuda/Launch.h"
#include "backends/cuda/NvmlLoads.h"

#include <charconv>
#include <mutex>

namespace placer::cuda {

namespace {

/// What the driver says, asked once: the usable devices and, when there are none, why.
struct Probe {
    int count = 0;
    std::string reason;
    std::vector<PhysicalDeviceInfo> devices;
};

const Probe& probe() {
    static const Probe result = [] {
        Probe p;
        const cudaError_t error = cudaGetDeviceCount(&p.count);
        if (error != cudaSuccess) {
            cudaGetLastError();
            p.count = 0;
            if (error == cudaErrorNoDevice)
                p.reason = "absent: the NVIDIA driver reports no GPU on this machine";
            else if (error == cudaErrorInsufficientDriver)
                p.reason = "absent: no NVIDIA driver (libcuda) for CUDA " +
                           std::to_string(CUDART_VERSION / 1000) + " on this machine";
            else
                p.reason = "absent: the CUDA runtime cannot start: " + describe(error);
            return p;
        }
        if (p.count == 0) {
            p.reason = "absent: the NVIDIA driver reports no GPU on this machine";
            return p;
        }
        for (int i = 0; i < p.count; ++i) {
            cudaDeviceProp props{};
            PhysicalDeviceInfo info;
            info.name = "cuda:" + std::to_string(i);
            info.kind = DeviceKind::Cuda;
            if (cudaGetDeviceProperties(&props, i) != cudaSuccess) {
                cudaGetLastError();
                info.available = false;
                info.description = "unusable: its properties cannot be read";
            } else {
                std::string why;
                info.available = kernelsRunOn(i, &why);
                char memory[32];
                std::snprintf(memory, sizeof memory, "%.1f GiB",
                              static_cast<double>(props.totalGlobalMem) / (1 << 30));
                info.description = std::string(props.name) + ", sm_" + std::to_string(props.major) +
                                   std::to_string(props.minor) + ", " +
                                   std::to_string(props.multiProcessorCount) + " SMs, " + memory;
                if (!info.available)
                    info.description += "; unusable: " + why;
            }
            p.devices.push_back(std::move(info));
        }
        return p;
    }();
    return result;
}

/// The ordinal `spec` names: 0 for "cuda", N for "cuda:N"; -1 when it is malformed.
int ordinalOf(std::string_view spec) {
    if (spec == "cuda")
        return 0;
    if (!spec.starts_with("cuda:"))
        return -1;
    int ordinal = -1;
    const std::string_view number = spec.substr(5);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), ordinal);
    if (ec != std::errc() || end != number.data() + number.size() || ordinal < 0)
        return -1;
    return ordinal;
}

class CudaBackend final : public DeviceBackend {
public:
    DeviceKind kind() const override { return DeviceKind::Cuda; }

    std::vector<PhysicalDeviceInfo> list() override {
        const Probe& p = probe();
        if (p.devices.empty())
            return {
                {"cuda", DeviceKind::Cuda, false, p.reason + "; cuda devices run on virtual CPUs"}};
        return p.devices;
    }

    std::string_view prefix() const override { return "cuda"; }

    Result<std::string> deviceName(std::string_view spec) const override {
        const int ordinal = ordinalOf(spec);
        if (ordinal < 0)
            return SourceError{"", 0, 0,
                               "physical device '" + std::string(spec) +
                                   "': GPUs are called cuda:0, cuda:1, ..."};
        return "cuda:" + std::to_string(ordinal);
    }

    Result<std::unique_ptr<Device>> create(std::string_view spec) override {
        const Probe& p = probe();
        const int ordinal = ordinalOf(spec);
        if (ordinal < 0)
            return SourceError{"", 0, 0,
                               "physical device '" + std::string(spec) +
                                   "': GPUs are called cuda:0, cuda:1, ..."};
        if (p.devices.empty())
            return SourceError{"", 0, 0, "no CUDA device: " + p.reason};
        if (ordinal >= p.count)
            return SourceError{"", 0, 0,
                               "no " + std::string(spec) + ": this machine has " +
                                   std::to_string(p.count) +
                                   " GPU(s), cuda:0 to cuda:" + std::to_string(p.count - 1)};
        const PhysicalDeviceInfo& info = p.devices[static_cast<std::size_t>(ordinal)];
        if (!info.available)
            return SourceError{"", 0, 0, info.name + " is " + info.description};
        auto device = CudaDevice::create(ordinal);
        if (!device)
            return device.error();
        return std::unique_ptr<Device>(device.take());
    }

    std::vector<DeviceLoad> loads() override { return nvmlLoads(probe().count); }
};

} // namespace

std::unique_ptr<DeviceBackend> makeCudaBackend() {
    return std::make_unique<CudaBackend>();
}

void registerCudaBackend() {
    static std::once_flag once;
    std::call_once(once, [] { registerDeviceBackend(makeCudaBackend); });
}

} // namespace placer::cuda
