// Mapping by what the machine has free now (device/LoadMapping.h): the cores' load read from
// /proc/stat (faked here through the test hook), vcpus bound to the least busy cores and folded
// onto them when there are more vcpus than cores, cuda devices on a machine without a GPU, and a
// CPU device bound to a core really running there.
#include "device/DeviceRegistry.h"
#include "device/LoadMapping.h"
#include "ir/DeviceSet.h"

#include <QtTest>

#include <pthread.h>
#include <sched.h>

#include <map>
#include <string>
#include <thread>

using namespace placer;

namespace {

/// A /proc/stat whose cores spent `busy` of `total` jiffies working: one line per core.
std::string procStat(const std::map<int, std::pair<long, long>>& cores) {
    std::string text = "cpu  0 0 0 0 0 0 0 0 0 0\n";
    for (const auto& [core, times] : cores) {
        const long idle = times.second - times.first;
        // user nice system idle iowait irq softirq steal guest guest_nice
        text += "cpu" + std::to_string(core) + " " + std::to_string(times.first) + " 0 0 " +
                std::to_string(idle) + " 0 0 0 0 0 0\n";
    }
    return text + "intr 1 2 3\nctxt 42\n";
}

DeviceSet devicesOf(const std::string& spec) {
    auto parsed = DeviceSet::parse(spec);
    if (!parsed)
        qFatal("%s", parsed.error().toString().c_str());
    return parsed.take();
}

/// The cores a CPU device's worker may run on, asked from the worker itself.
std::vector<int> workerCores(Device& device) {
    std::vector<int> cores;
    device.enqueue([&] {
        cpu_set_t set;
        CPU_ZERO(&set);
        pthread_getaffinity_np(pthread_self(), sizeof set, &set);
        for (int core = 0; core < CPU_SETSIZE; ++core) {
            if (CPU_ISSET(core, &set))
                cores.push_back(core);
        }
    });
    device.synchronize();
    return cores;
}

} // namespace

class TestLoadMapping : public QObject {
    Q_OBJECT

    /// Two readings of /proc/stat, so that the load is their difference.
    void fakeLoad(std::map<int, std::pair<long, long>> first,
                  std::map<int, std::pair<long, long>> second) {
        auto readings = std::make_shared<int>(0);
        setProcFileReader([=](const std::string& path) -> std::optional<std::string> {
            if (path == "/proc/meminfo")
                return std::string("MemTotal: 16000000 kB\nMemAvailable: 8000000 kB\n");
            return procStat((*readings)++ == 0 ? first : second);
        });
    }

private slots:
    void cleanup() { setProcFileReader({}); }

    void theLoadIsTheDifferenceOfTwoReadings() {
        fakeLoad({{0, {100, 1000}}, {1, {900, 1000}}, {2, {500, 1000}}},
                 {{0, {190, 1100}}, {1, {910, 1100}}, {2, {550, 1100}}});
        const HostLoad load = measureHostLoad();
        QCOMPARE(load.cores.size(), std::size_t{3});
        QCOMPARE(load.cores[0].core, 0);
        QVERIFY(std::abs(load.cores[0].busy - 0.9) < 1e-9);
        QVERIFY(std::abs(load.cores[1].busy - 0.1) < 1e-9);
        QVERIFY(std::abs(load.cores[2].busy - 0.5) < 1e-9);
        QCOMPARE(load.availableBytes, std::int64_t{8000000} * 1024);
    }

    /// Loaded cores are avoided: each vcpu gets the least busy core left, and says why. (The
    /// cores are this machine's first two, which every machine the suites run on has.)
    void vcpusGoToTheLeastBusyCores() {
        HostLoad load;
        load.cores = {{0, 0.95}, {1, 0.02}};
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        std::vector<std::shared_ptr<const void>> leases;
        auto mapped = mapDevicesByLoad(devicesOf("a:vcpu,host:cpu"), {}, registry, load, {},
                                       &warnings, &leases);
        QVERIFY2(mapped, mapped ? "" : mapped.error().toString().c_str());
        const LoadMapping& mapping = mapped.value();
        QCOMPARE(mapping.mapping[0]->boundCores(), std::vector<int>{1});
        QCOMPARE(workerCores(*mapping.mapping[0]), std::vector<int>{1});
        QCOMPARE(mapping.mapping[1]->name(), std::string("cpu"));
        QVERIFY2(mapping.reasons[0].find("on core 1, 2 % busy") != std::string::npos,
                 mapping.reasons[0].c_str());
        QCOMPARE(mapping.reasons[1], std::string("the host cpu"));
        QVERIFY(warnings.empty());
        // A second vcpu takes the busy core only once the idle one is taken.
        leases.clear();
        auto two = mapDevicesByLoad(devicesOf("a:vcpu,b:vcpu"), {}, registry, load, {}, &warnings,
                                    &leases);
        QVERIFY(two);
        QCOMPARE(two.value().mapping[0]->boundCores(), std::vector<int>{1});
        QCOMPARE(two.value().mapping[1]->boundCores(), std::vector<int>{0});
        QVERIFY2(two.value().reasons[1].find("on core 0, 95 % busy") != std::string::npos,
                 two.value().reasons[1].c_str());
    }

