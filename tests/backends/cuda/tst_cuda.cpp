// The CUDA backend end to end. Without a GPU (or without a CUDA build) the registry must say why
// and cuda devices must run on virtual CPUs; with one, the tiny models run on cuda:0 alone and
// split with the host, and match the single-device CPU reference.
#include "CapabilityCheck.h"
#include "LaneDevice.h"
#include "OpCases.h"

#include "backends/cpu/CpuKernels.h"
#include "device/DeviceMapping.h"
#include "io/ModelLoader.h"
#include "kernels/RandomTensor.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"
#if PLACER_HAVE_CUDA
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaDevice.h"
#include "backends/cuda/CudaKernels.h"
#include "backends/cuda/LazyLibraries.h"

#include <cublas_v2.h>
#include <cudnn.h>
#endif

#include <QtTest>

#include <random>
#include <set>

using namespace placer;

namespace {

const std::string kModels = std::string(PLACER_SOURCE_DIR) + "/resources/models/";

/// Why there is no usable GPU here, or empty when cuda:0 can be used.
QString whyNoGpu(DeviceRegistry& registry) {
    for (const PhysicalDeviceInfo& info : registry.list()) {
        if (info.kind == DeviceKind::Cuda && !info.available)
            return QString::fromStdString(info.description);
    }
    return {};
}

std::vector<HostTensor> run(const LoadedModel& model, const Plan& plan,
                            const std::vector<Device*>& mapping,
                            const std::vector<HostTensor>& inputs) {
    auto program = lowerToBytecode(model.graph, model.devices, plan);
    if (!program)
        qFatal("%s", program.error().message.c_str());
    auto executor = Executor::load(model.graph, model.devices, program.take(), mapping,
                                   model.graph.onnxOpset());
    if (!executor)
        qFatal("%s", executor.error().message.c_str());
    auto result = executor.value()->run(inputs, RunOptions{1, 3});
    if (!result)
        qFatal("%s", result.error().message.c_str());
    return result.value().outputs;
}

/// One registry, and so one CUDA context, for the many rows of the kernel checks.
DeviceRegistry& sharedRegistry() {
    static DeviceRegistry registry;
    return registry;
}

constexpr unsigned kSeeds = 4; // random cases per operator and backend

/// Compares one case run on `device` with the CPU kernels; empty when they agree.
std::string checkCase(Device& device, const test::OpCase& c) {
    std::string error;
    const auto expected = test::runOnCpu(c, &error);
    if (!error.empty())
        return "the CPU kernels refuse the case: " + error;
    const auto actual = test::runOnDevice(device, c, &error);
    if (!error.empty())
        return device.name() + ": " + error;
    const ReferenceCheck check = compareOutputs(actual, expected, c.atol, c.rtol);
    return check.ok ? std::string() : check.mismatch;
}

/// Which kernel `device` prepares for the case ("cuda:cudnn:convolution:algo1"), or the error.
[[maybe_unused]] std::string implementationOn(Device& device, const test::OpCase& c) {
    Node node;
    std::vector<std::shared_ptr<TensorData>> data;
    auto kernel = test::prepareCaseKernel(device, c, &node, &data);
    return kernel ? kernel.value()->implementation() : "error: " + kernel.error().message;
}

/// Sets `variable` to `way`, a way of the CUDA kernels forced for a test; unsets it when empty
/// (the fastest way).
[[maybe_unused]] void forceWay(const char* variable, const QString& way) {
    if (way.isEmpty())
        qunsetenv(variable);
    else
        qputenv(variable, way.toUtf8());
}

/// Seeded uniform floats in [-1, 1) of this shape.
[[maybe_unused]] test::Tensor randomFloats(test::Dims shape, std::mt19937& rng) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::int64_t count = 1;
    for (std::int64_t d : shape)
        count *= d;
    std::vector<float> v(static_cast<std::size_t>(count));
    for (float& x : v)
        x = value(rng);
    return test::make(std::move(shape), DType::Float32, v);
}

} // namespace

class TestCuda : public QObject {
    Q_OBJECT

