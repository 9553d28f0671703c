import Foundation
import Testing
@testable import KVStore

/// Issue 7.1–7.3 through a real mount: hostile bytes written to a key are
/// refused at close, and hostile bytes in another device's journal are
/// skipped with one warning, in bounded time and memory, the daemon alive.
@Suite("Hostile bytes through a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct HostileValueTests {
    /// Issue 7.1's 46 bytes, as printf writes them.
    static let setDocument = #"bplist00\xc1\x01\x10\x01\x08\x0a\0\0\0\0\0\0\x01\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x0c"#
    /// Tests/Fuzz/samples, the hostile inputs of issue 7.
    static let samples = Repository.path("Tests/Fuzz/samples")
    /// The device that wrote the sample journals.
    static let sampleDevice = String(repeating: "11", count: 16)

    /// The daemon's peak resident memory in KiB (VmHWM).
    static func peakMemory(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    }

    @Test func theSetDocumentIsRefusedAtCloseAndTheDaemonLives() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo old > $M/k
                printf '\#(Self.setDocument)' > $M/k
                python3 -c 'import os, sys
                fd = os.open(sys.argv[2], os.O_WRONLY | os.O_TRUNC); os.write(fd, open(sys.argv[1], "rb").read())
                try: os.close(fd)
                except OSError as e: print("close:", e.strerror)' "\#(Self.samples)/plist/set-top-object.bplist" $M/k
                cat $M/k; ls $M
                """#)
            #expect(output == "close: Invalid argument\nold\nk\n")
            #expect(!sandbox.daemons(of: sandbox.mountPoint).isEmpty)
        }
    }

    @Test func anExpandingDocumentIsRefusedFastInBoundedMemory() throws {
        try withMount { sandbox in
            let daemon = try #require(sandbox.daemons(of: sandbox.mountPoint).first)
            let clock = ContinuousClock()
            var output = ""
            let elapsed = try clock.measure {
                output = try sandbox.ok(#"echo old > $M/k; cp "\#(Self.samples)/plist/shared-references.bplist" $M/k; echo "cp: $?"; cat $M/k"#)
            }
            #expect(output == "cp: 1\nold\n")
            #expect(elapsed < .seconds(10), "took \(elapsed)")
            let peak = try #require(Self.peakMemory(daemon))
            #expect(peak < 200_000, "daemon peak RSS \(peak) KiB")
            print("shared-references document refused in \(elapsed); daemon peak RSS \(peak) KiB")
        }
    }

    /// Prepares a journal of ``sampleDevice`` with `prepare` (a script run in
    /// its folder), mounts, and returns the mount's outcome and the warnings
    /// (those of the start on the mount's standard error, later ones in daemon.log).
    func mountWithForeignJournal(_ sandbox: Sandbox, _ prepare: String) throws -> (mount: ShellResult, warnings: [Substring]) {
        let folder = sandbox.syncDirectory + "/devices/" + Self.sampleDevice
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try sandbox.ok("cd '\(folder)' && \(prepare)")
        let mount = try sandbox.run(#"kvfs mount $M $S"#)
        let log = (try? String(contentsOfFile: sandbox.stateDirectory + "/daemon.log", encoding: .utf8)) ?? ""
        return (mount, (mount.error + log).split(separator: "\n").filter { $0.contains("warning") })
    }

    @Test("a hostile document in another device's journal is skipped with one warning; the mount starts", arguments: [
        ("v1-set-record.log", "good"), ("v1-shared-references-record.log", "good2"),
    ])
    func hostileDocumentInAnotherDevicesJournal(sample: String, key: String) throws {
        try withSandbox(.plain) { sandbox in  // plain records planted: a sealed store refuses them unread (SealedAttackTests)
            let clock = ContinuousClock()
            let start = clock.now
            let (mount, warnings) = try mountWithForeignJournal(sandbox, "cp '\(Self.samples)/journal/\(sample)' \(DeviceFolder.segmentName(1))")
            #expect(mount.status == 0 && mount.output.isEmpty, "\(mount)")
            #expect(clock.now - start < .seconds(15))
            #expect(warnings.count == 1 && warnings.allSatisfy { $0.contains("corrupt bytes") }, "\(warnings)")
            #expect(try sandbox.ok("cat $M/\(key); ls $M") == "\(key.hasSuffix("2") ? 2 : 1)\n\(key)\n")
        }
    }

    /// Issue 7.3's checksum bomb, made by Python in the current folder as a device's first journal segment.
    static let checksumBomb = #"""
        python3 -c 'import struct, sys
        n = 1 << 20; b = bytearray(n)
        for u in range(0, n - 9, 9):
            b[u:u + 4] = struct.pack("<I", n - u - 8); b[u + 4] = 0xA5; b[u + 6] = 1; b[u + 8] = 1
        open(sys.argv[1], "wb").write(b)' \#(DeviceFolder.segmentName(1))
        """#

    @Test func aChecksumBombInAnotherDevicesJournalCostsBoundedTimeAndOneWarning() throws {
        try withSandbox(.plain) { sandbox in  // plain frames planted, as above
            let clock = ContinuousClock()
            let start = clock.now
            let (mount, _) = try mountWithForeignJournal(sandbox, Self.checksumBomb)
            #expect(mount.status == 0, "\(mount)")
            #expect(try sandbox.ok("echo x > $M/k; sleep 3; cat $M/k; ls $M") == "x\nk\n")
            #expect(clock.now - start < .seconds(30))
            let log = try String(contentsOfFile: sandbox.stateDirectory + "/daemon.log", encoding: .utf8)
            let all = (mount.error + log).split(separator: "\n").filter { $0.contains("warning") }
            #expect(all.count == 1 && all.allSatisfy { $0.contains("not whole records") }, "\(all)")
        }
    }

    @Test func aChecksumBombArrivingUnderAMountIsSaidOnceInTheDaemonLog() throws {
        try withMount { sandbox in
            let folder = sandbox.syncDirectory + "/devices/" + Self.sampleDevice
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try sandbox.ok("""
                mkdir -p '\(folder)' && cd '\(folder)' && \(Self.checksumBomb)
                for i in 1 2 3; do echo $i > $M/k; sleep 1; done; cat $M/k; ls $M
                """) == "3\nk\n")
            #expect(clock.now - start < .seconds(30))
            let log = try String(contentsOfFile: sandbox.stateDirectory + "/daemon.log", encoding: .utf8)
            let lines = log.split(separator: "\n").filter { $0.contains("warning") }
            #expect(lines.count == 1 && lines.allSatisfy { $0.contains("not whole records") }, "\(log)")
        }
    }
}
