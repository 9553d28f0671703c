import Foundation

/// Whether a test's (or a benchmark's) stores are plain or sealed (docs/sealed.md): issue 26 asks that
/// everything work sealed as it does plain, with the same tests. The suites that matter take it as an
/// argument and run both ways; `KVFS_TEST_SEALED=1` makes the stores of every other test sealed too.
public enum Sealing: String, CaseIterable, Sendable {
    /// Stores as they always were.
    case plain
    /// Stores sealed with `kvfs seal` (or the library's `Membership`), their other devices joined.
    case sealed

    /// A test's kind when it does not say: sealed when `KVFS_TEST_SEALED=1` asks for every store sealed.
    public static let `default`: Sealing = ProcessInfo.processInfo.environment["KVFS_TEST_SEALED"] == "1" ? .sealed : .plain
}
