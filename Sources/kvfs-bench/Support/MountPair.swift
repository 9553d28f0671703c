import Foundation
import TestSupport

/// Two kvfs mounts, A and B, each a device of its own: on one shared folder,
/// or on the two folders of a Syncthing pair on 127.0.0.1 (B mounted once A's
/// `store-id` has arrived), with `kvfs mount --syncthing` or without. A sealed
/// pair's store is sealed by A (`kvfs seal`) before A mounts, and B joins it
/// with the recovery key (`kvfs join --recovery-key`) once its roster has arrived.
final class MountPair {
    /// Where the two devices' folders come from.
    enum Transport {
        case sharedFolder
        case syncthing(integration: Bool)
    }

    /// The mount points of A and B.
    let mounts: [String]
    /// The sync directories of A and B (one folder twice, when shared).
    let folders: [String]
    /// The state directories of A and B.
    let states: [String]
    private let pair: SyncthingPair?

    init(root: String, transport: Transport, sealing: Sealing = .plain) throws {
        mounts = [root + "/mA", root + "/mB"]
        states = [root + "/state-0", root + "/state-1"]
        var integration = false
        switch transport {
        case .sharedFolder:
            folders = [root + "/sync", root + "/sync"]
            pair = nil
        case let .syncthing(withIntegration):
            folders = [root + "/A", root + "/B"]
            pair = try SyncthingPair(work: root + "/syncthing", folders: folders)
            integration = withIntegration
        }
        do {
            for index in 0..<2 {
                if index == 1, let pair {  // the second device joins once the store id (and a sealed store's roster) has arrived
                    try pair.scan(0)
                    try waitUntil(seconds: 30, "the store id\(sealing == .sealed ? " and the roster" : "") in \(folders[1])") {
                        arrived(sealing == .sealed ? ["store-id", "roster"] : ["store-id"])
                    }
                }
                if sealing == .sealed { try seal(index) }
                try FileManager.default.createDirectory(atPath: mounts[index], withIntermediateDirectories: true)
                let syncthing = integration ? ["--syncthing", pair!.url(index), "--syncthing-config", pair!.configFile(index)] : []
                let result = try ChildProcess.run(Self.kvfs, ["mount", mounts[index]] + storeOptions(index)
                                                              + ["--device-name", "dev\(index)"] + syncthing)
                guard result.status == 0 else { throw ChildProcessError.failed("kvfs mount", result.output) }
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Whether each of `paths` (files, or folders with every file in them) is in B's sync folder as it is in
    /// A's: a folder comes before its files, and a file may be there before its last bytes.
    private func arrived(_ paths: [String]) -> Bool {
        paths.allSatisfy { path in
            let from = folders[0] + "/" + path, to = folders[1] + "/" + path
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: from) else {
                return FileManager.default.contents(atPath: to).map { $0 == FileManager.default.contents(atPath: from) } ?? false
            }
            return FileManager.default.fileExists(atPath: to) && arrived(names.map { path + "/" + $0 })
        }
    }

    /// The recovery key of the sealed store, once A has sealed it.
    private var recoveryKey = ""

    /// Seals the store as device 0, or joins device `index` to it with the recovery key.
    private func seal(_ index: Int) throws {
        let name = "dev\(index)"
        if index == 0 {
            let result = try ChildProcess.run(Self.kvfs, ["seal"] + storeOptions(0) + ["--device-name", name])
            let lines = result.output.split(separator: "\n")
            guard result.status == 0, let said = lines.firstIndex(where: { $0.hasPrefix("sealed:") }), said + 1 < lines.count else {
                throw ChildProcessError.failed("kvfs seal", result.output)
            }
            recoveryKey = String(lines[said + 1])
        } else {
            let command = #"words=$0 kvfs=$1; shift; printf '%s\n' "$words" | "$kvfs" join --recovery-key "$@""#
            let result = try ChildProcess.run("/bin/sh", ["-c", command, recoveryKey, Self.kvfs] + storeOptions(index) + ["--device-name", name])
            guard result.status == 0 else { throw ChildProcessError.failed("kvfs join", result.output) }
        }
    }

    /// `--sync-dir … --state-dir …` of device `index`, for kvfs's commands.
    func storeOptions(_ index: Int) -> [String] { ["--sync-dir", folders[index], "--state-dir", states[index]] }

    /// Unmounts both, and stops the Syncthing pair.
    func stop() {
        for mount in mounts { _ = try? ChildProcess.run(Self.kvfs, ["unmount", mount]) }
        pair?.stop()
    }

    /// The `kvfs` built beside this benchmark.
    static var kvfs: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("kvfs").path
    }
}
