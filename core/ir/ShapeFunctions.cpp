// The built-in (Relay) ops: arity, shape functions and kernel families.
//
// Shape functions follow Relay's semantics (NCHW layouts, numpy broadcasting). They never throw:
// a bad combination of input types or attributes yields a sentence naming the op and the
// offending values, which the readers attach to a file location.
#include "ir/OpRegistry.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace placer {

namespace {

using Types = std::vector<TensorType>;
using Shape = std::vector<std::int64_t>;

std::string shapeText(const Shape& shape) {
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + ")";
}

std::string typeText(const TensorType& t) {
    return shapeText(t.shape) + " " + std::string(dtypeName(t.dtype));
}

/// Normalises a possibly negative axis against a rank; -1 if out of range.
int normalizeAxis(std::int64_t axis, int rank) {
    if (axis < 0)
        axis += rank;
    return (axis < 0 || axis >= rank) ? -1 : static_cast<int>(axis);
}

/// numpy broadcasting of several shapes; false if they are not compatible.
bool broadcastShapes(const Types& inputs, Shape* out) {
    std::size_t rank = 0;
    for (const TensorType& t : inputs)
        rank = std::max(rank, t.shape.size());
    out->assign(rank, 1);
    for (const TensorType& t : inputs) {
        const std::size_t offset = rank - t.shape.size();
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
            std::int64_t& target = (*out)[offset + i];
            const std::int64_t d = t.shape[i];
            if (d == target || d == 1)
                continue;
            if (target != 1)
                return false;
            target = d;
        }
    }
    return true;
}

ShapeResult unary(const Types& in, const Attrs&) {
    return ShapeResult::ok({in[0]});
}

ShapeResult castOp(const Types& in, const Attrs& attrs) {
    const auto name = attrs.getString("dtype", "");
    if (!name)
        return ShapeResult::fail("cast: attribute 'dtype' must be a string");
    const auto dtype = parseDType(*name);
    if (!dtype)
        return ShapeResult::fail("cast: unknown dtype '" + *name + "'");
    return ShapeResult::ok({TensorType{in[0].shape, *dtype}});
}

ShapeResult broadcastOp(std::string_view op, const Types& in, DType resultType, bool sameDType) {
    if (sameDType) {
        for (const TensorType& t : in) {
            if (t.dtype != in[0].dtype)
                return ShapeResult::fail(std::string(op) + ": operand types " + typeText(in[0]) +
                                         " and " + typeText(t) + " have different dtypes");
        }
    }
    Shape shape;
    if (!broadcastShapes(in, &shape)) {
        std::string shapes;
        for (const TensorType& t : in)
            shapes += (shapes.empty() ? "" : " and ") + shapeText(t.shape);
        return ShapeResult::fail(std::string(op) + ": shapes " + shapes + " do not broadcast");
    }
    return ShapeResult::ok({TensorType{shape, resultType}});
}

ShapeFunction binaryArith(std::string name) {
    return
        [name](const Types& in, const Attrs&) { return broadcastOp(name, in, in[0].dtype, true); };
}

ShapeFunction comparison(std::string name) {
    return
        [name](const Types& in, const Attrs&) { return broadcastOp(name, in, DType::Bool, true); };
}

ShapeResult whereOp(const Types& in, const Attrs&) {
    if (in[1].dtype != in[2].dtype)
        return ShapeResult::fail("where: branches " + typeText(in[1]) + " and " + typeText(in[2]) +
                                 " have different dtypes");
    return broadcastOp("where", in, in[1].dtype, false);
}

/// Reads a 2-D window attribute (pool_size, strides, dilation): one value or two.
bool window2d(const Attrs& attrs, std::string_view name, std::int64_t fallback,
              std::int64_t out[2]) {
    const auto values = attrs.getInts(name, {fallback, fallback});
    if (!values || values->empty() || values->size() > 2)
        return false;
    out[0] = (*values)[0];
    out[1] = values->size() == 2 ? (*values)[1] : (*values)[0];
    return out[0] > 0 && out[1] > 0;
}

