import Foundation
import KVFileSystem
import LinuxSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control socket, `control.sock` in its state directory:
/// owner-only (0600, and the peer's uid checked), one request per
/// connection. Each message is a 4-byte big-endian length and that many
/// bytes of JSON (a ``StoreRequest``, then a ``StoreReply``).
enum ControlSocket {
    static let name = "control.sock"
    /// Larger than any request: a value is at most 1 MiB (base64 in JSON).
    static let maximumMessage = 8 << 20

    /// How long a daemon may take to answer, in seconds: far more than any request needs.
    static let answerTimeout = 30

    /// Sends `request` to the daemon holding `stateDirectory` and returns
    /// its reply, or nil when no daemon listens there.
    static func send(_ request: StoreRequest, stateDirectory: String) throws -> StoreReply? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let connected = withAddress(of: stateDirectory) { address, length in connect(fd, address, length) == 0 }
        guard connected == true else { return nil }  // no socket, or a dead daemon's
        let path = stateDirectory + "/" + name
        // A stopped or hung daemon still accepts connections (the kernel queues them): never wait for it forever.
        var timeout = timeval(tv_sec: Int(answerTimeout), tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] { setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
        guard writeMessage(try JSONEncoder().encode(request), to: fd), let answer = readMessage(from: fd) else {
            throw CommandError("the kvfs daemon at \(path) did not answer within \(answerTimeout) s; is it stopped or hung? see daemon.log beside it",
                               exitStatus: ExitStatus.ioError)
        }
        do {
            return try JSONDecoder().decode(StoreReply.self, from: answer)
        } catch {
            throw CommandError("the kvfs daemon at \(path) answered what this kvfs does not understand; restart it (kvfs unmount, then kvfs mount)")
        }
    }

    /// Calls `body` with the socket's address in `stateDirectory`. A path
    /// too long for `sun_path` (108 bytes) is reached through
    /// `/proc/self/fd/N/`, N an open descriptor of the folder.
    static func withAddress<T>(of stateDirectory: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var folder: Int32 = -1
        defer { if folder >= 0 { close(folder) } }
        var path = stateDirectory + "/" + name
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        if path.utf8.count >= capacity {
            folder = open(stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard folder >= 0 else { return nil }
            path = "/proc/self/fd/\(folder)/" + name
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8)
            buffer[path.utf8.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    static func writeMessage(_ message: Data, to fd: Int32) -> Bool {
        var length = UInt32(message.count).bigEndian
        let frame = Data(bytes: &length, count: 4) + message
        return (try? FileDescriptor(rawValue: fd).write(all: frame)) != nil
    }

    static func readMessage(from fd: Int32) -> Data? {
        guard let header = readExactly(4, from: fd) else { return nil }
        let length = Int(header.reduce(0) { $0 << 8 | UInt32($1) })
        guard length <= maximumMessage else { return nil }
        return readExactly(length, from: fd)
    }

    private static func readExactly(_ count: Int, from fd: Int32) -> Data? {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = try? buffer[done...].withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: $0) }
            guard let got, got > 0 else { return nil }
            done += got
        }
        return Data(buffer)
    }
}

/// The daemon's side of ``ControlSocket``: answers requests on a thread of
/// its own, running each on the mounted store as the command would without
/// a mount, and telling the mount which key changed.
final class ControlServer: MountService, @unchecked Sendable {
    // @unchecked: `listener` and `path` are set in init and never change.
    private let listener: Int32
    private let path: String

    /// Listens in the mounted store's state directory; nil (with a warning
    /// in the log) if the socket cannot be made: the mount works without it.
    init?(serving mounted: MountedStore) {
        let state = mounted.store.stateDirectory.path
        path = state + "/" + ControlSocket.name
        unlink(path)  // a killed daemon's: this process holds the state directory's lock
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let previousMask = umask(0o177)  // the socket is born 0600
        let bound = listener >= 0 && ControlSocket.withAddress(of: state) { bind(listener, $0, $1) == 0 } == true
        umask(previousMask)
        guard bound, listen(listener, 16) == 0 else {
            DaemonLog.logger.warning("no control socket at \(path) (\(String(cString: strerror(errno)))): kvfs get/set/rm/ls/status cannot reach this mount")
            if listener >= 0 { close(listener) }
            return nil
        }
        Thread.detachNewThread { [self] in serve(mounted) }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))  // wakes accept()
        unlink(path)
    }

    private func serve(_ mounted: MountedStore) {
        while true {
            let connection: Int32
            do {
                connection = try systemCall("accept", path) { accept(listener, nil, nil) }
            } catch where error.errno == .connectionAbort {
                continue  // the client gave up before it was accepted
            } catch {
                close(listener)  // shut down by stop()
                return
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            answer(connection, mounted)
            close(connection)
        }
    }

    private func answer(_ connection: Int32, _ mounted: MountedStore) {
        var credentials = PeerCredentials()
        var size = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0,
              credentials.uid == geteuid() || credentials.uid == 0 else { return }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)  // a client that stalls must not hold the others up
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let message = ControlSocket.readMessage(from: connection),
              let request = try? JSONDecoder().decode(StoreRequest.self, from: message) else { return }
        let reply = request.perform(on: mounted.store)
        if reply.failure == nil, !request.changedKeys.isEmpty { mounted.keysChanged(request.changedKeys) }
        if let data = try? JSONEncoder().encode(reply) { _ = ControlSocket.writeMessage(data, to: connection) }
    }
}

/// `struct ucred`, which Glibc's module leaves out (it needs _GNU_SOURCE): what `SO_PEERCRED` fills in.
private struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
