// The `placer` command line as a function of its arguments, so tests can run it in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace placer::cli {

/// Exit codes: 0 ok (conflicts are reported, not failures), 1 a user error with a message on
/// stderr, 2 a usage error.
enum ExitCode { Ok = 0, UserError = 1, UsageError = 2 };

/// Runs `placer ARGS...` (args excludes the program name), reading a model given as "-" from
/// `in`, writing to `out` and `err`.
int runPlacer(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
              std::ostream& err);

/// `placer plan ...` (PlanCommand.cpp).
int runPlanCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                   std::ostream& err);

/// `placer compile`, `placer run` and `placer devices` (RunCommands.cpp).
int runCompileCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err);
int runRunCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err);
int runPlansCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                    std::ostream& err);
int runDevicesCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err);
/// `placer generate` (GenerateCommand.cpp).
int runGenerateCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                       std::ostream& err);
/// `placer machine` (MachineCommand.cpp) and `placer profile` (ProfileCommand.cpp).
int runMachineCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err);
int runProfileCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err);
/// `placer calibrate` (CalibrateCommand.cpp).
int runCalibrateCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                        std::ostream& err);

/// The arguments of a command that takes words, -o FILE, --db FILE and (where it does) --json.
struct WordArguments {
    std::vector<std::string> words;
    std::string output, db;
    bool json = false;
    /// Further options that take no value and set a bool to true (`{"--quick", &quick}`).
    std::vector<std::pair<std::string, bool*>> switches;
};
/// Parses `args` into `parsed` (`parsed->db` starts as the default workspace) for `placer
/// COMMAND`; returns the exit code to return at once (help printed, a usage error said with
/// `help`), or -1 to go on.
int parseWordArguments(const std::vector<std::string>& args, const char* command, const char* help,
                       bool takesJson, WordArguments* parsed, std::ostream& out, std::ostream& err);
/// Writes `text` to the file `output`, or to `out` when it is empty; a file that cannot be
/// written is said on `err` for `placer COMMAND` and is a user error.
int writeOutput(const std::string& text, const std::string& output, const char* command,
                std::ostream& out, std::ostream& err);

/// Command-line arguments with --name VALUE / --name=VALUE options and positionals.
class ArgumentList {
public:
    explicit ArgumentList(std::vector<std::string> args) : m_args(std::move(args)) {}

    /// Takes the next argument; false when none are left.
    bool next(std::string* arg);
    /// The value of the option just taken: after '=' or the next argument. False if missing.
    bool value(const std::string& option, std::string* value, std::string* error);
    /// Splits "--name=value" into name (returned) and a pending value.
    std::string optionName(const std::string& arg);

private:
    std::vector<std::string> m_args;
    std::size_t m_pos = 0;
    bool m_hasInlineValue = false;
    std::string m_inlineValue;
};

} // namespace placer::cli
