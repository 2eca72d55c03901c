// libFuzzer target: the Onnx reader, then the planner on whatever it reads.
#include "FuzzReader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return placer::fuzz::readAndPlan(data, size, placer::GraphFormat::Onnx, "fuzz.onnx");
}
