import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the tests find the built `kvfs`, and whether FUSE can be mounted here.
public enum MountEnvironment {
    /// The build's products folder: the one holding the test binary
    /// (`…/debug/kvfsPackageTests.xctest`), or the running program's folder.
    public static let productsDirectory: URL = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let program = URL(fileURLWithPath: executable).standardizedFileURL
        // On Darwin the binary sits inside the .xctest bundle; on Linux the .xctest is the binary.
        var url = program
        while url.pathComponents.count > 1 && url.pathExtension != "xctest" { url.deleteLastPathComponent() }
        return url.pathExtension == "xctest" ? url.deletingLastPathComponent() : program.deletingLastPathComponent()
    }()

    /// The `kvfs` executable: `$KVFS_BINARY`, or `kvfs` next to the test bundle.
    public static let kvfs: String = ProcessInfo.processInfo.environment["KVFS_BINARY"]
        ?? productsDirectory.appendingPathComponent("kvfs").path

    /// Why FUSE mounts cannot run here, or nil when they can.
    public static let fuseUnavailableReason: String? = {
        let fd = open("/dev/fuse", O_RDWR)
        guard fd >= 0 else { return "/dev/fuse cannot be opened (\(String(cString: strerror(errno))))" }
        close(fd)
        guard access("/bin/fusermount3", X_OK) == 0 else { return "/bin/fusermount3 is missing (install fuse3)" }
        return nil
    }()

    /// Whether the mount tests can run; prints why not, so a skip is never silent.
    public static var canMount: Bool {
        if let reason = fuseUnavailableReason {
            print("MountTests: SKIPPED — FUSE cannot be mounted here: \(reason)")
            return false
        }
        return true
    }

    /// Throws (and so fails the test, saying what to do) when the binary was not built.
    public static func requireBinary() throws {
        guard access(kvfs, X_OK) == 0 else { throw MissingBinary(path: kvfs, build: "swift build --build-tests", hint: "or set KVFS_BINARY") }
    }

    /// A program the tests need that the build has not made.
    public struct MissingBinary: Error, CustomStringConvertible {
        /// Where it should be.
        public var path: String
        /// The command that builds it.
        public var build: String
        /// More to know, if anything.
        public var hint: String?

        /// Says what is missing where, and how to build it.
        public init(path: String, build: String, hint: String? = nil) {
            self.path = path
            self.build = build
            self.hint = hint
        }

        /// What is missing where, and the command that builds it.
        public var description: String {
            "\((path as NSString).lastPathComponent) is missing at \(path): run `\(build)` first" + (hint.map { " (\($0))" } ?? "")
        }
    }
}

/// The source tree these tests were built from.
public enum Repository {
    /// Its root: the folder holding `Package.swift` above this file.
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.path + "/Package.swift") { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A file or folder in it, by its path from the root (`mount-scripts/install.sh`).
    public static func path(_ relative: String) -> String { root + "/" + relative }
}
