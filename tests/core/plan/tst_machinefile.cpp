// Machine files (plan/MachineFile.h): read with their line on every refusal, written back to the
// same machine, devices repeated by count, links by globs and hosts, the cost model made from
// them (typed peaks, the links' rates between the right devices), `placer machine describe`
// read back, and plans for a machine this one is not: planned and predicted, never run.
#include "cli/PlacerCli.h"
#include "io/Json.h"
#include "io/TextFile.h"
#include "plan/MachineFile.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <iterator>
#include <sstream>

using namespace placer;

namespace {

const std::string kMachines = std::string(PLACER_SOURCE_DIR) + "/resources/machines/";

MachineFile h100s() {
    auto text = readTextFile(kMachines + "2x8-h100.json");
    if (!text)
        qFatal("%s", text.error().toString().c_str());
    auto machine = parseMachineFile(text.value(), "2x8-h100.json");
    if (!machine)
        qFatal("%s", machine.error().toString().c_str());
    return machine.take();
}

int cliRun(const std::vector<std::string>& args, std::string* out, std::string* err) {
    std::istringstream in;
    std::ostringstream o, e;
    const int code = cli::runPlacer(args, in, o, e);
    *out = o.str();
    *err = e.str();
    return code;
}

} // namespace

class TestMachineFile : public QObject {
    Q_OBJECT

private slots:
    /// The shipped 2x8-H100 file: 18 devices (count expands cuda to cuda:0..7 per host), named
    /// node0.cuda3 as virtual devices, their memory from the profile; NVLink between a host's
    /// GPUs, PCIe between a host's cpu and its GPUs, InfiniBand between hosts, first match wins.
    void theShippedMachineReads() {
        const MachineFile machine = h100s();
        QCOMPARE(machine.devices.size(), std::size_t{18});
        QCOMPARE(machine.devices[1].qualified(), std::string("node0/cuda:0"));
        QCOMPARE(machine.devices[1].virtualName(), std::string("node0.cuda0"));
        auto devices = DeviceSet::parse(machine.deviceSpec());
        QVERIFY2(devices, devices ? "" : devices.error().toString().c_str());
        QCOMPARE(devices.value().size(), 18);
        QCOMPARE(*devices.value()[*devices.value().find("node1.cuda7")].memoryCapacity,
                 std::int64_t{80} << 30);
        QCOMPARE(machine.linkBetween("node0/cuda:1", "node0/cuda:6")->kind, std::string("nvlink"));
        QCOMPARE(machine.linkBetween("node0/cuda:1", "node0/cpu")->kind, std::string("pcie"));
        QCOMPARE(machine.linkBetween("node0/cuda:1", "node1/cuda:1")->kind,
                 std::string("infiniband"));
        QCOMPARE(machine.linkBetween("node1/cpu", "node0/cpu")->kind, std::string("infiniband"));
    }

    /// The cost model: each virtual device on its profile (bfloat16 at its own peak), copies at
    /// the link's rate between the devices it joins.
    void theCostModelIsTheFiles() {
        const MachineFile machine = h100s();
        const DeviceSet devices = DeviceSet::parse(machine.deviceSpec()).take();
        const CostModel costs = machineFileCosts(machine, devices);
        const DeviceId gpu = *devices.find("node0.cuda0"), other = *devices.find("node0.cuda5");
        const DeviceId far = *devices.find("node1.cuda0"), cpu = *devices.find("node0.cpu");
        QCOMPARE(costs.physical(gpu).flopsPerMicro, 67e6);
        QCOMPARE(costs.physical(gpu).typedFlopsPerMicro.at(DType::BFloat16), 989e6);
        QVERIFY(costs.physical(gpu).gpu);
        QVERIFY(!costs.physical(cpu).gpu);
        QCOMPARE(costs.link(gpu, other).bytesPerMicro, 450e3);
        QCOMPARE(costs.link(gpu, far).bytesPerMicro, 50e3);
        QCOMPARE(costs.link(cpu, gpu).bytesPerMicro, 55e3);
        const std::int64_t bytes = 64 << 20;
        QVERIFY(costs.copyMicros(bytes, gpu, far) > 8 * costs.copyMicros(bytes, gpu, other));
        // A bfloat16 op is costed at the tensor cores' peak, a float32 one at float32's.
        OpWork work{1e12, 1, DType::BFloat16};
        const double bf16 = costs.roofline(work, gpu);
        work.dtype = DType::Float32;
        QVERIFY(costs.roofline(work, gpu) > 10 * bf16);
    }

