// The arithmetic of named dimensions, their spellings, and the exact fit of a dimension's sizes.
#include "ir/DimExpr.h"

#include "ir/TensorType.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace placer {

namespace {

// Wide enough that no fit of small sizes overflows while it is checked.
__extension__ typedef __int128 Wide;

constexpr Wide kInt64Max = std::numeric_limits<std::int64_t>::max();
/// Where exact rational elimination gives up: far beyond any fit of small probe values.
constexpr Wide kWideLimit = Wide(1) << 100;

bool fitsInt64(Wide value) {
    return value <= kInt64Max && value >= -kInt64Max;
}

Wide wideAbs(Wide value) {
    return value < 0 ? -value : value;
}

Wide wideGcd(Wide a, Wide b) {
    a = wideAbs(a);
    b = wideAbs(b);
    while (b != 0) {
        const Wide t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/// An exact fraction for the fit's elimination; one whose arithmetic would overflow is invalid
/// (and stays so), which ends the fit.
struct Fraction {
    Wide num = 0;
    Wide den = 1;

    static Fraction of(Wide n, Wide d = 1) {
        Fraction f{n, d};
        f.reduce();
        return f;
    }
    static Fraction invalid() {
        Fraction f;
        f.num = 1;
        f.den = 0;
        return f;
    }
    void reduce() {
        if (den == 0)
            return;
        if (den < 0) {
            num = -num;
            den = -den;
        }
        const Wide g = wideGcd(num, den);
        if (g > 1) {
            num /= g;
            den /= g;
        }
        if (num == 0)
            den = 1;
    }
    bool valid() const { return wideAbs(num) < kWideLimit && den < kWideLimit && den > 0; }
    bool zero() const { return num == 0; }
};

Fraction operator-(const Fraction& a, const Fraction& b) {
    if (!a.valid() || !b.valid())
        return Fraction::invalid();
    // Operands below 2^100 may still make products beyond 128 bits: checked, not wrapped.
    const Wide g = wideGcd(a.den, b.den);
    Wide left = 0, right = 0, den = 0, num = 0;
    if (__builtin_mul_overflow(a.num, b.den / g, &left) ||
        __builtin_mul_overflow(b.num, a.den / g, &right) ||
        __builtin_sub_overflow(left, right, &num) || __builtin_mul_overflow(a.den / g, b.den, &den))
        return Fraction::invalid();
    return Fraction::of(num, den);
}

Fraction operator*(const Fraction& a, const Fraction& b) {
    if (!a.valid() || !b.valid())
        return Fraction::invalid();
    const Wide g1 = wideGcd(a.num, b.den) == 0 ? 1 : wideGcd(a.num, b.den);
    const Wide g2 = wideGcd(b.num, a.den) == 0 ? 1 : wideGcd(b.num, a.den);
    Wide num = 0, den = 0;
    if (__builtin_mul_overflow(a.num / g1, b.num / g2, &num) ||
        __builtin_mul_overflow(a.den / g2, b.den / g1, &den))
        return Fraction::invalid();
    return Fraction::of(num, den);
}

Fraction operator/(const Fraction& a, const Fraction& b) {
    if (b.zero())
        return Fraction::invalid();
    return a * Fraction::of(b.den, b.num);
}

/// Every product of at most `maxDegree` of `count` names, as sorted index lists.
void monomials(std::size_t count, int maxDegree, std::vector<std::size_t>& current,
               std::size_t from, std::vector<std::vector<std::size_t>>* out) {
    out->push_back(current);
    if (static_cast<int>(current.size()) == maxDegree)
        return;
    for (std::size_t i = from; i < count; ++i) {
        current.push_back(i);
        monomials(count, maxDegree, current, i, out);
        current.pop_back();
    }
}

/// "batch*seq".
std::string monomialText(const DimExpr::Monomial& monomial) {
    std::string out;
    for (const std::string& name : monomial)
        out += (out.empty() ? "" : "*") + name;
    return out;
}

} // namespace

DimExpr DimExpr::constant(std::int64_t value) {
    DimExpr e;
    if (value != 0)
        e.m_terms[{}] = value;
    return e;
}

DimExpr DimExpr::symbol(const std::string& name) {
    DimExpr e;
    e.m_terms[{name}] = 1;
    return e;
}

std::optional<DimExpr> DimExpr::fromTerms(const std::map<Monomial, std::int64_t>& terms,
                                          std::int64_t divisor) {
    if (divisor <= 0)
        return std::nullopt;
    DimExpr e;
    for (const auto& [monomial, coefficient] : terms) {
        Monomial sorted = monomial;
        std::sort(sorted.begin(), sorted.end());
        const Wide sum = Wide(e.m_terms[sorted]) + coefficient;
        if (!fitsInt64(sum))
            return std::nullopt;
        e.m_terms[sorted] = static_cast<std::int64_t>(sum);
    }
    e.m_divisor = divisor;
    e.normalise();
    return e;
}

void DimExpr::normalise() {
    std::erase_if(m_terms, [](const auto& term) { return term.second == 0; });
    std::int64_t g = m_divisor;
    for (const auto& [monomial, coefficient] : m_terms)
        g = std::gcd(g, coefficient);
    if (g > 1) {
        for (auto& [monomial, coefficient] : m_terms)
            coefficient /= g;
        m_divisor /= g;
    }
    if (m_terms.empty())
        m_divisor = 1;
}

bool DimExpr::isConstant() const {
    return std::all_of(m_terms.begin(), m_terms.end(),
                       [](const auto& term) { return term.first.empty(); });
}

std::optional<std::int64_t> DimExpr::constantValue() const {
    if (!isConstant())
        return std::nullopt;
    const auto it = m_terms.find({});
    const std::int64_t value = it == m_terms.end() ? 0 : it->second;
    if (value % m_divisor != 0)
        return std::nullopt;
    return value / m_divisor;
}

std::set<std::string> DimExpr::symbols() const {
    std::set<std::string> out;
    for (const auto& [monomial, coefficient] : m_terms)
        out.insert(monomial.begin(), monomial.end());
    return out;
}

int DimExpr::degree() const {
    std::size_t d = 0;
    for (const auto& [monomial, coefficient] : m_terms)
        d = std::max(d, monomial.size());
    return static_cast<int>(d);
}

std::optional<DimExpr> DimExpr::plus(const DimExpr& other) const {
    // a/p + b/q = (a*q + b*p) / (p*q)
    std::map<Monomial, std::int64_t> terms;
    const Wide divisor = Wide(m_divisor) * other.m_divisor;
    if (!fitsInt64(divisor))
        return std::nullopt;
    for (const auto& [monomial, coefficient] : m_terms) {
        const Wide scaled = Wide(coefficient) * other.m_divisor;
        if (!fitsInt64(scaled))
            return std::nullopt;
        terms[monomial] = static_cast<std::int64_t>(scaled);
    }
    for (const auto& [monomial, coefficient] : other.m_terms) {
        const Wide sum = Wide(coefficient) * m_divisor + terms[monomial];
        if (!fitsInt64(sum))
            return std::nullopt;
        terms[monomial] = static_cast<std::int64_t>(sum);
    }
    return fromTerms(terms, static_cast<std::int64_t>(divisor));
}

std::optional<DimExpr> DimExpr::times(const DimExpr& other) const {
    std::map<Monomial, Wide> wide;
    for (const auto& [a, ca] : m_terms) {
        for (const auto& [b, cb] : other.m_terms) {
            Monomial product = a;
            product.insert(product.end(), b.begin(), b.end());
            std::sort(product.begin(), product.end());
            const Wide sum = wide[product] + Wide(ca) * cb;
            if (!fitsInt64(sum))
                return std::nullopt;
            wide[product] = sum;
        }
    }
    const Wide divisor = Wide(m_divisor) * other.m_divisor;
    if (!fitsInt64(divisor))
        return std::nullopt;
    std::map<Monomial, std::int64_t> terms;
    for (const auto& [monomial, coefficient] : wide)
        terms[monomial] = static_cast<std::int64_t>(coefficient);
    return fromTerms(terms, static_cast<std::int64_t>(divisor));
}

std::optional<std::int64_t> DimExpr::evaluate(const SymbolValues& values) const {
    Wide sum = 0;
    for (const auto& [monomial, coefficient] : m_terms) {
        Wide product = coefficient;
        for (const std::string& name : monomial) {
            const auto it = values.find(name);
            if (it == values.end())
                return std::nullopt;
            product *= it->second;
            if (!fitsInt64(product))
                return std::nullopt;
        }
        sum += product;
        if (!fitsInt64(sum))
            return std::nullopt;
    }
    if (sum % m_divisor != 0)
        return std::nullopt;
    return static_cast<std::int64_t>(sum / m_divisor);
}

std::string DimExpr::toString() const {
    if (m_terms.empty())
        return "0";
    // Highest powers first, then by name; the constant last: "seq*seq+2*seq+1".
    std::vector<std::pair<Monomial, std::int64_t>> ordered(m_terms.begin(), m_terms.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    std::string out;
    for (const auto& [monomial, coefficient] : ordered) {
        const std::int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
        if (coefficient < 0)
            out += "-";
        else if (!out.empty())
            out += "+";
        if (monomial.empty())
            out += std::to_string(magnitude);
        else
            out += (magnitude == 1 ? "" : std::to_string(magnitude) + "*") + monomialText(monomial);
    }
    if (m_divisor != 1)
        out = (m_terms.size() > 1 ? "(" + out + ")" : out) + "/" + std::to_string(m_divisor);
    return out;
}

std::string DimExpr::toFactorString() const {
    const std::string text = toString();
    // A constant, or one name alone, needs no parentheses.
    const bool single =
        m_terms.empty() || (m_terms.size() == 1 && m_divisor == 1 &&
                            (m_terms.begin()->first.empty() ? m_terms.begin()->second > 0
                                                            : m_terms.begin()->first.size() == 1 &&
                                                                  m_terms.begin()->second == 1));
    return single ? text : "(" + text + ")";
}

bool isSymbolic(const SymbolicShape& shape) {
    return std::any_of(shape.begin(), shape.end(), [](const std::optional<DimExpr>& dim) {
        return !dim || !dim->isConstant();
    });
}

std::string symbolicShapeText(const SymbolicShape& shape) {
    if (shape.empty())
        return "scalar";
    std::string out;
    for (const std::optional<DimExpr>& dim : shape)
        out += (out.empty() ? "" : "×") + (dim ? dim->toFactorString() : std::string("?"));
    return out;
}

std::optional<std::string> symbolicBytesText(const SymbolicShape& shape, DType dtype) {
    // The constant dimensions and the element size become one size; the named ones stay.
    Wide constant = dtypeSize(dtype);
    std::string named;
    for (const std::optional<DimExpr>& dim : shape) {
        if (!dim)
            return std::nullopt;
        if (const auto value = dim->constantValue()) {
            constant *= *value;
            if (!fitsInt64(constant))
                return std::nullopt;
            continue;
        }
        named += (named.empty() ? "" : "×") + dim->toFactorString();
    }
    const std::string size = formatBytes(static_cast<std::int64_t>(constant));
    return named.empty() ? size : named + "×" + size;
}

std::optional<std::vector<std::int64_t>> evaluateShape(const SymbolicShape& shape,
                                                       const SymbolValues& values) {
    std::vector<std::int64_t> out;
    for (const std::optional<DimExpr>& dim : shape) {
        if (!dim)
            return std::nullopt;
        const auto value = dim->evaluate(values);
        if (!value || *value < 0)
            return std::nullopt;
        out.push_back(*value);
    }
    return out;
}

std::optional<DimExpr> fitDimExpr(const std::vector<std::string>& symbols,
                                  const std::vector<std::vector<std::int64_t>>& points,
                                  const std::vector<std::int64_t>& values, int maxDegree) {
    if (points.size() != values.size() || maxDegree < 0 || maxDegree > 4)
        return std::nullopt;
    // A dimension that never changes is that constant; no elimination needed.
    if (!values.empty() &&
        std::all_of(values.begin(), values.end(), [&](std::int64_t v) { return v == values[0]; }))
        return DimExpr::constant(values[0]);
    std::vector<std::vector<std::size_t>> terms;
    std::vector<std::size_t> current;
    monomials(symbols.size(), maxDegree, current, 0, &terms);
    const std::size_t unknowns = terms.size();
    if (points.size() < unknowns)
        return std::nullopt;
    // The augmented system, one row per point: sum_m c_m * monomial_m(point) = value.
    std::vector<std::vector<Fraction>> rows;
    for (std::size_t p = 0; p < points.size(); ++p) {
        if (points[p].size() != symbols.size())
            return std::nullopt;
        std::vector<Fraction> row;
        for (const std::vector<std::size_t>& term : terms) {
            Wide product = 1;
            for (std::size_t s : term) {
                product *= points[p][s];
                if (wideAbs(product) >= kWideLimit)
                    return std::nullopt;
            }
            row.push_back(Fraction::of(product));
        }
        row.push_back(Fraction::of(values[p]));
        rows.push_back(std::move(row));
    }
    // Gauss-Jordan elimination in exact fractions.
    std::size_t rank = 0;
    std::vector<std::size_t> pivotColumn;
    for (std::size_t column = 0; column < unknowns && rank < rows.size(); ++column) {
        std::size_t pivot = rank;
        while (pivot < rows.size() && rows[pivot][column].zero())
            ++pivot;
        if (pivot == rows.size())
            continue;
        std::swap(rows[rank], rows[pivot]);
        const Fraction lead = rows[rank][column];
        for (Fraction& entry : rows[rank]) {
            entry = entry / lead;
            if (!entry.valid())
                return std::nullopt;
        }
        for (std::size_t r = 0; r < rows.size(); ++r) {
            if (r == rank || rows[r][column].zero())
                continue;
            const Fraction factor = rows[r][column];
            for (std::size_t c = 0; c <= unknowns; ++c) {
                rows[r][c] = rows[r][c] - factor * rows[rank][c];
                if (!rows[r][c].valid())
                    return std::nullopt;
            }
        }
        pivotColumn.push_back(column);
        ++rank;
    }
    if (rank < unknowns)
        return std::nullopt; // the points do not fix one polynomial
    for (std::size_t r = rank; r < rows.size(); ++r) {
        if (!rows[r][unknowns].zero())
            return std::nullopt; // no polynomial of that degree takes these values
    }
    // Coefficients over their common denominator.
    Wide common = 1;
    for (std::size_t r = 0; r < rank; ++r) {
        const Wide den = rows[r][unknowns].den;
        if (__builtin_mul_overflow(common / wideGcd(common, den), den, &common) ||
            !fitsInt64(common))
            return std::nullopt;
    }
    std::map<DimExpr::Monomial, std::int64_t> out;
    for (std::size_t r = 0; r < rank; ++r) {
        const Fraction& c = rows[r][unknowns];
        Wide scaled = 0;
        if (__builtin_mul_overflow(c.num, common / c.den, &scaled) || !fitsInt64(scaled))
            return std::nullopt;
        DimExpr::Monomial monomial;
        for (std::size_t s : terms[pivotColumn[r]])
            monomial.push_back(symbols[s]);
        out[monomial] = static_cast<std::int64_t>(scaled);
    }
    return DimExpr::fromTerms(out, static_cast<std::int64_t>(common));
}

std::vector<std::vector<std::int64_t>>
fitPoints(std::size_t count, int maxDegree, const std::vector<std::int64_t>& grid, int checks) {
    std::vector<std::vector<std::int64_t>> points;
    if (grid.size() < static_cast<std::size_t>(maxDegree) + 1)
        return points;
    // Every index vector with a sum of at most maxDegree: a downward-closed set, so the grid
    // points it picks fix exactly the polynomials of that total degree.
    std::vector<std::vector<std::size_t>> terms;
    std::vector<std::size_t> current;
    monomials(count, maxDegree, current, 0, &terms);
    for (const std::vector<std::size_t>& term : terms) {
        std::vector<std::int64_t> point(count, grid[0]);
        for (std::size_t s : term)
            point[s] = grid[std::min<std::size_t>(
                static_cast<std::size_t>(std::count(term.begin(), term.end(), s)),
                grid.size() - 1)];
        points.push_back(std::move(point));
    }
    const std::int64_t above = *std::max_element(grid.begin(), grid.end()) + 1;
    for (int c = 0; c < checks; ++c) {
        std::vector<std::int64_t> point;
        for (std::size_t s = 0; s < count; ++s)
            point.push_back(above + c * static_cast<std::int64_t>(count + 1) +
                            static_cast<std::int64_t>(s));
        points.push_back(std::move(point));
    }
    return points;
}

std::string symbolValuesText(const SymbolValues& values) {
    std::string text;
    for (const auto& [name, value] : values)
        text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    return text;
}

} // namespace placer
