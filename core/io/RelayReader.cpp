// Relay text reader: a recursive-descent parser over expressions (bounded by nesting in the
// text, not by graph depth: a chain of 200,000 bindings recurses no deeper than one binding).
#include "io/RelayReader.h"

#include "io/RelayLexer.h"
#include "ir/Scalar.h"

#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

namespace placer {

namespace {

/// What an expression evaluates to: one tensor, or a tuple of tensors.
struct RelayValue {
    std::vector<ValueRef> fields;
    bool isTuple = false;
    /// The node this expression created (for naming), if it created exactly one.
    std::optional<NodeId> created;
};

/// An attribute value as written, before it is known whether it names a device.
struct ParsedAttr {
    std::string name;
    AttrValue value;
    std::optional<DeviceId> device; ///< set when the value was meta[VirtualDevice][i] or a name
    std::vector<DeviceId> deviceList;
    bool isDeviceList = false;
    int line = 0, column = 0;
};

// Expressions nested deeper than this are refused (each level takes three parser frames: 200
// levels fit a 8 MiB stack even with AddressSanitizer's frames; printed Relay binds each call
// to a %name, so real models nest a few levels).
constexpr int kMaxExpressionDepth = 200;

class RelayParser {
public:
    RelayParser(std::vector<RelayToken> tokens, const DeviceSet& devices, const std::string& file)
        : m_tokens(std::move(tokens)), m_devices(devices), m_file(file) {}

    Result<Graph> parse() {
        if (auto error = parseProgram())
            return *error;
        return std::move(m_graph);
    }

private:
    using Error = std::optional<SourceError>;

    // ---- token helpers -------------------------------------------------------------------

    const RelayToken& peek(std::size_t ahead = 0) const {
        const std::size_t index = std::min(m_pos + ahead, m_tokens.size() - 1);
        return m_tokens[index];
    }
    const RelayToken& next() {
        const RelayToken& token = m_tokens[m_pos];
        if (m_pos + 1 < m_tokens.size())
            ++m_pos;
        return token;
    }
    SourceError errorAt(const RelayToken& token, std::string message) const {
        return SourceError{m_file, token.line, token.column, std::move(message)};
    }
    static std::string describe(const RelayToken& token) {
        switch (token.kind) {
        case RelayTokenKind::End:
            return "end of input";
        case RelayTokenKind::String:
            return "string \"" + token.text + "\"";
        default:
            return "'" + token.text + "'";
        }
    }
    Error expectPunct(std::string_view punct, std::string_view context) {
        if (!peek().isPunct(punct))
            return errorAt(peek(), "expected '" + std::string(punct) + "' " + std::string(context) +
                                       ", found " + describe(peek()));
        next();
        return std::nullopt;
    }
    bool acceptPunct(std::string_view punct) {
        if (!peek().isPunct(punct))
            return false;
        next();
        return true;
    }
    std::string where(const RelayToken& token) const {
        return m_file + ":" + std::to_string(token.line) + ":" + std::to_string(token.column);
    }

    // ---- program structure ---------------------------------------------------------------

    Error parseProgram() {
        if (peek().kind == RelayTokenKind::Hash) {
            if (auto error = parseVersionHeader())
                return error;
        }
        if (!peek().is(RelayTokenKind::Ident, "def"))
            return errorAt(peek(), "expected 'def @main(...)', found " + describe(peek()));
        next();
        if (!peek().is(RelayTokenKind::Global, "@main"))
            return errorAt(peek(),
                           "expected '@main' after 'def' (only @main is supported), found " +
                               describe(peek()));
        next();
        if (auto error = parseSignature())
            return error;
        if (auto error = parseBody())
            return error;
        if (peek().kind != RelayTokenKind::End) {
            if (peek().is(RelayTokenKind::Ident, "def"))
                return errorAt(peek(), "only one function, @main, is supported");
            return errorAt(peek(), "unexpected " + describe(peek()) + " after the end of @main");
        }
        return std::nullopt;
    }

    Error parseVersionHeader() {
        next(); // #
        if (auto error = expectPunct("[", "after '#'"))
            return error;
        if (!peek().is(RelayTokenKind::Ident, "version"))
            return errorAt(peek(), "expected 'version' in the #[version = \"0.0.5\"] header");
        next();
        if (auto error = expectPunct("=", "in the version header"))
            return error;
        if (peek().kind != RelayTokenKind::String)
            return errorAt(peek(), "expected a version string such as \"0.0.5\"");
        if (peek().text != "0.0.5")
            return errorAt(peek(), "unsupported Relay text version \"" + peek().text +
                                       "\" (only \"0.0.5\" is read)");
        next();
        return expectPunct("]", "to close the version header");
    }

