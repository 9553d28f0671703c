import Foundation
import KVStore
import Testing

/// Issue 23 item 7: an idle mount does not spin on what it cannot read. A
/// file of a device folder that a read found a problem with (a snapshot not
/// whole, or corrupt) is read again once it changes (its inode, size or
/// times), and not otherwise; its problem still shows in the status
/// meanwhile. Counted by the bytes the daemon reads while nothing happens
/// (`rchar` of /proc/PID/io): at 0b953bb it read the file at every refresh.
@Suite("An idle mount does not re-read a problem file until it changes", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct IdleProblemFileTests {
    /// How long the daemon is watched while idle.
    static let idleSeconds: UInt32 = 3

    /// The bytes the daemon serving the sandbox's mount read (read(2) and the like) in ``idleSeconds``, once it settled.
    private func bytesReadWhileIdle(_ sandbox: Sandbox) throws -> Int {
        let daemon = try #require(sandbox.daemons(of: sandbox.mountPoint).first)
        func readSoFar() throws -> Int {
            let io = try String(contentsOfFile: "/proc/\(daemon)/io", encoding: .utf8)
            let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("rchar:") })
            return try #require(Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)))
        }
        sleep(1)  // the mount's first refreshes
        let before = try readSoFar()
        sleep(Self.idleSeconds)
        return try readSoFar() - before
    }

    @Test("another device's half-copied snapshot is read once while it stays half, even polling every 0.1 s, then whole once it is")
    func anotherDevicesSnapshot() throws {
        try withSandbox { sandbox in
            // Device b writes `early`, then enough to compact (1 MiB of journal): its snapshot holds `early`.
            try sandbox.admit(state: "state-b")
            let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/state-b"), deviceName: "b", warn: { _ in })
            try other.set(.string("here"), forKey: "early")
            for round in 0..<5 { try other.set(.data(Data(repeating: UInt8(round), count: 300_000)), forKey: "big") }
            let folder = sandbox.syncDirectory + "/devices/" + other.deviceID.hex
            other.close()
            let snapshotName = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("snapshot-") })
            let snapshot = try #require(FileManager.default.contents(atPath: folder + "/" + snapshotName))
            #expect(snapshot.count > 1_000_000)
            // A synchronizer has copied half of it so far.
            try snapshot.prefix(snapshot.count / 2).write(to: URL(fileURLWithPath: folder + "/" + snapshotName))
            try sandbox.mount(options: "--polling --poll-interval 0.1")
            #expect(try sandbox.run("cat $M/early").status != 0)  // only the snapshot holds it
            let read = try bytesReadWhileIdle(sandbox)
            #expect(read < snapshot.count / 2, "the idle daemon read \(read) bytes in \(Self.idleSeconds) s; the half snapshot is \(snapshot.count / 2)")
            #expect(try sandbox.ok("kvfs status $S").contains("incomplete or corrupt snapshot"), "its problem still shows")
            // The copy completes (a new file renamed over it, as synchronizers do): it is read, and `early` shows.
            try snapshot.write(to: URL(fileURLWithPath: folder + "/" + snapshotName), options: .atomic)
            #expect(try poll(seconds: 10, every: 0.1) { try sandbox.run("cat $M/early").output == "here\n" })
        }
    }

    @Test("a corrupt snapshot in the mount's own folder is not read again while it stays as it is")
    func ownSnapshot() throws {
        try withSandbox { sandbox in
            try sandbox.mount()
            try sandbox.ok("echo v > $M/k")
            try sandbox.ok("kvfs unmount $M")
            let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: sandbox.syncDirectory + "/devices").first)
            // A later snapshot than any the device wrote, that is no snapshot: 2 MB of noise.
            var noise = SystemRandomNumberGenerator()
            let junk = Data((0..<2_000_000).map { _ in UInt8.random(in: 0...255, using: &noise) })
            try junk.write(to: URL(fileURLWithPath: sandbox.syncDirectory + "/devices/\(folder)/snapshot-00000000000000f0.snap"))
            try sandbox.mount()
            #expect(try sandbox.ok("cat $M/k") == "v\n")
            let read = try bytesReadWhileIdle(sandbox)
            #expect(read < junk.count, "the idle daemon read \(read) bytes in \(Self.idleSeconds) s; the corrupt snapshot is \(junk.count)")
            #expect(try sandbox.ok("kvfs status $S").contains("incomplete or corrupt snapshot"), "its problem still shows")
            try sandbox.ok("echo w > $M/k && cat $M/k")  // and the device writes on
        }
    }
}
