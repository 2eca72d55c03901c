// The host computations of NonZero, Compress, Unique and NonMaxSuppression (kernels/Selection.h).
#include "kernels/Selection.h"

#include "ir/StringPool.h"
#include "kernels/KernelSupport.h"
#include "kernels/OpGeometry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

namespace placer {

namespace {

using Shapes = SelectionShapes;
using SelectionPlan = Result<Selection>;

SourceError specError(const KernelSpec& spec, const std::string& message) {
    (void)spec;
    return SourceError{"", 0, 0, message};
}

SelectionPlan selection(std::string name, std::vector<bool> bounded, Selection::Compute compute) {
    return Selection{std::move(name), std::move(bounded), std::move(compute)};
}

void storeIndex(std::byte* data, std::int64_t i, std::int64_t value) {
    std::memcpy(data + i * 8, &value, sizeof value);
}

/// The axis attribute normalised, or nullopt when the node has none (or it is out of range).
std::optional<std::size_t> axisOf(const KernelSpec& spec, int rank) {
    if (!spec.node->attrs.has("axis"))
        return std::nullopt;
    const int axis = normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0), rank);
    if (axis < 0)
        return std::nullopt;
    return static_cast<std::size_t>(axis);
}

SelectionPlan nonZero(const KernelSpec& spec) {
    const TensorType x = spec.inputs[0];
    const std::int64_t rank = x.rank();
    const std::int64_t bound = x.elementCount();
    return selection("nonzero", {true}, [=](const std::byte* const* in, std::byte* const* out) {
        std::vector<std::int64_t> found;
        for (std::int64_t i = 0; i < bound; ++i) {
            if (loadAsDouble(in[0], x.dtype, i) != 0)
                found.push_back(i);
        }
        const auto k = static_cast<std::int64_t>(found.size());
        for (std::int64_t j = 0; j < k; ++j) {
            std::int64_t rest = found[static_cast<std::size_t>(j)];
            for (std::int64_t d = rank - 1; d >= 0; --d) {
                const std::int64_t dim = x.shape[static_cast<std::size_t>(d)];
                storeIndex(out[0], d * k + j, rest % dim);
                rest /= dim;
            }
        }
        return Shapes{{rank, k}};
    });
}

SelectionPlan compress(const KernelSpec& spec) {
    if (spec.inputs.size() < 2 || spec.inputs[1].rank() != 1)
        return specError(spec, "the condition must be a 1-d tensor");
    const TensorType x = spec.inputs[0];
    const TensorType condition = spec.inputs[1];
    const auto axis = axisOf(spec, x.rank());
    if (spec.node->attrs.has("axis") && !axis)
        return specError(spec, "the axis is out of range");
    const std::int64_t size = dtypeSize(x.dtype);
    // [outer, length, inner] with the selection along `length`.
    const std::int64_t length = axis ? x.shape[*axis] : x.elementCount();
    const std::int64_t outer = axis ? product(x.shape, 0, *axis) : 1;
    const std::int64_t inner = axis ? product(x.shape, *axis + 1) : 1;
    return selection("compress", {true}, [=](const std::byte* const* in, std::byte* const* out) {
        std::vector<std::int64_t> kept;
        const std::int64_t n = std::min(length, condition.elementCount());
        for (std::int64_t i = 0; i < n; ++i) {
            if (loadAsDouble(in[1], condition.dtype, i) != 0)
                kept.push_back(i);
        }
        const auto k = static_cast<std::int64_t>(kept.size());
        const auto block = static_cast<std::size_t>(inner * size);
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::int64_t j = 0; j < k; ++j) {
                if (block > 0)
                    std::memcpy(out[0] + ((o * k + j) * inner) * size,
                                in[0] + ((o * length + kept[static_cast<std::size_t>(j)]) * inner) *
                                            size,
                                block);
            }
        }
        std::vector<std::int64_t> shape{k};
        if (axis) {
            shape = x.shape;
            shape[*axis] = k;
        }
        return Shapes{shape};
    });
}