/// Reads padding as (top, left, bottom, right) from one, two or four values.
bool padding2d(const Attrs& attrs, std::int64_t out[4]) {
    const auto values = attrs.getInts("padding", {0, 0, 0, 0});
    if (!values)
        return false;
    switch (values->size()) {
    case 1:
        std::fill(out, out + 4, (*values)[0]);
        break;
    case 2:
        out[0] = out[2] = (*values)[0];
        out[1] = out[3] = (*values)[1];
        break;
    case 4:
        std::copy(values->begin(), values->end(), out);
        break;
    default:
        return false;
    }
    return std::all_of(out, out + 4, [](std::int64_t p) { return p >= 0; });
}

bool checkLayout(const Attrs& attrs, std::string_view name, std::string_view expected,
                 std::string_view op, std::string* error) {
    const auto layout = attrs.getString(name, std::string(expected));
    if (layout && (*layout == expected || layout->empty()))
        return true;
    *error = std::string(op) + ": " + std::string(name) + " '" + layout.value_or("?") +
             "' is not supported (only " + std::string(expected) + ")";
    return false;
}

ShapeResult conv2d(const Types& in, const Attrs& attrs) {
    const TensorType& data = in[0];
    const TensorType& weight = in[1];
    std::string error;
    if (!checkLayout(attrs, "data_layout", "NCHW", "nn.conv2d", &error) ||
        !checkLayout(attrs, "kernel_layout", "OIHW", "nn.conv2d", &error))
        return ShapeResult::fail(error);
    if (data.rank() != 4 || weight.rank() != 4)
        return ShapeResult::fail("nn.conv2d: data " + typeText(data) + " and weight " +
                                 typeText(weight) + " must both be 4-D (NCHW, OIHW)");
    std::int64_t strides[2], dilation[2], pad[4];
    if (!window2d(attrs, "strides", 1, strides) || !window2d(attrs, "dilation", 1, dilation) ||
        !padding2d(attrs, pad))
        return ShapeResult::fail("nn.conv2d: strides, dilation and padding must be positive lists "
                                 "of 1, 2 (or 4 for padding) integers");
    const auto groups = attrs.getInt("groups", 1);
    if (!groups || *groups <= 0)
        return ShapeResult::fail("nn.conv2d: groups must be a positive integer");
    if (data.shape[1] != weight.shape[1] * *groups)
        return ShapeResult::fail("nn.conv2d: data has " + std::to_string(data.shape[1]) +
                                 " channels but the weight " + shapeText(weight.shape) +
                                 " with groups=" + std::to_string(*groups) + " expects " +
                                 std::to_string(weight.shape[1] * *groups));
    const auto channels = attrs.getInt("channels", weight.shape[0]);
    if (!channels || *channels != weight.shape[0])
        return ShapeResult::fail("nn.conv2d: channels=" + std::to_string(channels.value_or(-1)) +
                                 " disagrees with the weight's " + std::to_string(weight.shape[0]) +
                                 " output channels");
    Shape out{data.shape[0], weight.shape[0], 0, 0};
    for (int i = 0; i < 2; ++i) {
        const std::int64_t extent = data.shape[2 + i] + pad[i] + pad[i + 2];
        const std::int64_t window = dilation[i] * (weight.shape[2 + i] - 1) + 1;
        if (extent < window)
            return ShapeResult::fail("nn.conv2d: the " + std::to_string(weight.shape[2 + i]) +
                                     "-wide kernel does not fit the padded input " +
                                     shapeText(data.shape));
        out[2 + i] = (extent - window) / strides[i] + 1;
    }
    DType outType = data.dtype;
    if (const auto outDType = attrs.getString("out_dtype", ""); outDType && !outDType->empty()) {
        const auto parsed = parseDType(*outDType);
        if (!parsed)
            return ShapeResult::fail("nn.conv2d: unknown out_dtype '" + *outDType + "'");
        outType = *parsed;
    }
    return ShapeResult::ok({TensorType{out, outType}});
}

