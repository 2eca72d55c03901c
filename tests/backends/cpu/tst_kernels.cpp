// Every CPU kernel family against a plain reference written here, on random shapes including
// odd sizes, padding, strides, groups and dilation.
#include "CapabilityCheck.h"
#include "KernelTestUtil.h"
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "ir/DimExpr.h"
#include "ir/StringPool.h"
#include "kernels/ElementFunctors.h"
#include "kernels/KernelSupport.h"
#include "kernels/OpGeometry.h"

#include <QtTest>

#include <tuple>

#include <array>
#include <numeric>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>

using namespace placer;
using namespace placer::test;
using Dims = std::vector<std::int64_t>;

namespace {

void compareFloats(const std::vector<float>& actual, const std::vector<float>& expected,
                   double tolerance, const char* what) {
    QCOMPARE(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(actual[i]) - expected[i]);
        if (!(diff <= tolerance * (1 + std::fabs(expected[i]))))
            QFAIL(qPrintable(QString("%1: element %2 is %3, expected %4")
                                 .arg(what)
                                 .arg(i)
                                 .arg(actual[i])
                                 .arg(expected[i])));
    }
}

Attrs attrs(std::initializer_list<std::pair<std::string, AttrValue>> entries) {
    Attrs a;
    for (const auto& [name, value] : entries)
        a.set(name, value);
    return a;
}