SelectionPlan unique(const KernelSpec& spec) {
    const TensorType x = spec.inputs[0];
    const auto axis = axisOf(spec, x.rank());
    if (spec.node->attrs.has("axis") && !axis)
        return specError(spec, "the axis is out of range");
    const bool sorted = spec.node->attrs.getInt("sorted", 1).value_or(1) != 0;
    const std::int64_t size = dtypeSize(x.dtype);
    // Slices along the axis (single elements without one), compared lexicographically.
    const std::int64_t length = axis ? x.shape[*axis] : x.elementCount();
    const std::int64_t outer = axis ? product(x.shape, 0, *axis) : 1;
    const std::int64_t inner = axis ? product(x.shape, *axis + 1) : 1;
    const std::size_t outputs = spec.outputs.size();
    return selection(
        "unique", {true, true, false, true},
        [=](const std::byte* const* in, std::byte* const* out) {
            auto value = [&](std::int64_t slice, std::int64_t k) {
                const std::int64_t o = k / inner, i = k % inner;
                return loadAsDouble(in[0], x.dtype, (o * length + slice) * inner + i);
            };
            auto less = [&](std::int64_t a, std::int64_t b) {
                for (std::int64_t k = 0; k < outer * inner; ++k) {
                    const double va = value(a, k), vb = value(b, k);
                    if (va != vb)
                        return va < vb;
                }
                return false;
            };
            auto equal = [&](std::int64_t a, std::int64_t b) { return !less(a, b) && !less(b, a); };
            // The first occurrence of each distinct slice, in order of appearance.
            std::vector<std::int64_t> firsts;
            std::vector<std::int64_t> inverse(static_cast<std::size_t>(length));
            std::vector<std::int64_t> counts;
            for (std::int64_t s = 0; s < length; ++s) {
                std::size_t at = 0;
                while (at < firsts.size() && !equal(firsts[at], s))
                    ++at;
                if (at == firsts.size()) {
                    firsts.push_back(s);
                    counts.push_back(0);
                }
                counts[at] += 1;
                inverse[static_cast<std::size_t>(s)] = static_cast<std::int64_t>(at);
            }
            std::vector<std::size_t> order(firsts.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            if (sorted)
                std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                    return less(firsts[a], firsts[b]);
                });
            std::vector<std::int64_t> rank(order.size());
            for (std::size_t r = 0; r < order.size(); ++r)
                rank[order[r]] = static_cast<std::int64_t>(r);
            const auto u = static_cast<std::int64_t>(order.size());
            const auto block = static_cast<std::size_t>(inner * size);
            for (std::int64_t o = 0; o < outer; ++o) {
                for (std::int64_t r = 0; r < u; ++r) {
                    const std::int64_t from = firsts[order[static_cast<std::size_t>(r)]];
                    if (block > 0)
                        std::memcpy(out[0] + ((o * u + r) * inner) * size,
                                    in[0] + ((o * length + from) * inner) * size, block);
                }
            }
            for (std::int64_t r = 0; r < u; ++r) {
                const std::size_t j = order[static_cast<std::size_t>(r)];
                if (outputs > 1)
                    storeIndex(out[1], r, firsts[j]);
                if (outputs > 3)
                    storeIndex(out[3], r, counts[j]);
            }
            if (outputs > 2) {
                for (std::int64_t s = 0; s < length; ++s)
                    storeIndex(
                        out[2], s,
                        rank[static_cast<std::size_t>(inverse[static_cast<std::size_t>(s)])]);
            }
            std::vector<std::int64_t> shape{u};
            if (axis) {
                shape = x.shape;
                shape[*axis] = u;
            }
            return Shapes{shape, {u}, {length}, {u}};
        });
}

/// Boxes as their corners (y0 <= y1, x0 <= x1) and areas, made once a batch so that the greedy
/// selection's inner loop only compares numbers.
struct Corners {
    std::vector<double> y0, x0, y1, x1, area;