    Error parseSignature() {
        if (auto error = expectPunct("(", "after @main"))
            return error;
        std::vector<NodeId> parameters;
        std::vector<ParsedAttr> functionAttrs;
        if (!peek().isPunct(")")) {
            while (true) {
                if (peek().kind == RelayTokenKind::Local) {
                    if (!functionAttrs.empty())
                        return errorAt(peek(), "parameters must come before function attributes");
                    auto parameter = parseParameter();
                    if (!parameter)
                        return parameter.error();
                    parameters.push_back(parameter.value());
                } else if (peek().kind == RelayTokenKind::Ident) {
                    auto attr = parseAttr();
                    if (!attr)
                        return attr.error();
                    functionAttrs.push_back(attr.take());
                } else {
                    return errorAt(peek(),
                                   "expected a parameter such as '%x: Tensor[(1), float32]', "
                                   "found " +
                                       describe(peek()));
                }
                if (acceptPunct(","))
                    continue;
                break;
            }
        }
        if (auto error = expectPunct(")", "to close the parameter list"))
            return error;
        if (acceptPunct("->")) {
            auto type = parseType();
            if (!type)
                return type.error();
        }
        return applyFunctionAttrs(parameters, functionAttrs);
    }

    Error applyFunctionAttrs(const std::vector<NodeId>& parameters,
                             const std::vector<ParsedAttr>& attrs) {
        for (const ParsedAttr& attr : attrs) {
            const RelayToken at{RelayTokenKind::Ident, attr.name, attr.line, attr.column, {}};
            if (attr.name == "param_virtual_devices" || attr.name == "param_se_scopes" ||
                attr.name == "param_device_types") {
                if (!attr.isDeviceList)
                    return errorAt(at, attr.name + " must be a list of meta[VirtualDevice][i]");
                if (attr.deviceList.size() != parameters.size())
                    return errorAt(at, attr.name + " lists " +
                                           std::to_string(attr.deviceList.size()) +
                                           " devices for " + std::to_string(parameters.size()) +
                                           " parameters");
                for (std::size_t i = 0; i < parameters.size(); ++i)
                    addPin(parameters[i], PinKind::Fixed, attr.deviceList[i],
                           "parameter " + attr.name + " at " + where(at));
            } else if (attr.name == "virtual_device" || attr.name == "result_virtual_device" ||
                       attr.name == "result_se_scope") {
                if (!attr.device)
                    return errorAt(at,
                                   attr.name + " must be meta[VirtualDevice][i] or a device name");
                m_resultDevice = *attr.device;
            } else {
                // Other function attributes (Primitive, Compiler, ...) carry no placement.
            }
        }
        return std::nullopt;
    }

    Result<NodeId> parseParameter() {
        const RelayToken nameToken = next();
        std::optional<ParsedAttr> deviceAttr;
        if (acceptPunct("{")) {
            while (!peek().isPunct("}")) {
                auto attr = parseAttr();
                if (!attr)
                    return attr.error();
                if (attr.value().name == "virtual_device" || attr.value().name == "se_scope") {
                    if (!attr.value().device)
                        return errorAt(nameToken, "parameter " + nameToken.text +
                                                      ": virtual_device must be "
                                                      "meta[VirtualDevice][i] or a device name");
                    deviceAttr = attr.take();
                }
                if (!acceptPunct(","))
                    break;
            }
            if (auto error = expectPunct("}", "to close the parameter attributes"))
                return *error;
        }
        if (auto error = expectPunct(":", "and a type after parameter " + nameToken.text))
            return *error;
        auto type = parseType();
        if (!type)
            return type.error();
        if (m_scope.count(nameToken.text))
            return errorAt(nameToken, "parameter " + nameToken.text + " is declared twice");
        Node node;
        node.name = nameToken.text;
        node.op = &OpRegistry::global().parameter();
        node.outputs = {type.take()};
        node.location = {nameToken.line, nameToken.column};
        const NodeId id = m_graph.addNode(std::move(node));
        m_scope[nameToken.text] = RelayValue{{ValueRef{id, 0}}, false, id};
        if (deviceAttr)
            addPin(id, PinKind::Fixed, *deviceAttr->device,
                   "parameter virtual_device at " + where(nameToken));
        return id;
    }

