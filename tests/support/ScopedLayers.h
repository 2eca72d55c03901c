// A large graph in name scopes, as a JSON graph, for the tests of large graphs on the canvas.
#pragma once

#include <string>

namespace placer::test {

/// `layers` name scopes ("/layer7/") of `perLayer` element-wise ops each, in a chain with a
/// residual add per layer, on a cpu and a gpu (the default): a JSON graph. `outer` ("/model")
/// puts every layer inside one more scope.
inline std::string scopedLayersJson(int layers, int perLayer, const std::string& outer = "") {
    std::string json = R"({"format": "placer-graph", "version": 1,
      "devices": [{"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda"}],
      "default": "gpu", "host": "cpu", "nodes": [
      {"name": "x", "op": "parameter", "outputs": [{"shape": [64, 64], "dtype": "float32"}]})";
    const char* ops[] = {"nn.relu", "tanh", "sigmoid", "negative"};
    std::string previous = "x";
    for (int l = 0; l < layers; ++l) {
        const std::string scope = outer + "/layer" + std::to_string(l) + "/";
        const std::string input = previous;
        for (int k = 0; k + 1 < perLayer; ++k) {
            const std::string name = scope + "op" + std::to_string(k);
            json += R"(, {"name": ")" + name + R"(", "op": ")" + ops[k % 4] + R"(", "inputs": [")" +
                    previous + R"("]})";
            previous = name;
        }
        const std::string add = scope + "add";
        json += R"(, {"name": ")" + add + R"(", "op": "add", "inputs": [")" + input + R"(", ")" +
                previous + R"("]})";
        previous = add;
    }
    return json + R"(], "outputs": [")" + previous + R"("]})";
}

} // namespace placer::test
