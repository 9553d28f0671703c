import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// How a `flock(2)` lock is held.
public enum FileLockMode: Sendable {
    /// With other shared holders (`LOCK_SH`).
    case shared
    /// Alone (`LOCK_EX`).
    case exclusive

    var operation: Int32 { self == .shared ? LOCK_SH : LOCK_EX }
}

extension FileDescriptor {
    /// Takes a `flock(2)` lock on the file, waiting as long as another open
    /// file description holds one that excludes `mode`; held already through
    /// this descriptor, it changes to `mode` (not atomically: flock lets go first).
    ///
    /// The lock belongs to the open file description, not to the process or
    /// thread, and the kernel lets go of it when the last descriptor of it
    /// closes, however its process ends.
    public func lock(_ mode: FileLockMode) throws(SystemCallError) {
        try systemCall("flock") { flock(rawValue, mode.operation) }
    }

    /// Takes the lock if nobody holds one that excludes `mode` (`LOCK_NB`),
    /// without waiting.
    ///
    /// - Returns: false when another holder has it (`EWOULDBLOCK`).
    /// - Throws: any other error (`EBADF`, `ENOLCK`).
    public func tryLock(_ mode: FileLockMode) throws(SystemCallError) -> Bool {
        let result = systemCallResult("flock") { flock(rawValue, mode.operation | LOCK_NB) }
        switch result {
        case .success: return true
        case .failure(let error) where error.errno == .wouldBlock: return false
        case .failure(let error): throw error
        }
    }

    /// Lets go of the lock held through this descriptor (none held: nothing happens).
    public func unlock() {
        systemCallResult("flock") { flock(rawValue, LOCK_UN) }
    }

    /// The processes that hold a `flock` on this descriptor's file (itself
    /// included, if it holds one), as `/proc/locks` names them: for a message
    /// that says who keeps a lock. The kernel numbers them in the pid namespace
    /// of the `/proc` read; a holder it cannot number there is left out. A
    /// lock's pid is the process that took it, which may since have passed
    /// its descriptor on (to a child) or ended while a child still holds it.
    public func flockHolders() throws(SystemCallError) -> [pid_t] {
        var info = Glibc.stat()
        try systemCall("fstat") { fstat(rawValue, &info) }
        // st_dev's major and minor (glibc's gnu_dev_major/minor, macros Swift does not import), in hex as the table has them.
        let device = UInt64(info.st_dev)
        let major = UInt32(truncatingIfNeeded: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
        let minor = UInt32(truncatingIfNeeded: (device & 0xff) | ((device >> 12) & ~0xff))
        let file = "\(hex(major)):\(hex(minor)):\(info.st_ino)"
        let table = String(decoding: try FileDescriptor.contents(of: "/proc/locks"), as: UTF8.self)
        // "1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF"; waiters' lines have "->" after the number.
        return table.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == file, let pid = pid_t(fields[4]), pid > 0 else { return nil }
            return pid
        }
    }
}

/// `value` in hex, at least two digits, as the kernel's `%02x` prints it.
private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return digits.count < 2 ? "0" + digits : digits
}