    Result<TensorType> parseType() {
        const RelayToken& start = peek();
        if (start.is(RelayTokenKind::Ident, "Tensor")) {
            next();
            if (auto error = expectPunct("[", "after 'Tensor'"))
                return *error;
            if (auto error = expectPunct("(", "to open the shape"))
                return *error;
            TensorType type;
            while (!peek().isPunct(")")) {
                const RelayToken& dim = peek();
                if (dim.isPunct("?") || (dim.kind == RelayTokenKind::Ident && dim.text == "Any"))
                    return errorAt(dim, "dynamic dimensions (?) are not supported: give the "
                                        "program static shapes");
                if (dim.kind != RelayTokenKind::Integer)
                    return errorAt(dim, "expected a dimension, found " + describe(dim));
                std::int64_t value = 0;
                const std::string digits = dim.text.substr(0, dim.text.find_first_of("iu"));
                if (!parseInteger(digits, &value) || value < 0)
                    return errorAt(dim, "dimension " + dim.text + " is not a non-negative integer");
                type.shape.push_back(value);
                next();
                if (!acceptPunct(","))
                    break;
            }
            if (auto error = expectPunct(")", "to close the shape"))
                return *error;
            if (auto error = expectPunct(",", "between the shape and the dtype"))
                return *error;
            const RelayToken& dtypeToken = peek();
            const auto dtype = parseDType(dtypeToken.text);
            if (dtypeToken.kind != RelayTokenKind::Ident || !dtype)
                return errorAt(dtypeToken, "unknown dtype " + describe(dtypeToken));
            next();
            type.dtype = *dtype;
            if (type.bytes() == INT64_MAX)
                return errorAt(start, "tensor type " + type.toRelay() + " is too large");
            if (auto error = expectPunct("]", "to close the tensor type"))
                return *error;
            return type;
        }
        if (start.kind == RelayTokenKind::Ident) {
            if (const auto dtype = parseDType(start.text)) {
                next();
                return TensorType{{}, *dtype};
            }
        }
        if (start.isPunct("("))
            return errorAt(start, "tuple types are not supported here");
        if (start.isPunct("?"))
            return errorAt(start, "dynamic dimensions (?) are not supported");
        return errorAt(start,
                       "expected a type such as Tensor[(1, 3), float32], found " + describe(start));
    }

    // ---- body ------------------------------------------------------------------------------

    Error parseBody() {
        if (auto error = expectPunct("{", "to open the body of @main"))
            return error;
        while (true) {
            const RelayToken& token = peek();
            const bool isLet = token.is(RelayTokenKind::Ident, "let");
            const bool isBinding = token.kind == RelayTokenKind::Local && peek(1).isPunct("=");
            const bool isTypedBinding = token.kind == RelayTokenKind::Local && peek(1).isPunct(":");
            if (!isLet && !isBinding && !isTypedBinding)
                break;
            if (isLet)
                next();
            if (auto error = parseBinding())
                return error;
        }
        const RelayToken& resultStart = peek();
        auto result = parseExpression(std::string(), 0);
        if (!result)
            return result.error();
        if (auto error = expectPunct("}", "to close the body of @main"))
            return error;
        for (const ValueRef& field : result.value().fields) {
            if (!m_graph.outputs().empty()) {
                for (const GraphOutput& existing : m_graph.outputs()) {
                    if (existing.value == field)
                        return errorAt(resultStart,
                                       "the result lists " + m_graph.valueName(field) + " twice");
                }
            }
            m_graph.addOutput(GraphOutput{field, m_resultDevice});
        }
        return std::nullopt;
    }

    Error parseBinding() {
        const RelayToken nameToken = next();
        if (nameToken.kind != RelayTokenKind::Local)
            return errorAt(nameToken, "expected a variable such as %x after 'let', found " +
                                          describe(nameToken));
        std::optional<TensorType> declared;
        if (acceptPunct(":")) {
            auto type = parseType();
            if (!type)
                return type.error();
            declared = type.take();
        }
        if (auto error = expectPunct("=", "after " + nameToken.text))
            return error;
        const RelayToken& exprStart = peek();
        auto value = parseExpression(nameToken.text, 0);
        if (!value)
            return value.error();
        if (auto error = expectPunct(";", "after the binding of " + nameToken.text))
            return error;
        RelayValue bound = value.take();
        if (declared) {
            if (bound.isTuple || bound.fields.size() != 1)
                return errorAt(exprStart, nameToken.text + " is declared as " +
                                              declared->toRelay() + " but is bound to a tuple");
            const TensorType& actual = m_graph.type(bound.fields[0]);
            if (actual != *declared)
                return errorAt(exprStart, nameToken.text + " is declared as " +
                                              declared->toRelay() + " but its value has type " +
                                              actual.toRelay());
        }
        if (!bound.isTuple && bound.fields.size() == 1) {
            const NodeId node = bound.fields[0].node;
            if (m_graph.node(node).name != nameToken.text && !m_graph.find(nameToken.text) &&
                m_graph.node(node).outputs.size() == 1)
                m_graph.addAlias(node, nameToken.text);
        }
        m_scope[nameToken.text] = std::move(bound);
        return std::nullopt;
    }

