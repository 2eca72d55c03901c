// Generation from a decoder with an explicit KV cache (session/Generate.h), on the committed
// Llama-shaped decoder (scripts/make_decoder_model.py tiny): PyTorch's greedy tokens over one
// vcpu and over two with the layers split (a saved plan reopened: tests/python); the model read
// once for every length; sampling reproducible by its seed; stop tokens and the maximum length; and
// bad input refused with a sentence that names it.
#include "io/Npy.h"
#include "session/Session.h"
#include "vm/FaultInjection.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <set>
#include <string>

using namespace placer;

namespace {

std::string modelPath(const std::string& name) {
    return std::string(PLACER_SOURCE_DIR) + "/tests/models/" + name;
}

std::vector<std::int64_t> ids(const std::string& name) {
    auto tensor = readNpy(modelPath(name));
    if (!tensor)
        qFatal("%s", tensor.error().toString().c_str());
    const HostTensor& t = tensor.value();
    return {t.as<std::int64_t>(), t.as<std::int64_t>() + t.type.elementCount()};
}

std::string joined(const std::vector<std::int64_t>& values) {
    std::string out;
    for (const std::int64_t v : values)
        out += (out.empty() ? "" : " ") + std::to_string(v);
    return out;
}

} // namespace

class TestGenerate : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_session;
    std::vector<std::int64_t> m_prompt, m_expected;

    std::shared_ptr<const PlannedModel> open(const PlanRequest& request,
                                             const std::string& model = "tiny_decoder.onnx") {
        auto opened = m_session->open(ModelSource{modelPath(model)}, request);
        if (!opened)
            qFatal("%s", opened.error().toString().c_str());
        return std::make_shared<const PlannedModel>(opened.take());
    }

    /// The first block on a, the second on b, the rest on a.
    static PlanRequest layersSplit() {
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        request.defaultDevice = "a";
        request.pins.push_back(PinRequest{"/blocks.0/*", "a"});
        request.pins.push_back(PinRequest{"/blocks.1/*", "b"});
        return request;
    }

    void expectPyTorchsTokens(const std::shared_ptr<const PlannedModel>& planned,
                              const GenerateRequest& request) {
        const int readBefore = m_session->counters().modelsRead;
        auto made = m_session->generate(planned, request);
        QVERIFY2(made, made ? "" : made.error().toString().c_str());
        QCOMPARE(joined(made.value().tokens), joined(m_expected));
        QCOMPARE(made.value().stopReason, std::string("max-new-tokens"));
        // 64 steps at 64 lengths of the cache, from the one read at open.
        QCOMPARE(m_session->counters().modelsRead, readBefore);
        QCOMPARE(made.value().steps.size(), std::size_t{64});
        QCOMPARE(made.value().steps.front().tokens, 32);
        QCOMPARE(made.value().steps.back().tokens, 1);
        QCOMPARE(made.value().cache.size(), std::size_t{4});
        QVERIFY(made.value().timeToFirstTokenMs() > 0);
        QVERIFY(made.value().decodeTokensPerSecond() > 0);
        QVERIFY(made.value().decodeLatencyMs(99) >= made.value().decodeLatencyMs(50));
        QCOMPARE(made.value().sizedSteps, 64);
        QVERIFY2(made.value().warnings.empty(),
                 made.value().warnings.empty() ? "" : made.value().warnings.front().c_str());
    }