ShapeFunction pool2d(std::string name) {
    return [name](const Types& in, const Attrs& attrs) {
        const TensorType& data = in[0];
        std::string error;
        if (!checkLayout(attrs, "layout", "NCHW", name, &error))
            return ShapeResult::fail(error);
        if (data.rank() != 4)
            return ShapeResult::fail(name + ": data " + typeText(data) + " must be 4-D (NCHW)");
        std::int64_t window[2], strides[2], dilation[2], pad[4];
        if (!window2d(attrs, "pool_size", 1, window) || !window2d(attrs, "strides", 1, strides) ||
            !window2d(attrs, "dilation", 1, dilation) || !padding2d(attrs, pad))
            return ShapeResult::fail(name + ": pool_size, strides, dilation and padding must be "
                                            "positive lists of integers");
        const bool ceilMode = attrs.getBool("ceil_mode", false).value_or(false);
        Shape out{data.shape[0], data.shape[1], 0, 0};
        for (int i = 0; i < 2; ++i) {
            const std::int64_t extent = data.shape[2 + i] + pad[i] + pad[i + 2];
            const std::int64_t span = dilation[i] * (window[i] - 1) + 1;
            if (extent < span)
                return ShapeResult::fail(name + ": the pooling window does not fit the input " +
                                         shapeText(data.shape));
            const std::int64_t steps = extent - span;
            out[2 + i] =
                (ceilMode ? (steps + strides[i] - 1) / strides[i] : steps / strides[i]) + 1;
        }
        return ShapeResult::ok({TensorType{out, data.dtype}});
    };
}

ShapeResult globalPool(const Types& in, const Attrs&) {
    if (in[0].rank() != 4)
        return ShapeResult::fail("global pooling: data " + typeText(in[0]) + " must be 4-D (NCHW)");
    return ShapeResult::ok({TensorType{{in[0].shape[0], in[0].shape[1], 1, 1}, in[0].dtype}});
}

ShapeResult adaptivePool(const Types& in, const Attrs& attrs) {
    if (in[0].rank() != 4)
        return ShapeResult::fail("nn.adaptive_avg_pool2d: data " + typeText(in[0]) +
                                 " must be 4-D (NCHW)");
    const auto size = attrs.getInts("output_size", {1, 1});
    if (!size || size->empty() || size->size() > 2)
        return ShapeResult::fail("nn.adaptive_avg_pool2d: output_size must be 1 or 2 integers");
    const std::int64_t h = (*size)[0], w = size->size() == 2 ? (*size)[1] : (*size)[0];
    return ShapeResult::ok({TensorType{{in[0].shape[0], in[0].shape[1], h, w}, in[0].dtype}});
}

ShapeResult dense(const Types& in, const Attrs& attrs) {
    const TensorType& data = in[0];
    const TensorType& weight = in[1];
    if (data.rank() < 1 || weight.rank() != 2)
        return ShapeResult::fail("nn.dense: weight " + typeText(weight) +
                                 " must be 2-D (units, in)");
    if (data.shape.back() != weight.shape[1])
        return ShapeResult::fail("nn.dense: data " + shapeText(data.shape) +
                                 " does not match weight " + shapeText(weight.shape) +
                                 " (inner dimensions " + std::to_string(data.shape.back()) +
                                 " and " + std::to_string(weight.shape[1]) + ")");
    const auto units = attrs.getInt("units", weight.shape[0]);
    if (!units || *units != weight.shape[0])
        return ShapeResult::fail("nn.dense: units disagrees with the weight's " +
                                 std::to_string(weight.shape[0]) + " rows");
    Shape out = data.shape;
    out.back() = weight.shape[0];
    return ShapeResult::ok({TensorType{out, data.dtype}});
}

