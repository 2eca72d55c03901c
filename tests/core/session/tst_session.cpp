// The session's runs on data whose shapes the model leaves open (session/Session.h): one plan
// run at several shapes in one session, inputs that set shapes given at run time, data that
// cannot fit the model refused with a sentence, and bfloat16 given as uint16 bit patterns.
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "report/RunReport.h"
#include "session/Session.h"
#include "vm/ReferenceRun.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <set>

#include <cmath>
#include <cstring>
#include <random>
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

HostTensor int64s(std::vector<std::int64_t> values) {
    HostTensor tensor =
        HostTensor::zeros({{static_cast<std::int64_t>(values.size())}, DType::Int64});
    std::memcpy(tensor.data.data(), values.data(), values.size() * sizeof(std::int64_t));
    return tensor;
}

RunRequest oneRun(std::vector<std::pair<std::string, HostTensor>> inputs) {
    RunRequest request;
    request.inputs = std::move(inputs);
    request.warmup = 0;
    request.iterations = 1;
    return request;
}

/// Two vcpus, a and b: the ops the rules name on a, every other op on b (the fallback).
PlanRequest onTwoVcpus(std::vector<std::string> onA, const std::string& devices = "a:vcpu,b:vcpu") {
    PlanRequest request;
    request.devices = devices;
    for (std::string& op : onA)
        request.options.rules.push_back(OpRule{std::move(op), "a"});
    request.options.fallbackDevice = "b";
    return request;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
    for (const std::string& line : lines) {
        if (line.find(text) != std::string::npos)
            return true;
    }
    return false;
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_session;

private slots:
    void init() {
        m_session =
            std::make_unique<Session>(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
    }

    /// A model with symbolic batch and seq is opened once, without data, and run at three
    /// shapes: the plan is made once, and instantiated at each shape's sizes (its memory planned
    /// for them) without reading the model again; each run matches numpy, and a shape run again
    /// finds what was made for it.
    void oneModelRunsAtSeveralShapes() {
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        request.options.rules = {{"Softmax", "b"}};
        request.options.fallbackDevice = "a";
        auto opened = m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(mentions(opened.value().warnings, "taken as 1"));
        QCOMPARE(opened.value().model.graph.openInputs.size(), std::size_t{1});
        QCOMPARE(opened.value().model.graph.openInputs[0].declaredDims,
                 (std::vector<std::string>{"batch", "seq", "16"}));
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        std::int64_t lastPeak = 0;
        for (const char* shape : {"1x4", "2x16", "3x33", "2x16"}) {
            const std::string stem = std::string("dyn_encoder.") + shape;
            auto ran = m_session->run(planned, oneRun({{"x", npy(stem + ".input.npy")}}));
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            const RunOutcome& outcome = *ran.value();
            QVERIFY2(mentions(outcome.warnings, "the plan made at batch=1, seq=1 runs at"), shape);
            QVERIFY(outcome.reference && outcome.reference->ok);
            const ReferenceCheck check =
                compareOutputs(outcome.result.outputs, {npy(stem + ".expected.npy")}, 1e-4, 1e-3);
            QVERIFY2(check.ok, (std::string(shape) + ": " + check.mismatch).c_str());
            // The placement is the plan's; the memory is planned at the data's sizes.
            QCOMPARE(outcome.userPlan.devices, planned->plan.devices);
            std::int64_t peak = 0;
            for (const DeviceMemory& memory : outcome.userPlan.memory.devices)
                peak += memory.peakBytes;
            QVERIFY2(peak > lastPeak || std::string(shape) == "2x16", shape);
            lastPeak = peak;
        }
        QVERIFY(mentions(m_session->run(planned, oneRun({{"x", npy("dyn_encoder.3x33.input.npy")}}))
                             .value()
                             ->warnings,
                         "batch=3, seq=33"));
        // The second 2x16 run found what the first made.
        auto again = m_session->run(planned, oneRun({{"x", npy("dyn_encoder.2x16.input.npy")}}));
        QVERIFY(again);
        QVERIFY(mentions(again.value()->warnings, "made earlier in this session"));
        // Read and planned once; instantiated once per shape.
        QCOMPARE(m_session->counters().modelsRead, 1);
        QCOMPARE(m_session->counters().plansMade, 1);
        QCOMPARE(m_session->counters().instantiated, 3);
    }

    /// A long session (the GUI, Python, a fuzzer) runs plans thousands of times. Each virtual
    /// vcpu runs on a vcpu of its own, with a worker thread and a memory arena: a run takes one
    /// a finished run gave back, so the session keeps as many as it runs at once, not one per
    /// run ever made (a session of 1,400 runs held 600 MB and 2,800 threads before).
    void finishedRunsGiveTheirVcpusBack() {
        auto opened =
            m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, onTwoVcpus({"MatMul"}));
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const auto input = oneRun({{"x", npy("dyn_encoder.2x16.input.npy")}});
        std::vector<std::string> first;
        {
            auto ran = m_session->run(planned, input);
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            first = ran.value()->physical;
            QCOMPARE(first.size(), std::size_t{2});
            QVERIFY(first[0] != first[1]); // one each
            // While a run is kept, the next one gets vcpus of its own.
            auto second = m_session->run(planned, input);
            QVERIFY(second);
            for (const std::string& name : second.value()->physical)
                QVERIFY(std::find(first.begin(), first.end(), name) == first.end());
        }
        // Both gone: a hundred runs, one at a time, take the first run's vcpus again.
        std::set<std::string> used;
        for (int i = 0; i < 100; ++i) {
            auto ran = m_session->run(planned, input);
            QVERIFY(ran);
            QVERIFY(ran.value()->reference && ran.value()->reference->ok);
            used.insert(ran.value()->physical.begin(), ran.value()->physical.end());
        }
        QCOMPARE(used, std::set<std::string>(first.begin(), first.end()));
        // A run that asks for a vcpu by name shares it with no default of the same mapping.
        RunRequest mapped = input;
        mapped.maps = {{"a", first[1]}};
        auto ran = m_session->run(planned, mapped);
        QVERIFY(ran);
        QCOMPARE(ran.value()->physical[0], first[1]);
        QVERIFY(ran.value()->physical[1] != first[1]);
    }

    /// A call in a loop (Python's plan.run, a notebook's step) runs the plan again: the
    /// program the first run lowered and loaded runs again, with nothing planned, lowered or
    /// loaded, while what an earlier outcome reads of it stays as it was. Another mapping,
    /// another plan, data of other sizes or a reference run load afresh.
    void aPlanRunAgainRunsTheProgramItLoaded() {
        auto opened =
            m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, onTwoVcpus({"MatMul"}));
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        RunRequest request = oneRun({{"x", npy("dyn_encoder.2x16.input.npy")}});
        request.reference = false;
        auto first = m_session->run(planned, request);
        QVERIFY2(first, first ? "" : first.error().toString().c_str());
        const std::string firstReport = runReportJson(*first.value()).dump();
        const std::vector<double> firstLatency = first.value()->result.latencyMicros;
        const SessionCounters before = m_session->counters();
        QCOMPARE(before.programsLoaded, 1);
        QCOMPARE(before.programsReused, 0);
        for (int i = 0; i < 3; ++i) {
            auto again = m_session->run(planned, request);
            QVERIFY2(again, again ? "" : again.error().toString().c_str());
            QCOMPARE(again.value()->executor.get(), first.value()->executor.get());
            QCOMPARE(again.value()->physical, first.value()->physical);
            const ReferenceCheck same =
                compareOutputs(again.value()->result.outputs, first.value()->result.outputs, 0, 0);
            QVERIFY2(same.ok, same.mismatch.c_str());
            // What the mapping and the passes said is said again (the data's plan is found
            // where the first run made it).
            QCOMPARE(again.value()->warnings.size(), first.value()->warnings.size());
            QVERIFY(mentions(again.value()->warnings, "made earlier in this session"));
        }
        QCOMPARE(m_session->counters().programsLoaded, 1);
        QCOMPARE(m_session->counters().programsReused, 3);
        QCOMPARE(m_session->counters().instantiated, before.instantiated);
        QCOMPARE(m_session->counters().modelsRead, before.modelsRead);
        // The first outcome reads as it did.
        QCOMPARE(first.value()->result.latencyMicros, firstLatency);
        QCOMPARE(runReportJson(*first.value()).dump(), firstReport);
        const auto loadsAfter = [&](const RunRequest& other) {
            const int loaded = m_session->counters().programsLoaded;
            auto ran = m_session->run(planned, other);
            if (!ran)
                qFatal("%s", ran.error().toString().c_str());
            return m_session->counters().programsLoaded - loaded;
        };
        // Another mapping loads; running the first mapping then loads it again.
        RunRequest swapped = request;
        swapped.maps = {{"a", first.value()->physical[1]}, {"b", first.value()->physical[0]}};
        QCOMPARE(loadsAfter(swapped), 1);
        QCOMPARE(loadsAfter(swapped), 0);
        QCOMPARE(loadsAfter(request), 1);
        // Unoptimised, data of other sizes, a reference run: each loads afresh.
        RunRequest plain = request;
        plain.optimize = false;
        QCOMPARE(loadsAfter(plain), 1);
        RunRequest longer = oneRun({{"x", npy("dyn_encoder.3x33.input.npy")}});
        longer.reference = false;
        QCOMPARE(loadsAfter(longer), 1);
        QCOMPARE(loadsAfter(longer), 0);
        RunRequest checked = longer;
        checked.reference = true;
        QCOMPARE(loadsAfter(checked), 1);
        // The same plan as another object (the GUI's document makes one per edit) loads.
        const auto copy = std::make_shared<const PlannedModel>(*planned);
        const int loaded = m_session->counters().programsLoaded;
        auto ran = m_session->run(copy, request);
        QVERIFY(ran);
        QCOMPARE(m_session->counters().programsLoaded, loaded + 1);
        // The first outcome outlives the session's program: it holds what it reads.
        QCOMPARE(runReportJson(*first.value()).dump(), firstReport);
    }

    /// A batch or sequence of 0 (found by the fuzzer: oneDNN divided by the empty dimension
    /// while it planned the matrix products, and the process died). A batch of 0 runs to an
    /// empty output. A sequence of 0 is refused with a sentence: the model's flatten target
    /// [batch*seq, 16] is [0, 16] there, whose 0 ONNX's Reshape reads as "the input's
    /// dimension", 1, so the model itself asks for 16 elements out of none.
    void emptyDimensionsRunOrSayWhy() {
        PlanRequest request;
        request.devices = "a:vcpu";
        auto opened = m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, request);
        QVERIFY(opened);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const std::vector<std::int64_t> empty{0, 4, 16};
        auto ran =
            m_session->run(planned, oneRun({{"x", HostTensor::zeros({empty, DType::Float32})}}));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QCOMPARE(ran.value()->result.outputs.at(0).type.shape, empty);
        auto refused = m_session->run(
            planned, oneRun({{"x", HostTensor::zeros({{1, 0, 16}, DType::Float32})}}));
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("Reshape node 'r2'") != std::string::npos,
                 refused.error().message.c_str());
    }

    /// Data planned for at open (placer run --input) runs without planning again.
    void dataGivenAtOpenIsPlannedFor() {
        ModelSource source{modelPath("dyn_encoder.onnx")};
        source.runInputs["x"] = npy("dyn_encoder.3x33.input.npy");
        auto opened = m_session->open(source, PlanRequest{});
        QVERIFY(opened);
        QVERIFY(!mentions(opened.value().warnings, "taken as 1"));
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        auto ran = m_session->run(planned, oneRun({{"x", npy("dyn_encoder.3x33.input.npy")}}));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QVERIFY(!mentions(ran.value()->warnings, "planned for the data's shapes"));
        QVERIFY(compareOutputs(ran.value()->result.outputs, {npy("dyn_encoder.3x33.expected.npy")},
                               1e-4, 1e-3)
                    .ok);
    }

    /// Slice's bounds and Pad's pads are graph inputs: each run is planned for their values.
    void shapeSettingInputsAtRunTime() {
        auto opened =
            m_session->open(ModelSource{modelPath("runtime_slice_pad.onnx")}, PlanRequest{});
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto& open = opened.value().model.graph.openInputs;
        int setting = 0;
        for (const OpenInput& input : open)
            setting += input.setsShapes ? 1 : 0;
        QCOMPARE(setting, 3);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const HostTensor x = npy("runtime_slice_pad.x.npy");
        auto ran = m_session->run(planned, oneRun({{"x", x},
                                                   {"starts", npy("runtime_slice_pad.starts.npy")},
                                                   {"ends", npy("runtime_slice_pad.ends.npy")},
                                                   {"pads", npy("runtime_slice_pad.pads.npy")}}));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QVERIFY(compareOutputs(ran.value()->result.outputs, {npy("runtime_slice_pad.expected.npy")},
                               0, 0)
                    .ok);
        // Other bounds: columns 5..9 of x, padded by one row after.
        auto other = m_session->run(planned, oneRun({{"x", x},
                                                     {"starts", int64s({5})},
                                                     {"ends", int64s({100})},
                                                     {"pads", int64s({0, 0, 1, 0})}}));
        QVERIFY2(other, other ? "" : other.error().toString().c_str());
        const HostTensor& y = other.value()->result.outputs.at(0);
        QCOMPARE(y.type.shape, (std::vector<std::int64_t>{5, 5}));
        QCOMPARE(y.as<float>()[0], 5.0f);
        QCOMPARE(y.as<float>()[19], 39.0f);
        QCOMPARE(y.as<float>()[20], 0.0f);
    }

    /// Reshape, Expand, Tile, Range, ConstantOfShape and TopK sized by graph inputs' values
    /// match numpy; sizes no op can take, and a value of the wrong rank, are refused with the
    /// input's or the node's name, and the same plan then runs good values again.
    void everyShapeSettingInputIsReadFromItsValue() {
        auto opened = m_session->open(ModelSource{modelPath("shape_inputs.onnx")}, PlanRequest{});
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const std::vector<std::string> names = {"x",     "shape", "expand_to",  "repeats", "start",
                                                "limit", "delta", "fill_shape", "k"};
        std::vector<std::pair<std::string, HostTensor>> good;
        for (const std::string& name : names)
            good.emplace_back(name, npy("shape_inputs." + name + ".npy"));
        auto expected = [&] {
            std::vector<HostTensor> out;
            for (const char* name :
                 {"reshaped", "expanded", "tiled", "ramp", "filled", "top", "top_at"})
                out.push_back(npy(std::string("shape_inputs.") + name + ".npy"));
            return out;
        };
        auto ran = m_session->run(planned, oneRun(good));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const ReferenceCheck check = compareOutputs(ran.value()->result.outputs, expected(), 0, 0);
        QVERIFY2(check.ok, check.mismatch.c_str());
        // An Expand to 2^40 x 2^40 elements, a negative reshape, a scalar given as [1].
        for (const auto& [name, value] : std::vector<std::pair<std::string, HostTensor>>{
                 {"expand_to", int64s({std::int64_t(1) << 40, std::int64_t(1) << 40, 3})},
                 {"shape", int64s({-4, 3})},
                 {"start", int64s({3})}}) {
            auto bad = good;
            for (auto& [input, tensor] : bad) {
                if (input == name)
                    tensor = value;
            }
            auto refused = m_session->run(planned, oneRun(bad));
            QVERIFY2(!refused, name.c_str());
            QVERIFY2(!refused.error().message.empty(), name.c_str());
        }
        auto again = m_session->run(planned, oneRun(good));
        QVERIFY2(again, again ? "" : again.error().toString().c_str());
        QVERIFY(compareOutputs(again.value()->result.outputs, expected(), 0, 0).ok);
    }

    /// A plan that fits its device's mem= as opened, but not at the sizes a run's data sets, is
    /// refused at the run's start with the device, its need and its capacity.
    void capacitiesAreCheckedAtTheDataSizes() {
        PlanRequest request;
        request.devices = "a:vcpu:mem=16MiB";
        auto opened = m_session->open(ModelSource{modelPath("shape_inputs.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        std::vector<std::pair<std::string, HostTensor>> data;
        for (const char* name :
             {"x", "shape", "expand_to", "repeats", "start", "limit", "delta", "fill_shape", "k"})
            data.emplace_back(name, npy(std::string("shape_inputs.") + name + ".npy"));
        QVERIFY(m_session->run(planned, oneRun(data)));
        data[2].second = int64s({std::int64_t(1) << 20, 2, 3}); // 24 MiB of float32
        auto refused = m_session->run(planned, oneRun(data));
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("'a' needs 24.0 MiB but has 16.0 MiB") !=
                     std::string::npos,
                 refused.error().message.c_str());
    }

    /// Data that disagrees with a dimension the model fixes is refused, naming the input.
    void dataAgainstAFixedDimensionIsRefused() {
        auto opened = m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, PlanRequest{});
        QVERIFY(opened);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        auto ran = m_session->run(planned,
                                  oneRun({{"x", HostTensor::zeros({{2, 3, 8}, DType::Float32})}}));
        QVERIFY(!ran);
        QVERIFY2(ran.error().message.find("input x") != std::string::npos,
                 ran.error().message.c_str());
    }

    /// A plan that was not opened from a file still runs at other sizes of its named
    /// dimensions (it is instantiated there), but cannot be planned again for the value of an
    /// input that sets shapes: the run says so instead of failing on a size.
    void aPlanWithoutSourceSaysWhy() {
        auto opened = m_session->open(ModelSource{modelPath("dyn_encoder.onnx")}, PlanRequest{});
        QVERIFY(opened);
        opened.value().source.reset();
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        auto ran = m_session->run(planned, oneRun({{"x", npy("dyn_encoder.2x16.input.npy")}}));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QVERIFY(compareOutputs(ran.value()->result.outputs, {npy("dyn_encoder.2x16.expected.npy")},
                               1e-4, 1e-3)
                    .ok);

        auto slicing =
            m_session->open(ModelSource{modelPath("runtime_slice_pad.onnx")}, PlanRequest{});
        QVERIFY(slicing);
        slicing.value().source.reset();
        const auto sliced = std::make_shared<const PlannedModel>(slicing.take());
        auto refused =
            m_session->run(sliced, oneRun({{"x", npy("runtime_slice_pad.x.npy")},
                                           {"starts", npy("runtime_slice_pad.starts.npy")},
                                           {"ends", npy("runtime_slice_pad.ends.npy")},
                                           {"pads", npy("runtime_slice_pad.pads.npy")}}));
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("not opened from a file") != std::string::npos,
                 refused.error().message.c_str());
    }

    /// Shapes a kernel finds at run time: NonZero's elements read by GatherND, reshaped and
    /// multiplied; NonMaxSuppression's boxes, the best k of them with k from the data (TopK),
    /// and their boxes gathered. The data-dependent op runs on one vcpu and what follows it on
    /// another, so its result crosses devices at the length it had; every output matches numpy.
    void dataDependentShapesRunAcrossDevices_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("data");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QStringList>("outputs");
        QTest::addColumn<QString>("selector");
        const QStringList nonzeroIn{"x"}, nonzeroOut{"y", "rows", "total"};
        const QStringList nmsIn{"boxes", "scores"}, nmsOut{"top", "picked"};
        QTest::newRow("nonzero-gathernd-reshape-matmul")
            << "nonzero_select"
            << "a" << nonzeroIn << nonzeroOut << "NonZero";
        QTest::newRow("nonzero-other-count") << "nonzero_select"
                                             << "b" << nonzeroIn << nonzeroOut << "NonZero";
        QTest::newRow("nms-topk-k-from-data") << "nms_topk"
                                              << "a" << nmsIn << nmsOut << "NonMaxSuppression";
        QTest::newRow("nms-fewer-than-k") << "nms_topk"
                                          << "b" << nmsIn << nmsOut << "NonMaxSuppression";
    }
    void dataDependentShapesRunAcrossDevices() {
        QFETCH(QString, model);
        QFETCH(QString, data);
        QFETCH(QStringList, inputs);
        QFETCH(QStringList, outputs);
        QFETCH(QString, selector);
        const PlanRequest request = onTwoVcpus({selector.toStdString()});
        auto opened =
            m_session->open(ModelSource{modelPath(model.toStdString() + ".onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(mentions(opened.value().warnings, "known only at run time"));
        QVERIFY(!opened.value().plan.copies.empty());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const std::string stem = model.toStdString() + "." + data.toStdString() + ".";
        RunRequest run;
        for (const QString& input : inputs)
            run.inputs.emplace_back(input.toStdString(), npy(stem + input.toStdString() + ".npy"));
        run.warmup = 1;
        run.iterations = 2;
        auto ran = m_session->run(planned, run);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const RunOutcome& outcome = *ran.value();
        QVERIFY(outcome.reference && outcome.reference->ok);
        QCOMPARE(outcome.result.outputs.size(), static_cast<std::size_t>(outputs.size()));
        for (int k = 0; k < outputs.size(); ++k) {
            const HostTensor expected = npy(stem + outputs[k].toStdString() + ".npy");
            const HostTensor& actual = outcome.result.outputs[static_cast<std::size_t>(k)];
            QCOMPARE(actual.type.shape, expected.type.shape);
            const ReferenceCheck check = compareOutputs({actual}, {expected}, 1e-5, 1e-5);
            QVERIFY2(check.ok, (outputs[k].toStdString() + ": " + check.mismatch).c_str());
        }
    }

    /// One opened plan runs on data that selects different counts, one run after another.
    void dataDependentLengthsChangeBetweenRuns() {
        const PlanRequest request = onTwoVcpus({"NonZero"});
        auto opened = m_session->open(ModelSource{modelPath("nonzero_select.onnx")}, request);
        QVERIFY(opened);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        for (const char* data : {"a", "b", "a"}) {
            const std::string stem = std::string("nonzero_select.") + data + ".";
            auto ran = m_session->run(planned, oneRun({{"x", npy(stem + "x.npy")}}));
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            const ReferenceCheck check = compareOutputs(
                ran.value()->result.outputs,
                {npy(stem + "y.npy"), npy(stem + "rows.npy"), npy(stem + "total.npy")}, 1e-5, 1e-5);
            QVERIFY2(check.ok, (std::string(data) + ": " + check.mismatch).c_str());
            // The report, its summary and the trace give the shapes this data ran at, not the
            // planned stand-ins: y holds a row per selected element.
            const std::int64_t selected = npy(stem + "y.npy").type.shape.at(0);
            const std::string y = std::to_string(selected) + "x3 float32";
            const std::string summary = runSummary(*ran.value());
            QVERIFY2(summary.find("shapes found at run time") != std::string::npos &&
                         summary.find(y) != std::string::npos,
                     summary.c_str());
            const Json report = runReportJson(*ran.value());
            const Json* found = report.find("shapes_at_run_time");
            QVERIFY(found && found->isArray());
            bool reported = false;
            for (const Json& entry : found->items()) {
                const Json& first = entry.find("shapes")->items().front();
                reported = reported || (entry.find("node")->asString() == "y" &&
                                        first.find("shape")->items().front().asInt() == selected &&
                                        first.find("iteration")->asInt() == 0);
            }
            QVERIFY2(reported, report.dump().c_str());
            const Json trace = chromeTrace(*ran.value());
            bool traced = false;
            for (const Json& event : trace.find("traceEvents")->items()) {
                const Json* args = event.find("args");
                const Json* node = args ? args->find("node") : nullptr;
                if (!node || node->asString() != "y" || !args->find("output_shapes"))
                    continue;
                const Json& shape = args->find("output_shapes")->items().front();
                traced = shape.items().front().asInt() == selected && shape.items()[1].asInt() == 3;
            }
            QVERIFY2(traced, trace.dump().c_str());
        }
        // Nothing over the threshold: every length is zero, and the sum is 0.
        auto none =
            m_session->run(planned, oneRun({{"x", HostTensor::zeros({{6, 8}, DType::Float32})}}));
        QVERIFY2(none, none ? "" : none.error().toString().c_str());
        QCOMPARE(none.value()->result.outputs.at(0).type.shape, (std::vector<std::int64_t>{0, 3}));
        QCOMPARE(none.value()->result.outputs.at(1).as<std::int64_t>()[0], std::int64_t{0});
        QCOMPARE(none.value()->result.outputs.at(2).as<float>()[0], 0.0f);
    }

    /// An If on a condition the data computes, whose branches give results of other lengths
    /// (one finds its elements with NonZero): it runs on one vcpu, what reads its result on
    /// another, and the branch the data chooses gives the result numpy does.
    void ifOnDataRunsTheBranchTheDataChooses_data() {
        QTest::addColumn<QString>("data");
        QTest::newRow("then-branch-nonzero") << "a";
        QTest::newRow("else-branch-topk") << "b";
    }
    void ifOnDataRunsTheBranchTheDataChooses() {
        QFETCH(QString, data);
        const PlanRequest request = onTwoVcpus({"If"});
        auto opened = m_session->open(ModelSource{modelPath("if_on_data.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(!opened.value().plan.copies.empty());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const std::string stem = "if_on_data." + data.toStdString() + ".";
        RunRequest run = oneRun({{"x", npy(stem + "x.npy")}});
        run.warmup = 1;
        auto ran = m_session->run(planned, run);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QVERIFY(ran.value()->reference && ran.value()->reference->ok);
        const auto& outputs = ran.value()->result.outputs;
        QCOMPARE(outputs.at(0).type.shape, npy(stem + "y.npy").type.shape);
        const ReferenceCheck check = compareOutputs(
            outputs, {npy(stem + "y.npy"), npy(stem + "total.npy"), npy(stem + "longer.npy")}, 1e-5,
            1e-5);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }

    /// A Loop whose carried value grows an element an iteration, with its trip count a graph
    /// input: opened without data it runs node by node, for whatever trip count a run brings;
    /// given the count at open, it is unrolled for it. Both agree with numpy.
    void aLoopWhoseCarriedValueGrows_data() {
        QTest::addColumn<QString>("data");
        QTest::newRow("three-iterations") << "a";
        QTest::newRow("six-iterations") << "b";
    }
    void aLoopWhoseCarriedValueGrows() {
        QFETCH(QString, data);
        const std::string stem = "loop_grows." + data.toStdString() + ".";
        const HostTensor n = npy(stem + "n.npy"), x = npy(stem + "x.npy");
        const std::vector<HostTensor> expected{npy(stem + "v.npy"), npy(stem + "sums.npy")};

        auto loaded = loadModelFile(modelPath("loop_grows.onnx"), GraphFormat::Auto, std::nullopt);
        QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
        QVERIFY(mentions(loaded.value().warnings, "runs node by node"));
        const Graph& graph = loaded.value().graph;
        auto outputs = runReference(graph, {n, x}, graph.onnxOpset());
        QVERIFY2(outputs, outputs ? "" : outputs.error().toString().c_str());
        const ReferenceCheck atRun = compareOutputs(outputs.value(), expected, 1e-6, 1e-6);
        QVERIFY2(atRun.ok, atRun.mismatch.c_str());

        ModelSource source{modelPath("loop_grows.onnx")};
        source.runInputs["n"] = n;
        auto opened = m_session->open(source, PlanRequest{});
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(mentions(opened.value().warnings, "unrolled"));
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        auto ran = m_session->run(planned, oneRun({{"n", n}, {"x", x}}));
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const ReferenceCheck unrolled =
            compareOutputs(ran.value()->result.outputs, expected, 1e-6, 1e-6);
        QVERIFY2(unrolled.ok, unrolled.mismatch.c_str());
    }

    /// A detector as torchvision exports it (tiny_detector: a Faster R-CNN whose region
    /// proposals go through NonMaxSuppression inside an If, TopK with k from the data, and
    /// RoiAlign over the regions kept) opens without being told any shape, plans with its
    /// proposals' control flow and pooling on one vcpu and the rest on another, and gives
    /// PyTorch's detections.
    void aDetectorRunsAcrossDevices() {
        const PlanRequest request = onTwoVcpus({"If", "RoiAlign"});
        auto opened = m_session->open(ModelSource{modelPath("tiny_detector.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(opened.value().plan.conflicts.empty());
        QVERIFY(opened.value().plan.copies.size() > 4);
        // Said once, though the model and each of its bodies find shapes at run time.
        const auto& warnings = opened.value().warnings;
        QCOMPARE(std::count_if(warnings.begin(), warnings.end(),
                               [](const std::string& w) {
                                   return w.find("known only at run time") != std::string::npos;
                               }),
                 std::ptrdiff_t{1});
        // What crosses devices at a size found only at run time says so, not its stand-in's.
        const auto& copies = opened.value().plan.copies;
        QVERIFY(std::any_of(copies.begin(), copies.end(),
                            [](const CopyPlan& copy) { return copy.sizeAtRun; }));
        QVERIFY(std::any_of(copies.begin(), copies.end(),
                            [](const CopyPlan& copy) { return !copy.sizeAtRun; }));
        QVERIFY(mentions(opened.value().plan.notes, "each of a size known at run time"));
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        RunRequest run = oneRun({{"images", npy("tiny_detector.images.npy")}});
        run.warmup = 1;
        run.iterations = 2;
        auto ran = m_session->run(planned, run);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QVERIFY(ran.value()->reference && ran.value()->reference->ok);
        const std::vector<HostTensor> expected{npy("tiny_detector.boxes.npy"),
                                               npy("tiny_detector.labels.npy"),
                                               npy("tiny_detector.scores.npy")};
        const auto& outputs = ran.value()->result.outputs;
        QCOMPARE(outputs.size(), expected.size());
        for (std::size_t k = 0; k < expected.size(); ++k)
            QCOMPARE(outputs[k].type.shape, expected[k].type.shape);
        const ReferenceCheck check = compareOutputs(outputs, expected, 1e-4, 1e-5);
        QVERIFY2(check.ok, check.mismatch.c_str());
        // Reports name what ran where kernels were prepared at run time too.
        const Executor& executor = *ran.value()->executor;
        int atRun = 0, bodies = 0;
        for (std::size_t k = 0; k < executor.program().code.size(); ++k) {
            const std::string implementation = executor.implementation(k);
            atRun += implementation.rfind("run-time:plain:", 0) == 0 ? 1 : 0;
            bodies += implementation == "run-time:control flow, node by node" ? 1 : 0;
        }
        QVERIFY(atRun > 0);
        QVERIFY(bodies > 0);
    }

    /// Lengths the data decides, from none to every element, on one opened plan across two
    /// vcpus: 24 random inputs whose share over the threshold sweeps 0..1, each result checked
    /// against the selection computed here (y = x[x > 0.5] * w, its length, its sum).
    void dataDependentLengthsOverManyInputs() {
        const PlanRequest request = onTwoVcpus({"NonZero", "MatMul"});
        auto opened = m_session->open(ModelSource{modelPath("nonzero_select.onnx")}, request);
        QVERIFY(opened);
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        const float w[3] = {1.0f, -2.0f, 0.5f};
        std::mt19937 rng(17);
        for (int trial = 0; trial < 24; ++trial) {
            // The shift moves the share of elements over 0.5 from none to all.
            const float shift = -3.0f + 7.0f * static_cast<float>(trial) / 23.0f;
            std::normal_distribution<float> normal(shift, 1.0f);
            HostTensor x = HostTensor::zeros({{6, 8}, DType::Float32});
            std::vector<float> selected;
            for (int i = 0; i < 48; ++i) {
                x.as<float>()[i] = normal(rng);
                if (x.as<float>()[i] > 0.5f)
                    selected.push_back(x.as<float>()[i]);
            }
            RunRequest run = oneRun({{"x", x}});
            run.reference = false; // checked against the selection computed here
            auto ran = m_session->run(planned, run);
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            const auto& outputs = ran.value()->result.outputs;
            const auto n = static_cast<std::int64_t>(selected.size());
            QCOMPARE(outputs.at(0).type.shape, (std::vector<std::int64_t>{n, 3}));
            QCOMPARE(outputs.at(1).as<std::int64_t>()[0], n);
            double sum = 0;
            for (std::int64_t i = 0; i < n; ++i) {
                sum += selected[static_cast<std::size_t>(i)];
                for (int j = 0; j < 3; ++j)
                    QCOMPARE(outputs.at(0).as<float>()[i * 3 + j],
                             selected[static_cast<std::size_t>(i)] * w[j]);
            }
            QVERIFY(std::abs(outputs.at(2).as<float>()[0] - sum) <= 1e-4 * (1 + std::abs(sum)));
        }
    }

    /// A device whose capacity holds the plan but not what a data-dependent length turns out
    /// to need: without failover the run fails at that allocation, naming the tensor, its size
    /// and the device; with it (the default) that device is out of memory, so the run goes on
    /// without it and says why; and the same plan still runs on data that fits.
    void aRunTimeAllocationThatDoesNotFitSaysWhere() {
        const PlanRequest request = onTwoVcpus({"NonZero"}, "a:vcpu,b:vcpu:mem=1536B");
        auto opened = m_session->open(ModelSource{modelPath("nonzero_select.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        QVERIFY(opened.value().plan.conflicts.empty());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        HostTensor ones = HostTensor::zeros({{6, 8}, DType::Float32});
        float* values = ones.as<float>();
        std::fill(values, values + 48, 1.0f);
        RunRequest once = oneRun({{"x", ones}});
        once.failover = false;
        auto ran = m_session->run(planned, once);
        QVERIFY(!ran);
        const std::string& message = ran.error().message;
        QVERIFY2(message.find("at this run") != std::string::npos &&
                     message.find("virtual device b (mem=") != std::string::npos &&
                     message.find("48") != std::string::npos,
                 message.c_str());
        once.failover = true;
        once.reference = true;
        auto survived = m_session->run(planned, once);
        QVERIFY2(survived, survived ? "" : survived.error().toString().c_str());
        const RunOutcome& outcome = *survived.value();
        QCOMPARE(outcome.events.size(), std::size_t{1});
        const RunEvent& event = outcome.events.front();
        QCOMPARE(event.kind, RunEvent::Kind::DeviceFailed);
        QCOMPARE(event.iteration, 1);
        QVERIFY2(event.reason.find("(out of memory)") != std::string::npos &&
                     event.reason.find("virtual device b (mem=") != std::string::npos,
                 event.reason.c_str());
        QVERIFY(outcome.reference && outcome.reference->ok);
        for (std::size_t i = 0; i < outcome.userPlan.devices.size(); ++i) {
            if (outcome.userGraph->nodes()[i].role() == OpRole::Compute)
                QCOMPARE(outcome.userPlan.devices[i].index, 0);
        }
        auto fits = m_session->run(planned, oneRun({{"x", npy("nonzero_select.b.x.npy")}}));
        QVERIFY2(fits, fits ? "" : fits.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