private slots:
    void initTestCase() {
        m_prompt = ids("tiny_decoder.prompt.npy");
        m_expected = ids("tiny_decoder.expected.npy");
        QCOMPARE(m_prompt.size(), std::size_t{32});
        QCOMPARE(m_expected.size(), std::size_t{64});
    }
    void init() {
        m_session =
            std::make_unique<Session>(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
    }

    /// 64 tokens from `model` planned by `request`, every step on the one program.
    GenerationReport sixtyFourTokens(const std::string& model, const PlanRequest& request) {
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        auto made = m_session->generate(open(request, model), generate);
        if (!made)
            qFatal("%s", made.error().toString().c_str());
        if (made.value().tokens.size() != 64 || made.value().sizedSteps != 64)
            qFatal("%s: %zu tokens, %d on the one program", model.c_str(),
                   made.value().tokens.size(), made.value().sizedSteps);
        return made.take();
    }

    /// Greedy decoding on one vcpu gives PyTorch's 64 tokens, the model read once.
    void greedyOnOneVcpuIsPyTorchs() {
        PlanRequest request;
        request.devices = "a:vcpu";
        const auto planned = open(request);
        QCOMPARE(m_session->counters().modelsRead, 1);
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        expectPyTorchsTokens(planned, generate);
        QCOMPARE(m_session->counters().modelsRead, 1);
        QCOMPARE(m_session->counters().plansMade, 1);
        // Every step runs the one program made for every size, lowered at a decode step's
        // sizes; the plan instantiated at the prompt's sizes checks it on the prompt.
        QCOMPARE(m_session->counters().instantiated, 2);
    }

    /// Without the check, the prompt costs one run: the plan is instantiated once, for the
    /// program's own sizes, and the tokens are the same.
    void withoutTheCheckThePromptRunsOnce() {
        PlanRequest request;
        request.devices = "a:vcpu";
        const auto planned = open(request);
        const int before = m_session->counters().instantiated;
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        generate.checkFirstStep = false;
        expectPyTorchsTokens(planned, generate);
        QCOMPARE(m_session->counters().instantiated - before, 1);
    }

    /// The layers split over two vcpus, and b fails at the fifth token's step: the step runs
    /// again on a, the generation goes on there and gives PyTorch's 64 tokens, the report names
    /// the failure and the model is still read once; without failover the failure ends it.
    void aDeviceThatFailsMidGenerationIsLeftOut() {
        const auto planned = open(layersSplit());
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        auto parsed = parseInjectedFaults("b@5", "");
        QVERIFY(parsed);
        generate.faults = parsed.take();
        auto made = m_session->generate(planned, generate);
        QVERIFY2(made, made ? "" : made.error().toString().c_str());
        QCOMPARE(joined(made.value().tokens), joined(m_expected));
        QCOMPARE(m_session->counters().modelsRead, 1);
        QCOMPARE(made.value().sizedSteps, 64);
        QCOMPARE(made.value().events.size(), std::size_t{1});
        const RunEvent& event = made.value().events.front();
        QCOMPARE(event.iteration, 5);
        QVERIFY2(event.reason.find("b (vcpu2) failed at iteration 5") != std::string::npos,
                 event.reason.c_str());
        QVERIFY(event.nodesMoved > 0);
        QVERIFY2(generationSummary(made.value()).find("device failed at step 5: b (vcpu2)") !=
                     std::string::npos,
                 generationSummary(made.value()).c_str());
        QVERIFY(generationJson(made.value()).find("\"kind\": \"device-failed\"") !=
                std::string::npos);
        // Busy per token: b worked until it failed, a alone from then on.
        const auto busyOn = [](const GenerateStep& step, const std::string& device) {
            double ms = 0;
            for (const auto& [name, busy] : step.busyMs)
                ms += name == device ? busy : 0;
            return ms;
        };
        QVERIFY(busyOn(made.value().steps[3], "b") > 0);
        QCOMPARE(busyOn(made.value().steps[10], "b"), 0.0);
        QVERIFY(busyOn(made.value().steps[10], "a") > 0);
        generate.failover = false;
        auto ended = m_session->generate(planned, generate);
        QVERIFY(!ended);
        QVERIFY2(ended.error().message.find("vcpu2 failed (injected: PLACER_FAULT=b@5)") !=
                     std::string::npos,
                 ended.error().message.c_str());
    }

    /// Everything on a, with b idle, and a made four times slower from the tenth step: with
    /// adapt, the plan is made again for a's speed and work moves to b before a step, none lost
    /// or repeated: PyTorch's 64 tokens, the model read once, every step on one program, b
    /// working from then on, and the report says why and what moved; without
    /// adapt, nothing moves.
    void aDeviceThatSlowsMidGenerationIsReplaced() {
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        request.defaultDevice = "a";
        const auto planned = open(request);
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        generate.adapt = true;
        auto parsed = parseInjectedFaults("", "a@10:4");
        QVERIFY(parsed);
        generate.faults = parsed.take();
        // A re-placement for a's slowness that moved work to b (on a busy machine, noise may
        // re-place before the slowdown, or after it; which step is the machine's). Noise on a
        // machine busy with other suites may move a's work off it before the slowdown: where a
        // generation shows no such move, it is tried again, up to three; what each showed goes
        // in the failure's message.
        const auto slowA = [](const RunEvent& e) {
            return e.kind == RunEvent::Kind::Replaced && e.reason.starts_with("a (vcpu1) ") &&
                   e.reason.find(" slower than assumed") != std::string::npos &&
                   e.reason.find(" for 3 steps") != std::string::npos && e.nodesMoved > 0 &&
                   e.moved.find(" to b") != std::string::npos;
        };
        Result<GenerationReport> made = SourceError::sentence("not run");
        std::string seen;
        for (int attempt = 0; attempt < 3; ++attempt) {
            made = m_session->generate(planned, generate);
            QVERIFY2(made, made ? "" : made.error().toString().c_str());
            const auto& events = made.value().events;
            if (std::any_of(events.begin(), events.end(), slowA))
                break;
            seen += "\ngeneration " + std::to_string(attempt + 1) + ":\n" +
                    generationSummary(made.value());
        }
        const GenerationReport& report = made.value();
        QCOMPARE(joined(report.tokens), joined(m_expected));
        QCOMPARE(m_session->counters().modelsRead, 1);
        QCOMPARE(report.sizedSteps, 64);
        const auto found = std::find_if(report.events.begin(), report.events.end(), slowA);
        QVERIFY2(found != report.events.end(), seen.c_str());
        const RunEvent& event = *found;
        QVERIFY(event.replanMs > 0 && event.beforeMs > 0 && event.afterMs > 0);
        // From then on b has work, which was all a's (until a later change, if any).
        const auto at = static_cast<std::size_t>(event.iteration);
        double onB = 0;
        for (std::size_t s = at; s < report.steps.size() && s < at + 3; ++s)
            for (const auto& [name, busy] : report.steps[s].busyMs)
                onB += name == "b" ? busy : 0;
        QVERIFY(onB > 0);
        const std::string summary = generationSummary(report);
        QVERIFY2(summary.find("re-placed before step " + std::to_string(event.iteration) +
                              ": a (vcpu1) ") != std::string::npos,
                 summary.c_str());
        QVERIFY(generationJson(report).find("\"kind\": \"replaced\"") != std::string::npos);
        // Without adapt the plan stays, slow as a is.
        generate.adapt = false;
        auto kept = m_session->generate(planned, generate);
        QVERIFY2(kept, kept ? "" : kept.error().toString().c_str());
        QVERIFY(kept.value().events.empty());
        QCOMPARE(joined(kept.value().tokens), joined(m_expected));
        for (const auto& [name, busy] : kept.value().steps.back().busyMs)
            QVERIFY2(name == "a" || busy == 0, name.c_str());
    }

    /// The layers split over two vcpus (the first block on a, the second on b): the same tokens,
    /// and both devices busy in every step.
    void greedyWithTheLayersSplitIsPyTorchs() {
        const auto planned = open(layersSplit());
        std::set<std::string> used;
        const Graph& graph = planned->model.graph;
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            if (graph.node(NodeId(i)).role() == OpRole::Compute)
                used.insert(planned->model.devices[planned->plan.devices[i]].name);
        }
        QCOMPARE(used, (std::set<std::string>{"a", "b"}));
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        auto made = m_session->generate(planned, generate);
        QVERIFY2(made, made ? "" : made.error().toString().c_str());
        QCOMPARE(joined(made.value().tokens), joined(m_expected));
        QCOMPARE(m_session->counters().modelsRead, 1);
        QCOMPARE(made.value().sizedSteps, 64);
        const auto busy = made.value().busyPerTokenMs();
        QCOMPARE(busy.size(), std::size_t{2});
        QCOMPARE(busy[0].first, std::string("a"));
        QCOMPARE(busy[1].first, std::string("b"));
        QVERIFY(busy[0].second > 0 && busy[1].second > 0);
    }

    /// Hugging Face's names (past_key_values.K.key in, present.K.key out), a batch_size named
    /// in every input, and the positions as an input (position_ids, made per step): PyTorch's
    /// tokens, the model read once, the steps on one program.
    void huggingFaceNamesAndPositions() {
        PlanRequest request;
        request.devices = "a:vcpu";
        auto opened = m_session->open(ModelSource{modelPath("tiny_decoder_hf.onnx")}, request);
        QVERIFY2(opened, opened ? "" : opened.error().toString().c_str());
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        GenerateRequest generate;
        generate.prompt = ids("tiny_decoder_hf.prompt.npy");
        generate.maxNewTokens = 64;
        auto made = m_session->generate(planned, generate);
        QVERIFY2(made, made ? "" : made.error().toString().c_str());
        QCOMPARE(joined(made.value().tokens), joined(ids("tiny_decoder_hf.expected.npy")));
        QCOMPARE(made.value().cache.size(), std::size_t{4});
        QCOMPARE(made.value().cache.front().first, std::string("present.0.key"));
        QCOMPARE(made.value().cache.front().second, std::string("past_key_values.0.key"));
        QCOMPARE(made.value().sizedSteps, 64);
        QCOMPARE(m_session->counters().modelsRead, 1);
    }

    /// Sampling is the seed's: the same seed gives the same tokens, another seed others; every
    /// token is in the vocabulary; top-k 1 is greedy.
    /// The decoder in 16 bits (scripts/make_half_models.py): float16 gives PyTorch's float32
    /// tokens, all 64; bfloat16, with a third of float16's mantissa, the first 16 of them (its
    /// argmax parts from float32's after 25, where two logits are closer than its rounding).
    void sixteenBitDecodersGenerate_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("agreeing");
        QTest::newRow("float16") << "tiny_decoder.f16.onnx" << 64;
        QTest::newRow("bfloat16") << "tiny_decoder.bf16.onnx" << 16;
    }
    void sixteenBitDecodersGenerate() {
        QFETCH(QString, model);
        QFETCH(int, agreeing);
        PlanRequest request;
        request.devices = "a:vcpu";
        const GenerationReport made = sixtyFourTokens(model.toStdString(), request);
        const std::vector<std::int64_t> first(made.tokens.begin(), made.tokens.begin() + agreeing);
        const std::vector<std::int64_t> expected(m_expected.begin(), m_expected.begin() + agreeing);
        QCOMPARE(joined(first), joined(expected));
    }

    /// The decoder with its matrix products in 4-bit blocks (ONNX Runtime's MatMulNBits, as
    /// scripts/quantize_nbits.py writes them): ONNX Runtime's 64 tokens on that file
    /// (tiny_decoder.q4.expected.npy, made with onnxruntime-node's CPU provider), one vcpu and
    /// two.
    void fourBitDecoderGeneratesOnnxRuntimesTokens_data() {
        QTest::addColumn<QString>("devices");
        QTest::newRow("one vcpu") << "a:vcpu";
        QTest::newRow("two vcpus") << "a:vcpu,b:vcpu";
    }
    void fourBitDecoderGeneratesOnnxRuntimesTokens() {
        QFETCH(QString, devices);
        PlanRequest request;
        request.devices = devices.toStdString();
        if (devices.contains(','))
            request.pins.push_back(PinRequest{"re:^/blocks\\.1/", "b", false});
        const GenerationReport made = sixtyFourTokens("tiny_decoder.q4.onnx", request);
        QCOMPARE(joined(made.tokens), joined(ids("tiny_decoder.q4.expected.npy")));
        QVERIFY2(made.warnings.empty(), made.warnings.empty() ? "" : made.warnings.front().c_str());
    }

    /// A decoder as ONNX Runtime's model builder writes them (scripts/make_gqa_decoder.py):
    /// com.microsoft GroupQueryAttention with rotary positions inside, the cache's lengths
    /// computed from attention_mask in the graph, (Skip)SimplifiedLayerNormalization, packed and
    /// separate q/k/v products, in float32 and with MatMulNBits. ONNX Runtime's 32 tokens on each
    /// file (tests/benchmarks/ort_generate.js), on one vcpu and with the second layer on another;
    /// read once, every step on the one program for every size.
    void modelBuilderDecodersGenerateOnnxRuntimesTokens_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("devices");
        for (const char* model : {"tiny_gqa_decoder", "tiny_gqa_decoder.q4"}) {
            QTest::newRow((std::string(model) + ", one vcpu").c_str()) << model << "a:vcpu";
            QTest::newRow((std::string(model) + ", two vcpus").c_str()) << model << "a:vcpu,b:vcpu";
        }
    }
    void modelBuilderDecodersGenerateOnnxRuntimesTokens() {
        QFETCH(QString, model);
        QFETCH(QString, devices);
        PlanRequest request;
        request.devices = devices.toStdString();
        request.defaultDevice = "a";
        if (devices.contains(','))
            request.pins.push_back(PinRequest{"re:^layers\\.1\\.", "b", false});
        const auto planned = open(request, model.toStdString() + ".onnx");
        const int read = m_session->counters().modelsRead;
        GenerateRequest generate;
        generate.prompt = ids("tiny_gqa_decoder.prompt.npy");
        generate.maxNewTokens = 32;
        auto made = m_session->generate(planned, generate);
        QVERIFY2(made, made ? "" : made.error().toString().c_str());
        QCOMPARE(joined(made.value().tokens), joined(ids(model.toStdString() + ".expected.npy")));
        QCOMPARE(m_session->counters().modelsRead, read);
        QCOMPARE(made.value().sizedSteps, 32);
        QCOMPARE(made.value().cache.size(), std::size_t{4});
        QCOMPARE(made.value().cache.front().first, std::string("present.0.key"));
        QVERIFY2(made.value().warnings.empty(),
                 made.value().warnings.empty() ? "" : made.value().warnings.front().c_str());
        if (devices.contains(',')) {
            const auto busy = made.value().busyPerTokenMs();
            QCOMPARE(busy.size(), std::size_t{2});
            QVERIFY(busy[0].second > 0 && busy[1].second > 0);
        }
    }

    void samplingFollowsItsSeed() {
        PlanRequest request;
        request.devices = "a:vcpu";
        const auto planned = open(request);
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 16;
        generate.sampling.temperature = 1.5;
        generate.sampling.topP = 0.95;
        generate.sampling.seed = 7;
        auto first = m_session->generate(planned, generate);
        auto again = m_session->generate(planned, generate);
        generate.sampling.seed = 8;
        auto other = m_session->generate(planned, generate);
        QVERIFY(first && again && other);
        QCOMPARE(joined(first.value().tokens), joined(again.value().tokens));
        QVERIFY(joined(first.value().tokens) != joined(other.value().tokens));
        for (const std::int64_t token : first.value().tokens)
            QVERIFY(token >= 0 && token < 128);
        generate.sampling.topK = 1;
        auto topOne = m_session->generate(planned, generate);
        QVERIFY(topOne);
        QCOMPARE(joined(topOne.value().tokens),
                 joined({m_expected.begin(), m_expected.begin() + 16}));
    }

    /// A stop token ends generation after it; the maximum length ends it where the cache is
    /// full; the token callback sees each token and can stop.
    void stopTokensMaximumLengthAndTheCallback() {
        PlanRequest request;
        request.devices = "a:vcpu";
        const auto planned = open(request);
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        generate.stopTokens = {m_expected[5]};
        auto stopped = m_session->generate(planned, generate);
        QVERIFY(stopped);
        QCOMPARE(stopped.value().tokens.size(), std::size_t{6});
        QCOMPARE(stopped.value().stopReason, "stop token " + std::to_string(m_expected[5]));
        generate.stopTokens.clear();
        generate.maxLength = 40;
        auto bounded = m_session->generate(planned, generate);
        QVERIFY(bounded);
        QCOMPARE(bounded.value().tokens.size(), std::size_t{8}); // 32 + 8 tokens fill 40
        QCOMPARE(bounded.value().stopReason, std::string("max length 40"));
        generate.maxLength = 0;
        std::vector<std::int64_t> seen;
        auto called = m_session->generate(planned, generate, [&](std::int64_t token, int index) {
            seen.push_back(token);
            return index < 2;
        });
        QVERIFY(called);
        QCOMPARE(joined(seen), joined({m_expected.begin(), m_expected.begin() + 3}));
        QCOMPARE(called.value().stopReason, std::string("cancelled"));
    }

    /// With a maximum length, the one program has its memory planned there: the same tokens,
    /// every step on it, and a device whose mem= holds the prompt but not the cache at that
    /// length is refused before the prompt runs, saying so.
    void aMaximumLengthPlansTheCacheThere() {
        PlanRequest request;
        request.devices = "a:vcpu";
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.maxNewTokens = 64;
        generate.maxLength = 100;
        auto bounded = m_session->generate(open(request), generate);
        QVERIFY2(bounded, bounded ? "" : bounded.error().message.c_str());
        QCOMPARE(joined(bounded.value().tokens), joined(m_expected));
        QCOMPARE(bounded.value().sizedSteps, 64);
        QVERIFY2(bounded.value().storage.find("planned at the maximum length 100") !=
                     std::string::npos,
                 bounded.value().storage.c_str());
        request.devices = "a:vcpu:mem=600KiB";
        generate.maxLength = 2000;
        auto refused = m_session->generate(open(request), generate);
        QVERIFY(!refused);
        const std::string& message = refused.error().message;
        QVERIFY2(message.find("--max-length 2000: the last step (1999 tokens in the cache, one "
                              "new) does not fit") != std::string::npos &&
                     message.find("device 'a' needs") != std::string::npos,
                 message.c_str());
        generate.maxLength = 100;
        QVERIFY(m_session->generate(open(request), generate));
    }

    /// Bad input gets a sentence naming the input and the place, and nothing aborts.
    void badInputIsRefusedWithASentence() {
        PlanRequest request;
        request.devices = "a:vcpu";
        const auto planned = open(request);
        const auto refused = [&](const GenerateRequest& generate, const std::string& expected) {
            auto made = m_session->generate(planned, generate);
            QVERIFY2(!made, expected.c_str());
            QVERIFY2(made.error().message.find(expected) != std::string::npos,
                     made.error().message.c_str());
        };
        GenerateRequest generate;
        generate.prompt = m_prompt;
        generate.prompt[4] = 128;
        refused(generate, "prompt: token 4 is id 128, outside the vocabulary of 128");
        generate.prompt[4] = -1;
        refused(generate, "prompt: token 4 is id -1");
        generate.prompt = m_prompt;
        generate.maxLength = 16;
        refused(generate, "prompt: 32 tokens, longer than the maximum length 16");
        generate.maxLength = 0;
        // A pairing whose shapes disagree: a key carried into a value of another layer is
        // fine, but the logits are no cache.
        generate.cache = {{"logits", "past_key_0"}};
        refused(generate, "cache pairing logits -> past_key_0: logits is 1x32x128 float32");
        generate.cache = {{"present_key_9", "past_key_0"}};
        refused(generate, "--bind present_key_9=past_key_0: the model has no output present_key_9");
        generate.cache.clear();
        generate.idsInput = "tokens";
        refused(generate, "--ids-input tokens: the model has no input of that name");
        generate.idsInput = "past_key_0";
        refused(generate, "input past_key_0 takes 1x2xPx16 float32, not token ids");
        generate.idsInput.clear();
        generate.prompt.clear();
        refused(generate, "the prompt is empty");
    }
};

QTEST_GUILESS_MAIN(TestGenerate)
#include "tst_generate.moc"