    /// Whether a shared library whose name contains `name` is mapped into this process.
    static bool loaded(const char* name) {
        QFile maps("/proc/self/maps");
        return maps.open(QIODevice::ReadOnly) && maps.readAll().contains(name);
    }

private slots:
    void initTestCase() {
#if PLACER_HAVE_CUDA
        cuda::registerCudaBackend(); // as the programs do
#endif
    }

    /// cuBLAS and cuDNN are not linked but opened on first use: that must find them where the
    /// build did (no GPU is needed to ask them for a status string), and a process that never
    /// makes a GPU device must not have them loaded.
    void librariesOpenOnFirstUse() {
#if PLACER_HAVE_CUDA
        QVERIFY(!loaded("libcublasLt.so"));
        QCOMPARE(QString(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)), QString("success"));
        QVERIFY(QString(cudnnGetErrorString(CUDNN_STATUS_SUCCESS)).contains("SUCCESS"));
        QCOMPARE(QString::fromStdString(cuda::lazyLibraryError()), QString());
        QVERIFY(loaded("libcublasLt.so"));
#else
        QSKIP("this build has no CUDA backend");
#endif
    }

    void registrySaysWhyThereIsNoGpu() {
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (why.isEmpty())
            QSKIP("this machine has a usable GPU");
        QVERIFY2(why.startsWith("absent") || why.contains("unusable"), qPrintable(why));
        QVERIFY(!registry.hasKind(DeviceKind::Cuda));
        auto device = registry.get("cuda:0");
        QVERIFY(!device.ok());
        // From the CUDA backend ("no CUDA device: ...") or, in a build without one, from the
        // registry ("no cuda device: this build of placer has no cuda backend").
        QVERIFY2(QString::fromStdString(device.error().message)
                     .startsWith("no cuda device: ", Qt::CaseInsensitive),
                 device.error().message.c_str());
        // A cuda virtual device runs on a virtual CPU instead, with a warning.
        const DeviceSet devices = DeviceSet::parse("cpu:cpu,gpu:cuda").take();
        std::vector<std::string> warnings;
        auto mapping = mapDevices(devices, {}, registry, &warnings);
        QVERIFY(mapping.ok());
        QCOMPARE(mapping.value()[1]->kind(), DeviceKind::VCpu);
        QVERIFY(!warnings.empty());
    }

    // The CUDA backend registers a kernel for exactly the families the op registry says CUDA
    // devices run, which is every family but the host's shape computations.
    void cudaTableMatchesCapability() {
#if PLACER_HAVE_CUDA
        const std::vector<KernelFamily> registered = cuda::cudaKernelFamilies();
        const QString problems = test::capabilityDisagreements(registered, DeviceKind::Cuda);
        QVERIFY2(problems.isEmpty(), qPrintable(problems));
        for (int i = 0; i < kKernelFamilyCount; ++i) {
            const auto family = static_cast<KernelFamily>(i);
            if (family != KernelFamily::Shape && family != KernelFamily::None)
                QVERIFY2(std::find(registered.begin(), registered.end(), family) !=
                             registered.end(),
                         kernelFamilyName(family));
        }
#else
        QSKIP("built without a CUDA compiler: the CUDA backend is not part of this build");
#endif
    }

    // The random cases below exercise every op a device runs, on both backends.
    void opCasesCoverEveryOperator() {
        std::set<std::string> covered;
        for (const test::OpCase& c : test::randomOpCases(1))
            covered.insert(c.op);
        QStringList missing;
        for (const OpDef* op : OpRegistry::global().all()) {
            if (op->role != OpRole::Compute || op->hostOnly || covered.count(op->name))
                continue;
            missing << QString::fromStdString(op->name);
        }
        QVERIFY2(missing.isEmpty(), qPrintable("no random case for " + missing.join(", ")));
    }

    // The harness that checks the GPU kernels, run on a virtual CPU and on a test device whose
    // work runs asynchronously in lanes: its copies, preparation and kernels on a device worker
    // must reproduce runOp exactly. This keeps the cases and the harness honest without a GPU.
    void harnessMatchesCpu_data() {
        QTest::addColumn<bool>("asynchronous");
        QTest::newRow("virtual CPU") << false;
        QTest::newRow("asynchronous two-lane device") << true;
    }
    void harnessMatchesCpu() {
        QFETCH(bool, asynchronous);
        DeviceRegistry registry;
        test::LaneDevice lanes("gpu-like"); // work runs on lane threads, as on a GPU's streams
        Device* device = asynchronous ? static_cast<Device*>(&lanes) : registry.freshVCpu();
        QStringList failures;
        int checked = 0;
        for (unsigned seed = 1; seed <= kSeeds; ++seed) {
            for (const test::OpCase& c : test::randomOpCases(seed)) {
                const std::string mismatch = checkCase(*device, c);
                if (!mismatch.empty())
                    failures << QString("seed %1, %2: %3")
                                    .arg(seed)
                                    .arg(QString::fromStdString(c.name),
                                         QString::fromStdString(mismatch));
                ++checked;
            }
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
        QVERIFY(checked > 500);
        QCOMPARE(device->bytesInUse(), std::int64_t{0});
    }

    // Every CUDA kernel against the CPU kernels on random shapes, attributes and values.
    void everyKernelMatchesCpu_data() {
        QTest::addColumn<unsigned>("seed");
        QTest::addColumn<int>("index");
        if (!whyNoGpu(sharedRegistry()).isEmpty()) {
            QTest::newRow("every case") << 0u << -1; // one skip, not one per case
            return;
        }
        for (unsigned seed = 1; seed <= kSeeds; ++seed) {
            const auto cases = test::randomOpCases(seed);
            for (std::size_t i = 0; i < cases.size(); ++i)
                QTest::newRow(qPrintable(
                    QString("seed %1: %2").arg(seed).arg(QString::fromStdString(cases[i].name))))
                    << seed << static_cast<int>(i);
        }
    }
    void everyKernelMatchesCpu() {
        QFETCH(unsigned, seed);
        QFETCH(int, index);
        const QString why = whyNoGpu(sharedRegistry());
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = sharedRegistry().get("cuda:0").value();
        const test::OpCase c = test::randomOpCases(seed)[static_cast<std::size_t>(index)];
        if (!OpRegistry::global().find(c.op)->hasKernel(DeviceKind::Cuda))
            QSKIP(
                "the CUDA backend has no kernel for this operator by design (it runs on the host)");
        const auto isString = [](const test::Tensor& t) { return t.type.dtype == DType::String; };
        if (std::any_of(c.inputs.begin(), c.inputs.end(), isString) ||
            std::any_of(c.outputs.begin(), c.outputs.end(),
                        [](const TensorType& t) { return t.dtype == DType::String; }))
            QSKIP("strings have no GPU kernel by design (they are handles into the host's pool)");
        const std::string mismatch = checkCase(*gpu, c);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    // A gather index out of range on the GPU is an error naming the operator, not a crash or a
    // silent read out of bounds.
    void gpuGatherOutOfRangeIsAnError() {
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = registry.get("cuda:0").value();
        test::OpCase c;
        c.name = c.op = "Gather"; // ONNX Gather raises on a bad index; Relay's take clips
        c.attrs.set("axis", std::int64_t{0});
        c.inputs = {test::make({4}, DType::Float32, std::vector<float>{1, 2, 3, 4}),
                    test::make({2}, DType::Int64, std::vector<std::int64_t>{1, 9})};
        c.outputs = {{{2}, DType::Float32}};
        std::string error;
        const auto outputs = test::runOnDevice(*gpu, c, &error);
        QVERIFY(outputs.empty());
        QVERIFY2(error.find("out of range") != std::string::npos, error.c_str());
        // The device still works afterwards.
        c.inputs[1] = test::make({2}, DType::Int64, std::vector<std::int64_t>{1, 3});
        const std::string mismatch = checkCase(*gpu, c);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    // RNN, GRU and LSTM keep their per-thread state in scratch memory from the device's
    // allocator, not in local memory, which the driver would reserve for every thread the GPU can
    // hold (about 1.4 GB on an H100 when each thread kept five 256-float vectors): a
    // bidirectional LSTM with 300 units matches the CPU, and running it leaves the GPU's
    // allocatable memory where it was, give or take 64 MB.
    void recurrentStateLivesInScratch() {
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = registry.get("cuda:0").value();
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> value(-0.05f, 0.05f);
        auto floats = [&](test::Dims shape) {
            std::int64_t count = 1;
            for (std::int64_t d : shape)
                count *= d;
            std::vector<float> v(static_cast<std::size_t>(count));
            for (float& x : v)
                x = value(rng);
            return test::make(std::move(shape), DType::Float32, v);
        };
        const std::int64_t hidden = 300, batch = 3, steps = 4, input = 8;
        test::OpCase c;
        c.name = c.op = "LSTM";
        c.attrs.set("hidden_size", hidden);
        c.attrs.set("direction", std::string("bidirectional"));
        c.inputs = {floats({steps, batch, input}), floats({2, 4 * hidden, input}),
                    floats({2, 4 * hidden, hidden}), floats({2, 8 * hidden})};
        c.constant = {false, true, true, true};
        c.outputs = {{{steps, 2, batch, hidden}, DType::Float32},
                     {{2, batch, hidden}, DType::Float32},
                     {{2, batch, hidden}, DType::Float32}};
        c.atol = c.rtol = 1e-4;
        const std::int64_t before = gpu->allocatableBytes();
        const std::string mismatch = checkCase(*gpu, c);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
        const std::int64_t after = gpu->allocatableBytes();
        QVERIFY2(
            before - after < (std::int64_t{64} << 20),
            qPrintable(
                QString("the GPU's allocatable memory fell by %1 MB (the GPU's free memory counts: "
                        "another process allocating on it meanwhile fails this too)")
                    .arg((before - after) >> 20)));
    }

    // A 1x1 convolution with unit strides and no padding left runs as cuBLAS matrix products
    // where they are faster than cuDNN: both ways (forced with PLACER_CUDA_POINTWISE) match the
    // CPU, with and without a bias, in 1-D, 2-D and 3-D, with batches, and with uneven padding
    // (padded first); a strided one stays with cuDNN.
    void pointwiseConvolutionsMatchCpuBothWays_data() {
        QTest::addColumn<QString>("way");
        QTest::newRow("gemm") << "gemm";
        QTest::newRow("cudnn") << "cudnn";
        QTest::newRow("fastest") << "";
    }
    void pointwiseConvolutionsMatchCpuBothWays() {
#if PLACER_HAVE_CUDA
        QFETCH(QString, way);
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = registry.get("cuda:0").value();
        forceWay("PLACER_CUDA_POINTWISE", way);
        std::mt19937 rng(7);
        auto floats = [&](test::Dims shape) { return randomFloats(std::move(shape), rng); };
        struct Shape {
            test::Dims x, w, y;
            std::vector<std::int64_t> pads, strides;
            bool bias;
        };
        const std::vector<Shape> shapes = {
            {{2, 16, 5, 7}, {8, 16, 1, 1}, {2, 8, 5, 7}, {0, 0, 0, 0}, {1, 1}, true},
            {{1, 64, 3, 3}, {40, 64, 1, 1}, {1, 40, 3, 3}, {0, 0, 0, 0}, {1, 1}, false},
            {{3, 12, 9}, {5, 12, 1}, {3, 5, 9}, {0, 0}, {1}, true},
            {{2, 6, 3, 4, 5},
             {7, 6, 1, 1, 1},
             {2, 7, 3, 4, 5},
             {0, 0, 0, 0, 0, 0},
             {1, 1, 1},
             true},
            {{1, 3, 4, 4}, {5, 3, 1, 1}, {1, 5, 5, 5}, {1, 0, 0, 1}, {1, 1}, true},
            {{2, 8, 6, 6}, {4, 8, 1, 1}, {2, 4, 3, 3}, {0, 0, 0, 0}, {2, 2}, true},
        };
        for (const Shape& shape : shapes) {
            test::OpCase c;
            c.op = "Conv";
            c.name = "pointwise";
            c.attrs.set("pads", shape.pads);
            c.attrs.set("strides", shape.strides);
            c.inputs = {floats(shape.x), floats(shape.w)};
            c.constant = {false, true};
            if (shape.bias) {
                c.inputs.push_back(floats({shape.w[0]}));
                c.constant.push_back(true);
            }
            c.outputs = {{ shape.y, DType::Float32 }};
            c.atol = c.rtol = 1e-4;
            const std::string mismatch = checkCase(*gpu, c);
            QVERIFY2(mismatch.empty(), mismatch.c_str());
            // Which way it ran.
            const std::string implementation = implementationOn(*gpu, c);
            const bool strided = shape.strides[0] != 1;
            if (way == "gemm" && !strided)
                QVERIFY2(implementation == "cuda:cublas:pointwise-convolution",
                         implementation.c_str());
            else if (way == "cudnn" || strided)
                QVERIFY2(implementation.rfind("cuda:cudnn:convolution", 0) == 0,
                         implementation.c_str());
        }
        qunsetenv("PLACER_CUDA_POINTWISE");
#else
        QSKIP("built without CUDA");
#endif
    }

    // Convolutions through cuDNN's graph engines (backends/cuda/ConvEngines.h): several of the
    // candidates the heuristics offer for each shape, the fastest engine, the legacy algorithms
    // and the fastest of all, each against the CPU.
    void convolutionEnginesMatchCpu_data() {
        QTest::addColumn<QString>("way");
        for (int pick = 0; pick < 6; ++pick)
            QTest::newRow(qPrintable(QString("engine %1").arg(pick)))
                << QString("engine:%1").arg(pick);
        QTest::newRow("engines") << "engines";
        QTest::newRow("legacy") << "legacy";
        QTest::newRow("fastest") << "";
    }
    void convolutionEnginesMatchCpu() {
#if PLACER_HAVE_CUDA
        QFETCH(QString, way);
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = registry.get("cuda:0").value();
        forceWay("PLACER_CUDA_CONV", way);
        std::mt19937 rng(11);
        auto floats = [&](test::Dims shape) { return randomFloats(std::move(shape), rng); };
        struct Shape {
            test::Dims x, w, y;
            std::vector<std::int64_t> pads, strides, dilations;
            std::int64_t groups;
        };
        const std::vector<Shape> shapes = {
            // 3x3, padded, two images
            {{2, 8, 9, 9}, {16, 8, 3, 3}, {2, 16, 9, 9}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
            // 7x7 stride 2, as a network's stem
            {{1, 3, 32, 32}, {8, 3, 7, 7}, {1, 8, 16, 16}, {3, 3, 3, 3}, {2, 2}, {1, 1}, 1},
            // depthwise, and grouped
            {{1, 12, 10, 10}, {12, 1, 3, 3}, {1, 12, 10, 10}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 12},
            {{2, 8, 6, 6}, {8, 2, 3, 3}, {2, 8, 4, 4}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 4},
            // dilated; uneven padding; a pointwise one
            {{1, 4, 12, 12}, {6, 4, 3, 3}, {1, 6, 8, 8}, {0, 0, 0, 0}, {1, 1}, {2, 2}, 1},
            {{1, 5, 7, 8}, {4, 5, 3, 3}, {1, 4, 6, 7}, {0, 1, 1, 0}, {1, 1}, {1, 1}, 1},
            {{2, 16, 5, 7}, {8, 16, 1, 1}, {2, 8, 5, 7}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 1},
            // 1-D and 3-D
            {{3, 6, 20}, {4, 6, 5}, {3, 4, 16}, {0, 0}, {1}, {1}, 1},
            {{1, 3, 5, 6, 7},
             {4, 3, 3, 3, 3},
             {1, 4, 5, 6, 7},
             {1, 1, 1, 1, 1, 1},
             {1, 1, 1},
             {1, 1, 1},
             1},
        };
        int viaEngines = 0;
        for (const Shape& shape : shapes) {
            test::OpCase c;
            c.op = "Conv";
            c.name = "conv";
            c.attrs.set("pads", shape.pads);
            c.attrs.set("strides", shape.strides);
            c.attrs.set("dilations", shape.dilations);
            c.attrs.set("group", shape.groups);
            c.inputs = {floats(shape.x), floats(shape.w), floats({shape.w[0]})};
            c.constant = {false, true, true};
            c.outputs = {{ shape.y, DType::Float32 }};
            c.atol = c.rtol = 1e-4;
            const std::string mismatch = checkCase(*gpu, c);
            QVERIFY2(mismatch.empty(), (way.toStdString() + ": " + mismatch).c_str());
            const std::string implementation = implementationOn(*gpu, c);
            if (way == "legacy")
                QVERIFY2(implementation.rfind("cuda:cudnn:convolution:algo", 0) == 0 ||
                             implementation == "cuda:cublas:pointwise-convolution",
                         implementation.c_str());
            viaEngines += implementation.rfind("cuda:cudnn:convolution:e", 0) == 0;
        }
        // cuDNN's graph offers engines for these shapes: a forced way takes one nearly always.
        if (way.startsWith("engine"))
            QVERIFY2(
                viaEngines >= static_cast<int>(shapes.size()) - 2,
                qPrintable(
                    QString("%1 of %2 ran through an engine").arg(viaEngines).arg(shapes.size())));
        qunsetenv("PLACER_CUDA_CONV");
#else
        QSKIP("built without CUDA");
#endif
    }

    // Reductions over long contiguous rows (a global pool over a large plane, a mean over the
    // last axis) run a block a row; the others a warp a row. Both match the CPU.
    void longRowReductionsMatchCpu() {
#if PLACER_HAVE_CUDA
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        Device* gpu = registry.get("cuda:0").value();
        std::mt19937 rng(9);
        using test::Dims;
        struct Row {
            const char* op;
            Dims x, y;
            Attrs attrs;
            std::vector<std::int64_t> axesInput; ///< ReduceSum's axes (opset 13)
            const char* implementation;
        };
        auto attrs = [](std::initializer_list<std::pair<const char*, AttrValue>> list) {
            Attrs a;
            for (const auto& [key, value] : list)
                a.set(key, value);
            return a;
        };
        const std::vector<Row> rows = {
            {"GlobalAveragePool", {2, 3, 40, 40}, {2, 3, 1, 1}, {}, {}, "cuda:global_avg_pool"},
            {"GlobalMaxPool", {1, 4, 33, 31}, {1, 4, 1, 1}, {}, {}, "cuda:global_max_pool"},
            {"GlobalAveragePool", {1, 5, 7, 7}, {1, 5, 1, 1}, {}, {}, "cuda:avg_pool"},
            {"AveragePool",
             {1, 2, 20, 20},
             {1, 2, 1, 1},
             attrs(
                 {{ "kernel_shape",
                    Dims {
                        20,
                        20
                    } }}),
             {},
             "cuda:global_avg_pool"},
            {"ReduceMean",
             {5, 1000},
             {5, 1},
             attrs({{"axes",
                     Dims {
                         -1
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceMax",
             {2, 3, 700},
             {2, 3},
             attrs({{"axes",
                     Dims {
                         2
                     }},
                    { "keepdims",
                      std::int64_t {
                          0
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceMin",
             {3, 300},
             {3, 1},
             attrs({{"axes",
                     Dims {
                         1
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceL2",
             {4, 512},
             {4, 1},
             attrs({{"axes",
                     Dims {
                         1
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceL1",
             {2, 4096 * 3 + 5},
             {2, 1},
             attrs({{"axes",
                     Dims {
                         1
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceSumSquare",
             {3, 2, 400},
             {3, 2, 1},
             attrs({{"axes",
                     Dims {
                         2
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce_rows"},
            {"ReduceSum",
             {3, 20, 30},
             {3},
             attrs(
                 {{ "keepdims",
                    std::int64_t {
                        0
                    } }}),
             {1, 2},
             "cuda:reduce_rows"},
            {"ReduceSum",
             {600, 3},
             {1, 3},
             attrs(
                 {{ "keepdims",
                    std::int64_t {
                        1
                    } }}),
             {0},
             "cuda:reduce"},
            {"ReduceMean",
             {4, 100},
             {4, 1},
             attrs({{"axes",
                     Dims {
                         1
                     }},
                    { "keepdims",
                      std::int64_t {
                          1
                      } }}),
             {},
             "cuda:reduce"},
        };
        for (const Row& row : rows) {
            test::OpCase c;
            c.op = row.op;
            c.name = row.op;
            c.attrs = row.attrs;
            c.inputs = {randomFloats(row.x, rng)};
            c.constant = {false};
            if (!row.axesInput.empty()) {
                c.inputs.push_back(test::detail::CaseMaker::int64s(
                    {static_cast<std::int64_t>(row.axesInput.size())}, row.axesInput));
                c.constant.push_back(true);
            }
            c.outputs = {{ row.y, DType::Float32 }};
            c.atol = 1e-4;
            c.rtol = 1e-4;
            const std::string mismatch = checkCase(*gpu, c);
            QVERIFY2(mismatch.empty(), (std::string(row.op) + ": " + mismatch).c_str());
            const std::string implementation = implementationOn(*gpu, c);
            QVERIFY2(implementation == row.implementation,
                     (std::string(row.op) + " ran as " + implementation).c_str());
        }
#else
        QSKIP("built without CUDA");
#endif
    }

    // The check before a run counts a convolution's workspace budget on a GPU whose workspace
    // has not grown to it (backends/cuda/CudaDevice.h kernelMemoryBytes), and nothing for other
    // ops.
    void convolutionWorkspaceCountsInTheCheck() {
#if PLACER_HAVE_CUDA
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        auto* gpu = dynamic_cast<cuda::CudaDevice*>(registry.get("cuda:0").value());
        QVERIFY(gpu);
        Node conv, relu;
        conv.name = "conv";
        conv.op = OpRegistry::global().find("Conv");
        relu.name = "relu";
        relu.op = OpRegistry::global().find("Relu");
        KernelSpec a, b;
        a.node = &conv;
        b.node = &relu;
        QCOMPARE(gpu->kernelMemoryBytes({b}), std::int64_t{0});
        const std::int64_t expected =
            gpu->convWorkspaceBytes() < cuda::CudaDevice::kConvWorkspaceBudget
                ? cuda::CudaDevice::kConvWorkspaceBudget
                : 0;
        QCOMPARE(gpu->kernelMemoryBytes({a, b}), expected);
#else
        QSKIP("built without CUDA");
#endif
    }

    void tinyModelsOnGpuMatchCpu_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("split");
        for (const char* model : {"tiny_resnet", "tiny_mobilenet", "tiny_inception", "tiny_encoder",
                                  "tiny_recurrent"}) {
            QTest::newRow(qPrintable(QString(model) + " on cuda:0")) << model << false;
            QTest::newRow(qPrintable(QString(model) + " split cpu/cuda:0")) << model << true;
        }
    }
    void tinyModelsOnGpuMatchCpu() {
        QFETCH(QString, model);
        QFETCH(bool, split);
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (!why.isEmpty())
            QSKIP(qPrintable("no GPU: " + why));
        auto loaded = loadModelFile(kModels + model.toStdString() + ".onnx", GraphFormat::Auto,
                                    DeviceSet::parse("cpu:cpu,gpu:cuda").take());
        QVERIFY(loaded.ok());
        LoadedModel m = loaded.take();
        PlanOptions options;
        options.fallbackDevice = "gpu";
        if (split) {
            std::mt19937 rng(3);
            for (std::uint32_t i = 0; i < m.graph.size(); ++i) {
                Node& node = m.graph.node(NodeId(i));
                if (!node.isConstant() && rng() % 3 == 0)
                    node.pin = Pin{PinKind::Plain, DeviceId(rng() % 2), "test"};
            }
        }
        const Plan plan = planDevices(m.graph, m.devices, options);
        std::vector<HostTensor> inputs;
        auto program = lowerToBytecode(m.graph, m.devices, plan);
        QVERIFY(program.ok());
        for (NodeId input : program.value().inputs)
            inputs.push_back(randomTensor(m.graph.node(input).outputs[0], 11));
        Device* gpu = registry.get("cuda:0").value();
        const auto actual = run(m, plan, {registry.get("cpu").value(), gpu}, inputs);
        const auto expected =
            run(m, plan, {registry.get("cpu").value(), registry.freshVCpu()}, inputs);
        const ReferenceCheck check = compareOutputs(actual, expected, 1e-4, 1e-3);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "tst_cuda.moc"
