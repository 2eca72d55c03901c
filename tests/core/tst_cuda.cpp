// The CUDA backend end to end. Without a GPU (or without a CUDA build) the registry must say why
// and cuda devices must run on virtual CPUs; with one, the tiny models run on cuda:0 alone and
// split with the host, and match the single-device CPU reference.
#include "io/ModelLoader.h"
#include "plan/Planner.h"
#include "runtime/Bytecode.h"
#include "runtime/Executor.h"
#include "runtime/Run.h"

#include <QtTest>

#include <random>

using namespace placer;

namespace {

const std::string kModels = std::string(PLACER_SOURCE_DIR) + "/resources/models/";

/// Why there is no usable GPU here, or empty when cuda:0 can be used.
QString whyNoGpu(DeviceRegistry& registry) {
    for (const PhysicalDeviceInfo& info : registry.list()) {
        if (info.kind == PhysicalKind::Cuda && !info.available)
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

} // namespace

class TestCuda : public QObject {
    Q_OBJECT

private slots:
    void registrySaysWhyThereIsNoGpu() {
        DeviceRegistry registry;
        const QString why = whyNoGpu(registry);
        if (why.isEmpty())
            QSKIP("this machine has a usable GPU");
        QVERIFY2(why.startsWith("absent") || why.contains("unusable"), qPrintable(why));
        QVERIFY(!registry.hasKind(PhysicalKind::Cuda));
        auto device = registry.get("cuda:0");
        QVERIFY(!device.ok());
        QVERIFY2(device.error().message.find("no CUDA") != std::string::npos,
                 device.error().message.c_str());
        // A cuda virtual device runs on a virtual CPU instead, with a warning.
        std::string error;
        const DeviceSet devices = *DeviceSet::parse("cpu:cpu,gpu:cuda", &error);
        std::vector<std::string> warnings;
        auto mapping = mapDevices(devices, {}, registry, &warnings);
        QVERIFY(mapping.ok());
        QCOMPARE(mapping.value()[1]->kind(), PhysicalKind::VCpu);
        QVERIFY(!warnings.empty());
    }

    void tinyModelsOnGpuMatchCpu_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("split");
        for (const char* model :
             {"tiny_resnet", "tiny_mobilenet", "tiny_inception", "tiny_encoder"}) {
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
        std::string error;
        auto loaded = loadModelFile(kModels + model.toStdString() + ".onnx", GraphFormat::Auto,
                                    *DeviceSet::parse("cpu:cpu,gpu:cuda", &error));
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
