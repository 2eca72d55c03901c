// Generation token by token from a decoder whose cache is explicit inputs and outputs
// (past_* in, present_* out, as PyTorch and Hugging Face export them): the prompt runs first
// (prefill), then one token a step, each step's present_* bound to the next step's past_*.
// Every step runs the one plan made at open: the model is read once, and each new length of
// the cache instantiates the plan's shapes there (Session::counters()).
#pragma once

#include "device/DeviceMapping.h"
#include "ir/Result.h"
#include "report/RunOutcome.h"
#include "vm/FaultInjection.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace placer {

/// How the next token is chosen from the last position's logits.
struct Sampling {
    /// 0: greedy (the largest logit; the lowest id among equals). Otherwise the logits are
    /// divided by it before the softmax.
    double temperature = 0;
    int topK = 0;    ///< keep the k most likely (0: all)
    double topP = 1; ///< keep the fewest most likely whose probabilities sum to at least p
    std::uint64_t seed = 1;
};

struct GenerateRequest {
    std::vector<std::int64_t> prompt;
    int maxNewTokens = 32;
    /// The most tokens the cache may hold, prompt included (0: no bound): a longer prompt is an
    /// error that names it, and generation stops when the cache reaches it. The program that
    /// runs every step has its memory planned there: a plan that does not fit its devices'
    /// mem= at that length is refused before the prompt runs.
    int maxLength = 0;
    Sampling sampling;
    std::vector<std::int64_t> stopTokens;
    /// Names, where the model's own are not found: the token ids' input, the logits' output,
    /// and (present output, past input) pairs of the cache. Empty: found by name (input_ids;
    /// logits; present_K ↔ past_K, present.K.key ↔ past_key_values.K.key, ...); a given pair
    /// replaces the one found for its past input.
    std::string idsInput, logitsOutput;
    std::vector<std::pair<std::string, std::string>> cache;
    std::vector<DeviceMapRequest> maps;
    bool optimize = true;
    /// Check the program that runs every step against the plan instantiated at the prompt's
    /// sizes, on the prompt (session/SizedRunner.h): where they disagree, every step runs the
    /// plan instantiated at its sizes, and a warning says why. Off: the prompt's step costs
    /// one run, not two.
    bool checkFirstStep = true;
    /// A device that fails during a step is left out: the plan is made again without it, and
    /// the step runs again on the devices left (session/RunAdaptation.h). Off: the failure ends
    /// the generation.
    bool failover = true;
    /// After each decode step, each device's busy time is compared with what the plan assumed
    /// (session/RunAdaptation.h's speed watch); a device that stays slower (or faster) by a
    /// margin for a few steps has the plan made again in auto mode with its measured speed, pins
    /// holding, and the new program swapped in before the next step, no token lost or repeated.
    bool adapt = false;
    /// Faults to make on purpose, by step (the prompt's is step 0, the first new token's step
    /// 1), besides those the environment asks for (vm/FaultInjection.h).
    std::vector<InjectedFault> faults;
};

/// What one step took.
struct GenerateStep {
    int tokens = 0;       ///< tokens the step read (the prompt's length, then 1)
    double wallMs = 0;    ///< the step, from the call to the token chosen
    double kernelsMs = 0; ///< the run's own latency (RunResult::latencyMicros)
    /// Per virtual device: its busy time in the step.
    std::vector<std::pair<std::string, double>> busyMs;
};

struct GenerationReport {
    std::vector<std::int64_t> prompt;
    std::vector<std::int64_t> tokens; ///< the new ones
    /// "max-new-tokens", "stop token 2", "max length 128", "cancelled"
    std::string stopReason;
    std::vector<GenerateStep> steps;                        ///< the prefill first
    std::vector<std::pair<std::string, std::string>> cache; ///< (present, past) as bound
    std::string idsInput, logitsOutput;
    /// Each virtual device with the physical device its steps ran on ("a=vcpu1, b=vcpu2").
    std::string mapping;
    /// Where the one program's storages come from: a memory plan made at the maximum length
    /// (none grows), or the devices as the cache grows (no maximum length).
    std::string storage;
    std::int64_t vocabulary = 0;
    /// Steps run by the one program made for every size: every step, unless that program
    /// could not be made or disagreed with the plan instantiated at the prompt's sizes
    /// (`warnings` says why; each step then ran the plan instantiated at its sizes).
    int sizedSteps = 0;
    /// Making that program before the prompt: lowering it and placing its constants on their
    /// devices, as a session is made before its first run (not in the time to first token).
    double prepareMs = 0;
    Sampling sampling;
    std::vector<std::string> warnings;
    /// Devices that failed and were left out, at the step they failed in, and re-placements
    /// (adapt), at the first step the new plan ran (RunEvent::iteration).
    std::vector<RunEvent> events;

    double timeToFirstTokenMs() const;
    /// Decode steps only (after the prefill): tokens per second of wall time.
    double decodeTokensPerSecond() const;
    /// A percentile (0..100) of the decode steps' wall times.
    double decodeLatencyMs(double percentile) const;
    /// Per virtual device, its mean busy time per decode step.
    std::vector<std::pair<std::string, double>> busyPerTokenMs() const;
    /// The decode steps' kernels over their wall time: what a call costs beyond its kernels.
    double overheadShare() const;
};

/// Told each token as it is made, with its index among the new ones; return false to stop.
using TokenCallback = std::function<bool(std::int64_t token, int index)>;

/// The report as JSON (placer generate --json, Python, the workspace's records).
std::string generationJson(const GenerationReport& report);
/// The report for people: tokens, time to first token, tokens/s, p50/p99, busy per token.
std::string generationSummary(const GenerationReport& report);

/// A prompt written as token ids ("1,2,3" or "1 2 3"), or a .npy file of them (int64 or int32,
/// any shape, read in order); an error says which it is not.
Result<std::vector<std::int64_t>> promptFromText(const std::string& text);

/// Picks the next token from `logits` (the vocabulary's scores at the last position).
std::int64_t pickToken(const float* logits, std::int64_t vocabulary, const Sampling& sampling,
                       std::uint64_t& state);

} // namespace placer
