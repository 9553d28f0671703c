import Foundation
import KVStore

/// How a command reaches a store: directly, or through the mount that holds
/// its state directory (a state directory belongs to one process at a time).
enum StoreAccess {
    case direct(DeviceStore)
    case mounted(at: String)

    /// Opens the store named by the options, or finds the mount that has it.
    static func open(_ options: StoreOptions) throws -> StoreAccess {
        let sync = options.syncDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultSyncDirectory
        let state = options.stateDirectory.map { URL(fileURLWithPath: $0) }
        do {
            return .direct(try DeviceStore(syncDirectory: sync, stateDirectory: state))
        } catch {
            guard case let .stateDirectoryBusy(_, holder) = error, let range = holder.range(of: " mount ") else { throw error }
            return .mounted(at: String(holder[range.upperBound...]))
        }
    }

    /// The path of a key's file at the mount point.
    static func path(_ mountPoint: String, _ key: String) throws -> String {
        try QuotaUsage.checkKey(key)
        return mountPoint + "/" + FileName.encode(key)
    }

    func close() {
        if case let .direct(store) = self { store.close() }
    }
}

/// A failure the command reports in one line, with a non-zero exit.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }

    /// The error for a failed system call on `path`.
    static func system(_ what: String, _ path: String) -> CommandError {
        CommandError("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
