import Foundation
import KVStore

/// How get/set/rm/ls/status reach a store: through the daemon that holds its
/// state directory (a state directory belongs to one process at a time), or
/// by opening the store here.
enum StoreAccess {
    /// Runs `request` on the store the options name and returns what to print.
    static func perform(_ request: StoreRequest, _ options: StoreOptions) throws -> Data {
        let reply: StoreReply
        if let answered = try ControlSocket.send(request, stateDirectory: options.stateURL.path) {
            reply = answered
        } else {
            let store = try DeviceStore(syncDirectory: options.syncURL, stateDirectory: options.stateURL, readOnly: request.onlyReads)
            defer { store.close() }
            reply = request.perform(on: store)
        }
        if let failure = reply.failure { throw failure }
        return reply.output
    }
}
