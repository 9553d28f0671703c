import Foundation
import Testing
import TestSupport

/// ``MountStatus/waitUntil(seconds:_:through:_:)``, the wait `kvfs-bench
/// sealed` times a mount by (Sources/kvfs-bench/Sealed/CostStore.swift): it
/// ends at the first refusal the mount reports, or when the mount dies,
/// instead of waiting its hour for values that cannot come. Real mounts, in
/// this process's mount namespace so that it reads them as the benchmark does.
@Suite("Waiting on a mount's values", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct MountStatusTests {
    /// Runs `kvfs` with `arguments`, expecting it to succeed; its output.
    @discardableResult
    private static func kvfs(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(MountEnvironment.kvfs, arguments)
        guard result.status == 0 else { throw ChildProcessError.failed("kvfs " + arguments.joined(separator: " "), result.output) }
        return result.output
    }

    /// Runs `body` with a temporary folder named after `name`, removed after; the built kvfs is required.
    private static func withFolder(_ name: String, _ body: (TemporaryFolder) throws -> Void) throws {
        try MountEnvironment.requireBinary()
        let folder = TemporaryFolder(name)
        defer { folder.cleanup() }
        try body(folder)
    }

    /// Mounts device a's store (sync directory `sync`, state `s-a` in `folder`) at `m`, runs `body` with the
    /// mount point, and unmounts it.
    private static func withMount(in folder: TemporaryFolder, _ body: (String) throws -> Void) throws {
        let mount = folder.path + "/m"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        try kvfs(["mount", mount, "--sync-dir", folder.path + "/sync", "--state-dir", folder.path + "/s-a", "--device-name", "a"])
        defer { _ = try? ChildProcess.run(MountEnvironment.kvfs, ["unmount", mount]) }
        try body(mount)
    }

    @Test("a refused record ends the wait, naming the refusal: a sealed folder copied, while the mount runs, under the id of a device the roster does not name")
    func refusalEndsTheWait() throws {
        try Self.withFolder("mount-status-refused") { folder in
            try Self.kvfs(["seal", "--sync-dir", folder.path + "/sync", "--state-dir", folder.path + "/s-a", "--device-name", "a"])
            try Self.withMount(in: folder) { mount in
                try Data("v\n".utf8).write(to: URL(fileURLWithPath: mount + "/k"))
                // Under load the wait's first look can come before the mount reads the copy: the refusal must
                // show at a later look (f84c2b8: a thread reading the status again got its first document).
                let devices = folder.path + "/sync/devices/"
                let own = try String(contentsOfFile: folder.path + "/s-a/device-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                try FileManager.default.copyItem(atPath: devices + own, toPath: devices + "00112233445566778899aabbccddeeff")
                let error = #expect(throws: MountStatus.Ended.self) {
                    try MountStatus.waitUntil(seconds: 120, "a value never written", through: mount) {
                        FileManager.default.fileExists(atPath: mount + "/never-written")
                    }
                }
                let said = error?.description ?? ""
                #expect(said.hasPrefix("gave up waiting for a value never written: the mount at \(mount) refused records: "), "\(said)")
                #expect(said.contains("00112233445566778899aabbccddeeff") && said.contains("not a member of the sealed store"), "\(said)")
            }
        }
    }

    @Test("one thread reading .kvfs/status again and again as Foundation reads a file (open, fstat, read, close) reads it anew each time: the keys used follow its writes")
    func aThreadReadingAgainReadsAnew() throws {
        try Self.withFolder("mount-status-again") { folder in
            try Self.withMount(in: folder) { mount in
                // Before: the fstat of a thread that held the file open kept the document it was reading for
                // its next open, so this thread read its first document at every open (a refusal that came
                // after its first read never showed; seen in the sealed mount pass).
                var used: [Int] = []
                for index in 0..<5 {
                    let json = try #require(FileManager.default.contents(atPath: mount + "/.kvfs/status"))
                    let keys = (try JSONSerialization.jsonObject(with: json) as? [String: Any])?["keys"] as? [String: Any]
                    used.append(keys?["used"] as? Int ?? -1)
                    try Data("v\n".utf8).write(to: URL(fileURLWithPath: mount + "/k\(index)"))
                }
                #expect(used == [0, 1, 2, 3, 4])
            }
        }
    }

    @Test("a mount that answers but never holds the value times out; once its daemon is killed, the wait ends at once: it no longer answers")
    func deadMountEndsTheWait() throws {
        try Self.withFolder("mount-status-killed") { folder in
            try Self.withMount(in: folder) { mount in
                let never = { FileManager.default.fileExists(atPath: mount + "/never-written") }
                #expect(throws: TimedOut.self) { try MountStatus.waitUntil(seconds: 1, "a value never written", through: mount, never) }
                let status = try #require(FileManager.default.contents(atPath: mount + "/.kvfs/status"))
                #expect(MountStatus.refusals(in: status) == [])
                let pid = try #require((try JSONSerialization.jsonObject(with: status) as? [String: Any])?["pid"] as? Int)
                kill(pid_t(pid), SIGKILL)
                let error = #expect(throws: MountStatus.Ended.self) {
                    try MountStatus.waitUntil(seconds: 120, "a value never written", through: mount, never)
                }
                #expect(error?.description == "gave up waiting for a value never written: the mount at \(mount) no longer answers (its .kvfs/status cannot be read)")
            }
            #expect(MountStatus.refusals(in: Data("{}".utf8)) == nil, "a document without warnings is no status")
        }
    }
}
