// Describing the passes' kernel hints for people (ir/KernelHints.h).
#include "ir/KernelHints.h"

#include <cstdio>

namespace placer {

namespace {

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string describe(const PostOp& op) {
    switch (op.kind) {
    case PostOp::Kind::Unary: {
        std::string text = unaryFnName(op.fn);
        if (op.fn == UnaryFn::Clip)
            return text + "(" + number(op.alpha) + ", " + number(op.beta) + ")";
        if (op.fn == UnaryFn::LeakyRelu || op.fn == UnaryFn::Elu)
            return text + "(" + number(op.alpha) + ")";
        return text;
    }
    case PostOp::Kind::Swish:
        return "swish";
    case PostOp::Kind::Add:
        return "add";
    case PostOp::Kind::Bias:
        return "bias";
    case PostOp::Kind::BatchNorm:
        return "batch_norm(" + number(op.alpha) + (op.scaled ? ", scaled" : "") +
               (op.shifted ? ", shifted" : "") + ")";
    }
    return "?";
}

} // namespace

std::string describePostOps(const std::vector<PostOp>& ops) {
    std::string text;
    for (const PostOp& op : ops)
        text += (text.empty() ? "" : ";") + describe(op);
    return text;
}

} // namespace placer
