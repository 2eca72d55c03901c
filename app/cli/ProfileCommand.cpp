// `placer profile import`: a profile made elsewhere (ONNX Runtime's) on a model's graph: which
// of its events are the model's nodes, their times and providers, and what did not match and why
// (io/ProfileImport.h).
#include "cli/PlacerCli.h"

#include "session/Session.h"
#include "store/PlanStore.h"

#include <ostream>

namespace placer::cli {

namespace {

constexpr const char* kProfileHelp =
    R"(usage: placer profile import MODEL PROFILE [--json] [-o FILE]

Puts the per-node times of a profile made elsewhere on MODEL's nodes and says how they matched.
PROFILE is ONNX Runtime's profile JSON (SessionOptions.enableProfiling, or onnxruntime-node's
enableProfiling, written after a run): its node events are matched to the model's nodes by the
names ONNX Runtime gives them, the suffixes its graph transformers add taken off (_nchwc,
_token_N, /MatMulAddFusion, VALUE_output_N for the node that made VALUE), and a fused node's
members found from the op it ran (a Conv run for a Relu's name takes the Relu as its member).
Each node's time is the median over the profile's runs; the provider that ran it is kept.
Events that are no node of the model (ONNX Runtime's layout changes, reshapes around a Gemm it
fused, a profile of another model) are listed with why, and so are the model's compute nodes
without a time.

options:
  --json          write the import as JSON: every node's median_ms, provider, the name and op
                  the profile gave it and its fused members; the unmatched events and nodes
  -o FILE         write to FILE instead of standard output
  --db FILE       the workspace (default $XDG_DATA_HOME/placement-explorer/workspace.db)
  -h, --help      show this help

An error, exit 1: the profile is not JSON (with its line and column), has no node events, or
none of its events is a node of MODEL.
)";

} // namespace

int runProfileCommand(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                      std::ostream& err) {
    WordArguments parsed;
    parsed.db = store::PlanStore::defaultPath();
    if (const int code = parseWordArguments(args, "profile", kProfileHelp, true, &parsed, out, err);
        code >= 0)
        return code;
    const std::vector<std::string>& positional = parsed.words;
    if (positional.size() != 3 || positional[0] != "import") {
        err << "placer profile: expected 'import MODEL PROFILE'\n\n" << kProfileHelp;
        return UsageError;
    }
    const std::string& modelPath = positional[1];
    const std::string& profilePath = positional[2];
    Session session(SessionOptions{parsed.db});
    ModelSource source;
    source.path = modelPath;
    auto model = session.load(source);
    if (!model) {
        err << "placer profile: " << model.error().toString() << "\n";
        return UserError;
    }
    auto imported = session.importProfile(model.value().graph, profilePath);
    if (!imported) {
        err << "placer profile: " << imported.error().toString() << "\n";
        return UserError;
    }
    const std::string report =
        parsed.json ? profileImportJson(model.value().graph, imported.value()).dump(2) + "\n"
                    : profileImportSummary(model.value().graph, imported.value());
    return writeOutput(report, parsed.output, "profile", out, err);
}

} // namespace placer::cli
