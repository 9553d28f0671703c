import SwiftDiagnostics
import SwiftSyntax

/// A macro used where it cannot work: one line saying what is wrong and what to do.
struct Misuse: Error, DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "ObservableDefaults", id: message) }
    var severity: DiagnosticSeverity { .error }

    /// The error to throw: `message`, pointing at `node`.
    static func at(_ node: some SyntaxProtocol, _ message: String) -> DiagnosticsError {
        DiagnosticsError(diagnostics: [Diagnostic(node: Syntax(node), message: Misuse(message: message))])
    }
}
