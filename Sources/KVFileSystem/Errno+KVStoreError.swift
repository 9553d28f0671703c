import FUSEKit
import KVStore

extension Errno {
    /// The errno a file operation reports for a store's refusal, as docs/files.md
    /// promises (§ Limits and errors, § Values and their files): a quota
    /// refusal is EDQUOT, a full disk ENOSPC, a value that does not read as
    /// its key's type EINVAL. The store knows nothing of errno: only the
    /// filesystem speaks it.
    public init(_ error: KVStoreError) {
        self = switch error {
        case .emptyKey, .noSuchKey, .noSuchVersion: .ENOENT
        case .keyTooLong: .ENAMETOOLONG
        case .tooManyKeys, .valueTooLarge, .storeFull: .EDQUOT
        case .invalidValue, .invalidDeviceName, .invalidRetention: .EINVAL
        case .keyExists: .EEXIST
        case .stateDirectoryBusy, .journalBusy: .EBUSY
        case .io, .clockOutOfRange: .EIO
        case .diskFull: .ENOSPC
        case .retireRefused: .EPERM
        case .notMember, .copiedStateDirectory: .EACCES
        }
    }
}
