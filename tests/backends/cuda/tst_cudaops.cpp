// The CUDA backend's parts that need no GPU: the hand-written kernels' functors
// (ElementFunctors.h), run on the host against the CPU kernels, and the caching allocator's
// bookkeeping. The GPU itself is exercised by tst_cuda where one is present.
#include "KernelTestUtil.h"
#include "backends/cuda/CachingAllocator.h"
#include "backends/cuda/CudaChecks.h"
#include "backends/cuda/HostCopier.h"
#include "kernels/ElementFunctors.h"
#include "kernels/KernelSupport.h"

#include <QtTest>

#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <thread>

using namespace placer;
using namespace placer::test;
namespace gpu = placer::functors;
using Dims = std::vector<std::int64_t>;

namespace {

gpu::Shape shapeOf(const Dims& dims) {
    gpu::Shape shape;
    shape.rank = static_cast<int>(dims.size());
    for (std::size_t d = 0; d < dims.size(); ++d)
        shape.dims[d] = dims[d];
    return shape;
}

gpu::Strides stridesOf(const Dims& strides) {
    gpu::Strides s;
    for (std::size_t d = 0; d < strides.size(); ++d)
        s.s[d] = strides[d];
    return s;
}

void compare(const std::vector<float>& actual, const std::vector<float>& expected,
             double tolerance) {
    QCOMPARE(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(actual[i]) - expected[i]);
        if (!(diff <= tolerance * (1 + std::fabs(expected[i]))) &&
            !(std::isnan(actual[i]) && std::isnan(expected[i])))
            QFAIL(qPrintable(
                QString("element %1: %2 instead of %3").arg(i).arg(actual[i]).arg(expected[i])));
    }
}

Dims randomShape(std::mt19937& rng, int rank, int maxDim = 6) {
    Dims shape;
    for (int d = 0; d < rank; ++d)
        shape.push_back(1 + static_cast<std::int64_t>(rng() % maxDim));
    return shape;
}

} // namespace