std::int64_t convOut(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                     std::int64_t p0, std::int64_t p1, bool ceil = false) {
    const std::int64_t extent = (k - 1) * d + 1;
    const std::int64_t span = in + p0 + p1 - extent;
    std::int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (out - 1) * s >= in + p0)
        --out;
    return out;
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    void convolution_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 24; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void convolution() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        const std::int64_t groups = pick(0, 3) == 0 ? pick(2, 3) : 1;
        const std::int64_t cin = groups * pick(1, 4), cout = groups * pick(1, 4);
        const std::int64_t n = pick(1, 2), h = pick(3, 11), w = pick(3, 12);
        const std::int64_t kh = pick(1, 3), kw = pick(1, 3), sh = pick(1, 3), sw = pick(1, 2);
        const std::int64_t dh = pick(1, 2), dw = pick(1, 2);
        const std::int64_t pt = pick(0, 2), pl = pick(0, 2), pb = pick(0, 2), pr = pick(0, 2);
        if ((kh - 1) * dh + 1 > h + pt + pb || (kw - 1) * dw + 1 > w + pl + pr)
            QSKIP("window larger than the padded input");
        const std::int64_t oh = convOut(h, kh, sh, dh, pt, pb), ow = convOut(w, kw, sw, dw, pl, pr);
        Tensor x = randomFloats({n, cin, h, w}, rng);
        Tensor wt = randomFloats({cout, cin / groups, kh, kw}, rng);
        Tensor bias = randomFloats({cout}, rng);
        const bool onnx = seed % 2 == 0;
        std::vector<Tensor> outputs;
        const TensorType outType{{n, cout, oh, ow}, DType::Float32};
        if (onnx) {
            outputs = runOp("Conv",
                            attrs({{"strides", Dims{sh, sw}},
                                   {"dilations", Dims{dh, dw}},
                                   {"pads", Dims{pt, pl, pb, pr}},
                                   {"group", groups},
                                   {"kernel_shape", Dims{kh, kw}}}),
                            {x, wt, bias}, {outType}, nullptr, {false, true, true});
        } else {
            outputs = runOp("nn.conv2d",
                            attrs({{"strides", Dims{sh, sw}},
                                   {"dilation", Dims{dh, dw}},
                                   {"padding", Dims{pt, pl, pb, pr}},
                                   {"groups", groups}}),
                            {x, wt}, {outType}, nullptr, {false, true});
        }
        QCOMPARE(outputs.size(), std::size_t{1});
        std::vector<float> expected(static_cast<std::size_t>(outType.elementCount()));
        const std::int64_t cinG = cin / groups, coutG = cout / groups;
        for (std::int64_t b = 0; b < n; ++b)
            for (std::int64_t o = 0; o < cout; ++o)
                for (std::int64_t y = 0; y < oh; ++y)
                    for (std::int64_t z = 0; z < ow; ++z) {
                        double sum = onnx ? bias.f(o) : 0;
                        const std::int64_t g = o / coutG;
                        for (std::int64_t c = 0; c < cinG; ++c)
                            for (std::int64_t i = 0; i < kh; ++i)
                                for (std::int64_t j = 0; j < kw; ++j) {
                                    const std::int64_t yy = y * sh - pt + i * dh;
                                    const std::int64_t zz = z * sw - pl + j * dw;
                                    if (yy < 0 || yy >= h || zz < 0 || zz >= w)
                                        continue;
                                    sum += static_cast<double>(
                                               x.f(((b * cin + g * cinG + c) * h + yy) * w + zz)) *
                                           wt.f(((o * cinG + c) * kh + i) * kw + j);
                                }
                        expected[static_cast<std::size_t>(((b * cout + o) * oh + y) * ow + z)] =
                            static_cast<float>(sum);
                    }
        compareFloats(floats(outputs[0]), expected, 1e-4, "conv");
        // Constant weights are reordered once: a second run gives the same result.
        auto again =
            runOp(onnx ? "Conv" : "nn.conv2d",
                  onnx ? attrs({{"strides", Dims{sh, sw}},
                                {"dilations", Dims{dh, dw}},
                                {"pads", Dims{pt, pl, pb, pr}},
                                {"group", groups}})
                       : attrs({{"strides", Dims{sh, sw}},
                                {"dilation", Dims{dh, dw}},
                                {"padding", Dims{pt, pl, pb, pr}},
                                {"groups", groups}}),
                  onnx ? std::vector<Tensor>{x, wt, bias} : std::vector<Tensor>{x, wt}, {outType});
        compareFloats(floats(again[0]), expected, 1e-4, "conv again");
    }

    void matrixProducts_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 30; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void matrixProducts() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        const std::int64_t m = pick(1, 9), k = pick(1, 11), n = pick(1, 7);
        const int kind = seed % 5;
        // Reference: C[b] = op(A[b]) x op(B[b]) with row-major storage.
        auto product = [&](const Tensor& a, const Tensor& b, bool ta, bool tb, std::int64_t ba,
                           std::int64_t bb, std::int64_t batches) {
            std::vector<float> c(static_cast<std::size_t>(batches * m * n));
            for (std::int64_t q = 0; q < batches; ++q) {
                const std::int64_t qa = ba == 1 ? 0 : q, qb = bb == 1 ? 0 : q;
                for (std::int64_t i = 0; i < m; ++i)
                    for (std::int64_t j = 0; j < n; ++j) {
                        double sum = 0;
                        for (std::int64_t l = 0; l < k; ++l) {
                            const float av =
                                ta ? a.f(qa * m * k + l * m + i) : a.f(qa * m * k + i * k + l);
                            const float bv =
                                tb ? b.f(qb * k * n + j * k + l) : b.f(qb * k * n + l * n + j);
                            sum += static_cast<double>(av) * bv;
                        }
                        c[static_cast<std::size_t>((q * m + i) * n + j)] = static_cast<float>(sum);
                    }
            }
            return c;
        };
        if (kind == 0) { // nn.dense
            Tensor a = randomFloats({m, k}, rng), b = randomFloats({n, k}, rng);
            auto out = runOp("nn.dense", {}, {a, b}, {{{m, n}, DType::Float32}});
            compareFloats(floats(out[0]), product(a, b, false, true, 1, 1, 1), 1e-4, "dense");
        } else if (kind == 1) { // nn.batch_matmul with transposes, batch broadcast
            const std::int64_t batches = pick(1, 4);
            const bool ta = pick(0, 1), tb = pick(0, 1);
            const std::int64_t bb = pick(0, 1) ? 1 : batches;
            Tensor a = randomFloats(ta ? Dims{batches, k, m} : Dims{batches, m, k}, rng);
            Tensor b = randomFloats(tb ? Dims{bb, n, k} : Dims{bb, k, n}, rng);
            auto out = runOp("nn.batch_matmul", attrs({{"transpose_a", ta}, {"transpose_b", tb}}),
                             {a, b}, {{{batches, m, n}, DType::Float32}});
            compareFloats(floats(out[0]), product(a, b, ta, tb, batches, bb, batches), 1e-4,
                          "batch_matmul");
        } else if (kind == 2) { // ONNX MatMul, 4-D with broadcast on both sides
            const std::int64_t p = pick(1, 3), q = pick(1, 3);
            Tensor a = randomFloats({p, 1, m, k}, rng), b = randomFloats({1, q, k, n}, rng);
            auto out = runOp("MatMul", {}, {a, b}, {{{p, q, m, n}, DType::Float32}});
            std::vector<float> expected;
            for (std::int64_t i = 0; i < p; ++i)
                for (std::int64_t j = 0; j < q; ++j) {
                    Tensor ai{{{m, k}, DType::Float32},
                              std::vector<std::byte>(a.bytes.begin() + i * m * k * 4,
                                                     a.bytes.begin() + (i + 1) * m * k * 4)};
                    Tensor bj{{{k, n}, DType::Float32},
                              std::vector<std::byte>(b.bytes.begin() + j * k * n * 4,
                                                     b.bytes.begin() + (j + 1) * k * n * 4)};
                    auto c = product(ai, bj, false, false, 1, 1, 1);
                    expected.insert(expected.end(), c.begin(), c.end());
                }
            compareFloats(floats(out[0]), expected, 1e-4, "MatMul broadcast");
        } else if (kind == 3) { // Gemm with alpha, beta, transposes and a row bias
            const bool ta = pick(0, 1), tb = pick(0, 1);
            Tensor a = randomFloats(ta ? Dims{k, m} : Dims{m, k}, rng);
            Tensor b = randomFloats(tb ? Dims{n, k} : Dims{k, n}, rng);
            Tensor c = randomFloats({n}, rng);
            auto out = runOp("Gemm",
                             attrs({{"alpha", 0.5},
                                    {"beta", 2.0},
                                    {"transA", std::int64_t{ta}},
                                    {"transB", std::int64_t{tb}}}),
                             {a, b, c}, {{{m, n}, DType::Float32}});
            auto expected = product(a, b, ta, tb, 1, 1, 1);
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    expected[static_cast<std::size_t>(i * n + j)] =
                        0.5f * expected[static_cast<std::size_t>(i * n + j)] + 2.0f * c.f(j);
            compareFloats(floats(out[0]), expected, 1e-4, "Gemm");
        } else { // MatMul with a 1-D right operand
            Tensor a = randomFloats({2, m, k}, rng), b = randomFloats({k}, rng);
            auto out = runOp("MatMul", {}, {a, b}, {{{2, m}, DType::Float32}});
            std::vector<float> expected;
            for (std::int64_t q = 0; q < 2; ++q)
                for (std::int64_t i = 0; i < m; ++i) {
                    double sum = 0;
                    for (std::int64_t l = 0; l < k; ++l)
                        sum += static_cast<double>(a.f((q * m + i) * k + l)) * b.f(l);
                    expected.push_back(static_cast<float>(sum));
                }
            compareFloats(floats(out[0]), expected, 1e-4, "MatMul vector");
        }
    }

    /// One row times a matrix (a decoder's step): the GEMV kernel's row streams and dot rows,
    /// at depths and widths around its blocks of eight rows and vectors of sixteen columns, per
    /// batch with broadcast weights, and Gemm's alpha and bias.
    void rowTimesMatrix_data() {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        for (const int k : {1, 7, 8, 17, 64, 513})
            for (const int n : {1, 15, 16, 33, 300})
                QTest::newRow(qPrintable(QString("k %1, n %2").arg(k).arg(n))) << k << n;
    }
    void rowTimesMatrix() {
        QFETCH(int, k);
        QFETCH(int, n);
        std::mt19937 rng(static_cast<unsigned>(k * 1000 + n));
        const auto dot = [&](const Tensor& x, std::int64_t xo, const Tensor& w, std::int64_t wo,
                             bool transposed, std::int64_t j) {
            double sum = 0;
            for (std::int64_t l = 0; l < k; ++l)
                sum += static_cast<double>(x.f(xo + l)) *
                       w.f(wo + (transposed ? j * k + l : l * n + j));
            return sum;
        };
        const Tensor x = randomFloats({1, 1, k}, rng);
        const Tensor w = randomFloats({k, n}, rng), wt = randomFloats({n, k}, rng);
        std::vector<float> expected(static_cast<std::size_t>(n)), expectedT(expected);
        for (std::int64_t j = 0; j < n; ++j) {
            expected[static_cast<std::size_t>(j)] = static_cast<float>(dot(x, 0, w, 0, false, j));
            expectedT[static_cast<std::size_t>(j)] = static_cast<float>(dot(x, 0, wt, 0, true, j));
        }
        const double tolerance = 1e-5 * std::sqrt(static_cast<double>(k));
        std::string implementation;
        compareFloats(floats(runOp("MatMul", {}, {x, w}, {{{1, 1, n}, DType::Float32}}, nullptr, {},
                                   13, &implementation)[0]),
                      expected, tolerance, "MatMul, one row");
        QVERIFY2(implementation.starts_with("gemv:"), implementation.c_str());
        compareFloats(floats(runOp("nn.dense", {}, {x, wt}, {{{1, 1, n}, DType::Float32}})[0]),
                      expectedT, tolerance, "dense, one row");
        // Gemm: 0.5 * x w^T + 2 * c, c a row and a scalar.
        const Tensor x2 = randomFloats({1, k}, rng), c = randomFloats({n}, rng);
        const Tensor scalar = randomFloats({1}, rng);
        for (const Tensor* bias : {&c, &scalar}) {
            std::vector<float> gemm(static_cast<std::size_t>(n));
            for (std::int64_t j = 0; j < n; ++j)
                gemm[static_cast<std::size_t>(j)] =
                    static_cast<float>(0.5 * dot(x2, 0, wt, 0, true, j) +
                                       2.0 * bias->f(bias->type.elementCount() == 1 ? 0 : j));
            compareFloats(
                floats(runOp("Gemm",
                             attrs({{"alpha", 0.5}, {"beta", 2.0}, {"transB", std::int64_t{1}}}),
                             {x2, wt, *bias}, {{{1, n}, DType::Float32}})[0]),
                gemm, tolerance, "Gemm, one row");
        }
        // Attention's shape: a row per head times that head's matrix, and one matrix for every
        // head (broadcast).
        const Tensor q = randomFloats({1, 3, 1, k}, rng), keys = randomFloats({1, 3, k, n}, rng);
        const Tensor shared = randomFloats({1, 1, k, n}, rng);
        std::vector<float> perHead(static_cast<std::size_t>(3 * n)), oneMatrix(perHead);
        for (std::int64_t h = 0; h < 3; ++h)
            for (std::int64_t j = 0; j < n; ++j) {
                perHead[static_cast<std::size_t>(h * n + j)] =
                    static_cast<float>(dot(q, h * k, keys, h * k * n, false, j));
                oneMatrix[static_cast<std::size_t>(h * n + j)] =
                    static_cast<float>(dot(q, h * k, shared, 0, false, j));
            }
        compareFloats(floats(runOp("MatMul", {}, {q, keys}, {{{1, 3, 1, n}, DType::Float32}})[0]),
                      perHead, tolerance, "MatMul, a row per head");
        compareFloats(floats(runOp("MatMul", {}, {q, shared}, {{{1, 3, 1, n}, DType::Float32}})[0]),
                      oneMatrix, tolerance, "MatMul, a row per head, one matrix");
    }

    /// Pow by a constant scalar exponent: whole numbers and halves as products and roots, the
    /// rest as std::pow, each against std::pow in double.
    void powerByAConstant() {
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> positive(0.1f, 3.0f);
        Tensor x{{{2, 300}, DType::Float32}, std::vector<std::byte>(2400)};
        for (std::int64_t i = 0; i < 600; ++i) {
            const float v = positive(rng);
            std::memcpy(x.bytes.data() + i * 4, &v, 4);
        }
        for (const float exponent : {1.0f, 2.0f, 3.0f, 4.0f, 0.5f, -1.0f, -0.5f, 1.5f}) {
            Tensor e{{{}, DType::Float32}, std::vector<std::byte>(4)};
            std::memcpy(e.bytes.data(), &exponent, 4);
            std::vector<float> expected(600);
            for (std::int64_t i = 0; i < 600; ++i)
                expected[static_cast<std::size_t>(i)] =
                    static_cast<float>(std::pow(static_cast<double>(x.f(i)), exponent));
            std::string implementation;
            const auto y = runOp("Pow", {}, {x, e}, {{{2, 300}, DType::Float32}}, nullptr,
                                 {false, true}, 13, &implementation);
            QVERIFY(!y.empty());
            compareFloats(floats(y[0]), expected, 2e-6,
                          qPrintable(QString("x ^ %1").arg(exponent)));
            QCOMPARE(implementation == "plain:power", exponent != 1.5f);
        }
    }

    /// A product whose rows follow the sizes a program runs at (a decoder's tokens: one at a
    /// step, many for the prompt) has its weights packed in oneDNN's blocks of columns, which
    /// the GEMV streams at one row and oneDNN's product reads at several: both against the
    /// product on the weights as they are, at one block of columns and several.
    void packedWeightsServeOneRowAndMany_data() {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        for (const auto& [k, n] : {std::pair{64, 64}, {48, 128}, {512, 192}, {96, 1024}})
            QTest::newRow(qPrintable(QString("k %1, n %2").arg(k).arg(n))) << k << n;
    }
    void packedWeightsServeOneRowAndMany() {
        QFETCH(int, k);
        QFETCH(int, n);
        std::mt19937 rng(static_cast<unsigned>(k + 7 * n));
        static CpuKernelContext context;
        const Tensor w = randomFloats({k, n}, rng);
        const auto spec = [&](Node& node, std::int64_t rows, const TensorData* weights) {
            node.name = "m";
            node.op = OpRegistry::global().find("MatMul");
            node.outputs = {{{1, rows, n}, DType::Float32}};
            node.symbolicShapes = {
                {DimExpr::constant(1), DimExpr::symbol("T"), DimExpr::constant(n)}};
            KernelSpec s;
            s.node = &node;
            s.inputs = {{{1, rows, k}, DType::Float32}, w.type};
            s.outputs = node.outputs;
            s.constantInputs = {false, true};
            s.constantData = {nullptr, weights};
            return s;
        };
        const TensorData plainData(reinterpret_cast<const char*>(w.bytes.data()), w.bytes.size());
        Node asked;
        const std::string layout = packedLayoutFor(spec(asked, 1, &plainData), 1, context);
        if (layout.empty())
            QSKIP(
                "oneDNN reads these weights in their own layout on this machine: nothing to pack");
        // The same node at fixed rows keeps the GEMV on the weights as they are.
        Node fixed;
        KernelSpec fixedSpec = spec(fixed, 1, &plainData);
        fixed.symbolicShapes.clear();
        QVERIFY(packedLayoutFor(fixedSpec, 1, context).empty());
        std::vector<std::byte> packed(w.bytes.size());
        const std::string failed =
            cpu::packConstant(packed.data(), w.bytes.data(),
                              static_cast<std::int64_t>(w.bytes.size()), layout, context);
        QVERIFY2(failed.empty(), failed.c_str());
        const TensorData packedData(reinterpret_cast<const char*>(packed.data()), packed.size());
        for (const std::int64_t rows : {1, 5, 32}) {
            const Tensor x = randomFloats({1, rows, k}, rng);
            std::vector<float> expected(static_cast<std::size_t>(rows * n));
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t j = 0; j < n; ++j) {
                    double sum = 0;
                    for (std::int64_t l = 0; l < k; ++l)
                        sum += static_cast<double>(x.f(r * k + l)) * w.f(l * n + j);
                    expected[static_cast<std::size_t>(r * n + j)] = static_cast<float>(sum);
                }
            Node node;
            node.hints.packedLayout = layout;
            auto kernel = makeCpuKernel(spec(node, rows, &packedData), context);
            QVERIFY2(kernel, kernel ? "" : kernel.error().message.c_str());
            const std::string implementation = kernel.value()->implementation();
            QVERIFY2(rows == 1 ? implementation == "gemv:packed column blocks"
                               : implementation.find("packed weights") != std::string::npos,
                     implementation.c_str());
            Tensor y{node.outputs[0],
                     std::vector<std::byte>(static_cast<std::size_t>(rows * n * 4))};
            const std::byte* in[] = {x.bytes.data(), packed.data()};
            std::byte* out[] = {y.bytes.data()};
            kernel.value()->run(in, out);
            compareFloats(floats(y), expected, 1e-5 * std::sqrt(static_cast<double>(k)),
                          qPrintable(QString("%1 rows").arg(rows)));
        }
    }

    /// MatMulNBits (ONNX Runtime's 4-bit blocks, and 2 and 8): against the product with every
    /// code dequantized in double, for block sizes 16, 32 and 128, K a multiple of the block and
    /// not, zero points absent (the middle code), packed and float, a row and several, a bias.
    void matMulNBits_data() {
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("block");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("zeros"); // 0 none, 1 packed uint8, 2 float
        QTest::addColumn<int>("rows");
        QTest::addColumn<bool>("bias");
        for (const int block : {16, 32, 128})
            for (const int k : {block * 2, block * 3 - 5, 33})
                for (const int zeros : {0, 1, 2})
                    QTest::newRow(qPrintable(QString("4-bit, block %1, K %2, zero points %3")
                                                 .arg(block)
                                                 .arg(k)
                                                 .arg(zeros)))
                        << 4 << block << k << zeros << (zeros == 1 ? 3 : 1) << (zeros == 2);
        QTest::newRow("8-bit, block 32, K 70") << 8 << 32 << 70 << 1 << 2 << true;
        QTest::newRow("2-bit, block 16, K 40") << 2 << 16 << 40 << 1 << 1 << false;
    }
    void matMulNBits() {
        QFETCH(int, bits);
        QFETCH(int, block);
        QFETCH(int, k);
        QFETCH(int, zeros);
        QFETCH(int, rows);
        QFETCH(bool, bias);
        std::mt19937 rng(static_cast<unsigned>(bits * 7919 + block * 31 + k * 3 + zeros));
        const int n = 19, blocks = (k + block - 1) / block, blob = block * bits / 8;
        const int levels = 1 << bits, perByte = 8 / bits;
        std::uniform_int_distribution<int> code(0, levels - 1);
        std::vector<int> codes(static_cast<std::size_t>(n * blocks * block));
        for (int& c : codes)
            c = code(rng);
        std::vector<std::uint8_t> packed(static_cast<std::size_t>(n * blocks * blob), 0);
        for (int i = 0; i < n * blocks * block; ++i) {
            const int within = i % block;
            if ((i / block) % blocks * block + within >= k)
                continue; // the last block's padding stays 0
            packed[static_cast<std::size_t>(i / block * blob + within / perByte)] |=
                static_cast<std::uint8_t>(codes[static_cast<std::size_t>(i)]
                                          << (within % perByte * bits));
        }
        const Tensor scales = randomFloats({n * blocks}, rng);
        std::vector<int> zeroCodes(static_cast<std::size_t>(n * blocks), levels / 2);
        const int zeroRow = (blocks + perByte - 1) / perByte;
        std::vector<std::uint8_t> zeroBytes(static_cast<std::size_t>(n * zeroRow), 0);
        std::vector<float> zeroFloats(static_cast<std::size_t>(n * blocks));
        for (int z = 0; z < n * blocks; ++z) {
            if (zeros == 0)
                break;
            zeroCodes[static_cast<std::size_t>(z)] = code(rng);
            zeroFloats[static_cast<std::size_t>(z)] =
                static_cast<float>(zeroCodes[static_cast<std::size_t>(z)]) + 0.5f * (zeros == 2);
            const int row = z / blocks, b = z % blocks;
            zeroBytes[static_cast<std::size_t>(row * zeroRow + b / perByte)] |=
                static_cast<std::uint8_t>(zeroCodes[static_cast<std::size_t>(z)]
                                          << (b % perByte * bits));
        }
        const Tensor a = randomFloats({1, rows, k}, rng);
        const Tensor biasValues = randomFloats({n}, rng);
        std::vector<float> expected(static_cast<std::size_t>(rows * n));
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < n; ++j) {
                double sum = bias ? biasValues.f(j) : 0.0;
                for (int i = 0; i < k; ++i) {
                    const int b = i / block, z = j * blocks + b;
                    const double zero = zeros == 2 ? zeroFloats[static_cast<std::size_t>(z)]
                                                   : zeroCodes[static_cast<std::size_t>(z)];
                    sum += a.f(r * k + i) *
                           (codes[static_cast<std::size_t>((j * blocks + b) * block + i % block)] -
                            zero) *
                           scales.f(z);
                }
                expected[static_cast<std::size_t>(r * n + j)] = static_cast<float>(sum);
            }
        std::vector<Tensor> inputs = {
            a, make<std::uint8_t>({n, blocks, blob}, DType::UInt8, packed), scales};
        if (zeros == 1)
            inputs.push_back(make<std::uint8_t>({n * zeroRow}, DType::UInt8, zeroBytes));
        else if (zeros == 2)
            inputs.push_back(make<float>({n * blocks}, DType::Float32, zeroFloats));
        Attrs attributes = attrs({{"K", std::int64_t{k}},
                                  {"N", std::int64_t{n}},
                                  {"bits", std::int64_t{bits}},
                                  {"block_size", std::int64_t{block}}});
        if (bias) {
            if (zeros == 0) // zero_points and g_idx left out: the bias is ONNX input 5
                attributes.set(kInputPositionsAttr, std::vector<std::int64_t>{0, 1, 2, 5});
            else
                attributes.set(kInputPositionsAttr, std::vector<std::int64_t>{0, 1, 2, 3, 5});
            inputs.push_back(biasValues);
        }
        std::string error, implementation;
        const auto out = runOp("com.microsoft.MatMulNBits", attributes, inputs,
                               {{{1, rows, n}, DType::Float32}}, &error, {}, 17, &implementation);
        QVERIFY2(!out.empty(), error.c_str());
        compareFloats(floats(out[0]), expected, 1e-4 * std::sqrt(static_cast<double>(k)),
                      implementation.c_str());
        // 4-bit blocks of a multiple of 32 take the vector path where the processor has it.
        const bool vector = bits == 4 && block % 32 == 0 && __builtin_cpu_supports("avx512f");
        QCOMPARE(implementation.find("avx512") != std::string::npos, vector);
    }

    /// ONNX Runtime's RMSNorm (SimplifiedLayerNormalization over the dimensions from `axis` on;
    /// SkipSimplifiedLayerNormalization of input + skip + bias, the skip broadcast over the
    /// batch, with its inverse deviation and the sum) against the formula in double.
    void rmsNorm() {
        std::mt19937 rng(11);
        const Tensor x = randomFloats({2, 3, 8}, rng), scale = randomFloats({3, 8}, rng);
        const auto reference = [&](const Tensor& in, const Tensor* skip, const Tensor* bias,
                                   const Tensor& gamma, std::int64_t count, double epsilon,
                                   std::vector<float>* sums, std::vector<float>* inverses) {
            std::vector<float> out(static_cast<std::size_t>(in.type.elementCount()));
            for (std::int64_t row = 0; row * count < in.type.elementCount(); ++row) {
                std::vector<double> s(static_cast<std::size_t>(count));
                double squares = 0;
                for (std::int64_t j = 0; j < count; ++j) {
                    const std::int64_t i = row * count + j;
                    double v = in.f(i);
                    if (skip)
                        v += skip->f(i % skip->type.elementCount());
                    if (bias)
                        v += bias->f(j);
                    s[static_cast<std::size_t>(j)] = v;
                    squares += v * v;
                }
                const double inv = 1.0 / std::sqrt(squares / static_cast<double>(count) + epsilon);
                if (inverses)
                    inverses->push_back(static_cast<float>(inv));
                for (std::int64_t j = 0; j < count; ++j) {
                    const auto at = static_cast<std::size_t>(row * count + j);
                    out[at] = static_cast<float>(s[static_cast<std::size_t>(j)] * inv * gamma.f(j));
                    if (sums)
                        sums->push_back(static_cast<float>(s[static_cast<std::size_t>(j)]));
                }
            }
            return out;
        };
        std::vector<float> inverses;
        const auto simplified =
            runOp("SimplifiedLayerNormalization",
                  attrs({{"axis", std::int64_t{1}}, {"epsilon", 1e-3}}), {x, scale},
                  {{{2, 3, 8}, DType::Float32}, {{2, 1, 1}, DType::Float32}}, nullptr, {}, 17);
        QCOMPARE(simplified.size(), std::size_t{2});
        compareFloats(floats(simplified[0]),
                      reference(x, nullptr, nullptr, scale, 24, 1e-3, nullptr, &inverses), 1e-5,
                      "SimplifiedLayerNormalization axis 1");
        compareFloats(floats(simplified[1]), inverses, 1e-5, "its inverse deviation");
        const Tensor skip = randomFloats({3, 8}, rng), gamma = randomFloats({8}, rng),
                     bias = randomFloats({8}, rng);
        std::vector<float> sums;
        const auto skipped = runOp("com.microsoft.SkipSimplifiedLayerNormalization",
                                   attrs({{"epsilon", 1e-5}}), {x, skip, gamma, bias},
                                   {{{2, 3, 8}, DType::Float32},
                                    {{0}, DType::Float32},
                                    {{0}, DType::Float32},
                                    {{2, 3, 8}, DType::Float32}},
                                   nullptr, {}, 17);
        QCOMPARE(skipped.size(), std::size_t{4});
        compareFloats(floats(skipped[0]),
                      reference(x, &skip, &bias, gamma, 8, 1e-5, &sums, nullptr), 1e-5,
                      "SkipSimplifiedLayerNormalization");
        compareFloats(floats(skipped[3]), sums, 1e-6, "its input + skip + bias");
        // Rows wider than the CPU kernel's lanes of sixteen, with a tail, one skip row for all
        // of them, no bias, and the inverse deviation asked for.
        const Tensor wide = randomFloats({5, 40}, rng), wideSkip = randomFloats({40}, rng),
                     wideGamma = randomFloats({40}, rng);
        std::vector<float> wideInverses;
        const auto widened =
            runOp("com.microsoft.SkipSimplifiedLayerNormalization", attrs({{"epsilon", 1e-5}}),
                  {wide, wideSkip, wideGamma},
                  {{{5, 40}, DType::Float32}, {{0}, DType::Float32}, {{5, 1}, DType::Float32}},
                  nullptr, {}, 17);
        QCOMPARE(widened.size(), std::size_t{3});
        compareFloats(
            floats(widened[0]),
            reference(wide, &wideSkip, nullptr, wideGamma, 40, 1e-5, nullptr, &wideInverses), 1e-5,
            "SkipSimplifiedLayerNormalization, rows of 40");
        compareFloats(floats(widened[2]), wideInverses, 1e-5, "their inverse deviations");
        std::string error;
        QVERIFY(runOp("SimplifiedLayerNormalization", {}, {x, randomFloats({7}, rng)},
                      {{{2, 3, 8}, DType::Float32}}, &error, {}, 17)
                    .empty());
        QVERIFY2(error.find("its scale has 7 values for rows of 8") != std::string::npos,
                 error.c_str());
    }

    /// Scales that do not fit B's blocks, and an unsupported bit width, are refused naming the
    /// node and the sizes.
    void matMulNBitsRefusals() {
        std::mt19937 rng(3);
        const Tensor a = randomFloats({1, 64}, rng);
        const Tensor b = make<std::uint8_t>({8, 2, 16}, DType::UInt8,
                                            std::vector<std::uint8_t>(8 * 2 * 16, 0x11));
        std::string error;
        auto out = runOp("com.microsoft.MatMulNBits",
                         attrs({{"K", std::int64_t{64}},
                                {"N", std::int64_t{8}},
                                {"bits", std::int64_t{4}},
                                {"block_size", std::int64_t{32}}}),
                         {a, b, randomFloats({8 * 3}, rng)}, {{{1, 8}, DType::Float32}}, &error);
        QVERIFY(out.empty());
        QVERIFY2(error.find("node 'n'") != std::string::npos &&
                     error.find("do not fit B's 16 blocks") != std::string::npos,
                 error.c_str());
        out = runOp("com.microsoft.MatMulNBits",
                    attrs({{"K", std::int64_t{64}},
                           {"N", std::int64_t{8}},
                           {"bits", std::int64_t{3}},
                           {"block_size", std::int64_t{32}}}),
                    {a, b, randomFloats({16}, rng)}, {{{1, 8}, DType::Float32}}, &error);
        QVERIFY(out.empty());
        QVERIFY2(error.find("takes 2, 4 or 8") != std::string::npos, error.c_str());
    }

    void pooling_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 30; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void pooling() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        const std::int64_t n = 1, c = pick(1, 3), h = pick(4, 11), w = pick(4, 11);
        const std::int64_t k = pick(1, 3), s = pick(1, 3),
                           p = std::min<std::int64_t>(pick(0, 1), k / 2);
        const bool isMax = seed % 2 == 1;
        const bool ceil = seed % 3 == 0;
        const std::int64_t d = isMax && seed % 5 == 0 ? 2 : 1;
        const bool includePad = !isMax && seed % 4 == 0;
        if ((k - 1) * d + 1 > h + 2 * p || (k - 1) * d + 1 > w + 2 * p)
            QSKIP("window larger than the padded input");
        const std::int64_t oh = convOut(h, k, s, d, p, p, ceil),
                           ow = convOut(w, k, s, d, p, p, ceil);
        Tensor x = randomFloats({n, c, h, w}, rng);
        const TensorType outType{{n, c, oh, ow}, DType::Float32};
        std::vector<Tensor> out;
        if (seed % 2 == 0 || isMax)
            out = runOp(isMax ? "nn.max_pool2d" : "nn.avg_pool2d",
                        attrs({{"pool_size", Dims{k, k}},
                               {"strides", Dims{s, s}},
                               {"dilation", Dims{d, d}},
                               {"padding", Dims{p, p, p, p}},
                               {"ceil_mode", ceil},
                               {"count_include_pad", includePad}}),
                        {x}, {outType});
        QCOMPARE(out.size(), std::size_t{1});
        std::vector<float> expected;
        for (std::int64_t q = 0; q < c; ++q)
            for (std::int64_t y = 0; y < oh; ++y)
                for (std::int64_t z = 0; z < ow; ++z) {
                    double best = -INFINITY, sum = 0;
                    int count = 0;
                    for (std::int64_t i = 0; i < k; ++i)
                        for (std::int64_t j = 0; j < k; ++j) {
                            const std::int64_t yy = y * s - p + i * d, zz = z * s - p + j * d;
                            if (yy < 0 || yy >= h || zz < 0 || zz >= w)
                                continue;
                            const float v = x.f((q * h + yy) * w + zz);
                            best = std::max<double>(best, v);
                            sum += v;
                            ++count;
                        }
                    if (includePad) {
                        // PyTorch: the window clipped to the padded input.
                        const std::int64_t y0 = y * s - p, z0 = z * s - p;
                        const std::int64_t y1 = std::min(y0 + k, h + p),
                                           z1 = std::min(z0 + k, w + p);
                        count = static_cast<int>((y1 - y0) * (z1 - z0));
                    }
                    expected.push_back(static_cast<float>(isMax ? best : sum / count));
                }
        compareFloats(floats(out[0]), expected, 1e-5, isMax ? "max pool" : "avg pool");
    }

    void globalAndAdaptivePooling() {
        std::mt19937 rng(7);
        Tensor x = randomFloats({2, 3, 7, 5}, rng);
        auto mean = runOp("GlobalAveragePool", {}, {x}, {{{2, 3, 1, 1}, DType::Float32}});
        auto max = runOp("nn.global_max_pool2d", {}, {x}, {{{2, 3, 1, 1}, DType::Float32}});
        std::vector<float> expectMean, expectMax;
        for (int p = 0; p < 6; ++p) {
            double sum = 0, best = -INFINITY;
            for (int i = 0; i < 35; ++i) {
                sum += x.f(p * 35 + i);
                best = std::max<double>(best, x.f(p * 35 + i));
            }
            expectMean.push_back(static_cast<float>(sum / 35));
            expectMax.push_back(static_cast<float>(best));
        }
        compareFloats(floats(mean[0]), expectMean, 1e-5, "global average");
        compareFloats(floats(max[0]), expectMax, 1e-6, "global max");
        // 7x5 to 3x2: windows of different sizes (PyTorch's adaptive rule).
        auto adaptive = runOp("nn.adaptive_avg_pool2d", attrs({{"output_size", Dims{3, 2}}}), {x},
                              {{{2, 3, 3, 2}, DType::Float32}});
        std::vector<float> expected;
        for (int p = 0; p < 6; ++p)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 2; ++j) {
                    const int h0 = i * 7 / 3, h1 = ((i + 1) * 7 + 2) / 3;
                    const int w0 = j * 5 / 2, w1 = ((j + 1) * 5 + 1) / 2;
                    double sum = 0;
                    for (int r = h0; r < h1; ++r)
                        for (int c = w0; c < w1; ++c)
                            sum += x.f(p * 35 + r * 5 + c);
                    expected.push_back(static_cast<float>(sum / ((h1 - h0) * (w1 - w0))));
                }
        compareFloats(floats(adaptive[0]), expected, 1e-5, "adaptive");
    }

    void normalisation() {
        std::mt19937 rng(3);
        Tensor x = randomFloats({2, 4, 3, 5}, rng);
        Tensor gamma = randomFloats({4}, rng), beta = randomFloats({4}, rng),
               mean = randomFloats({4}, rng);
        Tensor var = randomFloats({4}, rng);
        for (std::size_t i = 0; i < 4; ++i) {
            float v = std::fabs(var.f(static_cast<std::int64_t>(i))) + 0.1f;
            std::memcpy(var.bytes.data() + 4 * i, &v, 4);
        }
        const TensorType type = x.type;
        auto bn = runOp("nn.batch_norm", attrs({{"epsilon", 1e-3}}), {x, gamma, beta, mean, var},
                        {type, gamma.type, gamma.type});
        std::vector<float> expected;
        for (int b = 0; b < 2; ++b)
            for (int c = 0; c < 4; ++c)
                for (int i = 0; i < 15; ++i)
                    expected.push_back(static_cast<float>((x.f((b * 4 + c) * 15 + i) - mean.f(c)) /
                                                              std::sqrt(var.f(c) + 1e-3) *
                                                              gamma.f(c) +
                                                          beta.f(c)));
        compareFloats(floats(bn[0]), expected, 1e-5, "batch_norm");
        compareFloats(floats(bn[1]), floats(mean), 0, "batch_norm moving mean");
        // batch norm over the last axis: the plain path.
        Tensor g5 = randomFloats({5}, rng), b5 = randomFloats({5}, rng),
               m5 = randomFloats({5}, rng);
        Tensor v5 = make({5}, DType::Float32, std::vector<float>{0.5f, 1, 2, 0.25f, 1.5f});
        auto bnLast = runOp("nn.batch_norm", attrs({{"axis", std::int64_t{3}}}),
                            {x, g5, b5, m5, v5}, {type, g5.type, g5.type});
        expected.clear();
        for (std::int64_t i = 0; i < type.elementCount(); ++i) {
            const std::int64_t c = i % 5;
            expected.push_back(static_cast<float>(
                (x.f(i) - m5.f(c)) / std::sqrt(v5.f(c) + 1e-5) * g5.f(c) + b5.f(c)));
        }
        compareFloats(floats(bnLast[0]), expected, 1e-5, "batch_norm last axis");

        // Layer norm: Relay over the last axis and over axis 1; ONNX over axes 2.. as one.
        auto layerNorm = [&](std::int64_t outer, std::int64_t channels, std::int64_t inner,
                             const Tensor& g, const Tensor& bta) {
            std::vector<float> out(static_cast<std::size_t>(outer * channels * inner));
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i) {
                    double sum = 0, sq = 0;
                    for (std::int64_t c = 0; c < channels; ++c)
                        sum += x.f((o * channels + c) * inner + i);
                    const double mu = sum / static_cast<double>(channels);
                    for (std::int64_t c = 0; c < channels; ++c) {
                        const double dlt = x.f((o * channels + c) * inner + i) - mu;
                        sq += dlt * dlt;
                    }
                    const double inv = 1 / std::sqrt(sq / static_cast<double>(channels) + 1e-5);
                    for (std::int64_t c = 0; c < channels; ++c)
                        out[static_cast<std::size_t>((o * channels + c) * inner + i)] =
                            static_cast<float>((x.f((o * channels + c) * inner + i) - mu) * inv *
                                                   g.f(c) +
                                               bta.f(c));
                }
            return out;
        };
        auto lnLast =
            runOp("nn.layer_norm", attrs({{"axis", std::int64_t{-1}}}), {x, g5, b5}, {type});
        compareFloats(floats(lnLast[0]), layerNorm(24, 5, 1, g5, b5), 1e-4, "layer_norm last");
        auto lnMiddle =
            runOp("nn.layer_norm", attrs({{"axis", std::int64_t{1}}}), {x, gamma, beta}, {type});
        compareFloats(floats(lnMiddle[0]), layerNorm(2, 4, 15, gamma, beta), 1e-4,
                      "layer_norm axis 1");
        Tensor g15 = randomFloats({3, 5}, rng), b15 = randomFloats({3, 5}, rng);
        auto lnOnnx =
            runOp("LayerNormalization", attrs({{"axis", std::int64_t{2}}}), {x, g15, b15}, {type});
        compareFloats(floats(lnOnnx[0]), layerNorm(8, 15, 1, g15, b15), 1e-4,
                      "LayerNormalization axis 2");
    }

    void softmax() {
        std::mt19937 rng(5);
        Tensor x = randomFloats({3, 4, 5}, rng);
        auto reference = [&](std::int64_t outer, std::int64_t channels, std::int64_t inner,
                             bool log) {
            std::vector<float> out(static_cast<std::size_t>(outer * channels * inner));
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i) {
                    double best = -INFINITY, sum = 0;
                    for (std::int64_t c = 0; c < channels; ++c)
                        best = std::max<double>(best, x.f((o * channels + c) * inner + i));
                    for (std::int64_t c = 0; c < channels; ++c)
                        sum += std::exp(x.f((o * channels + c) * inner + i) - best);
                    for (std::int64_t c = 0; c < channels; ++c) {
                        const double v = x.f((o * channels + c) * inner + i) - best;
                        out[static_cast<std::size_t>((o * channels + c) * inner + i)] =
                            static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
                    }
                }
            return out;
        };
        compareFloats(
            floats(runOp("nn.softmax", attrs({{"axis", std::int64_t{1}}}), {x}, {x.type})[0]),
            reference(3, 4, 5, false), 1e-5, "softmax axis 1");
        compareFloats(floats(runOp("nn.log_softmax", {}, {x}, {x.type})[0]),
                      reference(12, 5, 1, true), 1e-5, "log_softmax");
        // Rows long and short, one masked but for its first element (a causal mask's first row).
        for (const std::int64_t width : {std::int64_t{1}, std::int64_t{17}, std::int64_t{1000}}) {
            Tensor rows = randomFloats({4, width}, rng);
            const float masked = -INFINITY;
            for (std::int64_t j = 1; j < width; ++j)
                std::memcpy(rows.bytes.data() + 4 * (2 * width + j), &masked, 4);
            std::vector<float> expected(static_cast<std::size_t>(4 * width));
            for (std::int64_t r = 0; r < 4; ++r) {
                double best = -INFINITY, sum = 0;
                for (std::int64_t j = 0; j < width; ++j)
                    best = std::max<double>(best, rows.f(r * width + j));
                for (std::int64_t j = 0; j < width; ++j)
                    sum += std::exp(rows.f(r * width + j) - best);
                for (std::int64_t j = 0; j < width; ++j)
                    expected[static_cast<std::size_t>(r * width + j)] =
                        static_cast<float>(std::exp(rows.f(r * width + j) - best) / sum);
            }
            compareFloats(floats(runOp("Softmax", attrs({{"axis", std::int64_t{-1}}}), {rows},
                                       {rows.type})[0]),
                          expected, 1e-6, ("Softmax rows of " + std::to_string(width)).c_str());
        }
        // ONNX before opset 13: everything from the axis on is one row.
        compareFloats(floats(runOp("Softmax", attrs({{"axis", std::int64_t{1}}}), {x}, {x.type},
                                   nullptr, {}, 11)[0]),
                      reference(3, 20, 1, false), 1e-5, "Softmax opset 11");
    }

    // The CPU's logarithms are as exact as CUDA's (the GPU check found oneDNN's 3e-6 off): log
    // near 1 to a few ulps relative, log_softmax to a few ulps of its values.
    void logarithmsAreExactToAFewUlps() {
        std::vector<float> values;
        for (int i = -2000; i <= 2000; ++i)
            values.push_back(1.0f + static_cast<float>(i) * 1e-6f);
        for (int i = 1; i <= 200; ++i)
            values.push_back(static_cast<float>(i) * 0.05f);
        const std::int64_t n = static_cast<std::int64_t>(values.size());
        Tensor x = make({n}, DType::Float32, values);
        const std::vector<float> logs = floats(runOp("log", {}, {x}, {x.type})[0]);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double exact = std::log(static_cast<double>(values[i]));
            const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(exact), 1e-30)) - 23);
            if (std::fabs(logs[i] - exact) > 2 * ulp + 1e-30)
                QFAIL(qPrintable(QString("log(%1) is %2, exactly %3")
                                     .arg(values[i], 0, 'g', 9)
                                     .arg(logs[i], 0, 'g', 9)
                                     .arg(exact, 0, 'g', 9)));
        }
        std::mt19937 rng(9);
        Tensor y = randomFloats({64, 33}, rng);
        const std::vector<float> got = floats(runOp("nn.log_softmax", {}, {y}, {y.type})[0]);
        for (std::int64_t r = 0; r < 64; ++r) {
            double best = -INFINITY, sum = 0;
            for (std::int64_t c = 0; c < 33; ++c)
                best = std::max<double>(best, y.f(r * 33 + c));
            for (std::int64_t c = 0; c < 33; ++c)
                sum += std::exp(y.f(r * 33 + c) - best);
            for (std::int64_t c = 0; c < 33; ++c) {
                const double exact = y.f(r * 33 + c) - best - std::log(sum);
                QVERIFY2(std::fabs(got[static_cast<std::size_t>(r * 33 + c)] - exact) <
                             4 * std::ldexp(1.0, std::ilogb(std::fabs(exact) + 1e-3) - 23),
                         qPrintable(QString("log_softmax row %1 column %2").arg(r).arg(c)));
            }
        }
    }

    // A max-pool window wholly in the padding gives the lowest float (oneDNN, TVM), on the
    // element functor (the GPU's) as on the oneDNN kernel.
    void maxPoolWindowInThePadding() {
        functors::Pool pool;
        const std::vector<float> input(4, 1.0f);
        float out = 0;
        pool.x = input.data();
        pool.y = &out;
        pool.isMax = true;
        pool.spatial = 2;
        pool.in[0] = pool.in[1] = 2;
        pool.out[0] = pool.out[1] = 1;
        pool.kernel[0] = pool.kernel[1] = 1;
        pool.stride[0] = pool.stride[1] = 1;
        pool.dilation[0] = pool.dilation[1] = 1;
        pool.padL[0] = pool.padL[1] = 1; // the one output's window is the padded corner
        pool(0);
        QCOMPARE(out, std::numeric_limits<float>::lowest());
        Tensor x = make({1, 1, 2, 2}, DType::Float32, input);
        const auto viaKernel = runOp("nn.max_pool2d",
                                     attrs({{"pool_size", Dims{1, 1}},
                                            {"strides", Dims{3, 3}},
                                            {"padding", Dims{1, 1, 1, 1}}}),
                                     {x}, {{{1, 1, 2, 2}, DType::Float32}});
        QCOMPARE(floats(viaKernel[0])[0], std::numeric_limits<float>::lowest());
    }

    void unary_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("dtype");
        for (const char* op : {"negative", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid",
                               "erf", "floor", "ceil", "round", "nn.relu", "nn.leaky_relu", "clip",
                               "HardSigmoid", "HardSwish", "Reciprocal", "Gelu"}) {
            QTest::newRow(qPrintable(QString(op) + " float32"))
                << QString(op) << int(DType::Float32);
            QTest::newRow(qPrintable(QString(op) + " float64"))
                << QString(op) << int(DType::Float64);
        }
    }
    void unary() {
        QFETCH(QString, op);
        QFETCH(int, dtype);
        std::mt19937 rng(11);
        std::uniform_real_distribution<double> dist(-3, 3);
        const bool positive = op == "log" || op == "sqrt" || op == "rsqrt";
        std::vector<double> values(37);
        for (double& v : values)
            v = positive ? std::fabs(dist(rng)) + 0.01 : dist(rng);
        values[0] = 2.5; // a tie for round (to even)
        values[1] = -0.5;
        if (positive)
            values[1] = 0.5;
        std::function<double(double)> f;
        const std::string name = op.toStdString();
        if (name == "negative")
            f = [](double v) { return -v; };
        if (name == "abs")
            f = [](double v) { return std::fabs(v); };
        if (name == "exp")
            f = [](double v) { return std::exp(v); };
        if (name == "log")
            f = [](double v) { return std::log(v); };
        if (name == "sqrt")
            f = [](double v) { return std::sqrt(v); };
        if (name == "rsqrt")
            f = [](double v) { return 1 / std::sqrt(v); };
        if (name == "tanh")
            f = [](double v) { return std::tanh(v); };
        if (name == "sigmoid")
            f = [](double v) { return 1 / (1 + std::exp(-v)); };
        if (name == "erf")
            f = [](double v) { return std::erf(v); };
        if (name == "floor")
            f = [](double v) { return std::floor(v); };
        if (name == "ceil")
            f = [](double v) { return std::ceil(v); };
        if (name == "round")
            f = [](double v) { return std::nearbyint(v); };
        if (name == "nn.relu")
            f = [](double v) { return v > 0 ? v : 0; };
        if (name == "nn.leaky_relu")
            f = [](double v) { return v > 0 ? v : 0.2 * v; };
        if (name == "clip")
            f = [](double v) { return std::clamp(v, -1.0, 0.5); };
        if (name == "HardSigmoid")
            f = [](double v) { return std::clamp(0.3 * v + 0.4, 0.0, 1.0); };
        if (name == "HardSwish")
            f = [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); };
        if (name == "Reciprocal")
            f = [](double v) { return 1 / v; };
        if (name == "Gelu")
            f = [](double v) { return v * (1 + std::erf(v / std::sqrt(2.0))) / 2; };
        Attrs a;
        if (name == "nn.leaky_relu")
            a.set("alpha", 0.2);
        if (name == "clip") {
            a.set("a_min", -1.0);
            a.set("a_max", 0.5);
        }
        if (name == "HardSigmoid") {
            a.set("alpha", 0.3);
            a.set("beta", 0.4);
        }
        const auto type = static_cast<DType>(dtype);
        Tensor x;
        if (type == DType::Float32) {
            std::vector<float> fl(values.begin(), values.end());
            x = make({37}, type, fl);
        } else {
            x = make({37}, type, values);
        }
        auto out = runOp(name, a, {x}, {x.type});
        QCOMPARE(out.size(), std::size_t{1});
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double input = type == DType::Float32
                                     ? static_cast<double>(static_cast<float>(values[i]))
                                     : values[i];
            const double got = type == DType::Float32
                                   ? out[0].f(static_cast<std::int64_t>(i))
                                   : out[0].at<double>(static_cast<std::int64_t>(i));
            const double want = f(input);
            if (std::fabs(got - want) > 2e-5 * (1 + std::fabs(want)))
                QFAIL(qPrintable(
                    QString("%1(%2) = %3, expected %4").arg(op).arg(input).arg(got).arg(want)));
        }
    }

    void binaryBroadcast_data() {
        QTest::addColumn<QString>("op");
        for (const char* op :
             {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
              "floor_divide", "mod", "less", "greater_equal", "equal", "Max"})
            QTest::newRow(op) << QString(op);
    }
    void binaryBroadcast() {
        QFETCH(QString, op);
        const std::string name = op.toStdString();
        std::mt19937 rng(13);
        const Dims shapes[][2] = {{{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},    {{3, 1}, {2, 1, 5}},
                                  {{1}, {2, 3}},          {{2, 1, 4}, {3, 1}}, {{}, {3}}};
        for (const auto& pair : shapes) {
            Tensor a = randomFloats(pair[0], rng), b = randomFloats(pair[1], rng);
            if (name == "power") { // positive bases
                for (std::int64_t i = 0; i < a.type.elementCount(); ++i) {
                    float v = std::fabs(a.f(i)) + 0.1f;
                    std::memcpy(a.bytes.data() + 4 * i, &v, 4);
                }
            }
            const std::size_t rank = std::max(pair[0].size(), pair[1].size());
            Dims out(rank, 1);
            for (std::size_t i = 0; i < rank; ++i) {
                const std::size_t ia = i + pair[0].size(), ib = i + pair[1].size();
                const std::int64_t da = ia >= rank ? pair[0][ia - rank] : 1;
                const std::int64_t db = ib >= rank ? pair[1][ib - rank] : 1;
                out[i] = std::max(da, db);
            }
            const bool comparison = name == "less" || name == "greater_equal" || name == "equal";
            const TensorType outType{out, comparison ? DType::Bool : DType::Float32};
            auto result = runOp(name, {}, {a, b}, {outType});
            QCOMPARE(result.size(), std::size_t{1});
            const std::int64_t count = outType.elementCount();
            for (std::int64_t i = 0; i < count; ++i) {
                // Unravel i and map into each operand (numpy rules).
                std::int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
                for (std::size_t d = rank; d-- > 0;) {
                    const std::int64_t idx = rest % out[d];
                    rest /= out[d];
                    const std::int64_t offA = static_cast<std::int64_t>(d) -
                                              static_cast<std::int64_t>(rank - pair[0].size());
                    const std::int64_t offB = static_cast<std::int64_t>(d) -
                                              static_cast<std::int64_t>(rank - pair[1].size());
                    if (offA >= 0) {
                        const std::int64_t dim = pair[0][static_cast<std::size_t>(offA)];
                        ia += (dim == 1 ? 0 : idx) * sa;
                        sa *= dim;
                    }
                    if (offB >= 0) {
                        const std::int64_t dim = pair[1][static_cast<std::size_t>(offB)];
                        ib += (dim == 1 ? 0 : idx) * sb;
                        sb *= dim;
                    }
                }
                const double x = a.f(ia), y = b.f(ib);
                double want = 0;
                if (name == "add")
                    want = x + y;
                if (name == "subtract")
                    want = x - y;
                if (name == "multiply")
                    want = x * y;
                if (name == "divide")
                    want = x / y;
                if (name == "maximum" || name == "Max")
                    want = std::max(x, y);
                if (name == "minimum")
                    want = std::min(x, y);
                if (name == "power")
                    want = std::pow(x, y);
                if (name == "floor_divide")
                    want = std::floor(static_cast<float>(x / y));
                if (name == "mod")
                    want = std::fmod(x, y);
                if (name == "less")
                    want = x < y;
                if (name == "greater_equal")
                    want = x >= y;
                if (name == "equal")
                    want = x == y;
                const double got = comparison ? static_cast<double>(result[0].at<std::uint8_t>(i))
                                              : result[0].f(i);
                if (std::fabs(got - want) > 1e-5 * (1 + std::fabs(want)))
                    QFAIL(qPrintable(QString("%1 element %2: %3, expected %4")
                                         .arg(op)
                                         .arg(i)
                                         .arg(got)
                                         .arg(want)));
            }
        }
    }

    // ONNX's variadic Max and Min (backend tests test_max_one_input, test_min_one_input): one
    // input is that input, in any element type.
    void variadicWithOneInput_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("dtype");
        QTest::newRow("max-one-float32") << "Max" << int(DType::Float32);
        QTest::newRow("min-one-float32") << "Min" << int(DType::Float32);
        QTest::newRow("max-one-int32") << "Max" << int(DType::Int32);
        QTest::newRow("min-one-int64") << "Min" << int(DType::Int64);
    }
    void variadicWithOneInput() {
        QFETCH(QString, op);
        QFETCH(int, dtype);
        const TensorType type{{2, 3}, static_cast<DType>(dtype)};
        Tensor input{type, std::vector<std::byte>(static_cast<std::size_t>(type.bytes()))};
        for (std::size_t i = 0; i < input.bytes.size(); ++i)
            input.bytes[i] = static_cast<std::byte>((i * 37 + 11) % 251);
        std::string error;
        const auto result = runOp(op.toStdString(), {}, {input}, {type}, &error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(result.size(), std::size_t{1});
        QVERIFY(result[0].bytes == input.bytes);
    }

    void integerArithmetic() {
        Tensor a = make({2, 3}, DType::Int64, std::vector<std::int64_t>{7, -7, 9, 10, 11, 12});
        Tensor b = make({3}, DType::Int64, std::vector<std::int64_t>{2, 2, 4});
        auto sum = runOp("add", {}, {a, b}, {{{2, 3}, DType::Int64}});
        auto div = runOp("divide", {}, {a, b}, {{{2, 3}, DType::Int64}});
        const std::int64_t expectSum[] = {9, -5, 13, 12, 13, 16};
        const std::int64_t expectDiv[] = {3, -3, 2, 5, 5, 3}; // truncates like C
        for (int i = 0; i < 6; ++i) {
            QCOMPARE(sum[0].at<std::int64_t>(i), expectSum[i]);
            QCOMPARE(div[0].at<std::int64_t>(i), expectDiv[i]);
        }
        Tensor cond = make({2, 1}, DType::Bool, std::vector<std::uint8_t>{1, 0});
        Tensor x = make({3}, DType::Int32, std::vector<std::int32_t>{1, 2, 3});
        Tensor y = make({2, 3}, DType::Int32, std::vector<std::int32_t>{-1, -2, -3, -4, -5, -6});
        auto where = runOp("where", {}, {cond, x, y}, {{{2, 3}, DType::Int32}});
        const std::int32_t expectWhere[] = {1, 2, 3, -4, -5, -6};
        for (int i = 0; i < 6; ++i)
            QCOMPARE(where[0].at<std::int32_t>(i), expectWhere[i]);
    }

    void reductions_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QVariantList>("axes");
        QTest::addColumn<bool>("keepdims");
        QTest::addColumn<bool>("exclude");
        QTest::newRow("sum axis 1") << "sum" << QVariantList{1} << false << false;
        QTest::newRow("mean axes 0,2 keep") << "mean" << QVariantList{0, 2} << true << false;
        QTest::newRow("max all") << "max" << QVariantList{} << false << false;
        QTest::newRow("min axis -1") << "min" << QVariantList{-1} << false << false;
        QTest::newRow("prod exclude 1") << "prod" << QVariantList{1} << false << true;
        QTest::newRow("ReduceMean axes 1,2") << "ReduceMean" << QVariantList{1, 2} << true << false;
    }
    void reductions() {
        QFETCH(QString, op);
        QFETCH(QVariantList, axes);
        QFETCH(bool, keepdims);
        QFETCH(bool, exclude);
        std::mt19937 rng(17);
        const Dims in{3, 4, 5};
        Tensor x = randomFloats(in, rng);
        std::vector<bool> reduced(3, axes.isEmpty());
        for (const QVariant& axis : axes)
            reduced[static_cast<std::size_t>((axis.toInt() + 3) % 3)] = true;
        if (exclude)
            reduced.flip();
        Dims kept = in, out;
        for (std::size_t d = 0; d < 3; ++d) {
            if (reduced[d])
                kept[d] = 1;
            if (!reduced[d] || keepdims)
                out.push_back(kept[d]);
        }
        Attrs a;
        Dims axisList;
        for (const QVariant& axis : axes)
            axisList.push_back(axis.toInt());
        const bool onnx = op.startsWith("Reduce");
        if (onnx) {
            a.set("axes", axisList);
            a.set("keepdims", std::int64_t{keepdims});
        } else {
            if (!axisList.empty())
                a.set("axis", axisList);
            a.set("keepdims", keepdims);
            a.set("exclude", exclude);
        }
        // Both the oneDNN (float32) path and the plain (float64) path.
        for (DType dtype : {DType::Float32, DType::Float64}) {
            Tensor input = x;
            if (dtype == DType::Float64) {
                std::vector<double> wide;
                for (std::int64_t i = 0; i < x.type.elementCount(); ++i)
                    wide.push_back(x.f(i));
                input = make(in, DType::Float64, wide);
            }
            auto result = runOp(op.toStdString(), a, {input}, {{out, dtype}});
            QCOMPARE(result.size(), std::size_t{1});
            const std::int64_t outCount = kept[0] * kept[1] * kept[2];
            std::vector<double> acc(static_cast<std::size_t>(outCount),
                                    op.contains("prod")                        ? 1.0
                                    : op.contains("max") || op.contains("Max") ? -INFINITY
                                    : op.contains("min")                       ? INFINITY
                                                                               : 0.0);
            for (std::int64_t i = 0; i < 60; ++i) {
                const std::int64_t c0 = i / 20, c1 = (i / 5) % 4, c2 = i % 5;
                const std::int64_t o =
                    ((reduced[0] ? 0 : c0) * kept[1] + (reduced[1] ? 0 : c1)) * kept[2] +
                    (reduced[2] ? 0 : c2);
                double& v = acc[static_cast<std::size_t>(o)];
                const double e = x.f(i);
                if (op.contains("prod"))
                    v *= e;
                else if (op == "max")
                    v = std::max(v, e);
                else if (op == "min")
                    v = std::min(v, e);
                else
                    v += e;
            }
            const double count = 60.0 / static_cast<double>(outCount);
            for (std::int64_t o = 0; o < outCount; ++o) {
                const double want = op.contains("mean") || op.contains("Mean")
                                        ? acc[static_cast<std::size_t>(o)] / count
                                        : acc[static_cast<std::size_t>(o)];
                const double got =
                    dtype == DType::Float32 ? result[0].f(o) : result[0].at<double>(o);
                if (std::fabs(got - want) > 1e-4 * (1 + std::fabs(want)))
                    QFAIL(qPrintable(QString("%1 %2 element %3: %4, expected %5")
                                         .arg(op)
                                         .arg(dtypeName(dtype).data())
                                         .arg(o)
                                         .arg(got)
                                         .arg(want)));
            }
        }
    }

    void dataMovement() {
        auto iota = [](Dims shape) {
            std::vector<float> v(
                static_cast<std::size_t>(TensorType{shape, DType::Float32}.elementCount()));
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = static_cast<float>(i);
            return make(shape, DType::Float32, v);
        };
        auto check = [](const Tensor& t, std::vector<float> expected, const char* what) {
            compareFloats(floats(t), expected, 0, what);
        };
        Tensor x = iota({2, 3, 4});
        // transpose (1, 2, 0)
        auto tr = runOp("transpose", attrs({{"axes", Dims{1, 2, 0}}}), {x},
                        {{{3, 4, 2}, DType::Float32}});
        std::vector<float> expected;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 4; ++j)
                for (int k = 0; k < 2; ++k)
                    expected.push_back(static_cast<float>(k * 12 + i * 4 + j));
        check(tr[0], expected, "transpose");
        // concatenate on axis 1 with a 2x1x4 tensor
        Tensor y = iota({2, 1, 4});
        auto cat = runOp("concatenate", attrs({{"axis", std::int64_t{1}}}), {x, y},
                         {{{2, 4, 4}, DType::Float32}});
        expected.clear();
        for (int b = 0; b < 2; ++b) {
            for (int i = 0; i < 12; ++i)
                expected.push_back(static_cast<float>(b * 12 + i));
            for (int i = 0; i < 4; ++i)
                expected.push_back(static_cast<float>(b * 4 + i));
        }
        check(cat[0], expected, "concatenate");
        // split into 1 and 2 along axis 1
        auto parts = runOp("Split", attrs({{"axis", std::int64_t{1}}}), {x},
                           {{{2, 1, 4}, DType::Float32}, {{2, 2, 4}, DType::Float32}});
        check(parts[0], {0, 1, 2, 3, 12, 13, 14, 15}, "split 0");
        check(parts[1], {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}, "split 1");
        // strided_slice with a negative step on the last axis
        auto sl = runOp(
            "strided_slice",
            attrs(
                {{"begin", Dims{1, 0, -1}}, {"end", Dims{2, 3, -5}}, {"strides", Dims{1, 2, -2}}}),
            {x}, {{{1, 2, 2}, DType::Float32}});
        check(sl[0], {15, 13, 23, 21}, "strided_slice");
        // ONNX Slice with constant bounds
        Tensor starts = make({1}, DType::Int64, std::vector<std::int64_t>{1});
        Tensor ends = make({1}, DType::Int64, std::vector<std::int64_t>{100});
        Tensor axes = make({1}, DType::Int64, std::vector<std::int64_t>{2});
        auto onnxSlice = runOp("Slice", {}, {x, starts, ends, axes}, {{{2, 3, 3}, DType::Float32}},
                               nullptr, {false, true, true, true});
        expected.clear();
        for (int i = 0; i < 6; ++i)
            for (int j = 1; j < 4; ++j)
                expected.push_back(static_cast<float>(i * 4 + j));
        check(onnxSlice[0], expected, "Slice");
        // Gather on axis 1 with a negative index; take with clip mode and no axis
        Tensor idx = make({2}, DType::Int64, std::vector<std::int64_t>{2, -3});
        auto gathered = runOp("Gather", attrs({{"axis", std::int64_t{1}}}), {x, idx},
                              {{{2, 2, 4}, DType::Float32}});
        check(gathered[0], {8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15}, "Gather");
        Tensor flatIdx = make({3}, DType::Int32, std::vector<std::int32_t>{5, 100, -1});
        auto taken = runOp("take", {}, {x, flatIdx}, {{{3}, DType::Float32}});
        check(taken[0], {5, 23, 0}, "take clip");
        // Pad: constant, edge and reflect
        Tensor v = iota({1, 3});
        Tensor pads = make({4}, DType::Int64, std::vector<std::int64_t>{0, 2, 0, 1});
        auto padded =
            runOp("Pad", {}, {v, pads}, {{{1, 6}, DType::Float32}}, nullptr, {false, true});
        check(padded[0], {0, 0, 0, 1, 2, 0}, "Pad constant");
        auto edge = runOp("Pad", attrs({{"mode", std::string("edge")}}), {v, pads},
                          {{{1, 6}, DType::Float32}}, nullptr, {false, true});
        check(edge[0], {0, 0, 0, 1, 2, 2}, "Pad edge");
        auto reflect = runOp("Pad", attrs({{"mode", std::string("reflect")}}), {v, pads},
                             {{{1, 6}, DType::Float32}}, nullptr, {false, true});
        check(reflect[0], {2, 1, 0, 1, 2, 1}, "Pad reflect");
        // Tile, Expand, Range, Shape, Cast
        auto tiled =
            runOp("Tile", {}, {v, make({2}, DType::Int64, std::vector<std::int64_t>{2, 2})},
                  {{{2, 6}, DType::Float32}});
        check(tiled[0], {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}, "Tile");
        auto expanded = runOp(
            "Expand", {}, {iota({3, 1}), make({2}, DType::Int64, std::vector<std::int64_t>{3, 2})},
            {{{3, 2}, DType::Float32}});
        check(expanded[0], {0, 0, 1, 1, 2, 2}, "Expand");
        auto range = runOp("Range", {},
                           {make({}, DType::Float32, std::vector<float>{1}),
                            make({}, DType::Float32, std::vector<float>{2}),
                            make({}, DType::Float32, std::vector<float>{0.25f})},
                           {{{4}, DType::Float32}});
        check(range[0], {1, 1.25f, 1.5f, 1.75f}, "Range");
        auto shape = runOp("Shape", {}, {x}, {{{3}, DType::Int64}});
        QCOMPARE(shape[0].at<std::int64_t>(0), std::int64_t{2});
        QCOMPARE(shape[0].at<std::int64_t>(2), std::int64_t{4});
        auto cast = runOp("cast", attrs({{"dtype", std::string("int32")}}),
                          {make({3}, DType::Float32, std::vector<float>{-1.7f, 2.5f, 3})},
                          {{{3}, DType::Int32}});
        QCOMPARE(cast[0].at<std::int32_t>(0), -1);
        QCOMPARE(cast[0].at<std::int32_t>(1), 2);
        auto half =
            runOp("Cast", {}, {make({3}, DType::Float32, std::vector<float>{1.5f, -2, 65504})},
                  {{{3}, DType::Float16}});
        QCOMPARE(half[0].at<std::uint16_t>(0), std::uint16_t{0x3e00});
        QCOMPARE(half[0].at<std::uint16_t>(1), std::uint16_t{0xc000});
        QCOMPARE(half[0].at<std::uint16_t>(2), std::uint16_t{0x7bff});
        auto back = runOp("Cast", {}, {half[0]}, {{{3}, DType::Float32}});
        check(back[0], {1.5f, -2, 65504}, "Cast float16 back");
        auto reshaped =
            runOp("reshape", attrs({{"newshape", Dims{4, 6}}}), {x}, {{{4, 6}, DType::Float32}});
        check(reshaped[0], floats(x), "reshape");
    }

    void gatherOutOfRangeThrows() {
        static CpuKernelContext context;
        Node node;
        node.name = "lookup";
        node.op = OpRegistry::global().find("Gather");
        node.outputs = {{{1}, DType::Float32}};
        KernelSpec spec;
        spec.node = &node;
        spec.inputs = {{{3}, DType::Float32}, {{1}, DType::Int64}};
        spec.outputs = node.outputs;
        spec.constantInputs = {false, false};
        spec.constantData = {nullptr, nullptr};
        auto kernel = makeCpuKernel(spec, context);
        QVERIFY(kernel.ok());
        const float data[3] = {1, 2, 3};
        const std::int64_t index = 3;
        float out = 0;
        const std::byte* in[] = {reinterpret_cast<const std::byte*>(data),
                                 reinterpret_cast<const std::byte*>(&index)};
        std::byte* outs[] = {reinterpret_cast<std::byte*>(&out)};
        try {
            kernel.value()->run(in, outs);
            QFAIL("an out-of-range index must throw");
        } catch (const KernelError& error) {
            QVERIFY2(QString(error.what()).contains("lookup"), error.what());
            QVERIFY2(QString(error.what()).contains("out of range"), error.what());
        }
    }

    // Every function of ir/ElementFunctions.def that an op names runs on the CPU in float32 and
    // computes what the shared functor (kernels/ElementFunctors.h) computes in double: a row
    // added there without its kernel, or a kernel that disagrees, fails here.
    void everyElementFunctionRuns_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("kind"); // 0 unary, 1 binary, 2 reduce
        QTest::addColumn<int>("fn");
        auto row = [](const char* onnx, const char* relay, int kind, int fn) {
            const char* op = *onnx ? onnx : relay;
            if (*op)
                QTest::newRow(op) << QString(op) << kind << fn;
        };
