// float16 and bfloat16 models on the CPU (backends/cpu/KernelUtil.h viaFloat32): a small
// convolutional network and a small transformer block, exported in float32 and converted to each
// 16-bit type (scripts/make_half_models.py), plan and run on one vcpu and split over two, and give
// the float32 model's output within the type's rounding; every op computes in float32 (the
// kernels name it), none in double.
#include "io/Npy.h"
#include "kernels/KernelSupport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <string>

using namespace placer;

namespace {

std::string modelPath(const std::string& name) {
    return std::string(PLACER_SOURCE_DIR) + "/tests/models/" + name;
}

HostTensor npy(const std::string& name) {
    auto tensor = readNpy(modelPath(name));
    if (!tensor)
        qFatal("%s", tensor.error().toString().c_str());
    return tensor.take();
}

/// A float32 tensor's values in `dtype` (rounded to nearest even).
HostTensor narrowed(const HostTensor& wide, DType dtype) {
    HostTensor out = HostTensor::zeros(TensorType{wide.type.shape, dtype});
    for (std::int64_t i = 0; i < wide.type.elementCount(); ++i)
        storeFromDouble(reinterpret_cast<std::byte*>(out.data.data()), dtype, i,
                        wide.as<float>()[i]);
    return out;
}

} // namespace

