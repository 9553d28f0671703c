import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// What `@ObservableCloud` and `@ObservableDefaults` share: the class check,
/// the attributes they give the stored properties, the conformance, and the
/// options they read as literals.
protocol ObservableClassMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    static var flavor: Flavor { get }
    /// The members the class gets, given the macro's attribute and the access level to declare them with.
    static func members(for node: AttributeSyntax, access: String) throws -> [DeclSyntax]
}

extension ObservableClassMacro {
    /// The class the macro is attached to, or what to say when it is not a class.
    static func attachedClass(_ declaration: some DeclGroupSyntax, _ node: AttributeSyntax) throws -> ClassDeclSyntax {
        if let attached = declaration.as(ClassDeclSyntax.self) { return attached }
        let kind = declaration.as(StructDeclSyntax.self) != nil ? "a struct"
            : declaration.as(EnumDeclSyntax.self) != nil ? "an enum" : declaration.as(ActorDeclSyntax.self) != nil ? "an actor" : "not a class"
        throw Misuse.at(node, "@\(flavor.classMacro) applies to a class: this is \(kind), whose copies could not share one store's values and observers")
    }

    /// A Bool option that changes what the macro writes, so it must be `true` or `false` as written.
    static func literalFlag(_ node: AttributeSyntax, _ label: String, default value: Bool) throws -> Bool {
        guard let expression = node.argument(label) else { return value }
        guard let literal = expression.as(BooleanLiteralExprSyntax.self) else {
            throw Misuse.at(expression, "'\(label)' must be written as true or false")
        }
        return literal.literal.tokenKind == .keyword(.true)
    }

    /// An option's expression as written, or `fallback`.
    static func option(_ node: AttributeSyntax, _ label: String, _ fallback: ExprSyntax) -> ExprSyntax {
        node.argument(label)?.trimmed ?? fallback
    }

    public static func expansion(of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        let attached = try attachedClass(declaration, node)
        // Members a protocol requires are as visible as the class: public in a public class.
        let modifiers = attached.modifiers.map(\.name.tokenKind)
        let access = modifiers.contains(.keyword(.public)) || modifiers.contains(.keyword(.open)) ? "public "
            : modifiers.contains(.keyword(.package)) ? "package " : ""
        return try members(for: node, access: access)
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingAttributesFor member: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let property = Property(member), !property.isLet, !property.isStatic,
              !property.isLazy, !property.isComputed,
              !property.hasAttribute(flavor.backedMacro, "ObservableOnly", "Ignore", "ObservationIgnored") else { return [] }
        let observeFirst = try literalFlag(node, "observeFirst", default: false)
        // A key marker says the property is stored, in either mode.
        let backed = !observeFirst || property.hasAttribute(flavor.keyMacro)
        return [backed ? "@\(raw: flavor.backedMacro)" : "@ObservableOnly"]
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
                                 in context: some MacroExpansionContext) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), !protocols.isEmpty else { return [] }
        // Both named: Swift does not infer `Observable` from the protocol that refines it, here.
        let conformance: DeclSyntax = "extension \(type.trimmed): Observation.Observable, \(raw: flavor.conformance) {}"
        return [conformance.cast(ExtensionDeclSyntax.self)]
    }
}

/// `@ObservableCloud`: the class's properties live in a key-value store.
public enum ObservableCloudMacro: ObservableClassMacro {
    static let flavor = Flavor.cloud

    static func members(for node: AttributeSyntax, access: String) throws -> [DeclSyntax] {
        let prefix = option(node, "prefix", "\"\"")
        let syncImmediately = option(node, "syncImmediately", "false")
        let developmentMode = option(node, "developmentMode", "false")
        var members: [DeclSyntax] = [
            "\(raw: access)let _$observationRegistrar = Observation.ObservationRegistrar()",
            """
            \(raw: access)private(set) var _cloudStorage = ObservableCloudStorage(prefix: \(prefix), syncImmediately: \(syncImmediately), \
            developmentMode: \(developmentMode))
            """,
            "var _cloudObserver: CloudObservation? = nil",
            "var _prefix: String { _cloudStorage.prefix }",
            "var _developmentMode_: Bool { _cloudStorage.developmentMode }",
        ]
        if try literalFlag(node, "autoInit", default: true) {
            members.append("""
                \(raw: access)init(prefix: String? = nil, syncImmediately: Bool = false, developmentMode: Bool = false, \
                store: (any KVStore.KeyValueStore)? = nil) {
                    _cloudStorage = ObservableCloudStorage(prefix: prefix ?? \(prefix), syncImmediately: syncImmediately || \(syncImmediately), \
                developmentMode: developmentMode || \(developmentMode), store: store)
                    _cloudObserver = CloudObservation(host: self, prefix: _prefix)
                }
                """)
        }
        return members
    }
}

/// `@ObservableDefaults`: the class's properties live in `UserDefaults`.
public enum ObservableDefaultsMacro: ObservableClassMacro {
    static let flavor = Flavor.defaults

    static func members(for node: AttributeSyntax, access: String) throws -> [DeclSyntax] {
        let userDefaults = option(node, "userDefaults", "nil")
        let suiteName = option(node, "suiteName", "nil")
        let prefix = option(node, "prefix", "\"\"")
        let ignoreExternalChanges = option(node, "ignoreExternalChanges", "false")
        var members: [DeclSyntax] = [
            "\(raw: access)let _$observationRegistrar = Observation.ObservationRegistrar()",
            """
            \(raw: access)private(set) var _defaultsStorage = ObservableDefaultsStorage(userDefaults: \(userDefaults), suiteName: \(suiteName), \
            prefix: \(prefix), ignoreExternalChanges: \(ignoreExternalChanges))
            """,
            "var _prefix: String { _defaultsStorage.prefix }",
            """
            func observerStarter(observableKeysBlacklist: [String] = []) {
                _defaultsStorage.startObserving(ignoring: observableKeysBlacklist)
            }
            """,
        ]
        if try literalFlag(node, "autoInit", default: true) {
            members.append("""
                \(raw: access)init(userDefaults: Foundation.UserDefaults? = nil, ignoreExternalChanges: Bool? = nil, prefix: String? = nil) {
                    _defaultsStorage = ObservableDefaultsStorage(userDefaults: userDefaults ?? \(userDefaults), suiteName: \(suiteName), \
                prefix: prefix ?? \(prefix), ignoreExternalChanges: ignoreExternalChanges ?? \(ignoreExternalChanges))
                    observerStarter()
                }
                """)
        }
        return members
    }
}