    /// Parses one expression. `nameHint` names the node it creates (the bound %name).
    Result<RelayValue> parseExpression(const std::string& nameHint, int depth) {
        if (depth > kMaxExpressionDepth)
            return errorAt(peek(), "expression nested more than " +
                                       std::to_string(kMaxExpressionDepth) + " levels deep");
        auto value = parsePrimary(nameHint, depth);
        if (!value)
            return value;
        while (peek().isPunct(".")) {
            const RelayToken& dot = next();
            const RelayToken& index = peek();
            std::int64_t field = 0;
            if (index.kind != RelayTokenKind::Integer || !parseInteger(index.text, &field))
                return errorAt(index,
                               "expected a field number after '.', found " + describe(index));
            next();
            RelayValue& tuple = value.value();
            if (!tuple.isTuple)
                return errorAt(dot,
                               "projection ." + index.text + " of a value that is not a tuple");
            if (field < 0 || field >= static_cast<std::int64_t>(tuple.fields.size()))
                return errorAt(index, "tuple has " + std::to_string(tuple.fields.size()) +
                                          " fields; ." + index.text + " is out of range");
            value = RelayValue{{tuple.fields[field]}, false, std::nullopt};
        }
        return value;
    }

    Result<RelayValue> parsePrimary(const std::string& nameHint, int depth) {
        const RelayToken& token = peek();
        switch (token.kind) {
        case RelayTokenKind::Local: {
            next();
            const auto it = m_scope.find(token.text);
            if (it == m_scope.end())
                return errorAt(token, "use of undefined variable " + token.text);
            RelayValue value = it->second;
            value.created.reset();
            return value;
        }
        case RelayTokenKind::Integer:
        case RelayTokenKind::Float:
            return parseScalarConstant(nameHint);
        case RelayTokenKind::Punct:
            if (token.isPunct("("))
                return parseTuple(depth);
            break;
        case RelayTokenKind::Ident:
            if (token.text == "meta")
                return parseMetaConstant(nameHint);
            if (token.text == "fn")
                return errorAt(token, "nested functions (fn) are not supported");
            if (token.text == "if" || token.text == "match")
                return errorAt(token, "control flow ('" + token.text + "') is not supported");
            if (peek(1).isPunct("("))
                return parseCall(nameHint, depth);
            return errorAt(token, "unexpected " + describe(token) +
                                      ": expected a call, a variable, a constant or a tuple");
        default:
            break;
        }
        return errorAt(token, "expected an expression, found " + describe(token));
    }

    Result<RelayValue> parseTuple(int depth) {
        const RelayToken& open = next();
        RelayValue tuple;
        tuple.isTuple = true;
        bool sawComma = false;
        while (!peek().isPunct(")")) {
            auto field = parseExpression(std::string(), depth + 1);
            if (!field)
                return field;
            if (field.value().isTuple)
                return errorAt(open, "nested tuples are not supported");
            tuple.fields.push_back(field.value().fields[0]);
            if (!acceptPunct(","))
                break;
            sawComma = true;
        }
        if (auto error = expectPunct(")", "to close the tuple"))
            return *error;
        if (tuple.fields.size() == 1 && !sawComma) {
            // Parentheses around a single expression: not a tuple.
            tuple.isTuple = false;
        }
        return tuple;
    }

