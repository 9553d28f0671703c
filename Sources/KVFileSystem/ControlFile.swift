import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// The read-only files of `.kvfs/`, made from the store.
enum ControlFile {
    case status
    case changeLog

    init?(_ inode: InodeNumber) {
        switch inode {
        case NodeTable.status: self = .status
        case NodeTable.changeLog: self = .changeLog
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .status: "status"
        case .changeLog: "changes.log"
        }
    }

    var inode: InodeNumber {
        switch self {
        case .status: NodeTable.status
        case .changeLog: NodeTable.changeLog
        }
    }
}

/// How a control file answers opens, sizes and reads.
///
/// Its content is made, not stored, so its size must be chosen: FUSE sends
/// the GETATTR of `fstat(2)` without the file handle (the kernel's
/// `fuse_getattr` passes no file; `lseek(SEEK_END)` does), so a size asked
/// without a handle must hold for every open handle: never smaller than the
/// content a handle serves (a reader that trusts the size, as Foundation's
/// `Data(contentsOf:)` does, would get it cut off), and never shrinking
/// under a reader that follows the file (`tail -f` would print it again).
protocol ServedFile: Sendable {
    /// Starts serving `handle`, opened by the thread `opener`.
    func open(_ handle: UInt64, opener: pid_t)
    /// Stops serving `handle`.
    func release(_ handle: UInt64)
    /// The size `handle` reads, or, without a handle, the size `stat` and
    /// `fstat` show the thread `asker`.
    func size(for handle: UInt64?, asker: pid_t) -> Int
    /// The file's modification time.
    var modified: Timestamp { get }
    /// Hands out up to `size` bytes of what `handle` reads, from `offset`.
    func read(_ handle: UInt64, offset: Int, size: Int, reply: (UnsafeRawBufferPointer) -> Void)
}

/// A mount's control files.
struct ControlFiles: Sendable {
    let status: StatusFile
    let changeLog: ChangeLogFile

    init(store: DeviceStore) {
        status = StatusFile { Array(store.status().json().utf8) }
        changeLog = ChangeLogFile(path: store.changeLogPath, capacity: store.changeLogCapacity)
    }

    subscript(file: ControlFile) -> any ServedFile {
        switch file {
        case .status: status
        case .changeLog: changeLog
        }
    }
}
