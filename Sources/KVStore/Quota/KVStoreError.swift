/// Everything the store refuses, with what a user needs to know to fix it.
///
/// The filesystem maps each case to an errno (KVFileSystem's `Errno(_:)`);
/// the library's throwing API hands it over as it is.
public enum KVStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key must have at least one character.
    case emptyKey
    /// The key is longer than ``Limits/maxKeyUTF16Units`` UTF-16 code units.
    case keyTooLong(key: StoreKey, utf16Units: Int)
    /// Creating this key would make more than ``Limits/maxKeys`` keys.
    case tooManyKeys(key: StoreKey)
    /// This one value is larger than ``Limits/maxValueBytes``.
    case valueTooLarge(key: StoreKey, bytes: Int)
    /// All values together would pass ``Limits/maxTotalBytes``; `over` is by how many bytes.
    case storeFull(key: StoreKey, over: Int)
    /// The content does not read back as a value of the key's type, or as a property list.
    case invalidValue(key: StoreKey, reason: String)
    /// The key does not exist.
    case noSuchKey(StoreKey)
    /// The key exists and the operation asked it not to.
    case keyExists(StoreKey)
    /// Another process holds this device's state directory.
    case stateDirectoryBusy(path: String, holder: String)
    /// Another process of this device has held its journal (`journal.lock`,
    /// at `path`) for longer than a write waits (`OwnJournal`): nothing was
    /// written; `holder` names it, as `/proc/locks` does.
    case journalBusy(path: String, holder: String, seconds: Int)
    /// A file of the store could not be read or written.
    case io(path: String, reason: String)
    /// The next write would be stamped past ``HLCTimestamp/latest``, which no reader accepts.
    case clockOutOfRange(HLCTimestamp)
    /// The disk under the store is full (or the user's disk quota on it is
    /// used up): nothing was written; the write may be tried again once there is room.
    case diskFull(path: String)
    /// A device cannot be retired (`kvfs retire`), and why.
    case retireRefused(device: String, reason: String)
    /// A device name breaks ``DeviceName``'s rule; `reason` says how.
    case invalidDeviceName(reason: String)
    /// History holds no such version of the key (`kvfs restore`, `kvfs undelete`); `reason` says what it holds.
    case noSuchVersion(key: StoreKey, reason: String)
    /// A retention setting out of range; `reason` says which.
    case invalidRetention(reason: String)
    /// The store at `path` is sealed (a device folder there holds sealed records) and this device
    /// is not a member: it opens nothing and writes nothing there (docs/sealed.md § Converting a store).
    case notMember(path: String)
    /// The state directory at `state` is a copy of the one of `original` (its name and id), a member of the
    /// sealed store at `path`: a copy is a new device, no member until it pairs, so it opens nothing and
    /// writes nothing there (docs/sealed.md § A copied state directory).
    case copiedStateDirectory(state: String, original: String, path: String)

    /// Whether the error is a quota refusal (and so logged as QuotaViolationChange).
    public var isQuotaViolation: Bool {
        switch self {
        case .tooManyKeys, .valueTooLarge, .storeFull: true
        default: false
        }
    }

    /// One clear line: what failed and what to do.
    public var description: String {
        switch self {
        case .emptyKey:
            "a key must not be empty"
        case let .keyTooLong(key, units):
            "key '\(key.string.prefix(40))…' is \(units) UTF-16 units long; the limit is \(Limits.maxKeyUTF16Units)"
        case let .tooManyKeys(key):
            "cannot create key '\(key)': the store already has \(Limits.maxKeys) keys; remove one first"
        case let .valueTooLarge(key, bytes):
            "value for '\(key)' is \(bytes) bytes; one value may be at most \(Limits.maxValueBytes)"
        case let .storeFull(key, over):
            "value for '\(key)' would put the store \(over) bytes over its \(Limits.maxTotalBytes)-byte quota; remove or shrink other keys"
        case let .invalidValue(key, reason):
            "value for '\(key)' refused: \(reason)"
        case let .noSuchKey(key):
            "no such key '\(key)'"
        case let .keyExists(key):
            "key '\(key)' already exists"
        case let .stateDirectoryBusy(path, holder):
            "state directory \(path) is in use by \(holder); stop that process, or open the store with another state directory"
        case let .journalBusy(path, holder, seconds):
            "cannot append to this device's journal: \(holder) has held \(path) for more than \(seconds) s; nothing was written, try again once it lets go (a process stopped in a debugger: resume or end it)"
        case let .io(path, reason):
            "\(path): \(reason)"
        case let .clockOutOfRange(time):
            "cannot stamp a write at \(time): a record may carry no time past the year 9999; set the system clock to the right date (or this device wrote records stamped that late)"
        case let .diskFull(path):
            "\(path): no space left on the disk under the store; free some space there, then write again"
        case let .retireRefused(device, reason):
            "cannot retire \(device): \(reason)"
        case let .invalidDeviceName(reason):
            reason
        case let .noSuchVersion(key, reason):
            "cannot restore '\(key)': \(reason)"
        case let .invalidRetention(reason):
            "retention refused: \(reason)"
        case let .notMember(path):
            "\(path) is a sealed store and this device is not a member of it: it reads and writes nothing there (join it with kvfs join)"
        case let .copiedStateDirectory(state, original, path):
            "\(state) is a copy of the state directory of device \(original), a member of the sealed store at \(path): a copy is a new device, which reads and writes nothing there until it pairs (kvfs pair on a member, kvfs join here)"
        }
    }
}