    Result<RelayValue> parseScalarConstant(const std::string& nameHint) {
        const RelayToken token = next();
        TensorType type;
        std::string digits = token.text;
        std::string suffix;
        const std::size_t suffixAt = digits.find_first_of("fiu");
        if (suffixAt != std::string::npos) {
            suffix = digits.substr(suffixAt);
            digits.resize(suffixAt);
        }
        static const std::map<std::string, DType> kSuffixes{
            {"", DType::Int32},      {"f", DType::Float32},   {"f32", DType::Float32},
            {"f16", DType::Float16}, {"f64", DType::Float64}, {"i8", DType::Int8},
            {"i16", DType::Int16},   {"i32", DType::Int32},   {"i64", DType::Int64},
            {"u8", DType::UInt8},
        };
        auto found = kSuffixes.find(suffix);
        if (found == kSuffixes.end())
            return errorAt(token, "unknown constant suffix '" + suffix + "' in " + token.text);
        type.dtype = found->second;
        if (token.kind == RelayTokenKind::Float && suffix.empty())
            type.dtype = DType::Float32;
        if (token.kind == RelayTokenKind::Float && !isFloatingPoint(type.dtype))
            return errorAt(token, "constant " + token.text + " has a fraction but an integer type");
        double value = 0;
        if (isFloatingPoint(type.dtype)) {
            auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
            if (ec != std::errc())
                return errorAt(token, "malformed number " + token.text);
        } else {
            std::int64_t integer = 0;
            if (!parseInteger(digits, &integer))
                return errorAt(token, "malformed integer " + token.text);
            value = static_cast<double>(integer);
        }
        auto data = std::make_shared<const TensorData>(encodeScalar(type.dtype, value));
        Node node;
        node.name = m_graph.uniqueName(nameHint.empty() ? token.text : nameHint);
        node.op = &OpRegistry::global().constant();
        node.outputs = {type};
        node.location = {token.line, token.column};
        node.data = std::move(data);
        const NodeId id = m_graph.addNode(std::move(node));
        return RelayValue{{ValueRef{id, 0}}, false, id};
    }

    /// meta[relay.Constant][k] /* ty=Tensor[...] */: a shape-only constant.
    Result<RelayValue> parseMetaConstant(const std::string& nameHint) {
        const RelayToken start = peek();
        auto ref = parseMetaRef();
        if (!ref)
            return ref.error();
        const auto [table, index] = ref.value();
        if (table == "VirtualDevice" || table == "SEScope")
            return errorAt(start, "a device (meta[" + table + "]) cannot be used as a value");
        if (table != "relay.Constant")
            return errorAt(start, "unsupported meta table '" + table + "'");
        const auto existing = m_metaConstants.find(index);
        if (existing != m_metaConstants.end())
            return RelayValue{{ValueRef{existing->second, 0}}, false, std::nullopt};
        const std::string& comment = peek().comment;
        const std::size_t typeAt = comment.find("ty=");
        if (typeAt == std::string::npos)
            return errorAt(start,
                           "meta[relay.Constant][" + std::to_string(index) +
                               "] has no type: write /* ty=Tensor[(...), dtype] */ after it");
        auto tokens = lexRelay(std::string_view(comment).substr(typeAt + 3), m_file);
        if (!tokens)
            return tokens.error();
        for (RelayToken& t : tokens.value()) {
            t.line = start.line;
            t.column = start.column;
        }
        RelayParser typeParser(tokens.take(), m_devices, m_file);
        auto type = typeParser.parseType();
        if (!type)
            return type.error();
        Node node;
        node.name = m_graph.uniqueName(
            nameHint.empty() ? "meta[relay.Constant][" + std::to_string(index) + "]" : nameHint);
        node.op = &OpRegistry::global().constant();
        node.outputs = {type.take()};
        node.location = {start.line, start.column};
        const NodeId id = m_graph.addNode(std::move(node));
        m_metaConstants[index] = id;
        return RelayValue{{ValueRef{id, 0}}, false, id};
    }

    /// meta[TABLE][INDEX]
    Result<std::pair<std::string, std::int64_t>> parseMetaRef() {
        next(); // meta
        if (auto error = expectPunct("[", "after 'meta'"))
            return *error;
        const RelayToken& table = peek();
        if (table.kind != RelayTokenKind::Ident)
            return errorAt(table, "expected a meta table name such as VirtualDevice");
        next();
        if (auto error = expectPunct("]", "after the meta table name"))
            return *error;
        if (auto error = expectPunct("[", "before the meta index"))
            return *error;
        const RelayToken& index = peek();
        std::int64_t value = 0;
        if (index.kind != RelayTokenKind::Integer || !parseInteger(index.text, &value) || value < 0)
            return errorAt(index, "expected a non-negative meta index, found " + describe(index));
        next();
        if (auto error = expectPunct("]", "after the meta index"))
            return *error;
        return std::make_pair(table.text, value);
    }

