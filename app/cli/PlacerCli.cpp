// `placer`: subcommand dispatch and shared argument handling.
#include "cli/PlacerCli.h"

#include <algorithm>
#include <fstream>
#include <ostream>

namespace placer::cli {

namespace {

constexpr const char* kUsage = R"(usage: placer COMMAND [OPTIONS]

Decide where each operator of a dataflow graph runs on a machine with several devices.

commands:
  plan      plan the devices of a model and report nodes, copies, conflicts and memory
  compile   lower the plan to bytecode for the runtime (--emit bytecode)
  run       run the plan on real devices: latency, per-node and per-copy times, a trace
  generate  generate tokens from a decoder with a KV cache, step by step on the plan
  devices   list the physical devices this machine has (cpu, vcpuN, cuda:N)
  calibrate measure their FLOP/s, bandwidth and copies for the cost model (--mode auto)
  plans     save, list, show, diff, rename, duplicate and delete plans (SQLite workspace)
  profile   put a profile made elsewhere (ONNX Runtime's) on a model's nodes: times, providers
  machine   describe this machine as a machine file, for plan --machine (machines you do not have)
  help      show this help, or `placer help COMMAND` for one command

Run `placer COMMAND --help` for the options of a command.
exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error
)";

} // namespace

bool ArgumentList::next(std::string* arg) {
    m_hasInlineValue = false;
    if (m_pos >= m_args.size())
        return false;
    *arg = m_args[m_pos++];
    return true;
}

std::string ArgumentList::optionName(const std::string& arg) {
    m_hasInlineValue = false;
    if (arg.rfind("--", 0) != 0)
        return arg;
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos)
        return arg;
    m_hasInlineValue = true;
    m_inlineValue = arg.substr(eq + 1);
    return arg.substr(0, eq);
}

bool ArgumentList::value(const std::string& option, std::string* value, std::string* error) {
    if (m_hasInlineValue) {
        *value = m_inlineValue;
        m_hasInlineValue = false;
        return true;
    }
    if (m_pos >= m_args.size()) {
        *error = "option " + option + " needs a value";
        return false;
    }
    *value = m_args[m_pos++];
    return true;
}

int parseWordArguments(const std::vector<std::string>& args, const char* command, const char* help,
                       bool takesJson, WordArguments* parsed, std::ostream& out,
                       std::ostream& err) {
    ArgumentList list(args);
    std::string arg;
    while (list.next(&arg)) {
        const std::string name = list.optionName(arg);
        std::string error;
        if (name == "-h" || name == "--help") {
            out << help;
            return Ok;
        }
        const auto sets = std::find_if(parsed->switches.begin(), parsed->switches.end(),
                                       [&](const auto& entry) { return entry.first == name; });
        if (sets != parsed->switches.end()) {
            *sets->second = true;
        } else if (takesJson && name == "--json") {
            parsed->json = true;
        } else if (name == "-o" || name == "--output" || name == "--db") {
            std::string value;
            if (!list.value(name, &value, &error)) {
                err << "placer " << command << ": " << error << "\n";
                return UsageError;
            }
            (name == "--db" ? parsed->db : parsed->output) = value;
        } else if (name.rfind("-", 0) == 0 && name.size() > 1) {
            err << "placer " << command << ": unknown option " << name << "\n\n" << help;
            return UsageError;
        } else {
            parsed->words.push_back(arg);
        }
    }
    return -1;
}

int writeOutput(const std::string& text, const std::string& output, const char* command,
                std::ostream& out, std::ostream& err) {
    if (output.empty()) {
        out << text;
        return Ok;
    }
    std::ofstream file(output, std::ios::binary);
    file << text;
    if (!file) {
        err << "placer " << command << ": cannot write " << output << "\n";
        return UserError;
    }
    return Ok;
}

int runPlacer(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
              std::ostream& err) {
    if (args.empty()) {
        err << kUsage;
        return UsageError;
    }
    const std::string& command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "--help" || command == "-h" || command == "help") {
        if (command == "help" && !rest.empty())
            return runPlacer({rest[0], "--help"}, in, out, err);
        out << kUsage;
        return Ok;
    }
    if (command == "--version") {
        out << "placer " PLACER_VERSION_TEXT "\n";
        return Ok;
    }
    if (command == "plan")
        return runPlanCommand(rest, in, out, err);
    if (command == "compile")
        return runCompileCommand(rest, in, out, err);
    if (command == "run")
        return runRunCommand(rest, in, out, err);
    if (command == "generate")
        return runGenerateCommand(rest, in, out, err);
    if (command == "devices")
        return runDevicesCommand(rest, in, out, err);
    if (command == "calibrate")
        return runCalibrateCommand(rest, in, out, err);
    if (command == "plans")
        return runPlansCommand(rest, in, out, err);
    if (command == "profile")
        return runProfileCommand(rest, in, out, err);
    if (command == "machine")
        return runMachineCommand(rest, in, out, err);
    err << "placer: unknown command '" << command << "'\n\n" << kUsage;
    return UsageError;
}

} // namespace placer::cli
