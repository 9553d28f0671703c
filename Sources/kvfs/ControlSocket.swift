import Foundation
import KVFileSystem
import KVStore
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
        // No socket, or a dead daemon's.
        guard let connection = try? UnixSocket.connect(to: stateDirectory + "/" + name) else { return nil }
        defer { connection.close() }
        return try exchange(request, over: connection, path: stateDirectory + "/" + name)
    }

    /// Sends `request` over an open `connection` and returns the reply.
    static func exchange(_ request: StoreRequest, over connection: UnixSocket, path: String) throws -> StoreReply {
        // A stopped or hung daemon still accepts connections (the kernel queues them): never wait for it forever.
        try? connection.setTimeout(.seconds(answerTimeout))
        guard writeMessage(try JSONEncoder().encode(request), to: connection), let answer = readMessage(from: connection) else {
            throw CommandError("the kvfs daemon at \(path) did not answer within \(answerTimeout) s; is it stopped or hung? see daemon.log beside it",
                               exitStatus: ExitStatus.ioError)
        }
        do {
            return try JSONDecoder().decode(StoreReply.self, from: answer)
        } catch {
            throw CommandError("the kvfs daemon at \(path) answered what this kvfs does not understand; restart it (kvfs unmount, then kvfs mount)")
        }
    }

    /// The daemon whose `.kvfs/status` says `identity`, held by a pidfd, for
    /// `kvfs unmount` to wait for and signal: the process listening on the
    /// control socket of the state directory the status names (its pid from
    /// `SO_PEERCRED`, which the kernel gives in this process's pid namespace,
    /// wherever the daemon runs), once it answered a status request with
    /// the same identity, so it is this mount's daemon. Nil when it cannot
    /// be reached or seen from here, or answers as another.
    static func daemon(saying identity: DaemonIdentity) -> ProcessHandle? {
        let path = identity.stateDirectory + "/" + name
        guard let connection = try? UnixSocket.connect(to: path) else { return nil }
        defer { connection.close() }
        guard let peer = try? connection.peerCredentials(), peer.pid > 0,
              let process = try? ProcessHandle(pid: peer.pid),
              // Opened before the answer: a pid cannot pass to another process while the daemon still answers.
              let reply = try? exchange(.status, over: connection, path: path), reply.failure == nil,
              let status = try? StoreStatus(json: reply.output), DaemonIdentity(status) == identity else { return nil }
        return process
    }

    static func writeMessage(_ message: Data, to connection: UnixSocket) -> Bool {
        var length = UInt32(message.count).bigEndian
        let frame = Data(bytes: &length, count: 4) + message
        return (try? connection.descriptor.write(all: frame)) != nil
    }

    static func readMessage(from connection: UnixSocket) -> Data? {
        guard let header = try? connection.descriptor.read(exactly: 4) else { return nil }
        let length = Int(header.reduce(0) { $0 << 8 | UInt32($1) })
        guard length <= maximumMessage, let body = try? connection.descriptor.read(exactly: length) else { return nil }
        return Data(body)
    }
}

/// The daemon's side of ``ControlSocket``: answers requests on a thread of
/// its own, running each on the mounted store as the command would without
/// a mount, and telling the mount which key changed.
final class ControlServer: MountService, @unchecked Sendable {
    // @unchecked: `listener` and `path` are set in init and never change.
    private let listener: UnixSocket
    private let path: String

    /// Listens in the mounted store's state directory; nil (with a warning
    /// in the log) if the socket cannot be made: the mount works without it.
    init?(serving mounted: MountedStore) {
        path = mounted.store.stateDirectory.path + "/" + ControlSocket.name
        unlink(path)  // a killed daemon's: this process holds the state directory's lock
        do {
            listener = try UnixSocket.listen(at: path)
        } catch {
            DaemonLog.logger.warning("no control socket at \(path) (\(error.errno)): kvfs get/set/rm/ls/status cannot reach this mount")
            return nil
        }
        Thread.detachNewThread { [self] in serve(mounted) }
    }

    func stop() {
        listener.shutdown()  // wakes accept()
        unlink(path)
    }

    private func serve(_ mounted: MountedStore) {
        while true {
            let connection: UnixSocket
            do {
                connection = try listener.accept()
            } catch where error.errno == .connectionAbort {
                continue  // the client gave up before it was accepted
            } catch {
                listener.close()  // shut down by stop()
                return
            }
            answer(connection, mounted)
            connection.close()
        }
    }

    private func answer(_ connection: UnixSocket, _ mounted: MountedStore) {
        guard let credentials = try? connection.peerCredentials(), credentials.uid == geteuid() || credentials.uid == 0 else { return }
        try? connection.setTimeout(.seconds(5))  // a client that stalls must not hold the others up
        guard let message = ControlSocket.readMessage(from: connection),
              let request = try? JSONDecoder().decode(StoreRequest.self, from: message) else { return }
        let reply = request.perform(on: mounted.store)
        if reply.failure == nil, !request.changedKeys.isEmpty { mounted.keysChanged(request.changedKeys) }
        if let data = try? JSONEncoder().encode(reply) { _ = ControlSocket.writeMessage(data, to: connection) }
    }
}
