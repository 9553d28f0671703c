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
        try opened {
            let reply = try reply(to: request, options)
            if let failure = reply.failure { throw failure }
            return reply.output
        }
    }

    /// What `body` returns once the state directory is not busy: a daemon
    /// closing after its unmount is waited for, up to ``busyWait``.
    private static func opened<T>(_ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + busyWait
        while true {
            do {
                return try body()
            } catch KVStoreError.stateDirectoryBusy(_, _) where ContinuousClock.now < deadline {
                usleep(100_000)
            }
        }
    }

    private static func reply(to request: StoreRequest, _ options: StoreOptions) throws -> StoreReply {
        if let answered = try ControlSocket.send(request, stateDirectory: try options.stateURL.path) { return answered }
        let store = try open(for: request, options)
        defer { store.close() }
        return request.perform(on: store)
    }

    private static func open(for request: StoreRequest, _ options: StoreOptions) throws -> DeviceStore {
        try DeviceStore(syncDirectory: try options.syncURL, stateDirectory: try options.stateURL, readOnly: request.onlyReads)
    }

    /// Runs `request` every `interval` microseconds, until `done` says so
    /// of what it printed (or throws): through the daemon while one holds
    /// the state directory, else on the store opened here once, which a
    /// ``SyncWatcher`` refreshes as the folders change, as a mount's is. A
    /// refresh reads only what is new in the folders, so `kvfs wait` costs
    /// little however long the journal: it opened the store afresh for each
    /// look, reading the whole journal (tens of megabytes with history) every 10 ms.
    static func repeatedly(_ request: StoreRequest, _ options: StoreOptions, every interval: useconds_t,
                           until done: (Data) throws -> Bool) throws {
        var local: (store: DeviceStore, watcher: SyncWatcher)?
        defer {
            local?.watcher.stop()
            local?.store.close()
        }
        while true {
            let output: Data
            if let store = local?.store {
                let reply = request.perform(on: store)
                if let failure = reply.failure { throw failure }
                output = reply.output
            } else if let answered = try ControlSocket.send(request, stateDirectory: try options.stateURL.path) {
                if let failure = answered.failure { throw failure }
                output = answered.output
            } else {
                let store = try opened { try open(for: request, options) }
                local = (store, SyncWatcher(store: store))
                continue
            }
            if try done(output) { return }
            usleep(interval)
        }
    }
}
