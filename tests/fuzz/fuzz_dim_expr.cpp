// libFuzzer target: the arithmetic of named dimensions (ir/DimExpr.h). The input gives two
// polynomials in up to three names, with any coefficients and divisors, and values of the names.
// Sums, products and values must agree with each other wherever none overflows, an overflow
// must be refused rather than wrapped, and a fit of a polynomial's own values must give it back.
#include "FuzzBytes.h"

#include "ir/DimExpr.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kNames = {"batch", "seq", "heads"};

placer::DimExpr polynomial(placer::fuzz::FuzzBytes& bytes) {
    std::map<placer::DimExpr::Monomial, std::int64_t> terms;
    const int count = bytes.next() % 6;
    for (int t = 0; t < count; ++t) {
        placer::DimExpr::Monomial monomial;
        const int degree = bytes.next() % 3;
        for (int d = 0; d < degree; ++d)
            monomial.push_back(kNames[bytes.next() % kNames.size()]);
        terms[monomial] = bytes.smallOrHuge();
    }
    const std::int64_t divisor = 1 + bytes.next() % 4;
    return placer::DimExpr::fromTerms(terms, divisor).value_or(placer::DimExpr::constant(0));
}

void check(bool fact) {
    if (!fact)
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace placer;
    fuzz::FuzzBytes bytes{data, size};
    const DimExpr a = polynomial(bytes);
    const DimExpr b = polynomial(bytes);
    SymbolValues values;
    for (const std::string& name : kNames)
        values[name] = static_cast<std::int8_t>(bytes.next());
    (void)a.toString();
    (void)a.toFactorString();
    // A normalised divisor is positive and shares no factor with every coefficient.
    check(a.divisor() > 0);
    const auto va = a.evaluate(values), vb = b.evaluate(values);
    if (const auto sum = a.plus(b); sum && va && vb) {
        if (const auto vs = sum->evaluate(values)) {
            std::int64_t expected = 0;
            if (!__builtin_add_overflow(*va, *vb, &expected))
                check(*vs == expected);
        }
    }
    if (const auto product = a.times(b); product && va && vb) {
        if (const auto vp = product->evaluate(values)) {
            std::int64_t expected = 0;
            if (!__builtin_mul_overflow(*va, *vb, &expected))
                check(*vp == expected);
        }
    }
    // The fit of a's own values at the grid and its checks gives a back, where a is a size
    // function of degree 2 there (integral at every point, no overflow).
    if (a.degree() <= 2) {
        const auto points = fitPoints(kNames.size(), 2, {2, 3, 5}, 2);
        std::vector<std::int64_t> sizes;
        bool integral = true;
        for (const auto& point : points) {
            SymbolValues at;
            for (std::size_t s = 0; s < kNames.size(); ++s)
                at[kNames[s]] = point[s];
            const auto value = a.evaluate(at);
            integral = integral && value.has_value();
            sizes.push_back(value.value_or(0));
        }
        if (integral) {
            if (const auto fitted = fitDimExpr(kNames, points, sizes, 2))
                check(*fitted == a);
        }
    }
    return 0;
}
