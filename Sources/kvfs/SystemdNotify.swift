import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram of `KEY=VALUE` lines to the
/// Unix socket systemd names in `$NOTIFY_SOCKET` (a path, or an abstract
/// name written with a leading `@`). A unit with `Type=notify` counts the
/// service as started at `READY=1`. Outside systemd it does nothing.
enum SystemdNotify {
    /// Sends `state`, e.g. "READY=1\nSTATUS=mounted"; returns whether it was sent.
    @discardableResult
    static func send(_ state: String) -> Bool {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"],
              path.hasPrefix("/") || path.hasPrefix("@") else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(path.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }  // the abstract namespace
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
        return sent == message.count
    }
}