    Result<ParsedAttr> parseAttr() {
        const RelayToken nameToken = next();
        ParsedAttr attr;
        attr.name = nameToken.text;
        attr.line = nameToken.line;
        attr.column = nameToken.column;
        if (auto error = expectPunct("=", "after attribute '" + nameToken.text + "'"))
            return *error;
        if (auto error = parseAttrValue(&attr, 0))
            return *error;
        return attr;
    }

    Error parseAttrValue(ParsedAttr* attr, int depth) {
        const RelayToken& token = peek();
        switch (token.kind) {
        case RelayTokenKind::Integer: {
            std::int64_t value = 0;
            std::string digits = token.text.substr(0, token.text.find_first_of("iu"));
            if (!parseInteger(digits, &value))
                return errorAt(token, "malformed integer " + token.text);
            next();
            attr->value = value;
            return std::nullopt;
        }
        case RelayTokenKind::Float: {
            std::string digits = token.text.substr(0, token.text.find('f'));
            double value = 0;
            auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
            if (ec != std::errc())
                return errorAt(token, "malformed number " + token.text);
            next();
            attr->value = value;
            return std::nullopt;
        }
        case RelayTokenKind::String: {
            next();
            attr->value = token.text;
            if (const auto device = m_devices.find(token.text))
                attr->device = *device;
            return std::nullopt;
        }
        case RelayTokenKind::Ident:
            if (token.text == "True" || token.text == "False") {
                next();
                attr->value = token.text == "True";
                return std::nullopt;
            }
            if (token.text == "None") {
                next();
                attr->value = std::monostate{};
                return std::nullopt;
            }
            if (token.text == "meta") {
                auto ref = parseMetaRef();
                if (!ref)
                    return ref.error();
                const auto& [table, index] = ref.value();
                if (table != "VirtualDevice" && table != "SEScope")
                    return errorAt(token, "attribute '" + attr->name + "' refers to meta[" + table +
                                              "], expected meta[VirtualDevice][i]");
                if (index >= m_devices.size())
                    return errorAt(token, "meta[" + table + "][" + std::to_string(index) +
                                              "] is out of range: the devices are " +
                                              deviceTable());
                attr->device = DeviceId(static_cast<std::int32_t>(index));
                attr->value = std::string(m_devices[*attr->device].name);
                return std::nullopt;
            }
            // Bare identifiers (e.g. dtype names) are kept as strings.
            next();
            attr->value = token.text;
            return std::nullopt;
        case RelayTokenKind::Punct:
            if (token.isPunct("["))
                return parseAttrList(attr, depth);
            break;
        default:
            break;
        }
        return errorAt(token, "expected a value for attribute '" + attr->name + "', found " +
                                  describe(token));
    }

    Error parseAttrList(ParsedAttr* attr, int depth) {
        const RelayToken& open = next();
        if (depth > 0)
            return errorAt(open,
                           "nested lists in attribute '" + attr->name + "' are not supported");
        std::vector<std::int64_t> ints;
        std::vector<double> floats;
        bool anyFloat = false;
        while (!peek().isPunct("]")) {
            ParsedAttr element;
            element.name = attr->name;
            if (auto error = parseAttrValue(&element, depth + 1))
                return error;
            if (element.device) {
                attr->isDeviceList = true;
                attr->deviceList.push_back(*element.device);
            } else if (const auto* i = std::get_if<std::int64_t>(&element.value)) {
                ints.push_back(*i);
                floats.push_back(static_cast<double>(*i));
            } else if (const auto* d = std::get_if<double>(&element.value)) {
                anyFloat = true;
                floats.push_back(*d);
            } else {
                return errorAt(open, "attribute '" + attr->name +
                                         "' must be a list of numbers or devices");
            }
            if (!acceptPunct(","))
                break;
        }
        if (auto error = expectPunct("]", "to close the list"))
            return error;
        if (anyFloat)
            attr->value = floats;
        else
            attr->value = ints;
        return std::nullopt;
    }

    std::string deviceTable() const {
        std::string out;
        for (int i = 0; i < m_devices.size(); ++i) {
            out += (i ? ", " : "") + std::to_string(i) + " = " + m_devices[DeviceId(i)].name;
        }
        return out.empty() ? "(none)" : out;
    }

