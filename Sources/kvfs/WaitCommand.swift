import ArgumentParser
import Foundation
import KVStore

/// `kvfs wait [KEY…] [--timeout S]`: returns once every device counted as
/// active in `kvfs status` has read this device's latest writes (of those
/// keys, or of every key); on timeout, exits 75 naming the devices that have not.
struct WaitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait", abstract: "Wait until every active device has read this device's latest writes.",
        discussion: """
            Active devices are those `kvfs status` calls active: not stopped (they closed their store), not quiet \
            (nothing of them arrived for 300 s), not vanished or retired. A device has read a write once its \
            published progress says so; while it waits, the device asks the others (waiting.json in its folder), \
            and they publish it within a fraction of a second of reading. On timeout \
            the command exits 75 with one line naming the devices that have not read the writes yet.
            """)
    @Argument(help: "The keys whose latest writes to wait for (default: every key).") var keys: [String] = []
    @Option(help: ArgumentHelp("How long to wait at most, in seconds.", valueName: "seconds")) var timeout: Double = 60
    @OptionGroup var store: StoreOptions

    /// How often the devices' progress is looked at.
    static let pollInterval: useconds_t = 10_000

    func run() throws {
        guard timeout.isFinite, timeout >= 0 else { throw CommandError.usage("--timeout must be a number of seconds, 0 or more") }
        let deadline = Date(timeIntervalSinceNow: timeout)
        let request = StoreRequest.undelivered(keys: keys.isEmpty ? nil : keys.map { StoreKey($0) })
        try StoreAccess.repeatedly(request, store, every: Self.pollInterval) { output in
            let lacking = String(decoding: output, as: UTF8.self).split(separator: "\n")
            if lacking.isEmpty { return true }
            guard Date() < deadline else {
                throw CommandError("not read within \(String(format: "%g", timeout)) s by \(lacking.joined(separator: ", "))",
                                   exitStatus: ExitStatus.notDelivered)
            }
            return false
        }
    }
}
