import ObservableDefaultsMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every macro of the module, as the `ObservableDefaults` module declares them.
let macros: [String: MacroSpec] = [
    "ObservableCloud": MacroSpec(type: ObservableCloudMacro.self, conformances: ["ObservableCloudObject", "Observable"]),
    "ObservableDefaults": MacroSpec(type: ObservableDefaultsMacro.self, conformances: ["ObservableDefaultsObject", "Observable"]),
    "CloudBacked": MacroSpec(type: CloudBackedMacro.self),
    "DefaultsBacked": MacroSpec(type: DefaultsBackedMacro.self),
    "CloudKey": MacroSpec(type: KeyMarkerMacro.self),
    "DefaultsKey": MacroSpec(type: KeyMarkerMacro.self),
    "ObservableOnly": MacroSpec(type: ObservableOnlyMacro.self),
    "Ignore": MacroSpec(type: IgnoreMacro.self),
]

/// Expands `source` with every macro and checks the result and the
/// diagnostics, failing the current Swift Testing test where they differ.
func expect(_ source: String, expandsTo expanded: String, diagnostics: [DiagnosticSpec] = [],
            fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) {
    assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
                         failureHandler: { failure in
                             Issue.record(Comment(rawValue: failure.message),
                                          sourceLocation: SourceLocation(fileID: failure.location.fileID, filePath: failure.location.filePath,
                                                                         line: Int(failure.location.line), column: Int(failure.location.column)))
                         }, fileID: fileID, filePath: filePath, line: line, column: column)
}

/// A diagnostic, one line and column, as the macros report misuse.
func diagnostic(_ message: String, line: Int, column: Int) -> DiagnosticSpec {
    DiagnosticSpec(message: message, line: line, column: column)
}
