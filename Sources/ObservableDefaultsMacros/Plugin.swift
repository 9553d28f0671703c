import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that expands ObservableDefaults' macros (declared in the `ObservableDefaults` module).
@main
struct ObservableDefaultsPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ObservableCloudMacro.self, ObservableDefaultsMacro.self, CloudBackedMacro.self, DefaultsBackedMacro.self,
        ObservableOnlyMacro.self, KeyMarkerMacro.self, IgnoreMacro.self,
    ]
}
