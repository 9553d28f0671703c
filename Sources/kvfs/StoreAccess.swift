import Foundation
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// How get/set/rm/ls/status reach a store: through the daemon that holds its
/// state directory (one mount per state directory), or by opening the store
/// here, as one more process of the machine's device.
enum StoreAccess {
    /// How long a busy state directory with no daemon to ask is waited for:
    /// a daemon that was just unmounted (`umount m && kvfs get k`) closes its
    /// control socket first and its store a moment later.
    static let busyWait: Duration = .seconds(3)

    /// Runs `request` on the store the options name and returns what to print.
    static func perform(_ request: StoreRequest, _ options: StoreOptions) throws -> Data {
        let deadline = ContinuousClock.now + busyWait
        while true {
            do {
                let reply = try reply(to: request, options)
                if let failure = reply.failure { throw failure }
                return reply.output
            } catch KVStoreError.stateDirectoryBusy(_, _) where ContinuousClock.now < deadline {
                usleep(100_000)
            }
        }
    }

    private static func reply(to request: StoreRequest, _ options: StoreOptions) throws -> StoreReply {
        if let answered = try ControlSocket.send(request, stateDirectory: try options.stateURL.path) { return answered }
        let store = try DeviceStore(syncDirectory: try options.syncURL, stateDirectory: try options.stateURL, readOnly: request.onlyReads)
        defer { store.close() }
        return request.perform(on: store)
    }
}