    void assign(const std::vector<double>& box, bool centers) {
        const std::size_t n = box.size() / 4;
        for (auto* v : {&y0, &x0, &y1, &x1, &area})
            v->resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const double* b = &box[i * 4];
            if (centers) {
                x0[i] = b[0] - b[2] / 2, x1[i] = b[0] + b[2] / 2;
                y0[i] = b[1] - b[3] / 2, y1[i] = b[1] + b[3] / 2;
            } else {
                y0[i] = std::min(b[0], b[2]), y1[i] = std::max(b[0], b[2]);
                x0[i] = std::min(b[1], b[3]), x1[i] = std::max(b[1], b[3]);
            }
            area[i] = (x1[i] - x0[i]) * (y1[i] - y0[i]);
        }
    }
};

/// The boxes kept so far for one (batch, class), their corners side by side, and, where the
/// candidates are many, an index of them by their left edge: a box can only be suppressed by a
/// kept box whose horizontal extent meets its own, so it is compared with those alone (the
/// boxes of the other classes that torchvision's batched NMS offsets far apart, and boxes far
/// away, are never looked at). The answer is the plain loop's, exactly: the same comparisons on
/// the boxes that could suppress, in a different order, and "any" does not depend on it.
struct Kept {
    std::vector<double> y0, x0, y1, x1, area;
    std::size_t count = 0; ///< every box kept, those that cannot suppress included

    std::size_t size() const { return count; }

    /// Starts a (batch, class) whose candidates are `candidates` (box indices into `c`).
    void clear(const Corners& c, const std::vector<std::pair<double, std::int64_t>>& candidates) {
        for (auto* v : {&y0, &x0, &y1, &x1, &area})
            v->clear();
        count = 0;
        m_maxWidth = 0;
        for (std::vector<std::uint32_t>& bucket : m_buckets)
            bucket.clear();
        m_indexed = false;
        // Few candidates: the plain loop is as fast. Coordinates that are not finite: the plain
        // loop says what they do.
        constexpr std::size_t kIndexFrom = 64;
        if (candidates.size() < kIndexFrom)
            return;
        double low = std::numeric_limits<double>::infinity(), high = -low, widths = 0;
        for (const auto& [score, i] : candidates) {
            const auto k = static_cast<std::size_t>(i);
            if (!std::isfinite(c.x0[k]) || !std::isfinite(c.x1[k]))
                return;
            low = std::min(low, c.x0[k]);
            high = std::max(high, c.x1[k]);
            widths += c.x1[k] - c.x0[k];
        }
        // Buckets about as wide as a box, at most 2^16 of them, and far wider than the
        // rounding of the coordinates (so that a bucket either side of a query takes it in).
        constexpr double kMaxBuckets = 65536;
        const double span = high - low;
        m_low = low;
        m_width = std::max({widths / static_cast<double>(candidates.size()), span / kMaxBuckets,
                            (std::fabs(low) + std::fabs(high)) * 0x1p-40,
                            std::numeric_limits<double>::min()});
        if (!std::isfinite(span) || !std::isfinite(m_width))
            return;
        const auto buckets = static_cast<std::size_t>(std::min(kMaxBuckets, span / m_width)) + 1;
        if (m_buckets.size() < buckets)
            m_buckets.resize(buckets);
        m_bucketCount = buckets;
        m_indexed = true;
    }

    void add(const Corners& c, std::size_t i) {
        ++count;
        // A box of no area never suppresses (and NaN compares false): it needs no place here.
        if (!(c.area[i] > 0))
            return;
        const auto k = static_cast<std::uint32_t>(area.size());
        y0.push_back(c.y0[i]), x0.push_back(c.x0[i]), y1.push_back(c.y1[i]);
        x1.push_back(c.x1[i]), area.push_back(c.area[i]);
        if (m_indexed) {
            m_maxWidth = std::max(m_maxWidth, c.x1[i] - c.x0[i]);
            m_buckets[bucketOf(c.x0[i])].push_back(k);
        }
    }