    Result<RelayValue> parseCall(const std::string& nameHint, int depth) {
        const RelayToken opToken = next();
        next(); // (
        std::vector<RelayValue> args;
        std::vector<ParsedAttr> attrs;
        std::vector<RelayToken> argTokens;
        while (!peek().isPunct(")")) {
            if (peek().kind == RelayTokenKind::Ident && peek(1).isPunct("=")) {
                auto attr = parseAttr();
                if (!attr)
                    return attr.error();
                attrs.push_back(attr.take());
            } else {
                if (!attrs.empty())
                    return errorAt(peek(), "arguments of " + opToken.text +
                                               " must come before its attributes");
                argTokens.push_back(peek());
                // The first argument of on_device inherits the binding's name.
                const bool passName = opToken.text == "on_device" && args.empty();
                auto arg = parseExpression(passName ? nameHint : std::string(), depth + 1);
                if (!arg)
                    return arg;
                args.push_back(arg.take());
            }
            if (!acceptPunct(","))
                break;
        }
        if (auto error = expectPunct(")", "to close the call of " + opToken.text))
            return *error;
        if (opToken.text == "on_device")
            return applyOnDevice(opToken, args, attrs);
        if (opToken.text == "device_copy")
            return makeDeviceCopy(opToken, nameHint, args, attrs);
        return makeCall(opToken, nameHint, args, argTokens, attrs);
    }

    Result<RelayValue> applyOnDevice(const RelayToken& at, std::vector<RelayValue>& args,
                                     const std::vector<ParsedAttr>& attrs) {
        if (args.size() != 1)
            return errorAt(at,
                           "on_device takes one expression, got " + std::to_string(args.size()));
        std::optional<DeviceId> device;
        bool fixed = false;
        for (const ParsedAttr& attr : attrs) {
            if (attr.name == "virtual_device" || attr.name == "se_scope") {
                if (!attr.device)
                    return errorAt(at, "on_device: " + attr.name +
                                           " must be meta[VirtualDevice][i] or a device name");
                device = attr.device;
            } else if (attr.name == "constrain_result" || attr.name == "is_fixed") {
                const auto* flag = std::get_if<bool>(&attr.value);
                if (!flag)
                    return errorAt(at, "on_device: " + attr.name + " must be True or False");
                fixed = *flag;
            } else if (attr.name == "constrain_body") {
                const auto* flag = std::get_if<bool>(&attr.value);
                if (!flag || !*flag)
                    return errorAt(at, "on_device with constrain_body=False is not supported");
            } else {
                return errorAt(at, "on_device: unknown attribute '" + attr.name + "'");
            }
        }
        if (!device)
            return errorAt(at, "on_device needs virtual_device=meta[VirtualDevice][i]");
        const std::string origin = "on_device at " + where(at);
        std::vector<NodeId> pinned;
        for (const ValueRef& field : args[0].fields) {
            if (std::find(pinned.begin(), pinned.end(), field.node) != pinned.end())
                continue;
            pinned.push_back(field.node);
            addPin(field.node, fixed ? PinKind::Fixed : PinKind::Plain, *device, origin);
        }
        RelayValue result = args[0];
        return result;
    }

    void addPin(NodeId id, PinKind kind, DeviceId device, std::string origin) {
        Node& node = m_graph.node(id);
        if (!node.pin.active()) {
            node.pin = Pin{kind, device, std::move(origin)};
            return;
        }
        if (node.pin.device == device) {
            if (kind == PinKind::Fixed)
                node.pin.kind = PinKind::Fixed;
            return;
        }
        node.rejectedPins.push_back(Pin{kind, device, std::move(origin)});
    }

    Result<RelayValue> makeDeviceCopy(const RelayToken& at, const std::string& nameHint,
                                      const std::vector<RelayValue>& args,
                                      const std::vector<ParsedAttr>& attrs) {
        if (args.size() != 1 || args[0].isTuple)
            return errorAt(at, "device_copy takes one tensor");
        std::optional<DeviceId> src, dst;
        for (const ParsedAttr& attr : attrs) {
            const bool isSrc = attr.name == "src_virtual_device" || attr.name == "src_se_scope";
            const bool isDst = attr.name == "dst_virtual_device" || attr.name == "dst_se_scope";
            if (!isSrc && !isDst)
                return errorAt(at, "device_copy: unknown attribute '" + attr.name + "'");
            if (!attr.device)
                return errorAt(at, "device_copy: " + attr.name +
                                       " must be meta[VirtualDevice][i] or a device name");
            (isSrc ? src : dst) = attr.device;
        }
        if (!src || !dst)
            return errorAt(at, "device_copy needs src_virtual_device and dst_virtual_device");
        Node node;
        node.name = m_graph.uniqueName(nameHint.empty() ? "device_copy" : nameHint);
        node.op = &OpRegistry::global().deviceCopy();
        node.inputs = {args[0].fields[0]};
        node.outputs = {m_graph.type(args[0].fields[0])};
        node.copySource = *src;
        node.copyDestination = *dst;
        node.location = {at.line, at.column};
        const NodeId id = m_graph.addNode(std::move(node));
        return RelayValue{{ValueRef{id, 0}}, false, id};
    }

