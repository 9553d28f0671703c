import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// The checks both kinds of stored property share: one `var` with a name and
/// a default value, not static, without accessors. Returns its name, or throws
/// what is wrong, pointing at the macro's attribute `node` (the declaration a
/// macro is handed may be a copy whose positions are not the file's).
func storedVariable(_ declaration: some DeclSyntaxProtocol, at node: AttributeSyntax, for macro: String) throws -> (Property, TokenSyntax) {
    guard let property = Property(declaration) else { throw Misuse.at(node, "@\(macro) applies to a stored 'var' property") }
    guard let name = property.name else {
        throw Misuse.at(node, "@\(macro) applies to one property at a time: declare each on a line of its own")
    }
    let subject = "'\(name.text)'"
    if property.isLet { throw Misuse.at(node, "@\(macro) needs a 'var': \(subject) is a 'let'") }
    if property.isStatic { throw Misuse.at(node, "@\(macro) applies to an instance property: \(subject) is static") }
    if property.isLazy { throw Misuse.at(node, "@\(macro) cannot make \(subject) lazy") }
    if property.isComputed { throw Misuse.at(node, "@\(macro) applies to a stored property: \(subject) is computed") }
    if property.hasAccessors {
        throw Misuse.at(node, "@\(macro) does not support 'willSet' or 'didSet' on \(subject): observe the object instead")
    }
    guard property.binding?.initializer != nil else {
        throw Misuse.at(node, "@\(macro) property \(subject) needs a default value (it is what the property starts as)")
    }
    return (property, name)
}

/// The private stored property that keeps a property's declared value: `private var _name = value`.
func declaredValueStorage(_ property: Property, _ name: TokenSyntax) -> DeclSyntax {
    let binding = property.binding!
    let type = binding.typeAnnotation.map { $0.trimmed.description } ?? ""
    return "private var _\(raw: name.text.trimmingBackticks)\(raw: type) = \(binding.initializer!.value.trimmed)"
}

/// The init accessor every generated property has, so that its declared value
/// initializes its storage, and `self.name = value` in an initializer is a write.
func initAccessor(_ name: TokenSyntax) -> AccessorDeclSyntax {
    """
    @storageRestrictions(initializes: _\(raw: name.text.trimmingBackticks))
    init(initialValue) {
        _\(raw: name.text.trimmingBackticks) = initialValue
    }
    """
}

extension String {
    /// The name without the backticks that let a keyword be a name (`` `default` ``).
    var trimmingBackticks: String { filter { $0 != "`" } }
}

/// `@CloudBacked` and `@DefaultsBacked`: the property is stored under its key
/// (its name, or the key its own or its marker's argument names), read each time.
protocol BackedMacro: PeerMacro, AccessorMacro {
    static var flavor: Flavor { get }
}

extension BackedMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        // The accessor expansion reports what is wrong; once is enough.
        guard let (property, name) = try? storedVariable(declaration, at: node, for: flavor.backedMacro) else { return [] }
        return [declaredValueStorage(property, name)]
    }

    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        let (property, name) = try storedVariable(declaration, at: node, for: flavor.backedMacro)
        let storage = name.text.trimmingBackticks
        let ownName: ExprSyntax = "\(literal: storage)"
        let key = node.argument(flavor.keyLabel) ?? property.attribute(flavor.keyMacro)?.argument(flavor.keyLabel) ?? ownName
        return [
            initAccessor(name),
            """
            get {
                \(raw: flavor.storage).value(of: self, \\.\(name.trimmed), forKey: \(key.trimmed), default: _\(raw: storage))
            }
            """,
            """
            set {
                \(raw: flavor.storage).set(newValue, of: self, \\.\(name.trimmed), forKey: \(key.trimmed))
            }
            """,
        ]
    }
}

/// `@CloudBacked`: the property lives in the object's key-value store.
public enum CloudBackedMacro: BackedMacro {
    static let flavor = Flavor.cloud
}

/// `@DefaultsBacked`: the property lives in the object's `UserDefaults`.
public enum DefaultsBackedMacro: BackedMacro {
    static let flavor = Flavor.defaults
}

/// `@ObservableOnly`: observable, kept in the object, not stored.
public enum ObservableOnlyMacro: PeerMacro, AccessorMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        guard let (property, name) = try? storedVariable(declaration, at: node, for: "ObservableOnly") else { return [] }
        return [declaredValueStorage(property, name)]
    }

    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        let (_, name) = try storedVariable(declaration, at: node, for: "ObservableOnly")
        let storage = name.text.trimmingBackticks
        return [
            initAccessor(name),
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(name.trimmed))
                return _\(raw: storage)
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(name.trimmed)) {
                    _\(raw: storage) = newValue
                }
            }
            """,
        ]
    }
}

/// `@CloudKey` and `@DefaultsKey`: markers, read by the backed macros.
public enum KeyMarkerMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}

/// `@Ignore`: a marker the class macros leave alone.
public enum IgnoreMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}