    /// Whether a kept box overlaps box i by more than `threshold` (intersection over union), as
    /// ONNX Runtime decides it: boxes of no area never suppress.
    bool suppress(const Corners& c, std::size_t i, double threshold) const {
        const double by0 = c.y0[i], bx0 = c.x0[i], by1 = c.y1[i], bx1 = c.x1[i], bArea = c.area[i];
        if (bArea <= 0)
            return false;
        const auto overlaps = [&](std::size_t k) {
            const double ix0 = std::max(x0[k], bx0), ix1 = std::min(x1[k], bx1);
            const double iy0 = std::max(y0[k], by0), iy1 = std::min(y1[k], by1);
            if (ix1 <= ix0 || iy1 <= iy0 || area[k] <= 0)
                return false;
            const double intersection = (ix1 - ix0) * (iy1 - iy0);
            const double united = area[k] + bArea - intersection;
            return united > 0 && intersection / united > threshold;
        };
        if (m_indexed) {
            // A kept box that meets [bx0, bx1] starts after bx0 - (the widest kept box), and
            // before bx1; a bucket either side takes rounding in.
            const std::size_t first = bucketOf(bx0 - m_maxWidth), last = bucketOf(bx1);
            const std::size_t from = first > 0 ? first - 1 : 0;
            const std::size_t to = std::min(last + 1, m_bucketCount - 1);
            if (to - from + 1 < area.size()) {
                for (std::size_t b = from; b <= to; ++b) {
                    for (const std::uint32_t k : m_buckets[b]) {
                        if (overlaps(k))
                            return true;
                    }
                }
                return false;
            }
        }
        for (std::size_t k = 0; k < area.size(); ++k) {
            if (overlaps(k))
                return true;
        }
        return false;
    }

private:
    std::size_t bucketOf(double x) const {
        const double at = std::floor((x - m_low) / m_width);
        if (!(at > 0))
            return 0;
        return static_cast<std::size_t>(std::min(at, static_cast<double>(m_bucketCount - 1)));
    }

    bool m_indexed = false;
    double m_low = 0, m_width = 1, m_maxWidth = 0;
    std::size_t m_bucketCount = 0;
    std::vector<std::vector<std::uint32_t>> m_buckets;
};

SelectionPlan nonMaxSuppression(const KernelSpec& spec) {
    if (spec.inputs.size() < 2)
        return specError(spec, "needs boxes and scores");
    const TensorType boxes = spec.inputs[0], scores = spec.inputs[1];
    if (boxes.rank() != 3 || boxes.shape[2] != 4 || scores.rank() != 3 ||
        scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
        return specError(spec, "boxes must be [batches, boxes, 4] and scores "
                               "[batches, classes, boxes]");
    const int maxInput = geometry::inputAt(spec, 2), iouInput = geometry::inputAt(spec, 3),
              scoreInput = geometry::inputAt(spec, 4);
    std::vector<DType> types;
    for (const TensorType& type : spec.inputs)
        types.push_back(type.dtype);
    const bool centers = spec.node->attrs.getInt("center_point_box", 0).value_or(0) != 0;
    const std::int64_t batches = boxes.shape[0], count = boxes.shape[1], classes = scores.shape[1];
    return selection(
        "non_max_suppression", {true}, [=](const std::byte* const* in, std::byte* const* out) {
            auto scalar = [&](int input, double fallback) {
                return input < 0
                           ? fallback
                           : loadAsDouble(in[input], types[static_cast<std::size_t>(input)], 0);
            };
            // Absent, the limit is 0: nothing is selected. Exporters write "no limit" as
            // int64's largest value, which a plain cast from double would turn negative.
            const std::int64_t limit = functors::toInteger(scalar(maxInput, 0));
            const double iou = scalar(iouInput, 0);
            const bool thresholded = scoreInput >= 0;
            const double minScore = scalar(scoreInput, 0);
            std::int64_t selected = 0;
            std::vector<double> box(static_cast<std::size_t>(count * 4));
            Corners corners;
            Kept kept;
            for (std::int64_t b = 0; b < batches; ++b) {
                for (std::int64_t i = 0; i < count * 4; ++i)
                    box[static_cast<std::size_t>(i)] =
                        loadAsDouble(in[0], boxes.dtype, b * count * 4 + i);
                corners.assign(box, centers);
                for (std::int64_t c = 0; c < classes; ++c) {
                    std::vector<std::pair<double, std::int64_t>> candidates;
                    for (std::int64_t i = 0; i < count; ++i) {
                        const double s =
                            loadAsDouble(in[1], scores.dtype, (b * classes + c) * count + i);
                        if (!thresholded || s > minScore)
                            candidates.emplace_back(s, i);
                    }
                    // Highest score first; equal scores in box order.
                    std::stable_sort(
                        candidates.begin(), candidates.end(),
                        [](const auto& x, const auto& y) { return x.first > y.first; });
                    kept.clear(corners, candidates);
                    for (const auto& [s, i] : candidates) {
                        if (static_cast<std::int64_t>(kept.size()) >= limit)
                            break;
                        if (kept.suppress(corners, static_cast<std::size_t>(i), iou))
                            continue;
                        kept.add(corners, static_cast<std::size_t>(i));
                        storeIndex(out[0], selected * 3, b);
                        storeIndex(out[0], selected * 3 + 1, c);
                        storeIndex(out[0], selected * 3 + 2, i);
                        ++selected;
                    }
                }
            }
            return Shapes{{selected, 3}};
        });
}

} // namespace