ShapeResult matmul(const Types& in, const Attrs& attrs) {
    const bool transA = attrs.getBool("transpose_a", false).value_or(false);
    const bool transB = attrs.getBool("transpose_b", false).value_or(false);
    TensorType a = in[0], b = in[1];
    if (a.rank() < 2 || b.rank() < 2)
        return ShapeResult::fail("nn.matmul: operands " + typeText(a) + " and " + typeText(b) +
                                 " must be at least 2-D");
    if (transA)
        std::swap(a.shape[a.rank() - 1], a.shape[a.rank() - 2]);
    if (transB)
        std::swap(b.shape[b.rank() - 1], b.shape[b.rank() - 2]);
    if (a.shape.back() != b.shape[b.rank() - 2])
        return ShapeResult::fail("nn.matmul: inner dimensions of " + shapeText(in[0].shape) +
                                 " and " + shapeText(in[1].shape) + " differ");
    TensorType batchA{Shape(a.shape.begin(), a.shape.end() - 2), a.dtype};
    TensorType batchB{Shape(b.shape.begin(), b.shape.end() - 2), b.dtype};
    Shape out;
    if (!broadcastShapes({batchA, batchB}, &out))
        return ShapeResult::fail("nn.matmul: batch dimensions of " + shapeText(in[0].shape) +
                                 " and " + shapeText(in[1].shape) + " do not broadcast");
    out.push_back(a.shape[a.rank() - 2]);
    out.push_back(b.shape.back());
    return ShapeResult::ok({TensorType{out, a.dtype}});
}

ShapeResult batchMatmul(const Types& in, const Attrs& attrs) {
    Attrs adjusted = attrs;
    adjusted.set("transpose_b", attrs.getBool("transpose_b", true).value_or(true));
    if (in[0].rank() != 3 || in[1].rank() != 3)
        return ShapeResult::fail("nn.batch_matmul: operands " + typeText(in[0]) + " and " +
                                 typeText(in[1]) + " must be 3-D");
    return matmul(in, adjusted);
}

ShapeResult biasAdd(const Types& in, const Attrs& attrs) {
    const auto axis = attrs.getInt("axis", 1);
    const int a = normalizeAxis(axis.value_or(1), in[0].rank());
    if (a < 0 || in[1].rank() != 1 || in[1].shape[0] != in[0].shape[a])
        return ShapeResult::fail("nn.bias_add: bias " + typeText(in[1]) + " does not match axis " +
                                 std::to_string(axis.value_or(1)) + " of " + typeText(in[0]));
    return ShapeResult::ok({in[0]});
}

ShapeResult batchNorm(const Types& in, const Attrs& attrs) {
    const int axis = normalizeAxis(attrs.getInt("axis", 1).value_or(1), in[0].rank());
    if (axis < 0)
        return ShapeResult::fail("nn.batch_norm: axis is out of range for " + typeText(in[0]));
    const std::int64_t channels = in[0].shape[axis];
    static const char* const kNames[] = {"gamma", "beta", "moving_mean", "moving_var"};
    for (int i = 1; i < 5; ++i) {
        if (in[i].rank() != 1 || in[i].shape[0] != channels)
            return ShapeResult::fail(std::string("nn.batch_norm: ") + kNames[i - 1] + " " +
                                     typeText(in[i]) + " must have " + std::to_string(channels) +
                                     " elements");
    }
    const TensorType stats{{channels}, in[0].dtype};
    return ShapeResult::ok({in[0], stats, stats});
}

ShapeResult layerNorm(const Types& in, const Attrs& attrs) {
    const int axis = normalizeAxis(attrs.getInt("axis", -1).value_or(-1), in[0].rank());
    if (axis < 0)
        return ShapeResult::fail("nn.layer_norm: axis is out of range for " + typeText(in[0]));
    for (int i = 1; i < 3; ++i) {
        if (in[i].rank() != 1 || in[i].shape[0] != in[0].shape[axis])
            return ShapeResult::fail("nn.layer_norm: gamma and beta must have " +
                                     std::to_string(in[0].shape[axis]) + " elements, not " +
                                     shapeText(in[i].shape));
    }
    return ShapeResult::ok({in[0]});
}

