// Tokens of Relay text (the #[version = "0.0.5"] subset), with their line and column.
#pragma once

#include "ir/Result.h"

#include <string>
#include <string_view>
#include <vector>

namespace placer {

enum class RelayTokenKind {
    Local,   ///< %a, %0 (text holds the name with its %)
    Global,  ///< @main
    Ident,   ///< add, nn.conv2d, Tensor, float32, True, meta, let, def
    Integer, ///< 3, -1, 2i64 (text as written)
    Float,   ///< 1.5f, 1e-05f, 2f16
    String,  ///< "NCHW" (text holds the unescaped contents)
    Punct,   ///< ( ) [ ] { } , ; : = . ->
    Hash,    ///< # (starts #[version ...] and #[metadata])
    End,
};

struct RelayToken {
    RelayTokenKind kind = RelayTokenKind::End;
    std::string text;
    int line = 0;
    int column = 0;
    /// The last /* block comment */ right before this token, if any (TVM writes types there).
    std::string comment;

    bool is(RelayTokenKind k, std::string_view t) const { return kind == k && text == t; }
    bool isPunct(std::string_view t) const { return is(RelayTokenKind::Punct, t); }
};

/// Splits Relay text into tokens. Comments (// and nested /* */) are dropped except as noted
/// above. Everything after #[metadata] is ignored.
Result<std::vector<RelayToken>> lexRelay(std::string_view text, const std::string& fileName);

} // namespace placer