/// StringNormalizer: drops the stop words from [C] or [1, C] strings (matched with or without
/// case), then changes case (ASCII letters; other bytes, UTF-8 included, are kept as they are).
/// With every string dropped, the result is one empty string.
SelectionPlan stringNormalizer(const KernelSpec& spec) {
    const TensorType x = spec.inputs[0];
    if (x.dtype != DType::String || x.rank() < 1 || x.rank() > 2 ||
        (x.rank() == 2 && x.shape[0] != 1))
        return specError(spec, "the input must be strings of shape [C] or [1, C]");
    const Attrs& attrs = spec.node->attrs;
    const std::string action = attrs.getString("case_change_action", "NONE").value_or("NONE");
    if (action != "NONE" && action != "LOWER" && action != "UPPER")
        return specError(spec,
                         "case_change_action must be LOWER, UPPER or NONE, not '" + action + "'");
    const bool caseSensitive = attrs.getInt("is_case_sensitive", 0).value_or(0) != 0;
    auto lowered = [](std::string text) {
        for (char& c : text)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return text;
    };
    std::set<std::string> stopwords;
    for (const std::string& word : splitStringList(attrs.getString("stopwords", "").value_or("")))
        stopwords.insert(caseSensitive ? word : lowered(word));
    const std::int64_t count = x.elementCount();
    const bool matrix = x.rank() == 2;
    return selection(
        "string_normalizer", {true}, [=](const std::byte* const* in, std::byte* const* out) {
            std::int64_t kept = 0;
            for (std::int64_t i = 0; i < count; ++i) {
                StringHandle handle = 0;
                std::memcpy(&handle, in[0] + i * 8, 8);
                std::string text(stringOf(handle));
                if (stopwords.count(caseSensitive ? text : lowered(text)))
                    continue;
                for (char& c : text) {
                    const auto u = static_cast<unsigned char>(c);
                    if (action == "LOWER")
                        c = static_cast<char>(std::tolower(u));
                    else if (action == "UPPER")
                        c = static_cast<char>(std::toupper(u));
                }
                const StringHandle result = action == "NONE" ? handle : internString(text);
                std::memcpy(out[0] + kept * 8, &result, 8);
                ++kept;
            }
            if (kept == 0) {
                const StringHandle empty = internString("");
                std::memcpy(out[0], &empty, 8);
                kept = 1;
            }
            return matrix ? Shapes{{1, kept}} : Shapes{{kept}};
        });
}

Result<Selection> planSelection(const KernelSpec& spec) {
    const std::string& op = spec.node->op->name;
    if (op == "StringNormalizer")
        return stringNormalizer(spec);
    const bool strings = std::any_of(spec.inputs.begin(), spec.inputs.end(),
                                     [](const TensorType& t) { return t.dtype == DType::String; });
    if (strings && op != "Compress")
        return specError(spec, op + " of strings is not supported");
    if (op == "NonZero")
        return nonZero(spec);
    if (op == "Compress")
        return compress(spec);
    if (op == "Unique")
        return unique(spec);
    if (op == "NonMaxSuppression")
        return nonMaxSuppression(spec);
    return specError(spec, "not a selection operator");
}

} // namespace placer