    Result<RelayValue> makeCall(const RelayToken& opToken, const std::string& nameHint,
                                const std::vector<RelayValue>& args,
                                const std::vector<RelayToken>& argTokens,
                                const std::vector<ParsedAttr>& attrs) {
        const OpDef* op = OpRegistry::global().find(opToken.text);
        if (!op || op->role != OpRole::Compute)
            return errorAt(opToken, "unknown operator '" + opToken.text + "'");
        if (op->dialect != OpDialect::Relay)
            return errorAt(opToken, "'" + opToken.text +
                                        "' is an ONNX operator; Relay programs use Relay "
                                        "operators such as nn.conv2d");
        std::vector<ValueRef> inputs;
        if (op->tupleInput) {
            if (args.size() != 1 || !args[0].isTuple)
                return errorAt(opToken, op->name + " takes one tuple argument, e.g. " + op->name +
                                            "((%a, %b), axis=0)");
            inputs = args[0].fields;
        } else {
            for (std::size_t i = 0; i < args.size(); ++i) {
                if (args[i].isTuple || args[i].fields.size() != 1)
                    return errorAt(argTokens[i], "argument " + std::to_string(i + 1) + " of " +
                                                     op->name + " is a tuple, expected a tensor");
                inputs.push_back(args[i].fields[0]);
            }
        }
        const int count = static_cast<int>(inputs.size());
        if (count < op->minInputs || (op->maxInputs >= 0 && count > op->maxInputs)) {
            const std::string expected =
                op->minInputs == op->maxInputs ? std::to_string(op->minInputs)
                : op->maxInputs < 0
                    ? "at least " + std::to_string(op->minInputs)
                    : std::to_string(op->minInputs) + " to " + std::to_string(op->maxInputs);
            return errorAt(opToken, op->name + " takes " + expected + " argument" +
                                        (expected == "1" ? "" : "s") + ", got " +
                                        std::to_string(count));
        }
        Node node;
        node.op = op;
        node.inputs = inputs;
        for (const ParsedAttr& attr : attrs)
            node.attrs.set(attr.name, attr.value);
        std::vector<TensorType> inputTypes;
        inputTypes.reserve(inputs.size());
        for (const ValueRef& input : inputs)
            inputTypes.push_back(m_graph.type(input));
        ShapeResult shape = op->inferShape(inputTypes, node.attrs);
        if (shape.failed())
            return errorAt(opToken, shape.error);
        node.outputs = std::move(shape.outputs);
        node.name = m_graph.uniqueName(nameHint.empty() ? op->name : nameHint);
        node.location = {opToken.line, opToken.column};
        const std::size_t outputCount = node.outputs.size();
        const NodeId id = m_graph.addNode(std::move(node));
        RelayValue value;
        value.created = id;
        value.isTuple = outputCount != 1;
        for (std::uint32_t i = 0; i < outputCount; ++i)
            value.fields.push_back(ValueRef{id, i});
        return value;
    }

    static bool parseInteger(std::string_view text, std::int64_t* out) {
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
        return ec == std::errc() && ptr == text.data() + text.size();
    }

    std::vector<RelayToken> m_tokens;
    std::size_t m_pos = 0;
    const DeviceSet& m_devices;
    const std::string& m_file;
    Graph m_graph;
    std::unordered_map<std::string, RelayValue> m_scope;
    std::map<std::int64_t, NodeId> m_metaConstants;
    DeviceId m_resultDevice;
};

} // namespace

Result<Graph> readRelay(std::string_view text, const DeviceSet& devices,
                        const std::string& fileName) {
    auto tokens = lexRelay(text, fileName);
    if (!tokens)
        return tokens.error();
    RelayParser parser(tokens.take(), devices, fileName);
    auto graph = parser.parse();
    if (graph) {
        graph.value().sourceFormat = "relay";
    }
    return graph;
}

} // namespace placer