    /// A plan naming four GPUs on a machine with none maps: each on a vcpu of its own, bound to
    /// a core, folded two to a core when there are fewer cores, and each says how.
    void fourGpusOnAMachineWithoutOne() {
        if (DeviceRegistry().hasKind(DeviceKind::Cuda))
            QSKIP("this machine has a GPU");
        HostLoad load;
        load.cores = {{0, 0.10}, {1, 0.30}};
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        std::vector<std::shared_ptr<const void>> leases;
        auto mapped = mapDevicesByLoad(
            devicesOf("g0:cuda:ordinal=0,g1:cuda:ordinal=1,g2:cuda:ordinal=2,g3:cuda:ordinal=3"), {},
            registry, load, {}, &warnings, &leases);
        QVERIFY2(mapped, mapped ? "" : mapped.error().toString().c_str());
        const LoadMapping& mapping = mapped.value();
        std::vector<int> cores;
        for (Device* device : mapping.mapping) {
            QCOMPARE(device->kind(), DeviceKind::VCpu);
            cores.push_back(device->boundCores().at(0));
        }
        QCOMPARE(cores, (std::vector<int>{0, 1, 0, 1}));
        QVERIFY2(mapping.reasons[2].find("shared with g0: more virtual devices than cores") !=
                     std::string::npos,
                 mapping.reasons[2].c_str());
        QVERIFY2(mapping.reasons[0].find("a cuda device on a machine without a GPU") !=
                     std::string::npos,
                 mapping.reasons[0].c_str());
    }

    /// The user's --map comes first; the rest by load.
    void requestsComeFirst() {
        HostLoad load;
        load.cores = {{0, 0.5}, {1, 0.1}};
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        std::vector<std::shared_ptr<const void>> leases;
        auto mapped = mapDevicesByLoad(devicesOf("a:vcpu,b:vcpu"), {{"a", "vcpu7"}}, registry,
                                       load, {}, &warnings, &leases);
        QVERIFY(mapped);
        QCOMPARE(mapped.value().mapping[0]->name(), std::string("vcpu7"));
        QCOMPARE(mapped.value().reasons[0], std::string("--map a=vcpu7"));
        QCOMPARE(mapped.value().mapping[1]->boundCores(), std::vector<int>{1});
        auto unknown = mapDevicesByLoad(devicesOf("a:vcpu"), {{"z", "vcpu1"}}, registry, load, {},
                                        &warnings, &leases);
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.find("unknown virtual device") != std::string::npos);
    }

    /// A plan that needs more host memory than is free is run, with a warning.
    void tooLittleMemoryIsSaid() {
        HostLoad load;
        load.cores = {{0, 0.0}};
        load.availableBytes = 1 << 20;
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        std::vector<std::shared_ptr<const void>> leases;
        auto mapped = mapDevicesByLoad(devicesOf("a:vcpu"), {}, registry, load, {4 << 20},
                                       &warnings, &leases);
        QVERIFY(mapped);
        QCOMPARE(warnings.size(), std::size_t{1});
        QVERIFY2(warnings[0].find("needs 4.00 MiB of host memory, and 1.00 MiB is available") !=
                     std::string::npos,
                 warnings[0].c_str());
    }

    /// Bound to a core, a vcpu's worker runs there; unbound, anywhere again; a core that is not
    /// there is refused; vcpuN:cpus=LIST binds it as it is made.
    void aBoundVcpuRunsOnItsCore() {
        const int cores = static_cast<int>(std::thread::hardware_concurrency());
        DeviceRegistry registry;
        auto device = registry.get("vcpu5");
        QVERIFY(device);
        Device& vcpu = *device.value();
        QVERIFY(vcpu.bindToCores({cores - 1}).ok());
        QCOMPARE(workerCores(vcpu), std::vector<int>{cores - 1});
        QCOMPARE(vcpu.boundCores(), std::vector<int>{cores - 1});
        QVERIFY(vcpu.bindToCores({}).ok());
        QVERIFY(workerCores(vcpu).size() > 1 || cores == 1);
        QVERIFY(vcpu.boundCores().empty());
        const Status missing = vcpu.bindToCores({CPU_SETSIZE + 1});
        QVERIFY(!missing.ok());
        auto spelled = registry.get("vcpu6:cpus=0");
        QVERIFY2(spelled, spelled ? "" : spelled.error().toString().c_str());
        QCOMPARE(workerCores(*spelled.value()), std::vector<int>{0});
        auto bad = registry.get("vcpu8:cpus=two");
        QVERIFY(!bad);
        QVERIFY2(bad.error().message.find("cpus takes host cores") != std::string::npos,
                 bad.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLoadMapping)
#include "tst_loadmapping.moc"