    /// Written out and read back: the same devices, profiles and links.
    void roundTrips() {
        const MachineFile machine = h100s();
        const std::string text = machine.toJson().dump(2);
        auto again = parseMachineFile(text, "again.json");
        QVERIFY2(again, again ? "" : again.error().toString().c_str());
        QCOMPARE(again.value().deviceSpec(), machine.deviceSpec());
        QCOMPARE(again.value().calibration().links.size(), machine.calibration().links.size());
        QCOMPARE(again.value().toJson().dump(2), text);
    }

    /// Refusals name the file and the line of what is wrong.
    void badFilesAreRefusedWithTheirLine_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        const QString profiles =
            R"("profiles": {"p": {"peak_tflops": {"float32": 1}, "memory_gbps": 10}})";
        const QString hosts =
            R"("hosts": [{"name": "h", "devices": [{"name": "cpu", "kind": "cpu", "profile": "p"}]}])";
        QTest::newRow("not json") << "{\"name\": " << 1 << "";
        QTest::newRow("no name") << "{" + profiles + ",\n" + hosts + "}" << 1 << "no \"name\"";
        QTest::newRow("unknown profile")
            << "{\"name\": \"m\", " + profiles +
                   ",\n\"hosts\": [{\"name\": \"h\", \"devices\": [\n{\"name\": \"cpu\", "
                   "\"kind\": \"cpu\", \"profile\": \"q\"}]}]}"
            << 3 << "no profile 'q'";
        QTest::newRow("unknown kind")
            << "{\"name\": \"m\", " + profiles +
                   ",\n\"hosts\": [{\"name\": \"h\", \"devices\": [\n{\"name\": \"t\", "
                   "\"kind\": \"tpu\", \"profile\": \"p\"}]}]}"
            << 3 << "kind 'tpu'";
        QTest::newRow("negative bandwidth")
            << "{\"name\": \"m\",\n\"profiles\": {\"p\": {\"peak_tflops\": {\"float32\": 1}, "
               "\"memory_gbps\": -3}},\n" +
                   hosts + "}"
            << 2 << "memory_gbps must be a positive number";
        QTest::newRow("no float32 peak")
            << "{\"name\": \"m\",\n\"profiles\": {\"p\": {\"peak_tflops\": {\"bfloat16\": 1}, "
               "\"memory_gbps\": 3}},\n" +
                   hosts + "}"
            << 2 << "float32";
        QTest::newRow("link to nothing")
            << "{\"name\": \"m\", " + profiles + ",\n" + hosts +
                   ",\n\"links\": [{\"between\": [\"h/cuda:*\"], \"gbps\": 1, \"latency_us\": 1}]}"
            << 3 << "matches no device";
        QTest::newRow("twice")
            << "{\"name\": \"m\", " + profiles +
                   ",\n\"hosts\": [{\"name\": \"h\", \"devices\": [{\"name\": \"cpu\", "
                   "\"kind\": \"cpu\", \"profile\": \"p\"},\n{\"name\": \"cpu\", \"kind\": "
                   "\"cpu\", \"profile\": \"p\"}]}]}"
            << 3 << "listed twice";
    }
    void badFilesAreRefusedWithTheirLine() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(QString, expected);
        auto machine = parseMachineFile(text.toStdString(), "bad.json");
        QVERIFY(!machine);
        QCOMPARE(machine.error().file, std::string("bad.json"));
        QCOMPARE(machine.error().line, line);
        QVERIFY2(machine.error().message.find(expected.toStdString()) != std::string::npos,
                 machine.error().toString().c_str());
    }

    /// `placer machine describe` writes this machine, which reads back as a machine file; plan
    /// --machine plans a model for the 2x8-H100 machine and predicts it, and a run of such a
    /// plan is refused with a sentence (it can be simulated, with the same placement).
    void describedAndPlannedFor() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("workspace.db").toStdString();
        std::string out, err;
        QCOMPARE(cliRun({"machine", "describe", "--db", db}, &out, &err), 0);
        QVERIFY(err.find("assumed") != std::string::npos); // no calibration in a new workspace
        auto described = parseMachineFile(out, "described.json");
        QVERIFY2(described, described ? "" : described.error().toString().c_str());
        QVERIFY(described.value().devices.size() >= 1);
        QCOMPARE(described.value().devices.front().name, std::string("cpu"));

        const std::string model =
            std::string(PLACER_SOURCE_DIR) + "/resources/models/tiny_resnet.onnx";
        QCOMPARE(cliRun({"plan", model, "--machine", kMachines + "2x8-h100.json", "--mode", "auto",
                         "--db", db},
                        &out, &err),
                 0);
        QVERIFY2(out.find("node1.cuda7") != std::string::npos, out.c_str());
        QVERIFY2(out.find("predicted latency") != std::string::npos, out.c_str());
        QCOMPARE(cliRun({"plan", model, "--machine", kMachines + "2x8-h100.json", "--devices",
                         "a:cpu", "--db", db},
                        &out, &err),
                 2);
        QVERIFY2(err.find("leave") != std::string::npos, err.c_str());

        Session session(SessionOptions{db});
        ModelSource source;
        source.path = model;
        PlanRequest request;
        QVERIFY(!takePlanOption("machine", kMachines + "2x8-h100.json", &source, &request));
        auto planned = session.open(source, request);
        QVERIFY2(planned, planned ? "" : planned.error().toString().c_str());
        QVERIFY(planned.value().plan.prediction);
        const auto forMachine = std::make_shared<const PlannedModel>(planned.take());
        auto ran = session.run(forMachine, RunRequest{});
        QVERIFY(!ran);
        QVERIFY(ran.error().message.find("2x8-h100") != std::string::npos);
        // Simulated instead: the same placement, its simulation.
        auto simulated = session.simulate(forMachine);
        QVERIFY2(simulated, simulated ? "" : simulated.error().toString().c_str());
        QCOMPARE(simulated.value()->plan.devices, forMachine->plan.devices);
        QVERIFY(simulated.value()->plan.simulation);
        QVERIFY(simulated.value()->plan.simulation->makespanMicros > 0);
    }

    /// placer run --machine simulates: the summary, the JSON and the trace say "simulated" and
    /// name the machine; a plan split over two hosts' devices has its transfers on a link
    /// between the hosts, in the trace's links lane; nothing is recorded as a run.
    void runOnAMachineIsSimulated() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("workspace.db").toStdString();
        const std::string model =
            std::string(PLACER_SOURCE_DIR) + "/resources/models/tiny_resnet.onnx";
        const std::string trace = dir.filePath("trace.json").toStdString();
        std::string out, err;
        QCOMPARE(
            cliRun({"run", model, "--machine", kMachines + "2x8-h100.json", "--rule",
                    "Conv=node0.cuda0", "--fallback", "node1.cuda0", "--trace", trace, "--db", db},
                   &out, &err),
            0);
        QVERIFY2(out.starts_with("simulated on 2x8-h100: "), out.c_str());
        QVERIFY2(out.find("node0 -> node1: ") != std::string::npos, out.c_str());
        QVERIFY2(out.find("node0.cuda0 (node0/cuda:0): busy") != std::string::npos, out.c_str());
        QVERIFY2(out.find("no work on 16 devices") != std::string::npos, out.c_str());
        std::ifstream file(trace);
        const std::string text((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
        auto parsed = Json::parse(text, "trace.json");
        QVERIFY2(parsed, parsed ? "" : parsed.error().toString().c_str());
        QVERIFY(parsed.value().find("otherData")->find("simulated")->asBool());
        QVERIFY(text.find("links (simulated)") != std::string::npos);
        QVERIFY(text.find("\"node0 -> node1\"") != std::string::npos);
        QCOMPARE(
            cliRun({"run", model, "--machine", kMachines + "2x8-h100.json", "--json", "--db", db},
                   &out, &err),
            0);
        auto json = Json::parse(out, "run.json");
        QVERIFY2(json, out.c_str());
        QVERIFY(json.value().find("simulated")->asBool());
        QCOMPARE(json.value().find("machine")->asString(), std::string("2x8-h100"));
        QVERIFY(json.value().find("latency_ms")->asDouble() > 0);
        QVERIFY(json.value().find("terms")->find("launch_ms") != nullptr);
    }
};

QTEST_GUILESS_MAIN(TestMachineFile)
#include "tst_machinefile.moc"
