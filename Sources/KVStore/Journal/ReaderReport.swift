/// What a ``DeviceFolderReader`` tells of its folder: the problems that kept
/// its last read from reading everything the folder holds, for the status,
/// and the log's warnings, each said once however often a read meets it.
struct ReaderReport {
    /// The folder's device, which each problem names.
    let device: DeviceID
    /// The problems of the last read.
    private(set) var problems: [SyncWarning] = []
    /// The warnings said so far.
    private var warned: Set<String> = []
    /// Where warnings go.
    let warn: (String) -> Void

    init(device: DeviceID, warn: @escaping (String) -> Void) {
        self.device = device
        self.warn = warn
    }

    /// Forgets the problems of the read before: a new read starts.
    mutating func startRead() {
        problems = []
    }

    /// Notes a problem of this read, for the status.
    mutating func note(_ kind: SyncWarning.Kind, file: String, message: String, fix: String) {
        note(SyncWarning(kind: kind, device: device.hex, file: file, message: message, fix: fix))
    }

    /// Notes a problem of this read (one a read before found, in a file that has not changed since).
    mutating func note(_ problem: SyncWarning) {
        if !problems.contains(problem) { problems.append(problem) }
    }

    /// Notes a problem for the status, and says it once in the log.
    mutating func noteAndWarn(_ kind: SyncWarning.Kind, file: String, message: String, fix: String) {
        warnOnce(message)
        note(kind, file: file, message: message, fix: fix)
    }

    /// Says `message` in the log, unless it was said before.
    mutating func warnOnce(_ message: String) {
        if warned.insert(message).inserted { warn(message) }
    }
}
