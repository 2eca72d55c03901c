// Where ONNX Runtime's npm package is, for the benchmarks that measure against it (bench_vs_ort,
// bench_memory): a yardstick only, never a dependency of the product.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#ifndef PLACER_SOURCE_DIR
#define PLACER_SOURCE_DIR "."
#endif

namespace placer::bench {

/// The node_modules folder holding onnxruntime-node ($PLACER_ORT_NODE_MODULES, else beside the
/// working directory or the checkout), or empty and why there is none.
inline std::string ortModules(std::string* why) {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("PLACER_ORT_NODE_MODULES"))
        candidates.emplace_back(env);
    candidates.emplace_back(fs::current_path() / "node_modules");
    candidates.emplace_back(fs::path(PLACER_SOURCE_DIR) / "node_modules");
    candidates.emplace_back(fs::path(PLACER_SOURCE_DIR).parent_path() / "node_modules");
    if (std::system("node --version >/dev/null 2>&1") != 0) {
        *why = "node is not installed";
        return {};
    }
    for (const fs::path& c : candidates) {
        if (fs::exists(c / "onnxruntime-node" / "package.json"))
            return fs::absolute(c).string();
    }
    *why = "onnxruntime-node is not installed (npm install --ignore-scripts onnxruntime-node, "
           "then set PLACER_ORT_NODE_MODULES to its node_modules folder)";
    return {};
}

/// `s` quoted for the shell that runs the peer.
inline std::string shellQuote(const std::string& s) {
    std::string quoted = "'";
    for (char c : s)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

} // namespace placer::bench
