#if canImport(Glibc)
import Glibc
#endif

/// Decides which new file names are editors' scratch files (shell globs, as
/// fnmatch reads them; a leading dot needs no explicit match, so `*~` covers `.bashrc~`).
struct ScratchPatterns: Sendable {
    let patterns: [String]

    func matches(_ name: String) -> Bool {
        patterns.contains { fnmatch($0, name, 0) == 0 }
    }
}
