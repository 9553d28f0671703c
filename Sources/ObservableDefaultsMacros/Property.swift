import SwiftSyntax

/// A `var` or `let` declaration as the property macros see it.
struct Property {
    let declaration: VariableDeclSyntax

    init?(_ declaration: some DeclSyntaxProtocol) {
        guard let variable = declaration.as(VariableDeclSyntax.self) else { return nil }
        self.declaration = variable
    }

    var isLet: Bool { declaration.bindingSpecifier.tokenKind == .keyword(.let) }
    var isStatic: Bool { declaration.modifiers.contains { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) } }
    var isLazy: Bool { declaration.modifiers.contains { $0.name.tokenKind == .keyword(.lazy) } }

    /// The one binding, when there is exactly one.
    var binding: PatternBindingSyntax? { declaration.bindings.count == 1 ? declaration.bindings.first : nil }

    /// The property's name as written (backticks kept), when its one binding names one.
    var name: TokenSyntax? { binding?.pattern.as(IdentifierPatternSyntax.self)?.identifier }

    /// Whether the binding has accessors: a computed property, or `willSet`/`didSet`.
    var hasAccessors: Bool { binding?.accessorBlock != nil }

    /// Whether the accessors make it computed (`get`, or a body without accessor keywords) rather than observed.
    var isComputed: Bool {
        switch binding?.accessorBlock?.accessors {
        case .getter: true
        case let .accessors(list): list.contains { ![.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
        case nil: false
        }
    }

    /// The attribute named `name` (`@Name` or `@Module.Name`), if the declaration has it.
    func attribute(_ name: String) -> AttributeSyntax? {
        declaration.attributes.lazy.compactMap { $0.as(AttributeSyntax.self) }.first { $0.isNamed(name) }
    }

    func hasAttribute(_ names: String...) -> Bool { names.contains { attribute($0) != nil } }
}

extension AttributeSyntax {
    /// Whether this is `@name`, possibly qualified by its module.
    func isNamed(_ name: String) -> Bool {
        attributeName.trimmedDescription == name || attributeName.trimmedDescription.hasSuffix(".\(name)")
    }

    /// The expression passed with `label`, if any.
    func argument(_ label: String) -> ExprSyntax? {
        guard case let .argumentList(arguments) = arguments else { return nil }
        return arguments.first { $0.label?.text == label }?.expression
    }
}
