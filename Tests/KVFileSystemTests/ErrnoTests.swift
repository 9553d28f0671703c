import FUSEKit
import KVFileSystem
import KVStore
import Testing

/// What a file operation answers for each of the store's refusals (docs/files.md §
/// Limits and errors): the store knows nothing of errno, the filesystem maps.
@Suite("A store's refusals as errno")
struct ErrnoTests {
    @Test("every store error has its errno", arguments: [
        (KVStoreError.emptyKey, Errno.ENOENT), (.noSuchKey("k"), .ENOENT),
        (.keyTooLong(key: "k", utf16Units: 200), .ENAMETOOLONG),
        (.tooManyKeys(key: "k"), .EDQUOT), (.valueTooLarge(key: "k", bytes: 2 << 20), .EDQUOT), (.storeFull(key: "k", over: 5), .EDQUOT),
        (.invalidValue(key: "k", reason: "not an integer"), .EINVAL), (.invalidDeviceName(reason: "empty"), .EINVAL),
        (.keyExists("k"), .EEXIST), (.stateDirectoryBusy(path: "/s", holder: "pid 1"), .EBUSY),
        (.journalBusy(path: "/s/journal.lock", holder: "pid 1", seconds: 5), .EBUSY),
        (.io(path: "/s", reason: "cannot write"), .EIO), (.clockOutOfRange(.latest), .EIO),
        (.diskFull(path: "/s"), .ENOSPC), (.retireRefused(device: "d", reason: "it is this one"), .EPERM),
        (.noSuchVersion(key: "k", reason: "no such version"), .ENOENT), (.invalidRetention(reason: "negative"), .EINVAL),
        (.notMember(path: "/s"), .EACCES), (.copiedStateDirectory(state: "/t", original: "a (1)", path: "/s"), .EACCES),
    ])
    func errno(of error: KVStoreError, is expected: Errno) {
        #expect(Errno(error) == expected)
    }
}
