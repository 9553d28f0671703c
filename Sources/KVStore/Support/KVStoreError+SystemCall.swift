import LinuxSystem

extension KVStoreError {
    /// The store's error for `failure` on `path` while doing `what`: a full
    /// disk (ENOSPC, or EDQUOT from the disk's own quota) is
    /// ``KVStoreError/diskFull(path:)``, which the mount reports as ENOSPC, as
    /// every filesystem does; anything else is an I/O error that names the
    /// call, as in "cannot fsync journal (fsync: Input/output error)".
    init(_ failure: SystemCallError, path: String, doing what: String) {
        if failure.errno == .noSpace || failure.errno == .diskQuotaExceeded {
            self = .diskFull(path: path)
        } else {
            self = .io(path: path, reason: "\(what) (\(failure.call): \(failure.errno))")
        }
    }
}
