// `placer generate`: tokens from a decoder with an explicit KV cache, a step at a time on the
// plan made once (session/Generate.h), printed as they come.
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "device/Ranks.h"
#include "plan/Annotations.h"

#include <ostream>

namespace placer::cli {

namespace {

constexpr const char* kGenerateHelp = R"(usage: placer generate MODEL --prompt IDS [OPTIONS]

Generates tokens from MODEL, a decoder whose KV cache is explicit inputs and outputs (past_*
in, present_* out, as PyTorch and Hugging Face export them): the prompt runs first, then one
token a step, each step's present_* bound to the next step's past_* (found by name: present_K
with past_K, present.K.key with past_key_values.K.key, ...). Every step runs the one plan made
here: the model is read once, whatever the lengths, and one program made before the prompt
runs every step (checked against the plan instantiated for the prompt). Tokens are printed as they are made; then
the time to the first token, decode tokens/s, per-token latency p50/p99 and each device's busy
time per token.

options:
%s  --prompt FILE.npy|IDS      the prompt: token ids in a .npy file (int32 or int64, any shape,
                             read in order) or written out, '1,2,3'
  --max-new-tokens N         tokens to generate (default 32)
  --max-length L             the most tokens the cache may hold, prompt included: a longer
                             prompt is an error, and generation stops there
  --temperature T            sample at temperature T (default 0: greedy)
  --top-k K, --top-p P       sample among the K most likely, or the fewest whose probabilities
                             sum to P
  --seed N                   the sampling's seed (default 1)
  --stop ID[,ID...]          stop after any of these tokens (repeatable)
  --ids-input NAME           the input of token ids (default input_ids, or the one integer
                             input of rank 2)
  --logits NAME              the output of logits (default logits, or the first that is no
                             present_*)
  --bind PRESENT=PAST        carry output PRESENT into input PAST at the next step
                             (repeatable; replaces what the names paired with PAST)
  --map VDEV=PHYS            as for placer run (repeatable)
  --adapt                    re-place the work when a device's measured speed drifts from the
                             plan's for a few steps (auto mode, pins holding), before the next
  --no-failover              end the generation when a device fails, instead of planning again
                             without it and running the step again
  --no-optimize              run the plan's own graph
  --no-check                 do not check the program that runs every step against the plan
                             instantiated for the prompt (the prompt then costs one run, not two)
  --json                     write the report as JSON (tokens not streamed)
  --save-run                 keep the generation in the workspace (placer plans show), against
                             the plan --plan NAME (default: the model's name), saving the plan
                             first when there is none of that name
  -o, --output FILE          write the report to FILE instead of standard output
  -h, --help                 show this help
)";

} // namespace

int runGenerateCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                       std::ostream& err) {
    GenerateRequest request;
    std::string prompt, output, planName;
    bool json = false, saveRun = false;
    CommandOptions own;
    own.withValue = {"--prompt",    "--max-new-tokens", "--max-length", "--temperature",
                     "--top-k",     "--top-p",          "--seed",       "--stop",
                     "--ids-input", "--logits",         "--bind",       "--plan"};
    own.output = &output;
    own.maps = &request.maps;
    own.switches = {{"--json", {&json, true}},
                    {"--no-optimize", {&request.optimize, false}},
                    {"--no-check", {&request.checkFirstStep, false}},
                    {"--adapt", {&request.adapt, true}},
                    {"--no-failover", {&request.failover, false}},
                    {"--save-run", {&saveRun, true}}};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        int number = 0;
        if (name == "--plan") {
            planName = value;
        } else if (name == "--prompt") {
            prompt = value;
        } else if (name == "--max-new-tokens") {
            if (!parseInt(value, 1, &request.maxNewTokens))
                return "--max-new-tokens must be a whole number of at least 1, not '" + value + "'";
        } else if (name == "--max-length") {
            if (!parseInt(value, 1, &request.maxLength))
                return "--max-length must be a whole number of at least 1, not '" + value + "'";
        } else if (name == "--temperature") {
            if (!parseDouble(value, &request.sampling.temperature))
                return "--temperature must be a non-negative number, not '" + value + "'";
        } else if (name == "--top-k") {
            if (!parseInt(value, 0, &request.sampling.topK))
                return "--top-k must be a whole number of at least 0, not '" + value + "'";
        } else if (name == "--top-p") {
            if (!parseDouble(value, &request.sampling.topP) || request.sampling.topP <= 0 ||
                request.sampling.topP > 1)
                return "--top-p must be a number in (0, 1], not '" + value + "'";
        } else if (name == "--seed") {
            if (!parseInt(value, 0, &number))
                return "--seed must be a non-negative whole number, not '" + value + "'";
            request.sampling.seed = static_cast<std::uint64_t>(number);
        } else if (name == "--stop") {
            const auto ids = promptFromText(value);
            if (!ids || ids.value().empty() || value.ends_with(".npy"))
                return "--stop takes token ids, '2' or '2,7', not '" + value + "'";
            request.stopTokens.insert(request.stopTokens.end(), ids.value().begin(),
                                      ids.value().end());
        } else if (name == "--ids-input") {
            request.idsInput = value;
        } else if (name == "--logits") {
            request.logitsOutput = value;
        } else if (name == "--bind") {
            auto split = splitAssignment(value, SplitAt::FirstEquals);
            if (!split)
                return "--bind " + split.error().message;
            request.cache.emplace_back(split.value().lhs, split.value().rhs);
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    const std::string help = formatHelp(kGenerateHelp);
    if (const auto exit = parseCommandLine("generate", help.c_str(), args, &parsed, own, out, err))
        return *exit;
    const auto fail = [&](const std::string& message) {
        err << "placer generate: error: " << message << "\n";
        return UserError;
    };
    if (prompt.empty()) {
        err << "placer generate: error: --prompt is required (a .npy file of token ids, or "
               "'1,2,3')\n";
        return UsageError;
    }
    auto ids = promptFromText(prompt);
    if (!ids)
        return fail("--prompt " + ids.error().toString());
    request.prompt = ids.take();
    parsed.request.maps = request.maps;
    parsed.request.optimize = request.optimize;
    Session session(sessionOptions(parsed));
    auto planned = std::make_shared<PlannedModel>();
    // A dimension planned at a stand-in is what generation sets at every step: not news.
    const auto said = [](const std::string& warning) {
        return warning.find("is not fixed; it is taken as") == std::string::npos;
    };
    if (const auto exit = loadAndPlan("generate", parsed, session, in, err, planned.get(), said))
        return *exit;
    const bool report = localRank() == 0;
    const bool stream = report && !json && output.empty();
    TokenCallback onToken;
    if (stream)
        onToken = [&](std::int64_t token, int index) {
            out << (index == 0 ? "" : " ") << token << std::flush;
            return true;
        };
    auto generated = session.generate(planned, request, onToken);
    if (stream && generated && !generated.value().tokens.empty())
        out << "\n";
    if (!generated)
        return fail(generated.error().message);
    if (!report)
        return Ok;
    const GenerationReport& made = generated.value();
    for (const std::string& warning : made.warnings)
        err << "placer generate: warning: " << warning << "\n";
    std::string text;
    if (json) {
        text = generationJson(made) + "\n";
    } else {
        if (!stream) {
            for (std::size_t i = 0; i < made.tokens.size(); ++i)
                text += (i ? " " : "") + std::to_string(made.tokens[i]);
            text += "\n";
        }
        text += generationSummary(made);
        text += "session: read the model " + std::to_string(session.counters().modelsRead) +
                " time(s), planned " + std::to_string(session.counters().plansMade) +
                ", instantiated at " + std::to_string(session.counters().instantiated) +
                " other sizes\n";
    }
    if (const int written = writeOutput("generate", text, output, out, err); written != Ok)
        return written;
    if (saveRun) {
        const std::string name = planName.empty() ? planned->model.graph.name : planName;
        bool saved = false;
        if (Status status = session.recordGeneration(*planned, made, name, &saved); !status.ok())
            return fail(status.error().toString());
        if (saved)
            err << "placer generate: saved the plan as '" << name << "' in "
                << session.workspacePath() << "\n";
        err << "placer generate: recorded the generation of '" << name << "' in "
            << session.workspacePath() << "\n";
    }
    return Ok;
}

} // namespace placer::cli