#define PLACER_UNARY_FN(Fn, name, onnx, relay) row(onnx, relay, 0, int(UnaryFn::Fn));
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind) row(onnx, relay, 1, int(BinaryFn::Fn));
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) row(onnx, relay, 2, int(ReduceFn::Fn));
#include "ir/ElementFunctions.def"
    }
    void everyElementFunctionRuns() {
        QFETCH(QString, op);
        QFETCH(int, kind);
        QFETCH(int, fn);
        const std::string name = op.toStdString();
        const std::vector<float> xs = {0.15f, 0.35f, 0.55f, 0.8f, 0.25f, 0.6f};
        const std::vector<float> ys = {0.5f, 0.35f, 0.2f, 0.9f, 0.3f, 0.45f};
        const std::int64_t n = static_cast<std::int64_t>(xs.size());
        const bool logical = (kind == 0 && fn == int(UnaryFn::Not)) ||
                             (kind == 1 && (fn == int(BinaryFn::And) || fn == int(BinaryFn::Or) ||
                                            fn == int(BinaryFn::Xor)));
        const bool boolOut =
            logical || (kind == 0 && (fn == int(UnaryFn::IsNaN) || fn == int(UnaryFn::IsInf))) ||
            (kind == 1 && fn >= int(BinaryFn::Eq) && fn <= int(BinaryFn::Ge));
        auto input = [&](const std::vector<float>& values) {
            if (!logical)
                return make({n}, DType::Float32, values);
            std::vector<std::uint8_t> flags;
            for (float v : values)
                flags.push_back(v > 0.4f);
            return make({n}, DType::Bool, flags);
        };
        std::vector<Tensor> inputs{input(xs)};
        if (kind == 1)
            inputs.push_back(input(ys));
        TensorType out{{n}, boolOut ? DType::Bool : DType::Float32};
        if (kind == 2) {
            const bool index = fn == int(ReduceFn::ArgMax) || fn == int(ReduceFn::ArgMin);
            // ONNX's reductions keep the reduced axis; Relay's drop it.
            out = TensorType{name.starts_with("Reduce") || index ? Dims{1} : Dims{},
                             index ? DType::Int64 : DType::Float32};
        }
        std::string error;
        const auto results = runOp(name, {}, inputs, {out}, &error);
        QVERIFY2(error.empty(),
                 qPrintable(op + ": no CPU kernel: " + QString::fromStdString(error)));
        QCOMPARE(results.size(), std::size_t{1});
        if (kind == 2) {
            const double got = out.dtype == DType::Int64 ? double(results[0].at<std::int64_t>(0))
                                                         : double(results[0].f(0));
            QVERIFY2(std::isfinite(got), qPrintable(op));
            return;
        }
        // The parameters the kernel reads from its (default) attributes.
        Node node;
        node.name = "n";
        node.op = OpRegistry::global().find(name);
        KernelSpec spec;
        spec.node = &node;
        for (const Tensor& t : inputs)
            spec.inputs.push_back(t.type);
        spec.outputs = {out};
        double a = 0, b = 0;
        if (kind == 0)
            QVERIFY(!geometry::readUnaryParameters(spec, &a, &b));
        for (std::int64_t i = 0; i < n; ++i) {
            const double x =
                logical ? double(xs[std::size_t(i)] > 0.4f) : double(xs[std::size_t(i)]);
            const double y =
                logical ? double(ys[std::size_t(i)] > 0.4f) : double(ys[std::size_t(i)]);
            const double want = kind == 0 ? functors::applyUnary<double>(UnaryFn(fn), x, a, b)
                                          : functors::applyBinary<double>(BinaryFn(fn), x, y);
            const double got =
                boolOut ? double(results[0].at<std::uint8_t>(i) != 0) : double(results[0].f(i));
            if (boolOut ? got != double(want != 0)
                        : std::fabs(got - want) > 1e-5 * (1 + std::fabs(want)))
                QFAIL(qPrintable(QString("%1 at %2: %3, the shared functor gives %4")
                                     .arg(op)
                                     .arg(x)
                                     .arg(got)
                                     .arg(want)));
        }
    }

    // The CPU backend registers a kernel for exactly the families the op registry says CPUs run.
    void cpuTableMatchesCapability() {
        const QString problems =
            test::capabilityDisagreements(cpuKernelFamilies(), DeviceKind::Cpu);
        QVERIFY2(problems.isEmpty(), qPrintable(problems));
    }

    // Every compute op is declared with a family some device kind runs; roles have none.
    void everyOpHasAKernelFamily() {
        for (const OpDef* op : OpRegistry::global().all()) {
            if (op->role != OpRole::Compute) {
                QCOMPARE(op->kernel.family, KernelFamily::None);
                continue;
            }
            QVERIFY2(op->hasAnyKernel(), op->name.c_str());
            QCOMPARE(op->hostOnly, op->kernel.family == KernelFamily::Shape);
        }
    }

    // Names of one function (Relay's, its fast_ form, ONNX's) run the same kernel, so every
    // parameterless unary op computes exactly what the others of its function compute.
    void aliasesComputeAlike() {
        std::vector<double> values;
        for (int i = 0; i < 23; ++i)
            values.push_back(0.37 * i - 3.9);
        const Tensor x = make({23}, DType::Float64, values);
        std::map<int, std::pair<std::string, std::vector<std::byte>>> firstOfFn;
        int aliases = 0;
        for (const OpDef* op : OpRegistry::global().all()) {
            const UnaryFn fn = op->kernel.unary();
            if (op->kernel.family != KernelFamily::Unary || fn == UnaryFn::Clip ||
                fn == UnaryFn::LeakyRelu || fn == UnaryFn::HardSigmoid || fn == UnaryFn::IsNaN ||
                fn == UnaryFn::IsInf)
                continue;
            std::string error;
            const auto out = runOp(op->name, {}, {x}, {x.type}, &error);
            QVERIFY2(error.empty(), error.c_str());
            const auto [it, inserted] =
                firstOfFn.emplace(static_cast<int>(fn), std::make_pair(op->name, out[0].bytes));
            if (!inserted) {
                ++aliases;
                QVERIFY2(out[0].bytes == it->second.second,
                         qPrintable(QString::fromStdString(op->name + " and " + it->second.first)));
            }
        }
        QVERIFY(aliases >= 10); // exp/fast_exp/Exp, relu/Relu, ...
    }

    // float16 and bfloat16 element-wise ops and reductions run the shared element functors on
    // the CPU, computing in double and rounding once.
    void halfPrecisionElementwise_data() {
        QTest::addColumn<int>("dtype");
        QTest::newRow("float16") << static_cast<int>(DType::Float16);
        QTest::newRow("bfloat16") << static_cast<int>(DType::BFloat16);
    }
    void halfPrecisionElementwise() {
        QFETCH(int, dtype);
        const auto type = static_cast<DType>(dtype);
        auto encode = [&](const std::vector<double>& values, Dims shape) {
            Tensor t{TensorType{std::move(shape), type}, {}};
            t.bytes.resize(values.size() * 2);
            for (std::size_t i = 0; i < values.size(); ++i)
                storeFromDouble(t.bytes.data(), type, static_cast<std::int64_t>(i), values[i]);
            return t;
        };
        auto decoded = [&](const Tensor& t, std::int64_t i) {
            return loadAsDouble(t.bytes.data(), type, i);
        };
        const double tolerance = type == DType::Float16 ? 2e-3 : 1.6e-2;
        std::vector<double> a(12), b(4);
        for (std::size_t i = 0; i < a.size(); ++i)
            a[i] = 0.25 * static_cast<double>(i) - 1.5;
        for (std::size_t i = 0; i < b.size(); ++i)
            b[i] = 0.5 + static_cast<double>(i);
        const Tensor ta = encode(a, {3, 4}), tb = encode(b, {4});
        // exact values survive the encoding: these are small multiples of 1/4
        const auto exp = runOp("exp", {}, {ta}, {ta.type});
        const auto sum = runOp("add", {}, {ta, tb}, {ta.type});
        Attrs axis;
        axis.set("axis", std::vector<std::int64_t>{1});
        const auto reduced = runOp("sum", axis, {ta}, {TensorType{{3}, type}});
        const auto less = runOp("less", {}, {ta, tb}, {TensorType{{3, 4}, DType::Bool}});
        QCOMPARE(exp.size(), std::size_t{1});
        QCOMPARE(sum.size(), std::size_t{1});
        QCOMPARE(reduced.size(), std::size_t{1});
        QCOMPARE(less.size(), std::size_t{1});
        for (std::int64_t i = 0; i < 12; ++i) {
            const double want = std::exp(a[static_cast<std::size_t>(i)]);
            QVERIFY(std::fabs(decoded(exp[0], i) - want) <= tolerance * want);
            QCOMPARE(decoded(sum[0], i),
                     a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i % 4)]);
            QCOMPARE(less[0].at<std::uint8_t>(i), std::uint8_t(a[static_cast<std::size_t>(i)] <
                                                               b[static_cast<std::size_t>(i % 4)]));
        }
        for (std::int64_t r = 0; r < 3; ++r) {
            double want = 0;
            for (std::size_t c = 0; c < 4; ++c)
                want += a[static_cast<std::size_t>(r) * 4 + c];
            QCOMPARE(decoded(reduced[0], r), want);
        }
    }

    /// Every family that computes runs in float16 and bfloat16: its float32 kernel on the
    /// operands converted, within the type's rounding of the float32 result on the same
    /// (rounded) inputs.
    void halfPrecisionFamilies_data() {
        halfPrecisionElementwise_data();
    }
    void halfPrecisionFamilies() {
        QFETCH(int, dtype);
        const auto type = static_cast<DType>(dtype);
        std::mt19937 rng(static_cast<unsigned>(dtype) + 40);
        const auto narrow = [&](const Tensor& wide) {
            Tensor t{TensorType{wide.type.shape, type}, {}};
            t.bytes.resize(static_cast<std::size_t>(wide.type.elementCount()) * 2);
            for (std::int64_t i = 0; i < wide.type.elementCount(); ++i)
                storeFromDouble(t.bytes.data(), type, i, wide.f(i));
            return t;
        };
        const auto widen = [&](const Tensor& half) {
            std::vector<float> values(static_cast<std::size_t>(half.type.elementCount()));
            for (std::size_t i = 0; i < values.size(); ++i)
                values[i] = static_cast<float>(
                    loadAsDouble(half.bytes.data(), type, static_cast<std::int64_t>(i)));
            return make(half.type.shape, DType::Float32, values);
        };
        // Inputs that 16 bits hold exactly, so both runs see the same values.
        const auto operand = [&](Dims shape) { return widen(narrow(randomFloats(shape, rng))); };
        const double tolerance = type == DType::Float16 ? 4e-3 : 3e-2;
        struct Case {
            const char* op;
            Attrs attrs;
            std::vector<Tensor> inputs;
            Dims out;
        };
        const Tensor x = operand({2, 3, 6, 6});
        const Tensor scale = operand({3}), bias = operand({3});
        const Tensor mean = operand({3}),
                     var = widen(narrow(make<float>({3}, DType::Float32, {0.5f, 1.0f, 2.0f})));
        const Tensor a = operand({4, 1, 16}), b = operand({16, 24});
        const Tensor w = operand({4, 3, 3, 3}), cb = operand({4});
        const Tensor rows = operand({5, 40}), gamma = operand({40}), beta = operand({40});
        std::vector<Case> cases = {
            {"Softmax", attrs({{"axis", std::int64_t{-1}}}), {rows}, {5, 40}},
            {"LayerNormalization",
             attrs({{"axis", std::int64_t{-1}}}),
             {rows, gamma, beta},
             {5, 40}},
            {"BatchNormalization", {}, {x, scale, bias, mean, var}, {2, 3, 6, 6}},
            {"InstanceNormalization", {}, {x, scale, bias}, {2, 3, 6, 6}},
            {"MaxPool",
             attrs({{"kernel_shape", Dims{2, 2}}, {"strides", Dims{2, 2}}}),
             {x},
             {2, 3, 3, 3}},
            {"AveragePool", attrs({{"kernel_shape", Dims{3, 3}}}), {x}, {2, 3, 4, 4}},
            {"GlobalAveragePool", {}, {x}, {2, 3, 1, 1}},
            {"Conv", attrs({{"pads", Dims{1, 1, 1, 1}}}), {x, w, cb}, {2, 4, 6, 6}},
            {"MatMul", {}, {a, b}, {4, 1, 24}},
            {"ReduceMean", attrs({{"axes", Dims{2, 3}}}), {x}, {2, 3, 1, 1}},
            {"Sigmoid", {}, {x}, {2, 3, 6, 6}},
            {"Tanh", {}, {x}, {2, 3, 6, 6}},
            {"Mul", {}, {x, x}, {2, 3, 6, 6}},
        };
        for (const Case& c : cases) {
            std::vector<Tensor> halves;
            for (const Tensor& input : c.inputs)
                halves.push_back(narrow(input));
            std::string error;
            const auto wide =
                runOp(c.op, c.attrs, c.inputs, {{c.out, DType::Float32}}, &error, {}, 17);
            QVERIFY2(!wide.empty(), (std::string(c.op) + " in float32: " + error).c_str());
            std::string implementation;
            const auto half =
                runOp(c.op, c.attrs, halves, {{c.out, type}}, &error, {}, 17, &implementation);
            QVERIFY2(!half.empty(), (std::string(c.op) + ": " + error).c_str());
            QVERIFY2(implementation.starts_with("float32 of 16 bits:"), implementation.c_str());
            const std::vector<float> expected = floats(wide[0]);
            double largest = 0, apart = 0;
            for (std::size_t i = 0; i < expected.size(); ++i) {
                largest = std::max(largest, std::fabs(static_cast<double>(expected[i])));
                apart = std::max(apart, std::fabs(loadAsDouble(half[0].bytes.data(), type,
                                                               static_cast<std::int64_t>(i)) -
                                                  expected[i]));
            }
            QVERIFY2(apart <= tolerance * std::max(largest, 1.0),
                     (std::string(c.op) + ": " + std::to_string(apart) + " apart, largest " +
                      std::to_string(largest))
                         .c_str());
        }
    }

    // Convolutions and matrix products in other types than float32 run plain loops; in float64
    // they agree with oneDNN's float32 results.
    void plainConvolutionAndMatmul_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 6; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void plainConvolutionAndMatmul() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        auto asDouble = [](const Tensor& t) {
            std::vector<double> values;
            for (float v : floats(t))
                values.push_back(v);
            return make(t.type.shape, DType::Float64, values);
        };
        auto doubles = [](const Tensor& t) {
            std::vector<double> values(static_cast<std::size_t>(t.type.elementCount()));
            std::memcpy(values.data(), t.bytes.data(), values.size() * 8);
            return values;
        };
        auto compare = [&](const Tensor& f32, const Tensor& f64, const char* what) {
            const std::vector<float> expected = floats(f32);
            const std::vector<double> actual = doubles(f64);
            compareFloats(std::vector<float>(actual.begin(), actual.end()), expected, 1e-4, what);
        };
        const std::int64_t groups = pick(1, 2), c = groups * pick(1, 3), oc = groups * pick(1, 2);
        const std::int64_t h = pick(3, 8), w = pick(3, 8), k = pick(1, 3), s = pick(1, 2),
                           d = pick(1, 2), p = pick(0, 1);
        if ((k - 1) * d + 1 > h + 2 * p || (k - 1) * d + 1 > w + 2 * p)
            QSKIP("window larger than the padded input");
        const Tensor x = randomFloats({2, c, h, w}, rng);
        const Tensor weights = randomFloats({oc, c / groups, k, k}, rng);
        const Dims outShape{2, oc, convOut(h, k, s, d, p, p), convOut(w, k, s, d, p, p)};
        Attrs a = attrs({{"strides", std::vector<std::int64_t>{s, s}},
                         {"dilation", std::vector<std::int64_t>{d, d}},
                         {"padding", std::vector<std::int64_t>{p, p, p, p}},
                         {"groups", groups}});
        const auto viaDnnl = runOp("nn.conv2d", a, {x, weights}, {{outShape, DType::Float32}});
        const auto viaPlain =
            runOp("nn.conv2d", a, {asDouble(x), asDouble(weights)}, {{outShape, DType::Float64}});
        QCOMPARE(viaPlain.size(), std::size_t{1});
        QCOMPARE(viaPlain[0].type.dtype, DType::Float64);
        compare(viaDnnl[0], viaPlain[0], "convolution");

        const std::int64_t m = pick(1, 5), kk = pick(1, 6), n = pick(1, 5), batch = pick(1, 3);
        const Tensor ma = randomFloats({batch, m, kk}, rng), mb = randomFloats({kk, n}, rng);
        const auto mm = runOp("nn.matmul", {}, {ma, mb}, {{{batch, m, n}, DType::Float32}});
        const auto mmPlain =
            runOp("nn.matmul", {}, {asDouble(ma), asDouble(mb)}, {{{batch, m, n}, DType::Float64}});
        QCOMPARE(mmPlain.size(), std::size_t{1});
        compare(mm[0], mmPlain[0], "matmul");
        // Gemm with transposes, alpha, beta and a broadcast C.
        const Tensor ga = randomFloats({kk, m}, rng), gb = randomFloats({n, kk}, rng),
                     gc = randomFloats({n}, rng);
        Attrs g = attrs({{"transA", std::int64_t{1}},
                         {"transB", std::int64_t{1}},
                         {"alpha", 0.5},
                         {"beta", 2.0}});
        const auto gemm = runOp("Gemm", g, {ga, gb, gc}, {{{m, n}, DType::Float32}});
        const auto gemmPlain = runOp("Gemm", g, {asDouble(ga), asDouble(gb), asDouble(gc)},
                                     {{{m, n}, DType::Float64}});
        QCOMPARE(gemmPlain.size(), std::size_t{1});
        compare(gemm[0], gemmPlain[0], "Gemm");
    }

    // The vectorised sigmoid, tanh and erf against the C library, from tiny to saturated
    // inputs, odd lengths (the vector loops' tails) and NaN.
    void vectorMathMatchesTheLibrary() {
        std::vector<float> x;
        for (float v = -120.0f; v <= 120.0f; v += 0.37f)
            x.push_back(v);
        for (float v = -6.0f; v <= 6.0f; v += 0.0013f)
            x.push_back(v);
        x.insert(x.end(), {0.0f, -0.0f, 1e-8f, -1e-8f, 88.7f, -88.7f, 1e30f, -1e30f});
        std::vector<float> y(x.size());
        cpu::vec::sigmoid(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY2(std::fabs(y[i] - 1 / (1 + std::exp(-double(x[i])))) <= 2e-7,
                     qPrintable(QString("sigmoid(%1) = %2").arg(x[i]).arg(y[i])));
        cpu::vec::tanh(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY2(std::fabs(y[i] - std::tanh(double(x[i]))) <= 2e-7,
                     qPrintable(QString("tanh(%1) = %2").arg(x[i]).arg(y[i])));
        cpu::vec::erf(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY2(std::fabs(y[i] - std::erf(double(x[i]))) <= 3e-7,
                     qPrintable(QString("erf(%1) = %2").arg(x[i]).arg(y[i])));
        // In place, and NaN stays NaN.
        std::vector<float> nan{std::nanf(""), 1.0f, std::nanf("")};
        cpu::vec::tanh(nan.data(), nan.data(), 3);
        QVERIFY(std::isnan(nan[0]) && std::isnan(nan[2]));
        QVERIFY(std::fabs(nan[1] - std::tanh(1.0)) <= 2e-7);
    }

    // RNN, GRU and LSTM in float32 (the CPU's vectorised kernel) against float64 (the shared
    // functor, which runs them element by element in double), over directions, layouts,
    // sequence lengths, clipping, peepholes, linear_before_reset, input_forget, initial states
    // and listed activations.
    void recurrentLayers_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 60; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void recurrentLayers() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        const int kind = (seed - 1) % 3; // 0 RNN, 1 GRU, 2 LSTM
        const char* const op = kind == 0 ? "RNN" : kind == 1 ? "GRU" : "LSTM";
        const std::int64_t gates = kind == 2 ? 4 : kind == 1 ? 3 : 1;
        const int direction = pick(0, 2);
        const std::int64_t dirs = direction == 2 ? 2 : 1;
        const bool batchFirst = pick(0, 1) == 1;
        const std::int64_t steps = pick(1, 6), batch = pick(1, 3), input = pick(1, 5),
                           hidden = pick(1, 9);
        Attrs a = attrs({{"hidden_size", hidden},
                         {"direction", std::string(direction == 0   ? "forward"
                                                   : direction == 1 ? "reverse"
                                                                    : "bidirectional")},
                         {"layout", std::int64_t{batchFirst ? 1 : 0}}});
        if (pick(0, 2) == 0)
            a.set("clip", 0.5 + pick(0, 3) * 0.5);
        if (kind == 1 && pick(0, 1) == 1)
            a.set("linear_before_reset", std::int64_t{1});
        if (kind == 2 && pick(0, 3) == 0)
            a.set("input_forget", std::int64_t{1});
        if (pick(0, 2) == 0) {
            static const char* const kNames[] = {"Sigmoid",   "Tanh",     "Relu", "HardSigmoid",
                                                 "LeakyRelu", "Softsign", "Elu"};
            // A gate activation (the first of each direction's in GRU and LSTM) that grows
            // without bound amplifies float32's rounding past any tolerance: bounded ones there.
            const std::int64_t perDirection = kind == 2 ? 3 : kind == 1 ? 2 : 1;
            std::string listed;
            for (std::int64_t k = 0; k < dirs * perDirection; ++k) {
                const bool gate = kind > 0 && k % perDirection == 0;
                const char* name = kNames[gate ? pick(0, 1) * 3 : pick(0, 6)];
                listed += (k ? "," : "") + std::string(name);
            }
            a.set("activations", listed);
        }
        std::vector<Tensor> in{
            randomFloats(batchFirst ? Dims{batch, steps, input} : Dims{steps, batch, input}, rng),
            randomFloats({dirs, gates * hidden, input}, rng),
            randomFloats({dirs, gates * hidden, hidden}, rng)};
        std::vector<std::int64_t> positions{0, 1, 2};
        const Dims state = batchFirst ? Dims{batch, dirs, hidden} : Dims{dirs, batch, hidden};
        if (pick(0, 3) > 0) {
            in.push_back(randomFloats({dirs, 2 * gates * hidden}, rng));
            positions.push_back(3);
        }
        int lengthsAt = -1;
        if (pick(0, 1) == 1) {
            std::vector<std::int32_t> lengths;
            for (std::int64_t b = 0; b < batch; ++b)
                lengths.push_back(pick(0, static_cast<int>(steps)));
            lengthsAt = static_cast<int>(in.size());
            in.push_back(make({batch}, DType::Int32, lengths));
            positions.push_back(4);
        }
        if (pick(0, 1) == 1) {
            in.push_back(randomFloats(state, rng));
            positions.push_back(5);
        }
        if (kind == 2 && pick(0, 1) == 1) {
            in.push_back(randomFloats(state, rng));
            positions.push_back(6);
        }
        if (kind == 2 && pick(0, 1) == 1) {
            in.push_back(randomFloats({dirs, 3 * hidden}, rng));
            positions.push_back(7);
        }
        a.set(kInputPositionsAttr, positions);
        // Weights small enough that unbounded activations (Relu, Elu) do not grow without bound,
        // where float32 and float64 part ways.
        for (std::size_t k = 1; k <= 2; ++k)
            for (std::int64_t i = 0; i < in[k].type.elementCount(); ++i) {
                const float v = in[k].f(i) * 0.5f;
                std::memcpy(in[k].bytes.data() + 4 * i, &v, 4);
            }
        std::vector<TensorType> out{
            {batchFirst ? Dims{batch, steps, dirs, hidden} : Dims{steps, dirs, batch, hidden},
             DType::Float32},
            {state, DType::Float32}};
        if (kind == 2)
            out.push_back({state, DType::Float32});

        std::string implementation;
        const auto fast = runOp(op, a, in, out, nullptr, {}, 14, &implementation);
        QCOMPARE(fast.size(), out.size());
        QVERIFY2(QString::fromStdString(implementation).contains("vector:recurrent"),
                 implementation.c_str());
        std::vector<Tensor> inDouble;
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (static_cast<int>(k) == lengthsAt) {
                inDouble.push_back(in[k]);
                continue;
            }
            const std::vector<float> values = floats(in[k]);
            inDouble.push_back(make(in[k].type.shape, DType::Float64,
                                    std::vector<double>(values.begin(), values.end())));
        }
        std::vector<TensorType> outDouble = out;
        for (TensorType& t : outDouble)
            t.dtype = DType::Float64;
        const auto reference = runOp(op, a, inDouble, outDouble, nullptr, {}, 14);
        QCOMPARE(reference.size(), out.size());
        for (std::size_t k = 0; k < out.size(); ++k) {
            std::vector<float> expected;
            for (std::int64_t i = 0; i < reference[k].type.elementCount(); ++i)
                expected.push_back(static_cast<float>(reference[k].at<double>(i)));
            compareFloats(floats(fast[k]), expected, 2e-5, k == 0 ? "Y" : k == 1 ? "Y_h" : "Y_c");
        }

        // An oracle of its own where the activations are the defaults: ONNX's equations for
        // RNN, GRU and LSTM written out here in double (gates i, o, f, c for LSTM; z, r, h for
        // GRU), with directions, layouts, clip, sequence lengths, initial states, peepholes,
        // input_forget and linear_before_reset.
        if (a.has("activations"))
            return;
        const double clip = a.getFloat("clip", 0).value_or(0);
        const bool linearBeforeReset = a.getInt("linear_before_reset", 0).value_or(0) != 0;
        const bool inputForget = a.getInt("input_forget", 0).value_or(0) != 0;
        auto inputAt = [&](int position) -> const Tensor* {
            for (std::size_t k = 0; k < positions.size(); ++k)
                if (positions[k] == position)
                    return &in[k];
            return nullptr;
        };
        const Tensor *bias = inputAt(3), *lengths = inputAt(4), *h0 = inputAt(5), *c0 = inputAt(6),
                     *peep = inputAt(7);
        auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
        auto clipped = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
        auto xAt = [&](std::int64_t t, std::int64_t b, std::int64_t k) {
            return static_cast<double>(
                in[0].f(((batchFirst ? b * steps + t : t * batch + b) * input) + k));
        };
        auto stateAt = [&](std::int64_t d, std::int64_t b) {
            return (batchFirst ? b * dirs + d : d * batch + b) * hidden;
        };
        std::vector<double> yRef(static_cast<std::size_t>(steps * dirs * batch * hidden), 0.0);
        std::vector<double> hRef(static_cast<std::size_t>(dirs * batch * hidden)),
            cRef(hRef.size());
        for (std::int64_t d = 0; d < dirs; ++d) {
            const bool backwards = direction == 1 || (direction == 2 && d == 1);
            // W x + Wb (and R h + Rb separately), for gate row `row` of direction d.
            auto wx = [&](std::int64_t t, std::int64_t b, std::int64_t row) {
                double acc = bias ? bias->f(d * 2 * gates * hidden + row) : 0.0;
                for (std::int64_t k = 0; k < input; ++k)
                    acc += xAt(t, b, k) * in[1].f((d * gates * hidden + row) * input + k);
                return acc;
            };
            auto rh = [&](const std::vector<double>& h, std::int64_t row) {
                double acc = bias ? bias->f(d * 2 * gates * hidden + gates * hidden + row) : 0.0;
                for (std::int64_t k = 0; k < hidden; ++k)
                    acc += h[static_cast<std::size_t>(k)] *
                           in[2].f((d * gates * hidden + row) * hidden + k);
                return acc;
            };
            for (std::int64_t b = 0; b < batch; ++b) {
                std::vector<double> h(static_cast<std::size_t>(hidden), 0.0), c = h;
                for (std::int64_t j = 0; j < hidden; ++j) {
                    if (h0)
                        h[static_cast<std::size_t>(j)] = h0->f(stateAt(d, b) + j);
                    if (c0)
                        c[static_cast<std::size_t>(j)] = c0->f(stateAt(d, b) + j);
                }
                std::int64_t length = steps;
                if (lengths)
                    length =
                        std::clamp<std::int64_t>(lengths->template at<std::int32_t>(b), 0, steps);
                for (std::int64_t s = 0; s < length; ++s) {
                    const std::int64_t t = backwards ? length - 1 - s : s;
                    std::vector<double> next(h.size()), nextC(c.size());
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        const auto J = static_cast<std::size_t>(j);
                        if (kind == 0) {
                            next[J] = std::tanh(clipped(wx(t, b, j) + rh(h, j)));
                        } else if (kind == 1) { // GRU: gates z, r, h
                            const double z = sigmoid(clipped(wx(t, b, j) + rh(h, j)));
                            const double r =
                                sigmoid(clipped(wx(t, b, hidden + j) + rh(h, hidden + j)));
                            double candidate;
                            if (linearBeforeReset) {
                                candidate = wx(t, b, 2 * hidden + j) + r * rh(h, 2 * hidden + j);
                            } else {
                                std::vector<double> rhPrev(h.size());
                                for (std::int64_t k = 0; k < hidden; ++k) {
                                    const double rk =
                                        sigmoid(clipped(wx(t, b, hidden + k) + rh(h, hidden + k)));
                                    rhPrev[static_cast<std::size_t>(k)] =
                                        rk * h[static_cast<std::size_t>(k)];
                                }
                                candidate = wx(t, b, 2 * hidden + j) + rh(rhPrev, 2 * hidden + j);
                            }
                            const double ht = std::tanh(clipped(candidate));
                            next[J] = (1 - z) * ht + z * h[J];
                        } else { // LSTM: gates i, o, f, c; peepholes i, o, f
                            const double pi = peep ? peep->f(d * 3 * hidden + j) : 0.0;
                            const double po = peep ? peep->f(d * 3 * hidden + hidden + j) : 0.0;
                            const double pf = peep ? peep->f(d * 3 * hidden + 2 * hidden + j) : 0.0;
                            const double i = sigmoid(clipped(wx(t, b, j) + rh(h, j) + pi * c[J]));
                            const double f =
                                inputForget ? 1 - i
                                            : sigmoid(clipped(wx(t, b, 2 * hidden + j) +
                                                              rh(h, 2 * hidden + j) + pf * c[J]));
                            const double g = std::tanh(
                                clipped(wx(t, b, 3 * hidden + j) + rh(h, 3 * hidden + j)));
                            nextC[J] = f * c[J] + i * g;
                            const double o = sigmoid(
                                clipped(wx(t, b, hidden + j) + rh(h, hidden + j) + po * nextC[J]));
                            next[J] = o * std::tanh(nextC[J]);
                        }
                    }
                    h = next;
                    if (kind == 2)
                        c = nextC;
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        const std::int64_t at = batchFirst
                                                    ? ((b * steps + t) * dirs + d) * hidden + j
                                                    : ((t * dirs + d) * batch + b) * hidden + j;
                        yRef[static_cast<std::size_t>(at)] = h[static_cast<std::size_t>(j)];
                    }
                }
                for (std::int64_t j = 0; j < hidden; ++j) {
                    hRef[static_cast<std::size_t>(stateAt(d, b) + j)] =
                        h[static_cast<std::size_t>(j)];
                    cRef[static_cast<std::size_t>(stateAt(d, b) + j)] =
                        c[static_cast<std::size_t>(j)];
                }
            }
        }
        const auto asFloats = [](const std::vector<double>& v) {
            return std::vector<float>(v.begin(), v.end());
        };
        compareFloats(floats(fast[0]), asFloats(yRef), 2e-5, "Y against ONNX's equations");
        compareFloats(floats(fast[1]), asFloats(hRef), 2e-5, "Y_h against ONNX's equations");
        if (kind == 2)
            compareFloats(floats(fast[2]), asFloats(cRef), 2e-5, "Y_c against ONNX's equations");
    }

    // Hidden sizes beyond the shared functor's limit run in float32: a two-step RNN with 300
    // units against the recurrence written out.
    void recurrentLayerBeyondTheFunctorsLimit() {
        std::mt19937 rng(7);
        const std::int64_t hidden = 300, input = 3;
        const Tensor x = randomFloats({2, 1, input}, rng);
        const Tensor w = randomFloats({1, hidden, input}, rng);
        Tensor r = randomFloats({1, hidden, hidden}, rng);
        for (std::int64_t i = 0; i < hidden * hidden; ++i) {
            const float v = r.f(i) * 0.05f;
            std::memcpy(r.bytes.data() + 4 * i, &v, 4);
        }
        std::string implementation;
        const auto y =
            runOp("RNN", attrs({{"hidden_size", hidden}}), {x, w, r},
                  {{{2, 1, 1, hidden}, DType::Float32}, {{1, 1, hidden}, DType::Float32}}, nullptr,
                  {false, true, true}, 14, &implementation);
        QCOMPARE(y.size(), std::size_t{2});
        QVERIFY2(QString::fromStdString(implementation).contains("vector:recurrent"),
                 implementation.c_str());
        std::vector<double> h(hidden, 0.0), next(hidden);
        std::vector<float> expected;
        for (std::int64_t t = 0; t < 2; ++t) {
            for (std::int64_t j = 0; j < hidden; ++j) {
                double acc = 0;
                for (std::int64_t k = 0; k < input; ++k)
                    acc += x.f(t * input + k) * w.f(j * input + k);
                for (std::int64_t k = 0; k < hidden; ++k)
                    acc += h[k] * r.f(j * hidden + k);
                next[j] = std::tanh(acc);
            }
            h = next;
            expected.insert(expected.end(), h.begin(), h.end());
        }
        compareFloats(floats(y[0]), expected, 2e-5, "Y");
        compareFloats(floats(y[1]), std::vector<float>(expected.end() - hidden, expected.end()),
                      2e-5, "Y_h");

        // The shared functor (float64) keeps its state in scratch memory, so it has no limit of
        // its own either: the same recurrence at 300 units, two batch entries, both directions
        // (four threads whose state vectors interleave in the scratch).
        std::vector<double> xs(2 * 2 * input), ws(2 * hidden * input), rs(2 * hidden * hidden);
        for (std::size_t i = 0; i < xs.size(); ++i)
            xs[i] = x.f(static_cast<std::int64_t>(i % (2 * input)));
        for (std::int64_t d = 0; d < 2; ++d) {
            for (std::int64_t i = 0; i < hidden * input; ++i)
                ws[d * hidden * input + i] = w.f(i) * (d ? -1.0 : 1.0);
            for (std::int64_t i = 0; i < hidden * hidden; ++i)
                rs[d * hidden * hidden + i] = r.f(i);
        }
        // X [2 steps, 2 batch, input]: batch entry b at step t is x's step (t + b) % 2.
        for (std::int64_t t = 0; t < 2; ++t)
            for (std::int64_t b = 0; b < 2; ++b)
                for (std::int64_t k = 0; k < input; ++k)
                    xs[(t * 2 + b) * input + k] = x.f(((t + b) % 2) * input + k);
        const auto y64 = runOp(
            "RNN", attrs({{"hidden_size", hidden}, {"direction", std::string("bidirectional")}}),
            {make({2, 2, input}, DType::Float64, xs), make({2, hidden, input}, DType::Float64, ws),
             make({2, hidden, hidden}, DType::Float64, rs)},
            {{{2, 2, 2, hidden}, DType::Float64}}, nullptr, {false, true, true}, 14,
            &implementation);
        QCOMPARE(y64.size(), std::size_t{1});
        QVERIFY2(!QString::fromStdString(implementation).contains("vector:recurrent"),
                 implementation.c_str());
        for (std::int64_t d = 0; d < 2; ++d)
            for (std::int64_t b = 0; b < 2; ++b) {
                std::vector<double> state(hidden, 0.0), stepped(hidden);
                for (std::int64_t s = 0; s < 2; ++s) {
                    const std::int64_t t = d == 1 ? 1 - s : s;
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        double acc = 0;
                        for (std::int64_t k = 0; k < input; ++k)
                            acc += xs[(t * 2 + b) * input + k] * ws[(d * hidden + j) * input + k];
                        for (std::int64_t k = 0; k < hidden; ++k)
                            acc += state[k] * rs[(d * hidden + j) * hidden + k];
                        stepped[j] = std::tanh(acc);
                    }
                    state = stepped;
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        const double got = y64[0].at<double>(((t * 2 + d) * 2 + b) * hidden + j);
                        if (std::fabs(got - state[j]) > 1e-5) // the state is float32
                            QFAIL(qPrintable(QString("Y[%1,%2,%3,%4] = %5, expected %6")
                                                 .arg(t)
                                                 .arg(d)
                                                 .arg(b)
                                                 .arg(j)
                                                 .arg(got)
                                                 .arg(state[j])));
                    }
                }
            }
    }

    // Det runs one thread per matrix with the matrix in scratch memory: any size. Three 20 x 20
    // matrices L U (unit lower times upper, so the determinant is U's diagonal's product), with
    // rows swapped in the second (the sign flips) and a zero row in the third.
    void determinantsOfLargeMatrices() {
        std::mt19937 rng(11);
        std::uniform_real_distribution<double> value(-1.0, 1.0), diagonal(0.5, 1.5);
        const std::int64_t n = 20, count = 3;
        std::vector<double> data;
        std::vector<double> expected;
        for (std::int64_t m = 0; m < count; ++m) {
            std::vector<double> l(n * n, 0.0), u(n * n, 0.0), a(n * n, 0.0);
            double det = 1;
            for (std::int64_t i = 0; i < n; ++i) {
                l[i * n + i] = 1;
                for (std::int64_t j = 0; j < i; ++j)
                    l[i * n + j] = value(rng) * 0.5;
                u[i * n + i] = diagonal(rng) * (i % 3 == 0 ? -1 : 1);
                det *= u[i * n + i];
                for (std::int64_t j = i + 1; j < n; ++j)
                    u[i * n + j] = value(rng);
            }
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    for (std::int64_t k = 0; k < n; ++k)
                        a[i * n + j] += l[i * n + k] * u[k * n + j];
            if (m == 1) {
                for (std::int64_t j = 0; j < n; ++j)
                    std::swap(a[2 * n + j], a[7 * n + j]);
                det = -det;
            }
            if (m == 2) {
                for (std::int64_t j = 0; j < n; ++j)
                    a[5 * n + j] = 0;
                det = 0;
            }
            data.insert(data.end(), a.begin(), a.end());
            expected.push_back(det);
        }
        const auto out = runOp("Det", {}, {make({count, n, n}, DType::Float64, data)},
                               {{{count}, DType::Float64}});
        QCOMPARE(out.size(), std::size_t{1});
        for (std::int64_t m = 0; m < count; ++m)
            QVERIFY2(std::fabs(out[0].at<double>(m) - expected[static_cast<std::size_t>(m)]) <=
                         1e-9 * std::max(1.0, std::fabs(expected[static_cast<std::size_t>(m)])),
                     qPrintable(QString("det %1: %2, expected %3")
                                    .arg(m)
                                    .arg(out[0].at<double>(m))
                                    .arg(expected[static_cast<std::size_t>(m)])));
    }

    // Resize in float32 (the CPU's separable kernel when only the last two dimensions change)
    // against float64 (the shared functor), over modes, coordinate transformations, nearest
    // modes, cubic's exclude_outside and tf_crop_and_resize's extrapolation, up and down.
    void separableResize_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 160; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void separableResize() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        static const char* const kModes[] = {"nearest", "linear", "cubic"};
        static const char* const kTransforms[] = {"half_pixel",         "asymmetric",
                                                  "pytorch_half_pixel", "align_corners",
                                                  "tf_crop_and_resize", "tf_half_pixel_for_nn"};
        static const char* const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                               "ceil"};
        const std::string mode = kModes[pick(0, 2)];
        const std::string transform = kTransforms[pick(0, 5)];
        Attrs a = attrs({{"mode", mode},
                         {"coordinate_transformation_mode", transform},
                         {"nearest_mode", std::string(kNearest[pick(0, 3)])},
                         {"exclude_outside", std::int64_t{pick(0, 1)}},
                         {"extrapolation_value", 0.25 * pick(-4, 4)}});
        // Only the spatial dimensions change, except in a few cases that take the functor.
        const bool channelsChange = seed % 10 == 0;
        const Dims in{pick(1, 2), pick(1, 3), pick(1, 7), pick(1, 7)};
        const Dims out{in[0], channelsChange ? in[1] + 1 : in[1], pick(1, 12), pick(1, 12)};
        const Tensor x = randomFloats(in, rng);
        std::vector<float> roi{0, 0, 0.1f * pick(0, 4),     0.1f * pick(0, 4),
                               1, 1, 1 - 0.1f * pick(0, 4), 1 - 0.1f * pick(0, 4)};
        std::vector<std::int64_t> sizes(out.begin(), out.end());
        const Tensor roiTensor = make({8}, DType::Float32, roi);
        const Tensor sizesTensor = make({4}, DType::Int64, sizes);
        a.set(kInputPositionsAttr, std::vector<std::int64_t>{0, 1, 3});
        std::string implementation;
        const auto fast = runOp("Resize", a, {x, roiTensor, sizesTensor}, {{out, DType::Float32}},
                                nullptr, {false, true, true}, 13, &implementation);
        QCOMPARE(fast.size(), std::size_t{1});
        // tf_half_pixel_for_nn shifts every coordinate by half a pixel, so outside nearest mode
        // even the unresized dimensions interpolate, and nearest rounding up moves them by one
        // where they hold more than one coordinate: the functor's case.
        const std::string rounding = a.getString("nearest_mode", "").value_or("");
        const bool roundsUp = rounding == "ceil" || rounding == "round_prefer_ceil";
        const bool shifted = transform == "tf_half_pixel_for_nn" &&
                             (mode != "nearest" || (roundsUp && (in[0] > 1 || in[1] > 1)));
        QCOMPARE(implementation == "vector:resize", !channelsChange && !shifted);
        const std::vector<float> values = floats(x);
        const auto reference =
            runOp("Resize", a,
                  {make(in, DType::Float64, std::vector<double>(values.begin(), values.end())),
                   roiTensor, sizesTensor},
                  {{out, DType::Float64}}, nullptr, {false, true, true}, 13);
        QCOMPARE(reference.size(), std::size_t{1});
        std::vector<float> expected;
        for (std::int64_t i = 0; i < reference[0].type.elementCount(); ++i)
            expected.push_back(static_cast<float>(reference[0].at<double>(i)));
        compareFloats(floats(fast[0]), expected, 1e-5, "Resize");

        // An oracle of its own for nearest and linear in the usual coordinate modes: ONNX's
        // definition written out per axis (the two resized axes are separable), in double.
        const std::string& nearestMode = rounding;
        const bool simple =
            !channelsChange && !shifted && mode != "cubic" && transform != "tf_crop_and_resize";
        if (!simple)
            return;
        // Per output coordinate of an axis: (lower index, upper index, weight of the upper).
        auto taps = [&](std::int64_t inSize, std::int64_t outSize) {
            std::vector<std::tuple<std::int64_t, std::int64_t, double>> result;
            const double scale = static_cast<double>(outSize) / static_cast<double>(inSize);
            for (std::int64_t o = 0; o < outSize; ++o) {
                double x = 0;
                if (transform == "align_corners")
                    x = outSize == 1 ? 0.0 : o * static_cast<double>(inSize - 1) / (outSize - 1);
                else if (transform == "asymmetric")
                    x = o / scale;
                else if (transform == "pytorch_half_pixel")
                    x = outSize == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
                else if (transform == "tf_half_pixel_for_nn")
                    x = (o + 0.5) / scale;
                else
                    x = (o + 0.5) / scale - 0.5;
                const auto clamp = [&](double v) {
                    return static_cast<std::int64_t>(std::min<double>(
                        std::max<double>(v, 0.0), static_cast<double>(inSize - 1)));
                };
                if (mode == "nearest") {
                    const double down = std::floor(x), ratio = x - down;
                    double at = down;
                    if (nearestMode == "floor")
                        at = down;
                    else if (nearestMode == "ceil")
                        at = std::ceil(x);
                    else if (nearestMode == "round_prefer_ceil")
                        at = ratio >= 0.5 ? down + 1 : down;
                    else // round_prefer_floor
                        at = ratio > 0.5 ? down + 1 : down;
                    result.emplace_back(clamp(at), clamp(at), 0.0);
                } else {
                    const double c =
                        std::min<double>(std::max<double>(x, 0.0), static_cast<double>(inSize - 1));
                    const auto lo = static_cast<std::int64_t>(std::floor(c));
                    result.emplace_back(lo, std::min(lo + 1, inSize - 1), c - std::floor(c));
                }
            }
            return result;
        };
        const auto rows = taps(in[2], out[2]), cols = taps(in[3], out[3]);
        std::vector<float> oracle;
        for (std::int64_t n = 0; n < out[0]; ++n)
            for (std::int64_t ch = 0; ch < out[1]; ++ch)
                for (const auto& [r0, r1, wr] : rows)
                    for (const auto& [c0, c1, wc] : cols) {
                        const auto at = [&](std::int64_t r, std::int64_t c) {
                            return static_cast<double>(values[static_cast<std::size_t>(
                                ((n * in[1] + ch) * in[2] + r) * in[3] + c)]);
                        };
                        oracle.push_back(static_cast<float>(
                            (1 - wr) * ((1 - wc) * at(r0, c0) + wc * at(r0, c1)) +
                            wr * ((1 - wc) * at(r1, c0) + wc * at(r1, c1))));
                    }
        compareFloats(floats(fast[0]), oracle, 1e-5, "Resize against ONNX's definition");
    }

    // Training-mode Dropout: a ratio of the elements dropped, the rest scaled by 1 / (1 - ratio),
    // the mask telling which, and the same draws for the same seed (different for another).
    // The random operators: seeded (the same seed, the same draws; another seed, others), with
    // the distributions they name.
    // A string is a handle: every kernel the CPU claims moves strings with (Identity, Reshape,
    // Transpose, Gather, Slice, Split, Tile, Expand, Concat, Compress) must move them exactly as
    // it moves int64s of the same bytes, on a tensor whose every handle differs.
    void dataMovementCarriesStrings() {
        const Dims s{2, 3, 4};
        std::vector<std::int64_t> handles(24);
        for (std::size_t k = 0; k < handles.size(); ++k)
            handles[k] = static_cast<std::int64_t>(internString("word" + std::to_string(k)));
        const Tensor asInts = make(s, DType::Int64, handles);
        Tensor asStrings = asInts;
        asStrings.type.dtype = DType::String;
        auto ints = [](Dims dims, std::vector<std::int64_t> values) {
            return make(std::move(dims), DType::Int64, values);
        };
        auto attrsOf = [](std::initializer_list<std::pair<std::string, AttrValue>> entries) {
            Attrs a;
            for (const auto& [name, value] : entries)
                a.set(name, value);
            return a;
        };
        struct Case {
            const char* op;
            Attrs attrs;
            std::vector<Tensor> rest; ///< the inputs after the data
            std::vector<Dims> outputs;
        };
        const std::vector<Case> cases{
            {"Identity", {}, {}, {s}},
            {"Reshape", {}, {ints({2}, {6, 4})}, {{6, 4}}},
            {"Transpose", attrsOf({{"perm", std::vector<std::int64_t>{2, 0, 1}}}), {}, {{4, 2, 3}}},
            {"Gather", attrsOf({{"axis", std::int64_t{1}}}), {ints({2}, {2, 0})}, {{2, 2, 4}}},
            {"Slice", {}, {ints({1}, {1}), ints({1}, {3}), ints({1}, {2})}, {{2, 3, 2}}},
            {"Split",
             attrsOf({{"axis", std::int64_t{2}}}),
             {ints({2}, {1, 3})},
             {{2, 3, 1}, {2, 3, 3}}},
            {"Tile", {}, {ints({3}, {1, 2, 1})}, {{2, 6, 4}}},
            {"Expand", {}, {ints({4}, {2, 2, 3, 4})}, {{2, 2, 3, 4}}},
            {"Concat", attrsOf({{"axis", std::int64_t{0}}}), {}, {{4, 3, 4}}},
            {"Compress",
             attrsOf({{"axis", std::int64_t{1}}}),
             {make({3}, DType::Bool, std::vector<std::uint8_t>{1, 0, 1})},
             {s}},
        };
        for (const Case& c : cases) {
            auto run = [&](const Tensor& data) {
                std::vector<Tensor> inputs{data};
                if (std::string(c.op) == "Concat")
                    inputs.push_back(data);
                inputs.insert(inputs.end(), c.rest.begin(), c.rest.end());
                std::vector<TensorType> outputs;
                for (const Dims& dims : c.outputs)
                    outputs.push_back({dims, data.type.dtype});
                std::vector<bool> constant(inputs.size(), true);
                constant[0] = false;
                std::string error;
                auto out = runOp(c.op, c.attrs, inputs, outputs, &error, constant);
                if (out.empty())
                    qFatal("%s of %s: %s", c.op, std::string(dtypeName(data.type.dtype)).c_str(),
                           error.c_str());
                return out;
            };
            const auto expected = run(asInts);
            const auto actual = run(asStrings);
            QCOMPARE(actual.size(), expected.size());
            for (std::size_t k = 0; k < actual.size(); ++k) {
                QVERIFY2(actual[k].type.dtype == DType::String, c.op);
                QCOMPARE(actual[k].type.shape, expected[k].type.shape);
                QVERIFY2(actual[k].bytes == expected[k].bytes, c.op);
            }
        }
    }

    // Cast between numbers and text, as ONNX writes and reads them.
    void castsBetweenNumbersAndText() {
        auto strings = [](const std::vector<std::string>& words) {
            std::vector<StringHandle> handles;
            for (const std::string& w : words)
                handles.push_back(internString(w));
            return make({static_cast<std::int64_t>(words.size())}, DType::String, handles);
        };
        auto texts = [](const Tensor& t) {
            std::vector<std::string> out;
            for (std::int64_t i = 0; i < t.type.elementCount(); ++i)
                out.emplace_back(stringOf(t.at<StringHandle>(i)));
            return out;
        };
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        const Tensor floats =
            make({5}, DType::Float32, std::vector<float>{0.1f, 1e-7f, -2.5f, nan, -inf});
        const auto written = runOp("Cast", {}, {floats}, {{{5}, DType::String}});
        QCOMPARE(texts(written[0]),
                 (std::vector<std::string>{"0.1", "1e-07", "-2.5", "NaN", "-INF"}));
        const Tensor big = make({1}, DType::Int64, std::vector<std::int64_t>{INT64_MAX});
        QCOMPARE(texts(runOp("Cast", {}, {big}, {{{1}, DType::String}})[0]),
                 std::vector<std::string>{"9223372036854775807"});

        const Tensor words = strings({"9007199254740993", " +7 ", "x", "-INF", "1e3"});
        const auto asInts = runOp("Cast", {}, {words}, {{{5}, DType::Int64}})[0];
        QCOMPARE(asInts.at<std::int64_t>(0), std::int64_t{9007199254740993}); // exactly
        QCOMPARE(asInts.at<std::int64_t>(1), std::int64_t{7});
        QCOMPARE(asInts.at<std::int64_t>(2), std::int64_t{0}); // no number
        QCOMPARE(asInts.at<std::int64_t>(4), std::int64_t{1000});
        const auto asFloats = runOp("Cast", {}, {words}, {{{5}, DType::Float32}})[0];
        QCOMPARE(asFloats.f(1), 7.0f);
        QVERIFY(std::isnan(asFloats.f(2)));
        QCOMPARE(asFloats.f(3), -inf);
        QCOMPARE(asFloats.f(4), 1000.0f);
    }

    void randomOperatorsAreSeededAndDistributed() {
        const std::int64_t n = 20000;
        auto draw = [&](const std::string& op, Attrs attrs, std::vector<test::Tensor> inputs,
                        TensorType out) {
            std::string error;
            auto result = test::runOp(op, attrs, inputs, {out}, &error);
            if (result.empty())
                qFatal("%s", error.c_str());
            return result[0];
        };
        auto stats = [&](const test::Tensor& t) {
            double sum = 0, squares = 0, low = 1e300, high = -1e300;
            for (std::int64_t i = 0; i < n; ++i) {
                const double v = t.type.dtype == DType::Float64 ? t.at<double>(i) : t.f(i);
                sum += v;
                squares += v * v;
                low = std::min(low, v);
                high = std::max(high, v);
            }
            const double mean = sum / n;
            return std::array<double, 4>{mean, std::sqrt(squares / n - mean * mean), low, high};
        };
        Attrs uniform;
        uniform.set("low", -2.0);
        uniform.set("high", 4.0);
        uniform.set("seed", 3.0);
        const auto u = draw("RandomUniform", uniform, {}, {{n}, DType::Float32});
        const auto su = stats(u);
        QVERIFY2(std::abs(su[0] - 1.0) < 0.05 && su[2] >= -2.0 && su[3] < 4.0,
                 qPrintable(QString("mean %1, range %2..%3").arg(su[0]).arg(su[2]).arg(su[3])));
        QCOMPARE(draw("RandomUniform", uniform, {}, {{n}, DType::Float32}).bytes, u.bytes);
        uniform.set("seed", 4.0);
        QVERIFY(draw("RandomUniform", uniform, {}, {{n}, DType::Float32}).bytes != u.bytes);

        Attrs normal;
        normal.set("mean", 5.0);
        normal.set("scale", 2.0);
        const auto g = draw("RandomNormalLike", normal,
                            {test::make({n}, DType::Float32, std::vector<float>(n, 0.0f))},
                            {{n}, DType::Float64});
        const auto sg = stats(g);
        QVERIFY2(std::abs(sg[0] - 5.0) < 0.05 && std::abs(sg[1] - 2.0) < 0.05,
                 qPrintable(QString("mean %1, deviation %2").arg(sg[0]).arg(sg[1])));

        const auto b =
            draw("Bernoulli", {}, {test::make({n}, DType::Float32, std::vector<float>(n, 0.3f))},
                 {{n}, DType::Float32});
        QVERIFY2(std::abs(stats(b)[0] - 0.3) < 0.02, qPrintable(QString::number(stats(b)[0])));

        // Logits log(1), log(3): class 1 three times as often as class 0.
        Attrs multinomial;
        multinomial.set("sample_size", n);
        const auto m =
            draw("Multinomial", multinomial,
                 {test::make({1, 2}, DType::Float32, std::vector<float>{0.0f, std::log(3.0f)})},
                 {{1, n}, DType::Int64});
        std::int64_t ones = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t c = m.at<std::int64_t>(i);
            QVERIFY(c == 0 || c == 1);
            ones += c;
        }
        QVERIFY2(std::abs(static_cast<double>(ones) / n - 0.75) < 0.02,
                 qPrintable(QString::number(static_cast<double>(ones) / n)));
    }

    void trainingDropoutIsSeeded() {
        const std::int64_t n = 4000;
        const test::Tensor x = test::make({n}, DType::Float32, std::vector<float>(n, 1.0f));
        const test::Tensor ratio = test::make({}, DType::Float32, std::vector<float>{0.25f});
        const test::Tensor training = test::make({}, DType::Bool, std::vector<std::uint8_t>{1});
        auto run = [&](std::int64_t seed, const test::Tensor& mode) {
            Attrs attrs;
            attrs.set("seed", seed);
            std::string error;
            auto out = test::runOp("Dropout", attrs, {x, ratio, mode},
                                   {{{n}, DType::Float32}, {{n}, DType::Bool}}, &error);
            if (out.empty())
                qFatal("%s", error.c_str());
            return out;
        };
        const auto first = run(7, training);
        std::int64_t kept = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const bool keep = first[1].at<std::uint8_t>(i) != 0;
            kept += keep;
            QCOMPARE(first[0].f(i), keep ? 1.0f / 0.75f : 0.0f);
        }
        QVERIFY2(std::abs(static_cast<double>(kept) / n - 0.75) < 0.03,
                 qPrintable(QString("kept %1 of %2").arg(kept).arg(n)));
        QCOMPARE(run(7, training)[1].bytes, first[1].bytes);
        QVERIFY(run(8, training)[1].bytes != first[1].bytes);
        // Inference mode passes x through with an all-true mask.
        const auto inference = run(7, test::make({}, DType::Bool, std::vector<std::uint8_t>{0}));
        QCOMPARE(inference[0].bytes, x.bytes);
        QCOMPARE(inference[1].bytes, std::vector<std::byte>(n, std::byte{1}));
    }

    /// NonMaxSuppression over many boxes (where the kernel indexes the kept boxes by their left
    /// edge) selects exactly what the plain greedy loop does: boxes of several classes offset
    /// apart as torchvision's batched NMS does, overlapping clusters, boxes of no area, a huge
    /// box, and ties in score.
    void nonMaxSuppressionOfManyBoxesIsTheGreedyLoops() {
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> unit(0, 1);
        for (int trial = 0; trial < 12; ++trial) {
            const std::int64_t count = 64 + trial * 97, classes = 1 + trial % 3;
            std::vector<float> boxes(static_cast<std::size_t>(count * 4));
            for (std::int64_t i = 0; i < count; ++i) {
                // Clusters of boxes, each cluster offset along x as a class offset would be.
                const float offset = static_cast<float>(i % 7) * 1000.0f;
                const float x = offset + unit(rng) * 60, y = unit(rng) * 60;
                const float w = trial % 4 == 3 && i == 5 ? 9000.0f : 1 + unit(rng) * 30;
                const float h = i % 11 == 0 ? 0.0f : 1 + unit(rng) * 30; // some of no area
                float* b = &boxes[static_cast<std::size_t>(i * 4)];
                b[0] = y, b[1] = x, b[2] = y + h, b[3] = x + w;
                if (trial % 2 == 1 && i % 3 == 0)
                    std::swap(b[0], b[2]); // corners given either way round
            }
            std::vector<float> scores(static_cast<std::size_t>(classes * count));
            for (float& v : scores)
                v = std::round(unit(rng) * 50) / 50; // ties
            const float iou = 0.3f + 0.1f * static_cast<float>(trial % 4);
            const Tensor boxT = make({1, count, 4}, DType::Float32, boxes);
            const Tensor scoreT = make({1, classes, count}, DType::Float32, scores);
            const Tensor limit = make({1}, DType::Int64, std::vector<std::int64_t>{count});
            const Tensor threshold = make({1}, DType::Float32, std::vector<float>{iou});
            auto picked = runOp("NonMaxSuppression", {}, {boxT, scoreT, limit, threshold},
                                {{{classes * count, 3}, DType::Int64}});
            QVERIFY(!picked.empty());
            // The greedy loop, plainly.
            std::vector<std::int64_t> expected;
            for (std::int64_t c = 0; c < classes; ++c) {
                std::vector<std::int64_t> order(static_cast<std::size_t>(count));
                std::iota(order.begin(), order.end(), 0);
                const float* sc = &scores[static_cast<std::size_t>(c * count)];
                std::stable_sort(order.begin(), order.end(),
                                 [&](std::int64_t a, std::int64_t b) { return sc[a] > sc[b]; });
                std::vector<std::int64_t> kept;
                const auto corner = [&](std::int64_t i, int k) {
                    const float* b = &boxes[static_cast<std::size_t>(i * 4)];
                    const double y0 = std::min(b[0], b[2]), y1 = std::max(b[0], b[2]);
                    const double x0 = std::min(b[1], b[3]), x1 = std::max(b[1], b[3]);
                    return std::array<double, 4>{y0, x0, y1, x1}[static_cast<std::size_t>(k)];
                };
                const auto area = [&](std::int64_t i) {
                    return (corner(i, 3) - corner(i, 1)) * (corner(i, 2) - corner(i, 0));
                };
                for (const std::int64_t i : order) {
                    bool suppressed = false;
                    for (const std::int64_t k : kept) {
                        if (area(i) <= 0 || area(k) <= 0)
                            continue;
                        const double ix = std::min(corner(k, 3), corner(i, 3)) -
                                          std::max(corner(k, 1), corner(i, 1));
                        const double iy = std::min(corner(k, 2), corner(i, 2)) -
                                          std::max(corner(k, 0), corner(i, 0));
                        if (ix <= 0 || iy <= 0)
                            continue;
                        const double inter = ix * iy, united = area(k) + area(i) - inter;
                        if (united > 0 && inter / united > static_cast<double>(iou)) {
                            suppressed = true;
                            break;
                        }
                    }
                    if (suppressed)
                        continue;
                    kept.push_back(i);
                    expected.insert(expected.end(), {0, c, i});
                }
            }
            const auto* got = reinterpret_cast<const std::int64_t*>(picked[0].bytes.data());
            const std::vector<std::int64_t> actual(
                got, got + static_cast<std::ptrdiff_t>(picked[0].type.elementCount()));
            QVERIFY2(actual == expected, qPrintable(QString("trial %1: %2 selected, %3 expected")
                                                        .arg(trial)
                                                        .arg(actual.size() / 3)
                                                        .arg(expected.size() / 3)));
            QVERIFY(expected.size() / 3 > static_cast<std::size_t>(classes)); // it did select
        }
    }

    void refusals() {
        std::string error;
        // float64 has no float32 kernel to widen into (16-bit floats have: halfPrecisionFamilies).
        Tensor x{{{1, 2, 4, 4}, DType::Float64}, std::vector<std::byte>(256)};
        auto out = runOp("nn.softmax", {}, {x}, {x.type}, &error);
        QVERIFY(out.empty());
        QVERIFY2(QString::fromStdString(error).contains("float32"), error.c_str());
        QVERIFY2(QString::fromStdString(error).contains("nn.softmax node 'n'"), error.c_str());
        error.clear();
        Tensor nhwc{{{1, 4, 4, 2}, DType::Float32}, std::vector<std::byte>(128)};
        Tensor hwio{{{1, 1, 2, 2}, DType::Float32}, std::vector<std::byte>(16)};
        out = runOp(
            "nn.conv2d",
            attrs({{"data_layout", std::string("NHWC")}, {"kernel_layout", std::string("HWIO")}}),
            {nhwc, hwio}, {{{1, 4, 4, 2}, DType::Float32}}, &error);
        QVERIFY(out.empty());
        QVERIFY2(QString::fromStdString(error).contains("NCHW"), error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
