import Foundation
import KVBucket
import KVFileSystem
import KVStore

/// The exit statuses of `kvfs` (docs/command-line.md § Errors and exit status, the man page's EXIT STATUS).
enum ExitStatus {
    /// The command could not do what was asked: no such key, a refused value, a failed mount.
    static let failure: Int32 = 1
    /// Bad arguments or option values (sysexits' EX_USAGE, as swift-argument-parser uses).
    static let usage: Int32 = 64
    /// A file of the store could not be read or written (EX_IOERR).
    static let ioError: Int32 = 74
    /// Another process holds the state directory; try again once it is done (EX_TEMPFAIL).
    static let busy: Int32 = 75
    /// `kvfs wait` timed out: devices have not read the writes yet; try again later (EX_TEMPFAIL too).
    static let notDelivered: Int32 = 75

    /// The paragraph the man page and `kvfs --help` show.
    static let documentation = """
        Exit status: 0 on success; 1 when the command could not do what was asked (no such key, a value \
        refused, a failed mount); 64 for a usage error (an unknown option, a bad option value); 74 when a \
        file of the store could not be read or written; 75 when another process holds the state directory (or, for longer than a write waits, its journal), \
        or when kvfs wait timed out.
        """

    /// The status for a store error.
    static func of(_ error: KVStoreError) -> Int32 {
        switch error {
        case .stateDirectoryBusy, .journalBusy: busy
        case .io, .diskFull: ioError
        default: failure
        }
    }
}

/// A failure the command reports in one line, with its exit status. Codable:
/// a daemon sends it back to the command that asked.
struct CommandError: Error, Codable, CustomStringConvertible {
    var description: String
    var exitStatus: Int32

    init(_ description: String, exitStatus: Int32 = ExitStatus.failure) {
        self.description = description
        self.exitStatus = exitStatus
    }

    init(_ error: KVStoreError) {
        self.init(error.description, exitStatus: ExitStatus.of(error))
    }

    init(_ error: MountError) {
        self.init(error.description, exitStatus: error.isUsageError ? ExitStatus.usage : error.cause.map(ExitStatus.of) ?? ExitStatus.failure)
    }

    /// A bad option value.
    static func usage(_ description: String) -> CommandError {
        CommandError(description, exitStatus: ExitStatus.usage)
    }

    /// The error for a failed system call on `path`.
    static func system(_ what: String, _ path: String) -> CommandError {
        CommandError("\(what) \(path): \(String(cString: strerror(errno)))", exitStatus: ExitStatus.ioError)
    }

    /// Any error as one line with its status.
    static func from(_ error: any Error) -> CommandError? {
        switch error {
        case let error as CommandError: error
        case let error as KVStoreError: CommandError(error)
        case let error as MountError: CommandError(error)
        case let error as MembershipError: CommandError(error.description)
        case let error as BucketError: CommandError(error.description, exitStatus: error.isUsage ? ExitStatus.usage : ExitStatus.failure)
        default: nil
        }
    }
}
