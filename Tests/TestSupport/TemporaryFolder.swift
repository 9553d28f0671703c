import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one temporary folder of the tests: made by mkdtemp under the
/// temporary directory (`$TMPDIR`, else /tmp), so its name is new and only
/// its owner can enter it; ``cleanup()`` removes it with everything in it.
public struct TemporaryFolder: Sendable {
    /// Its path.
    public let path: String

    /// Its URL.
    public var url: URL { URL(fileURLWithPath: path) }

    /// Makes a folder named `label-XXXXXX`; with `inMemory`, in /dev/shm where
    /// there is one (for tests that fsync a lot, such as the convergence schedules).
    public init(_ label: String = "kvfs", inMemory: Bool = false) {
        let base = inMemory && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
        var template = Array(((base as NSString).appendingPathComponent(label) + "-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            fatalError("cannot make a temporary folder in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    /// `name` inside it.
    public func sub(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Removes it and everything in it.
    public func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}
