// The run simulator (plan/RunSimulator.h) against real runs on this machine, in the same run:
// each model planned over two vcpus (auto mode; a rule split that makes copies; a pipeline of two
// micro-batches where the model has a batch), its run simulated with the workspace's calibration
// of this machine (what `placer machine describe` writes), then run for real. The error is the
// simulated latency against the measured median, per plan, with the planner's own prediction's
// beside it, the term that dominates the simulation, and the median over the plans (goal: at
// most 10 %); then the same placement simulated with the run's op times kept in the workspace's
// cost table, as later plans are costed.
//
//   bench_simulator            30 iterations a plan, every model
//   bench_simulator --quick    5 iterations, two models (what CTest runs)
#include "BenchFailures.h"
#include "plan/Planner.h"
#include "session/Session.h"
#include "vm/ReferenceRun.h"

#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace placer;

namespace {

struct Case {
    std::string model;
    std::string label;
    PlanRequest request;
};

std::string modelPath(const std::string& name) {
    return std::string(PLACER_SOURCE_DIR) + "/resources/models/" + name + ".onnx";
}

/// The term of the simulation that takes the most of its time.
std::string dominantTerm(const Simulation& s) {
    const std::pair<double, const char*> terms[] = {{s.computeMicros, "compute"},
                                                    {s.launchMicros, "launch"},
                                                    {s.copyMicros + s.contentionMicros, "copies"},
                                                    {s.runOverheadMicros, "run overhead"}};
    return std::max_element(std::begin(terms), std::end(terms))->second;
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int iterations = quick ? 5 : 30;
    std::vector<std::string> models = {"tiny_resnet", "tiny_inception"};
    if (!quick) {
        models.push_back("tiny_mobilenet");
        models.push_back("tiny_encoder");
        models.push_back("tiny_encoder_batch4");
    }
    std::vector<Case> cases;
    for (const std::string& model : models) {
        Case autoCase{model, "auto", {}};
        autoCase.request.devices = "a:vcpu,b:vcpu";
        autoCase.request.options.mode = PlanMode::Auto;
        cases.push_back(autoCase);
        Case rules{model, "rules", {}};
        rules.request.devices = "a:vcpu,b:vcpu";
        rules.request.options.rules.push_back(OpRule{"Conv", "a"});
        rules.request.options.rules.push_back(OpRule{"MatMul", "a"});
        rules.request.options.fallbackDevice = "b";
        cases.push_back(rules);
        if (model == "tiny_encoder_batch4") {
            Case pipeline{model, "pipeline x2", rules.request};
            pipeline.request.options.microBatches = 2;
            cases.push_back(pipeline);
        }
    }
    QTemporaryDir dir;
    Session session(SessionOptions{dir.filePath("workspace.db").toStdString()});
    std::printf("%-20s %-12s %9s %9s %7s %9s %7s %9s %7s  %s\n", "model", "plan", "real ms",
                "simulated", "error", "predicted", "error", "measured", "error", "dominant term");
    std::vector<double> errors, predictionErrors, measuredErrors;
    double worst = 0;
    std::string worstCase;
    for (const Case& c : cases) {
        auto opened = session.open(ModelSource{modelPath(c.model)}, c.request);
        if (!opened) {
            bench::wrong(c.model + " " + c.label + ": " + opened.error().toString());
            continue;
        }
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        auto simulated = session.simulate(planned);
        if (!simulated) {
            bench::wrong(c.model + " " + c.label + ": " + simulated.error().message);
            continue;
        }
        const Plan& plan = simulated.value()->plan;
        if (plan.devices != planned->plan.devices)
            bench::wrong(c.model + " " + c.label + ": the simulation planned elsewhere");
        RunRequest run;
        run.iterations = iterations;
        run.warmup = 2;
        run.reference = false;
        auto ran = session.run(planned, run);
        if (!ran) {
            bench::wrong(c.model + " " + c.label + ": " + ran.error().message);
            continue;
        }
        const double real = median(ran.value()->result.latencyMicros);
        // The same placement simulated again with what this run measured of each op kept in
        // the workspace's cost table, as a later plan is costed (not for split or pipelined
        // plans, whose shards are cut at their sizes).
        double again = 0;
        if (auto kept = session.recordCosts(*ran.value()); !kept)
            bench::wrong(c.model + ": " + kept.error().toString());
        PlanOptions measuredOptions = planned->options;
        measuredOptions.costs =
            std::make_shared<const CostModel>(session.costs(planned->model.devices));
        measuredOptions.simulate = true;
        if (auto resimulated = planAtSizes(planned->model.graph, planned->model.devices,
                                           measuredOptions, planned->plan);
            resimulated && resimulated.value().simulation)
            again = resimulated.value().simulation->makespanMicros;
        const double sim = plan.simulation->makespanMicros;
        const double predicted = plan.prediction ? plan.prediction->makespanMicros : 0;
        const double error = std::abs(sim - real) / real;
        const double predictionError = std::abs(predicted - real) / real;
        errors.push_back(error);
        predictionErrors.push_back(predictionError);
        if (error > worst) {
            worst = error;
            worstCase = c.model + " " + c.label;
        }
        const double measuredError = again > 0 ? std::abs(again - real) / real : -1;
        if (again > 0)
            measuredErrors.push_back(measuredError);
        // What the simulation misses, spread over the ops it ran: the executor's time per op
        // beyond what the cost model says of launch and dispatch, where that is the gap.
        std::size_t ops = 0;
        for (std::size_t i = 0; i < plan.simulation->end.size(); ++i)
            ops += plan.simulation->end[i] > plan.simulation->start[i] ? 1 : 0;
        const double perOp =
            ops > 0 ? (real - (again > 0 ? again : sim)) / static_cast<double>(ops) : 0;
        std::printf("%-20s %-12s %9.3f %9.3f %6.1f%% %9.3f %6.1f%% %9s %7s  %s; %+.1f us an op "
                    "(%zu ops) unaccounted\n",
                    c.model.c_str(), c.label.c_str(), real / 1000, sim / 1000, 100 * error,
                    predicted / 1000, 100 * predictionError,
                    again > 0 ? std::to_string(again / 1000).substr(0, 5).c_str() : "n/a",
                    again > 0 ? (std::to_string(100 * measuredError).substr(0, 4) + "%").c_str()
                              : "n/a",
                    dominantTerm(*plan.simulation).c_str(), perOp, ops);
    }
    if (!errors.empty()) {
        std::printf("median error: simulated %.1f %%, predicted %.1f %% over %zu plans; worst "
                    "simulated %.1f %% (%s); simulated with the runs' costs recorded %.1f %% "
                    "over %zu\n",
                    100 * median(errors), 100 * median(predictionErrors), errors.size(),
                    100 * worst, worstCase.c_str(),
                    measuredErrors.empty() ? 0.0 : 100 * median(measuredErrors),
                    measuredErrors.size());
    }
    return bench::exitCode();
}