class TestCudaOps : public QObject {
    Q_OBJECT

private slots:
    // HostCopier (the staging buffers' memcpy over helper threads): every byte where it belongs
    // for sizes around the split and odd offsets, with two callers at once, and no helpers on a
    // small machine.
    void hostCopierCopiesEveryByte() {
        QCOMPARE(placer::cuda::HostCopier::helpersFor(2), 0);
        QCOMPARE(placer::cuda::HostCopier::helpersFor(16), 5);
        QCOMPARE(placer::cuda::HostCopier::helpersFor(128), 5);
        const std::size_t split = placer::cuda::HostCopier::kSplitBytes;
        std::vector<std::uint8_t> source(3 * split + 4096);
        for (std::size_t i = 0; i < source.size(); ++i)
            source[i] = static_cast<std::uint8_t>(i * 131 + i / 251);
        for (int helpers : {0, 1, 3, 5}) {
            placer::cuda::HostCopier copier(helpers);
            QCOMPARE(copier.helpers(), helpers);
            for (std::size_t bytes :
                 {std::size_t{0}, std::size_t{1}, split - 1, split, split + 7, 3 * split + 1001}) {
                for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
                    std::vector<std::uint8_t> target(bytes + 64, 0xEE);
                    copier.copy(target.data() + offset, source.data() + offset, bytes);
                    QVERIFY2(
                        std::equal(target.begin() + static_cast<std::ptrdiff_t>(offset),
                                   target.begin() + static_cast<std::ptrdiff_t>(offset + bytes),
                                   source.begin() + static_cast<std::ptrdiff_t>(offset)),
                        qPrintable(QString("%1 helpers, %2 bytes at %3")
                                       .arg(helpers)
                                       .arg(bytes)
                                       .arg(offset)));
                    QVERIFY(
                        std::all_of(target.begin() + static_cast<std::ptrdiff_t>(offset + bytes),
                                    target.end(), [](std::uint8_t b) { return b == 0xEE; }));
                }
            }
            // Two callers at once take turns; each gets its own bytes.
            std::vector<std::uint8_t> a(2 * split), b(2 * split);
            std::thread other([&] {
                for (int i = 0; i < 20; ++i)
                    copier.copy(b.data(), source.data() + 1, b.size());
            });
            for (int i = 0; i < 20; ++i)
                copier.copy(a.data(), source.data(), a.size());
            other.join();
            QVERIFY(std::equal(a.begin(), a.end(), source.begin()));
            QVERIFY(std::equal(b.begin(), b.end(), source.begin() + 1));
        }
    }

    void transposeAsStridedCopy() {
        std::mt19937 rng(1);
        for (int trial = 0; trial < 20; ++trial) {
            const int rank = 1 + trial % 5;
            const Dims in = randomShape(rng, rank);
            Dims perm(static_cast<std::size_t>(rank));
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng);
            Dims out;
            for (std::int64_t p : perm)
                out.push_back(in[static_cast<std::size_t>(p)]);
            const Tensor x = randomFloats(in, rng);
            Attrs attrs;
            attrs.set("axes", perm);
            const auto expected = runOp("transpose", attrs, {x}, {{out, DType::Float32}});
            QCOMPARE(expected.size(), std::size_t{1});
            const Dims own = placer::contiguousStrides(in);
            Dims strides;
            for (std::int64_t p : perm)
                strides.push_back(own[static_cast<std::size_t>(p)]);
            std::vector<float> y(static_cast<std::size_t>(placer::product(out)));
            gpu::StridedCopy op;
            op.src = x.bytes.data();
            op.dst = y.data();
            op.shape = shapeOf(out);
            op.srcStrides = stridesOf(strides);
            op.dstStrides = stridesOf(placer::contiguousStrides(out));
            gpu::runOnHost(op, static_cast<std::int64_t>(y.size()));
            compare(y, floats(expected[0]), 0);
        }
    }

    void broadcastBinaryMatchesCpu_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("fn");
        QTest::newRow("add") << "add" << int(BinaryFn::Add);
        QTest::newRow("subtract") << "subtract" << int(BinaryFn::Sub);
        QTest::newRow("multiply") << "multiply" << int(BinaryFn::Mul);
        QTest::newRow("divide") << "divide" << int(BinaryFn::Div);
        QTest::newRow("maximum") << "maximum" << int(BinaryFn::Max);
        QTest::newRow("power") << "power" << int(BinaryFn::Pow);
    }
    void broadcastBinaryMatchesCpu() {
        QFETCH(QString, op);
        QFETCH(int, fn);
        std::mt19937 rng(2);
        for (int trial = 0; trial < 10; ++trial) {
            const int rank = 1 + trial % 4;
            const Dims out = randomShape(rng, rank);
            Dims a = out, b = out;
            for (std::size_t d = 0; d < out.size(); ++d) {
                if (rng() % 3 == 0)
                    a[d] = 1;
                else if (rng() % 3 == 0)
                    b[d] = 1;
            }
            if (rng() % 2)
                b.erase(b.begin()); // lower rank, right-aligned
            Tensor x = randomFloats(a, rng), y = randomFloats(b, rng);
            if (op == "power") { // positive bases
                for (std::size_t i = 0; i < x.bytes.size(); i += 4) {
                    float v;
                    std::memcpy(&v, x.bytes.data() + i, 4);
                    v = std::fabs(v) + 0.1f;
                    std::memcpy(x.bytes.data() + i, &v, 4);
                }
            }
            const auto expected = runOp(op.toStdString(), {}, {x, y}, {{out, DType::Float32}});
            QCOMPARE(expected.size(), std::size_t{1});
            std::vector<float> z(static_cast<std::size_t>(placer::product(out)));
            gpu::BinaryF32 kernel{reinterpret_cast<const float*>(x.bytes.data()),
                                  reinterpret_cast<const float*>(y.bytes.data()),
                                  z.data(),
                                  static_cast<BinaryFn>(fn),
                                  shapeOf(out),
                                  stridesOf(placer::broadcastStrides(a, out)),
                                  stridesOf(placer::broadcastStrides(b, out))};
            gpu::runOnHost(kernel, static_cast<std::int64_t>(z.size()));
            compare(z, floats(expected[0]), 1e-6);
        }
    }

    // Which operands the contiguous element-wise kernels take (backends/cuda/CudaChecks.h), and
    // that indexing them by period reads what the broadcasting functor reads.
    void contiguousOperandsRepeatByPeriod() {
        using placer::cuda::contiguousPeriod;
        QCOMPARE(contiguousPeriod({2, 3, 4}, {2, 3, 4}), std::int64_t{24});
        QCOMPARE(contiguousPeriod({768}, {128, 768}), std::int64_t{768});
        QCOMPARE(contiguousPeriod({1, 1, 768}, {4, 128, 768}), std::int64_t{768});
        QCOMPARE(contiguousPeriod({3, 4}, {2, 3, 4}), std::int64_t{12});
        QCOMPARE(contiguousPeriod({}, {2, 3}), std::int64_t{1});
        QCOMPARE(contiguousPeriod({1, 1}, {2, 3}), std::int64_t{1});
        QCOMPARE(contiguousPeriod({64, 1, 1}, {8, 64, 7, 7}), std::int64_t{0}); // a channel bias
        QCOMPARE(contiguousPeriod({128, 1}, {128, 768}), std::int64_t{0});
        QCOMPARE(contiguousPeriod({2, 2, 3}, {2, 3}), std::int64_t{0});
        QCOMPARE(contiguousPeriod({2, 1, 4}, {2, 3, 4}), std::int64_t{0});
        std::mt19937 rng(4);
        for (int trial = 0; trial < 40; ++trial) {
            const Dims out = randomShape(rng, 1 + trial % 4);
            Dims b(out.begin() + static_cast<std::ptrdiff_t>(rng() % out.size()), out.end());
            if (trial % 5 == 0)
                b = {1};
            const std::int64_t period = contiguousPeriod(b, out);
            QVERIFY(period > 0);
            Tensor x = randomFloats(out, rng), y = randomFloats(b, rng);
            const auto* xs = reinterpret_cast<const float*>(x.bytes.data());
            const auto* ys = reinterpret_cast<const float*>(y.bytes.data());
            std::vector<float> z(static_cast<std::size_t>(placer::product(out)));
            gpu::BinaryF32 kernel{xs,
                                  ys,
                                  z.data(),
                                  BinaryFn::Sub,
                                  shapeOf(out),
                                  stridesOf(placer::broadcastStrides(out, out)),
                                  stridesOf(placer::broadcastStrides(b, out))};
            gpu::runOnHost(kernel, static_cast<std::int64_t>(z.size()));
            for (std::size_t i = 0; i < z.size(); ++i)
                QCOMPARE(z[i], xs[i] - ys[static_cast<std::int64_t>(i) % period]);
        }
    }

    // Sizes cuBLAS and cuDNN take as int are refused past INT_MAX, naming the size; library
    // versions are checked by major version.
    void intSizesAndLibraryVersions() {
        using placer::cuda::intOverflow;
        QVERIFY(!intOverflow({1, 2147483647, 0}, "an extent", "cuDNN"));
        const auto overflow =
            intOverflow({64, 3000000000LL}, "a matrix product's extent", "cuBLAS");
        QVERIFY(overflow);
        QCOMPARE(QString::fromStdString(*overflow),
                 QString("a matrix product's extent 3000000000 is more than an int holds (cuBLAS "
                         "takes int)"));
        QVERIFY(placer::cuda::libraryVersionProblem("cuDNN", 9, 3, 9, 1).empty());
        QCOMPARE(QString::fromStdString(placer::cuda::libraryVersionProblem("cuDNN", 8, 9, 9, 1)),
                 QString("this build needs cuDNN 9.x (it was compiled against 9.1), and the "
                         "library found is 8.9"));
    }

    // Measured algorithm choices persist across processes: a later cache on the same file
    // gives the first choice for a key, skips lines that do not parse, and a cache that cannot
    // write still answers from memory.
    void algorithmChoicesPersist() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("sub/cudnn-convolutions.txt").toStdString();
        {
            placer::cuda::AlgorithmCache cache(path);
            QVERIFY(!cache.find("gpu/1,3,8,8;"));
            cache.remember("gpu/1,3,8,8;", {6, 4096});
            cache.remember("gpu/1,3,8,8;", {1, 0}); // a second measurement does not replace it
            cache.remember("gpu/2,3,8,8;", {0, 0});
            // A graph engine's configuration travels as a fourth field.
            cache.remember("gpu/4,3,8,8;engines", {-2, 256, "e12.3=1.17=0"});
            cache.remember("gpu/5,3,8,8;engines", {-2, 0, "e1 spaced"}); // would not read back
            QCOMPARE(cache.find("gpu/1,3,8,8;")->algorithm, 6);
            QCOMPARE(cache.find("gpu/5,3,8,8;engines")->engine, std::string("e1 spaced"));
        }
        {
            std::ofstream append(path, std::ios::app);
            append << "gpu/1,3,8,8; 2 0\n"  // another process's later line: the first wins
                   << "cut short 3\n"       // a line a crash cut: skipped
                   << "gpu/9; 1 -5\n"       // a negative workspace: skipped
                   << "gpu/6; -2 0 e1 e2\n" // a fifth field: skipped
                   << "gpu/3,3,8,8; 7 128"; // no newline at the end: still read
        }
        placer::cuda::AlgorithmCache later(path);
        QCOMPARE(later.find("gpu/1,3,8,8;")->algorithm, 6);
        QCOMPARE(later.find("gpu/1,3,8,8;")->workspace, std::int64_t{4096});
        QCOMPARE(later.find("gpu/2,3,8,8;")->algorithm, 0);
        QCOMPARE(later.find("gpu/3,3,8,8;")->workspace, std::int64_t{128});
        QVERIFY(!later.find("cut"));
        QVERIFY(!later.find("gpu/9;"));
        QVERIFY(!later.find("gpu/6;"));
        QVERIFY(!later.find("gpu/5,3,8,8;engines"));
        QCOMPARE(later.find("gpu/4,3,8,8;engines")->algorithm, -2);
        QCOMPARE(later.find("gpu/4,3,8,8;engines")->workspace, std::int64_t{256});
        QCOMPARE(later.find("gpu/4,3,8,8;engines")->engine, std::string("e12.3=1.17=0"));
        QVERIFY(later.find("gpu/3,3,8,8;")->engine.empty());
        placer::cuda::AlgorithmCache unwritable("/proc/placer-cannot-write-here/cache.txt");
        unwritable.remember("k", {3, 0});
        QCOMPARE(unwritable.find("k")->algorithm, 3);
        placer::cuda::AlgorithmCache memoryOnly("");
        memoryOnly.remember("k", {4, 0});
        QCOMPARE(memoryOnly.find("k")->algorithm, 4);
    }

    void comparisonsWriteBooleans() {
        const Tensor a = make<std::int32_t>({4}, DType::Int32, {1, 5, -2, 7});
        const Tensor b = make<std::int32_t>({1}, DType::Int32, {5});
        std::vector<std::uint8_t> out(4);
        gpu::BinaryAny op{a.bytes.data(), b.bytes.data(),  out.data(),
                          gpu::Elem::I32, gpu::Elem::Bool, BinaryFn::Lt,
                          shapeOf({4}),   stridesOf({1}),  stridesOf({0})};
        gpu::runOnHost(op, 4);
        QCOMPARE(out, (std::vector<std::uint8_t>{1, 0, 1, 0}));
    }

    void unaryFunctionsMatchCpu() {
        std::mt19937 rng(3);
        const Tensor x = randomFloats({257}, rng);
        const std::pair<const char*, UnaryFn> cases[] = {
            {"tanh", UnaryFn::Tanh},    {"sigmoid", UnaryFn::Sigmoid},
            {"erf", UnaryFn::Erf},      {"exp", UnaryFn::Exp},
            {"nn.relu", UnaryFn::Relu}, {"negative", UnaryFn::Negative},
            {"round", UnaryFn::Round},  {"HardSwish", UnaryFn::HardSwish},
            {"Gelu", UnaryFn::Gelu}};
        for (const auto& [name, fn] : cases) {
            const auto expected = runOp(name, {}, {x}, {x.type});
            std::vector<float> y(257);
            gpu::runOnHost(
                gpu::UnaryF32{reinterpret_cast<const float*>(x.bytes.data()), y.data(), fn, 0, 0},
                257);
            compare(y, floats(expected[0]), 1e-6);
        }
    }

    void castToHalfMatchesCpu() {
        std::mt19937 rng(4);
        Tensor x = randomFloats({300}, rng);
        for (std::size_t i = 0; i < 300; ++i) { // a wide range: subnormal to overflow
            const float v = x.f(static_cast<std::int64_t>(i)) *
                            std::pow(2.0f, static_cast<float>(static_cast<int>(i % 40) - 24));
            std::memcpy(x.bytes.data() + 4 * i, &v, 4);
        }
        Attrs attrs;
        attrs.set("dtype", std::string("float16"));
        const auto expected = runOp("cast", attrs, {x}, {{{300}, DType::Float16}});
        QCOMPARE(expected.size(), std::size_t{1});
        std::vector<std::uint16_t> y(300);
        gpu::runOnHost(gpu::Cast{x.bytes.data(), y.data(), gpu::Elem::F32, gpu::Elem::F16}, 300);
        for (std::size_t i = 0; i < 300; ++i)
            QCOMPARE(y[i], expected[0].at<std::uint16_t>(static_cast<std::int64_t>(i)));
    }

    void poolingMatchesCpu_data() {
        QTest::addColumn<bool>("isMax");
        QTest::addColumn<int>("pad");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("dilation");
        QTest::addColumn<bool>("ceil");
        QTest::addColumn<bool>("includePad");
        QTest::newRow("max 3x3 s2 p1") << true << 1 << 2 << 1 << false << false;
        QTest::newRow("max dilated ceil") << true << 1 << 2 << 2 << true << false;
        QTest::newRow("avg exclude pad") << false << 1 << 1 << 1 << false << false;
        QTest::newRow("avg include pad") << false << 1 << 2 << 1 << false << true;
        QTest::newRow("avg ceil") << false << 0 << 2 << 1 << true << false;
    }
    void poolingMatchesCpu() {
        QFETCH(bool, isMax);
        QFETCH(int, pad);
        QFETCH(int, stride);
        QFETCH(int, dilation);
        QFETCH(bool, ceil);
        QFETCH(bool, includePad);
        std::mt19937 rng(5);
        const Dims in{2, 3, 9, 8};
        const Tensor x = randomFloats(in, rng);
        const std::int64_t k = 3, extent = (k - 1) * dilation + 1;
        auto outDim = [&](std::int64_t n) {
            const std::int64_t span = n + 2 * pad - extent;
            return (ceil ? (span + stride - 1) / stride : span / stride) + 1;
        };
        const Dims out{2, 3, outDim(9), outDim(8)};
        Attrs attrs;
        attrs.set("kernel_shape", Dims{k, k});
        attrs.set("strides", Dims{stride, stride});
        attrs.set("pads", Dims{pad, pad, pad, pad});
        if (isMax)
            attrs.set("dilations", Dims{dilation, dilation});
        attrs.set("ceil_mode", std::int64_t{ceil ? 1 : 0});
        attrs.set("count_include_pad", std::int64_t{includePad ? 1 : 0});
        const auto expected =
            runOp(isMax ? "MaxPool" : "AveragePool", attrs, {x}, {{out, DType::Float32}});
        QCOMPARE(expected.size(), std::size_t{1});
        gpu::Pool op;
        std::vector<float> y(static_cast<std::size_t>(placer::product(out)));
        op.x = reinterpret_cast<const float*>(x.bytes.data());
        op.y = y.data();
        op.spatial = 2;
        for (int d = 0; d < 2; ++d) {
            op.in[d] = in[static_cast<std::size_t>(d) + 2];
            op.out[d] = out[static_cast<std::size_t>(d) + 2];
            op.kernel[d] = k;
            op.stride[d] = stride;
            op.dilation[d] = isMax ? dilation : 1;
            op.padL[d] = pad;
        }
        op.isMax = isMax;
        op.includePadding = includePad && pad > 0;
        gpu::runOnHost(op, static_cast<std::int64_t>(y.size()));
        compare(y, floats(expected[0]), 1e-5);
    }

    void batchAndLayerNormMatchCpu() {
        std::mt19937 rng(6);
        const Dims in{2, 5, 3, 4};
        const Tensor x = randomFloats(in, rng), gamma = randomFloats({5}, rng),
                     beta = randomFloats({5}, rng), mean = randomFloats({5}, rng);
        Tensor var = randomFloats({5}, rng);
        for (std::size_t i = 0; i < 20; i += 4) {
            float v;
            std::memcpy(&v, var.bytes.data() + i, 4);
            v = std::fabs(v) + 0.5f;
            std::memcpy(var.bytes.data() + i, &v, 4);
        }
        Attrs attrs;
        attrs.set("epsilon", 1e-3);
        const auto expected =
            runOp("BatchNormalization", attrs, {x, gamma, beta, mean, var}, {{in, DType::Float32}});
        std::vector<float> y(static_cast<std::size_t>(placer::product(in)));
        gpu::BatchNorm bn;
        bn.x = reinterpret_cast<const float*>(x.bytes.data());
        bn.y = y.data();
        bn.gamma = reinterpret_cast<const float*>(gamma.bytes.data());
        bn.beta = reinterpret_cast<const float*>(beta.bytes.data());
        bn.mean = reinterpret_cast<const float*>(mean.bytes.data());
        bn.var = reinterpret_cast<const float*>(var.bytes.data());
        bn.channels = 5;
        bn.inner = 12;
        bn.epsilon = 1e-3f;
        gpu::runOnHost(bn, static_cast<std::int64_t>(y.size()));
        compare(y, floats(expected[0]), 1e-5);

        // Layer norm over the last axis of [6, 7].
        const Tensor z = randomFloats({6, 7}, rng), g = randomFloats({7}, rng),
                     b = randomFloats({7}, rng);
        Attrs ln;
        ln.set("axis", std::int64_t{-1});
        const auto lnExpected = runOp("LayerNormalization", ln, {z, g, b}, {z.type});
        std::vector<float> w(42);
        gpu::LayerNorm op;
        op.x = reinterpret_cast<const float*>(z.bytes.data());
        op.y = w.data();
        op.gamma = reinterpret_cast<const float*>(g.bytes.data());
        op.beta = reinterpret_cast<const float*>(b.bytes.data());
        op.channels = 7;
        op.inner = 1;
        gpu::runRowsOnHost(op, 6);
        compare(w, floats(lnExpected[0]), 1e-5);
    }

    void reductionsMatchCpu() {
        std::mt19937 rng(7);
        const Dims in{3, 4, 5};
        const Tensor x = randomFloats(in, rng);
        Attrs attrs;
        attrs.set("axes", Dims{0, 2});
        attrs.set("keepdims", std::int64_t{0});
        const auto expected = runOp("ReduceMean", attrs, {x}, {{{4}, DType::Float32}});
        QCOMPARE(expected.size(), std::size_t{1});
        std::vector<float> y(4);
        gpu::Reduce op;
        op.x = x.bytes.data();
        op.y = y.data();
        op.fn = ReduceFn::Mean;
        op.kept = shapeOf({4});
        op.keptStrides = stridesOf({5});
        op.reduced = shapeOf({3, 5});
        op.reducedStrides = stridesOf({20, 1});
        op.count = 15;
        gpu::runRowsOnHost(op, 4);
        compare(y, floats(expected[0]), 1e-6);
    }

    void gatherClipsWrapsAndReports() {
        const Tensor data = make<float>({2, 3}, DType::Float32, {1, 2, 3, 4, 5, 6});
        const Tensor indices = make<std::int64_t>({3}, DType::Int64, {2, -1, 7});
        std::vector<float> y(6);
        long long error[4] = {};
        gpu::Gather op;
        op.data = data.bytes.data();
        op.indices = indices.bytes.data();
        op.dst = y.data();
        op.dim = 3;
        op.inner = 1;
        op.count = 3;
        op.error = error;
        op.kernelId = 4;
        op.mode = 0; // clip
        gpu::runOnHost(op, 6);
        QCOMPARE(y, (std::vector<float>{3, 1, 3, 6, 4, 6}));
        op.mode = 1; // wrap
        gpu::runOnHost(op, 6);
        QCOMPARE(y, (std::vector<float>{3, 3, 2, 6, 6, 5}));
        QCOMPARE(error[0], 0LL);
        op.mode = 2; // raise: -1 counts from the end, 7 is reported
        gpu::runOnHost(op, 6);
        QCOMPARE(error[0], 1LL);
        QCOMPARE(error[1], 4LL);
        QCOMPARE(error[2], 7LL);
        QCOMPARE(error[3], 3LL);
    }

    void reflectPadMatchesCpu() {
        std::mt19937 rng(8);
        const Tensor x = randomFloats({2, 4, 5}, rng);
        Attrs attrs;
        attrs.set("mode", std::string("reflect"));
        attrs.set("pads", Dims{0, 2, 1, 0, 3, 2});
        const Dims out{2, 9, 8};
        const auto expected = runOp("Pad", attrs, {x}, {{out, DType::Float32}});
        QCOMPARE(expected.size(), std::size_t{1});
        std::vector<float> y(static_cast<std::size_t>(placer::product(out)));
        gpu::Pad op;
        op.src = x.bytes.data();
        op.dst = y.data();
        op.in = shapeOf({2, 4, 5});
        op.out = shapeOf(out);
        op.before[1] = 2;
        op.before[2] = 1;
        op.mode = 2;
        gpu::runOnHost(op, static_cast<std::int64_t>(y.size()));
        compare(y, floats(expected[0]), 0);
    }

    // ---- caching allocator ---------------------------------------------------------------------

    void allocatorReusesAndCounts() {
        std::set<void*> live;
        int rawCalls = 0, rawFrees = 0;
        std::vector<std::unique_ptr<char[]>> arena;
        {
            placer::cuda::CachingAllocator allocator(
                [&](std::int64_t bytes, std::string*) -> void* {
                    ++rawCalls;
                    arena.push_back(std::make_unique<char[]>(static_cast<std::size_t>(bytes)));
                    live.insert(arena.back().get());
                    return arena.back().get();
                },
                [&](void* block) {
                    ++rawFrees;
                    live.erase(block);
                });
            QCOMPARE(placer::cuda::CachingAllocator::roundSize(1), std::int64_t{512});
            QCOMPARE(placer::cuda::CachingAllocator::roundSize(513), std::int64_t{1024});
            QCOMPARE(placer::cuda::CachingAllocator::roundSize((1 << 20) + 1),
                     std::int64_t{2 << 20});
            void* a = allocator.allocate(1000, nullptr);
            void* b = allocator.allocate(3 << 20, nullptr);
            QCOMPARE(allocator.stats().inUse, std::int64_t{1024 + (4 << 20)});
            allocator.free(a);
            allocator.free(b);
            QCOMPARE(allocator.stats().inUse, std::int64_t{0});
            QCOMPARE(allocator.stats().cached, std::int64_t{1024 + (4 << 20)});
            // Same sizes again: served from the cache, no raw calls.
            void* c = allocator.allocate(900, nullptr);
            void* d = allocator.allocate(3 << 20, nullptr);
            QCOMPARE(c, a);
            QCOMPARE(d, b);
            QCOMPARE(rawCalls, 2);
            QCOMPARE(allocator.stats().hits, std::int64_t{2});
            // A much smaller request does not take a big cached block.
            allocator.free(d);
            void* e = allocator.allocate(100, nullptr);
            QVERIFY(e != d);
            QCOMPARE(rawCalls, 3);
            QCOMPARE(allocator.stats().peak, std::int64_t{1024 + (4 << 20)});
            allocator.free(nullptr);
            allocator.free(reinterpret_cast<void*>(0x1234)); // not ours: ignored
        }
        QVERIFY2(live.empty(), "the destructor returned every block");
        QCOMPARE(rawFrees, rawCalls);
    }

    void allocatorReleasesCacheWhenOutOfMemory() {
        std::int64_t capacity = 8 << 20, used = 0;
        std::vector<std::unique_ptr<char[]>> arena;
        std::map<void*, std::int64_t> sizes;
        placer::cuda::CachingAllocator allocator(
            [&](std::int64_t bytes, std::string* error) -> void* {
                if (used + bytes > capacity) {
                    *error = "out of memory";
                    return nullptr;
                }
                used += bytes;
                arena.push_back(std::make_unique<char[]>(1));
                sizes[arena.back().get()] = bytes;
                return arena.back().get();
            },
            [&](void* block) { used -= sizes[block]; });
        void* a = allocator.allocate(6 << 20, nullptr);
        QVERIFY(a);
        allocator.free(a); // cached: the raw allocator still counts it
        // 4 MiB does not fit beside the cached 6 MiB, and 6 MiB is too big to hand out for it.
        void* b = allocator.allocate(2 << 20, nullptr);
        QVERIFY(b);
        void* c = allocator.allocate(4 << 20, nullptr);
        QVERIFY2(c, "the cache was released and the request retried");
        QCOMPARE(allocator.stats().cached, std::int64_t{0});
        std::string error;
        QVERIFY(!allocator.allocate(16 << 20, &error));
        QCOMPARE(QString::fromStdString(error), QString("out of memory"));
    }
};

QTEST_GUILESS_MAIN(TestCudaOps)
#include "tst_cudaops.moc"