ShapeResult softmax(const Types& in, const Attrs& attrs) {
    if (normalizeAxis(attrs.getInt("axis", -1).value_or(-1), in[0].rank()) < 0)
        return ShapeResult::fail("nn.softmax: axis is out of range for " + typeText(in[0]));
    return ShapeResult::ok({in[0]});
}

ShapeResult batchFlatten(const Types& in, const Attrs&) {
    if (in[0].rank() < 1)
        return ShapeResult::fail("nn.batch_flatten: data must have a batch dimension");
    std::int64_t rest = 1;
    for (int i = 1; i < in[0].rank(); ++i)
        rest *= in[0].shape[i];
    return ShapeResult::ok({TensorType{{in[0].shape[0], rest}, in[0].dtype}});
}

ShapeResult concatenate(const Types& in, const Attrs& attrs) {
    if (in.empty())
        return ShapeResult::fail("concatenate: needs at least one input");
    const int axis = normalizeAxis(attrs.getInt("axis", 0).value_or(0), in[0].rank());
    if (axis < 0)
        return ShapeResult::fail("concatenate: axis is out of range for " + typeText(in[0]));
    Shape out = in[0].shape;
    for (std::size_t i = 1; i < in.size(); ++i) {
        const TensorType& t = in[i];
        bool compatible = t.rank() == in[0].rank() && t.dtype == in[0].dtype;
        for (int d = 0; compatible && d < t.rank(); ++d)
            compatible = d == axis || t.shape[d] == out[d];
        if (!compatible)
            return ShapeResult::fail("concatenate: input " + typeText(t) + " does not match " +
                                     typeText(in[0]) + " along axis " + std::to_string(axis));
        out[axis] += t.shape[axis];
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult reshape(const Types& in, const Attrs& attrs) {
    const auto newShape = attrs.getInts("newshape", {});
    if (!newShape)
        return ShapeResult::fail("reshape: newshape must be a list of integers");
    const std::int64_t total = in[0].elementCount();
    Shape out;
    int inferred = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < newShape->size(); ++i) {
        std::int64_t d = (*newShape)[i];
        if (d == 0) {
            if (i >= in[0].shape.size())
                return ShapeResult::fail("reshape: 0 at position " + std::to_string(i) +
                                         " has no input dimension to copy");
            d = in[0].shape[i];
        } else if (d == -1) {
            if (inferred >= 0)
                return ShapeResult::fail("reshape: newshape has more than one -1");
            inferred = static_cast<int>(out.size());
            out.push_back(1);
            continue;
        } else if (d < 0) {
            return ShapeResult::fail("reshape: newshape value " + std::to_string(d) +
                                     " is not supported");
        }
        known *= d;
        out.push_back(d);
    }
    if (inferred >= 0) {
        if (known == 0 || total % known != 0)
            return ShapeResult::fail("reshape: cannot infer -1 reshaping " +
                                     shapeText(in[0].shape) + " to " + shapeText(*newShape));
        out[inferred] = total / known;
    } else if (known != total) {
        return ShapeResult::fail("reshape: " + shapeText(in[0].shape) + " has " +
                                 std::to_string(total) + " elements, newshape " +
                                 shapeText(*newShape) + " has " + std::to_string(known));
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult transpose(const Types& in, const Attrs& attrs) {
    const int rank = in[0].rank();
    Shape reversed(rank);
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    const auto axes = attrs.getInts("axes", reversed);
    if (!axes || static_cast<int>(axes->size()) != rank)
        return ShapeResult::fail("transpose: axes must list all " + std::to_string(rank) +
                                 " dimensions of " + typeText(in[0]));
    Shape out(rank);
    std::vector<bool> seen(rank, false);
    for (int i = 0; i < rank; ++i) {
        const int a = normalizeAxis((*axes)[i], rank);
        if (a < 0 || seen[a])
            return ShapeResult::fail("transpose: axes " + shapeText(*axes) +
                                     " is not a permutation of " + std::to_string(rank) + " axes");
        seen[a] = true;
        out[i] = in[0].shape[a];
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult split(const Types& in, const Attrs& attrs) {
    const int axis = normalizeAxis(attrs.getInt("axis", 0).value_or(0), in[0].rank());
    if (axis < 0)
        return ShapeResult::fail("split: axis is out of range for " + typeText(in[0]));
    const std::int64_t extent = in[0].shape[axis];
    const AttrValue* spec = attrs.find("indices_or_sections");
    std::vector<std::int64_t> bounds;
    if (spec && std::holds_alternative<std::int64_t>(*spec)) {
        const std::int64_t sections = std::get<std::int64_t>(*spec);
        if (sections <= 0 || extent % sections != 0)
            return ShapeResult::fail("split: " + std::to_string(extent) +
                                     " is not divisible into " + std::to_string(sections) +
                                     " sections");
        for (std::int64_t i = 1; i < sections; ++i)
            bounds.push_back(i * (extent / sections));
    } else if (const auto indices = attrs.getInts("indices_or_sections", {}); indices && spec) {
        bounds = *indices;
    } else {
        return ShapeResult::fail("split: indices_or_sections must be an integer or a list");
    }
    Types out;
    std::int64_t start = 0;
    bounds.push_back(extent);
    for (std::int64_t end : bounds) {
        if (end < start || end > extent)
            return ShapeResult::fail("split: indices " + shapeText(bounds) +
                                     " are not increasing within " + std::to_string(extent));
        TensorType part = in[0];
        part.shape[axis] = end - start;
        out.push_back(part);
        start = end;
    }
    return ShapeResult::ok(out);
}

ShapeResult stridedSlice(const Types& in, const Attrs& attrs) {
    const int rank = in[0].rank();
    const auto begin = attrs.getInts("begin", {});
    const auto end = attrs.getInts("end", {});
    const auto strides = attrs.getInts("strides", {1});
    const auto axesAttr = attrs.getInts("axes", {});
    const auto mode = attrs.getString("slice_mode", "end");
    if (!begin || !end || !strides || !axesAttr || !mode)
        return ShapeResult::fail(
            "strided_slice: begin, end, strides and axes must be integer lists");
    Shape axes = *axesAttr;
    if (axes.empty()) {
        for (std::size_t i = 0; i < begin->size(); ++i)
            axes.push_back(static_cast<std::int64_t>(i));
    }
    if (begin->size() != axes.size() || end->size() < axes.size())
        return ShapeResult::fail("strided_slice: begin and end must have one entry per axis");
    Shape out = in[0].shape;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const int axis = normalizeAxis(axes[i], rank);
        if (axis < 0)
            return ShapeResult::fail("strided_slice: axis " + std::to_string(axes[i]) +
                                     " is out of range for " + typeText(in[0]));
        const std::int64_t extent = in[0].shape[axis];
        const std::int64_t stride = i < strides->size() ? (*strides)[i] : strides->back();
        if (stride <= 0)
            return ShapeResult::fail("strided_slice: only positive strides are supported");
        std::int64_t b = (*begin)[i], e = (*end)[i];
        if (*mode == "size")
            e = e < 0 ? extent : b + e;
        if (b < 0)
            b += extent;
        if (e < 0)
            e += extent;
        b = std::clamp<std::int64_t>(b, 0, extent);
        e = std::clamp<std::int64_t>(e, 0, extent);
        out[axis] = e > b ? (e - b + stride - 1) / stride : 0;
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult squeeze(const Types& in, const Attrs& attrs) {
    const auto axes = attrs.getInts("axis", {});
    Shape out;
    for (int d = 0; d < in[0].rank(); ++d) {
        bool drop = false;
        if (axes->empty()) {
            drop = in[0].shape[d] == 1;
        } else {
            for (std::int64_t a : *axes)
                drop = drop || normalizeAxis(a, in[0].rank()) == d;
            if (drop && in[0].shape[d] != 1)
                return ShapeResult::fail("squeeze: dimension " + std::to_string(d) + " of " +
                                         typeText(in[0]) + " is not 1");
        }
        if (!drop)
            out.push_back(in[0].shape[d]);
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult expandDims(const Types& in, const Attrs& attrs) {
    const auto axis = attrs.getInt("axis", 0);
    const auto count = attrs.getInt("num_newaxis", 1);
    const int a = normalizeAxis(axis.value_or(0), in[0].rank() + 1);
    if (!axis || !count || a < 0 || *count < 0)
        return ShapeResult::fail("expand_dims: axis is out of range for " + typeText(in[0]));
    Shape out = in[0].shape;
    out.insert(out.begin() + a, *count, 1);
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult reduce(const Types& in, const Attrs& attrs) {
    const int rank = in[0].rank();
    Shape all(rank);
    std::iota(all.begin(), all.end(), 0);
    auto axes = attrs.getInts("axis", all);
    const bool keepDims = attrs.getBool("keepdims", false).value_or(false);
    bool exclude = attrs.getBool("exclude", false).value_or(false);
    if (!axes)
        return ShapeResult::fail("reduction: axis must be an integer or a list");
    if (axes->empty()) { // as in Relay: an empty list reduces every axis, exclude or not
        axes = all;
        exclude = false;
    }
    std::vector<bool> reduced(rank, exclude);
    for (std::int64_t a : *axes) {
        const int axis = normalizeAxis(a, rank);
        if (axis < 0)
            return ShapeResult::fail("reduction: axis " + std::to_string(a) +
                                     " is out of range for " + typeText(in[0]));
        reduced[axis] = !exclude;
    }
    Shape out;
    for (int d = 0; d < rank; ++d) {
        if (!reduced[d])
            out.push_back(in[0].shape[d]);
        else if (keepDims)
            out.push_back(1);
    }
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult take(const Types& in, const Attrs& attrs) {
    const AttrValue* axisAttr = attrs.find("axis");
    if (!axisAttr || std::holds_alternative<std::monostate>(*axisAttr)) {
        return ShapeResult::ok({TensorType{in[1].shape, in[0].dtype}});
    }
    const int axis = normalizeAxis(attrs.getInt("axis", 0).value_or(0), in[0].rank());
    if (axis < 0)
        return ShapeResult::fail("take: axis is out of range for " + typeText(in[0]));
    Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
    out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
    out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
    return ShapeResult::ok({TensorType{out, in[0].dtype}});
}

ShapeResult shapeOf(const Types& in, const Attrs& attrs) {
    const auto name = attrs.getString("dtype", "int64");
    const auto dtype = name ? parseDType(*name) : std::nullopt;
    if (!dtype)
        return ShapeResult::fail("shape_of: dtype must name an integer type");
    return ShapeResult::ok({TensorType{{in[0].rank()}, *dtype}});
}

ShapeResult passThrough(const Types& in, const Attrs&) {
    return ShapeResult::ok({in[0]});
}

/// Parameters and constants carry their type in the node; the reader fills outputs directly.
ShapeResult noInputs(const Types&, const Attrs&) {
    return ShapeResult::fail("parameters and constants take their type from the graph file");
}

} // namespace

void registerBuiltinOps(const std::function<void(OpDef)>& add) {
    using F = KernelFamily;
    auto op = [&](std::string name, int minInputs, int maxInputs, ShapeFunction shape,
                  OpKernel kernel, OpRole role = OpRole::Compute) {
        OpDef def;
        def.name = std::move(name);
        def.role = role;
        def.minInputs = minInputs;
        def.maxInputs = maxInputs;
        def.inferShape = std::move(shape);
        def.kernel = kernel;
        def.hostOnly = kernel.family == F::Shape;
        def.tupleInput = def.name == "concatenate";
        add(std::move(def));
    };

    op("parameter", 0, 0, noInputs, F::None, OpRole::Parameter);
    op("constant", 0, 0, noInputs, F::None, OpRole::Constant);
    op("device_copy", 1, 1, passThrough, F::None, OpRole::DeviceCopy);

    // The functions of ir/ElementFunctions.def that Relay has (a binary function's result is
    // of its operands' type, or bool for a comparison), then Relay's aliases.
    auto relayOp = [&](const char* name, int inputs, ShapeFunction shape, OpKernel kernel) {
        if (*name)
            op(name, inputs, inputs, std::move(shape), kernel);
    };
    const auto Arithmetic = [](const char* name) { return binaryArith(name); };
    const auto Comparison = [](const char* name) { return comparison(name); };
#define PLACER_UNARY_FN(Fn, name, onnx, relay) relayOp(relay, 1, unary, UnaryFn::Fn);
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind)                                         \
    relayOp(relay, 2, relayKind(relay), BinaryFn::Fn);
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) relayOp(relay, 1, reduce, ReduceFn::Fn);
#include "ir/ElementFunctions.def"
    for (const auto& [alias, fn] :
         {std::pair{"fast_exp", UnaryFn::Exp}, std::pair{"fast_tanh", UnaryFn::Tanh},
          std::pair{"fast_erf", UnaryFn::Erf}})
        op(alias, 1, 1, unary, fn);
    for (const char* name : {"copy", "stop_gradient"})
        op(name, 1, 1, unary, F::Copy);
    for (const char* name : {"zeros_like", "ones_like"})
        op(name, 1, 1, unary, F::Fill);
    op("cast", 1, 1, castOp, F::Cast);
    op("where", 3, 3, whereOp, F::Where);

    op("nn.conv2d", 2, 2, conv2d, F::Conv);
    op("nn.dense", 2, 2, dense, F::Matmul);
    op("nn.matmul", 2, 2, matmul, F::Matmul);
    op("nn.batch_matmul", 2, 2, batchMatmul, F::Matmul);
    op("nn.bias_add", 2, 2, biasAdd, BinaryFn::Add);
    op("nn.max_pool2d", 1, 1, pool2d("nn.max_pool2d"), F::Pool);
    op("nn.avg_pool2d", 1, 1, pool2d("nn.avg_pool2d"), F::Pool);
    op("nn.global_avg_pool2d", 1, 1, globalPool, F::Pool);
    op("nn.global_max_pool2d", 1, 1, globalPool, F::Pool);
    op("nn.adaptive_avg_pool2d", 1, 1, adaptivePool, F::Pool);
    op("nn.batch_norm", 5, 5, batchNorm, F::BatchNorm);
    op("nn.layer_norm", 3, 3, layerNorm, F::LayerNorm);
    op("nn.softmax", 1, 1, softmax, F::Softmax);
    op("nn.fast_softmax", 1, 1, softmax, F::Softmax);
    op("nn.log_softmax", 1, 1, softmax, F::Softmax);
    op("nn.batch_flatten", 1, 1, batchFlatten, F::Copy);

    op("concatenate", 1, -1, concatenate, F::Concat);
    op("reshape", 1, 1, reshape, F::Copy);
    op("transpose", 1, 1, transpose, F::Transpose);
    op("split", 1, 1, split, F::Split);
    op("strided_slice", 1, 1, stridedSlice, F::Slice);
    op("squeeze", 1, 1, squeeze, F::Copy);
    op("expand_dims", 1, 1, expandDims, F::Copy);
    op("take", 2, 2, take, F::Gather);
    op("shape_of", 1, 1, shapeOf, F::Shape);
}

} // namespace placer