class TestHalfPrecision : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void modelsGiveTheirFloat32Outputs_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("devices");
        for (const char* model : {"half_cnn", "half_transformer"}) {
            for (const auto& [suffix, dtype] :
                 {std::pair{"f16", DType::Float16}, std::pair{"bf16", DType::BFloat16}}) {
                for (const char* devices : {"a:vcpu", "a:vcpu,b:vcpu"})
                    QTest::newRow(qPrintable(QString("%1.%2 on %3").arg(model, suffix, devices)))
                        << QString("%1.%2").arg(model, suffix) << static_cast<int>(dtype)
                        << QString(devices);
            }
        }
    }
    void modelsGiveTheirFloat32Outputs() {
        QFETCH(QString, model);
        QFETCH(int, dtype);
        QFETCH(QString, devices);
        const auto type = static_cast<DType>(dtype);
        const std::string base = model.section('.', 0, 0).toStdString();
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = devices.toStdString();
        if (devices.contains(',')) // the classifier, or the MLP, on b: a copy of 16-bit values
            request.pins.push_back(PinRequest{"re:^/(fc|up|down|norm2)/", "b", false});
        auto opened = session.open(ModelSource{modelPath(model.toStdString() + ".onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        for (const Conflict& conflict : opened.value().plan.conflicts)
            QVERIFY2(conflict.kind != ConflictKind::Unsupported, conflict.message.c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        RunRequest run;
        run.inputs.emplace_back("x", narrowed(npy(base + ".x.npy"), type));
        run.warmup = 0;
        run.iterations = 1;
        auto ran = session.run(planned, run);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const RunOutcome& outcome = *ran.value();
        QCOMPARE(outcome.result.outputs.size(), std::size_t{1});
        const HostTensor& got = outcome.result.outputs[0];
        QCOMPARE(got.type.dtype, type);
        const HostTensor expected = npy(base + ".y.npy");
        QCOMPARE(got.type.elementCount(), expected.type.elementCount());
        double largest = 0, apart = 0;
        for (std::int64_t i = 0; i < got.type.elementCount(); ++i) {
            const double want = expected.as<float>()[i];
            largest = std::max(largest, std::fabs(want));
            apart = std::max(
                apart, std::fabs(loadAsDouble(reinterpret_cast<const std::byte*>(got.data.data()),
                                              type, i) -
                                 want));
        }
        qInfo("%s: %.2e apart, largest %.3f", qPrintable(model), apart, largest);
        // The type's rounding, compounded over the layers, of the largest output.
        const double tolerance = type == DType::Float16 ? 3e-3 : 2.5e-2;
        QVERIFY2(apart <= tolerance * largest,
                 qPrintable(QString("%1 apart, largest %2").arg(apart).arg(largest)));
        // Every op that computes ran its float32 kernel, none the double-precision functors.
        for (std::size_t k = 0; k < outcome.executor->program().code.size(); ++k) {
            const std::string implementation = outcome.executor->implementation(k);
            QVERIFY2(implementation.find("plain:matmul") == std::string::npos &&
                         implementation.find("plain:conv") == std::string::npos,
                     implementation.c_str());
        }
    }

    /// The float32 models with a precision policy on the second device (dtype=): the later half
    /// computes in 16 bits there. The plan lists its casts (the value crossing onto b, its
    /// constants converted once, the result given back in float32), the run inserts exactly
    /// those, the output is float32, and the reference check holds it to the type's tolerance,
    /// which it states; it differs from the float32 run, so the work was done in 16 bits.
    void precisionPolicies_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("dtype");
        for (const char* model : {"half_cnn", "half_transformer"})
            for (const char* dtype : {"bf16", "f16"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(model, dtype)))
                    << QString(model) << QString(dtype);
    }
    void precisionPolicies() {
        QFETCH(QString, model);
        QFETCH(QString, dtype);
        const DType type = dtype == "bf16" ? DType::BFloat16 : DType::Float16;
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu:dtype=" + dtype.toStdString();
        request.pins.push_back(PinRequest{"re:^/(fc|up|down|norm2)/", "b", false});
        auto opened = session.open(ModelSource{modelPath(model.toStdString() + ".onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const Plan& plan = opened.value().plan;
        const Graph& graph = opened.value().model.graph;
        QVERIFY(plan.conflicts.empty());
        const DeviceId b = *opened.value().model.devices.find("b");
        int into = 0, constants = 0, results = 0;
        for (const CastPlan& cast : plan.casts) {
            QCOMPARE(cast.device, b); // the result is made on b, so given back there too
            if (cast.toOutput) {
                ++results;
                QCOMPARE(cast.from, type);
                QCOMPARE(cast.to, DType::Float32);
                continue;
            }
            QCOMPARE(cast.to, type);
            QCOMPARE(cast.bytes, graph.type(cast.value).elementCount() * 2);
            for (NodeId consumer : cast.consumers)
                QCOMPARE(plan.devices[consumer.index], b);
            (cast.atLoad ? constants : into) += 1;
        }
        QVERIFY(into >= 1);
        QVERIFY(constants >= 2);
        QCOMPARE(results, 1);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        RunRequest run;
        run.inputs.emplace_back("x", npy(model.toStdString() + ".x.npy"));
        run.warmup = 0;
        run.iterations = 1;
        auto ran = session.run(planned, run);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const RunOutcome& outcome = *ran.value();
        QCOMPARE(outcome.result.outputs.at(0).type.dtype, DType::Float32);
        QVERIFY(outcome.reference);
        const ReferenceCheck& check = *outcome.reference;
        QVERIFY2(check.ok, check.mismatch.c_str());
        QCOMPARE(check.toleranceOf, std::string(dtypeName(type)) + "'s");
        QVERIFY(check.rtol > RunRequest{}.rtol);
        QVERIFY2(check.maxAbsDiff > 0, "the 16-bit half computed exactly the float32 result");
        qInfo("%s in %s on b: max abs diff %.3g within atol %.3g, rtol %.3g", qPrintable(model),
              qPrintable(dtype), check.maxAbsDiff, check.atol, check.rtol);
        // The casts that ran are the plan's: one Cast per cast that is not a constant's.
        int ranCasts = 0, converted = 0;
        for (const Node& node : outcome.graph().nodes()) {
            ranCasts += node.op->name == "Cast" && node.name.find("/to_") != std::string::npos;
            converted += node.isConstant() && node.outputs[0].dtype == type;
        }
        QCOMPARE(ranCasts, into + results);
        QCOMPARE(converted, constants);
        for (const Node& node : outcome.graph().nodes()) {
            if (node.role() == OpRole::Compute && node.pin.device == b && node.op->name != "Cast")
                for (const TensorType& output : node.outputs)
                    QVERIFY2(output.dtype != DType::Float32, node.name.c_str());
        }
    }

    void aPolicyIsReadAndWritten() {
        auto devices = DeviceSet::parse("a:vcpu,g:cuda:dtype=bfloat16:mem=8GiB");
        QVERIFY(devices);
        QCOMPARE(devices.value()[DeviceId(1)].computeType, DType::BFloat16);
        QCOMPARE(devices.value()[DeviceId(0)].computeType, DType::Float32);
        const auto bad = DeviceSet::parse("a:vcpu:dtype=int8");
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.find("dtype 'int8' is not a compute type") !=
                     std::string::npos,
                 bad.error().message.c_str());
        // A plan's devices written as arguments keep the policy.
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu:dtype=f16";
        auto opened = session.open(ModelSource{modelPath("half_cnn.onnx")}, request);
        QVERIFY(opened);
        const std::vector<std::string> words = planArguments(
            opened.value().model.graph, opened.value().model.devices, opened.value().options, {});
        const auto at = std::find(words.begin(), words.end(), "--devices");
        QVERIFY(at != words.end() && at + 1 != words.end());
        QVERIFY2(at[1].find("b:vcpu:dtype=f16") != std::string::npos, at[1].c_str());
    }
};

QTEST_GUILESS_MAIN(TestHalfPrecision)
#include "tst_halfprecision.moc"
