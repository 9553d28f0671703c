import Dispatch
import Foundation
import Synchronization

/// Asks Syncthing to scan this device's folder of the sync directory right
/// after each commit, so the write leaves the machine in milliseconds rather
/// than after Syncthing's watcher delay (a second or more). The first scan
/// (and the first after Syncthing was unreachable) covers the whole sync
/// directory: a new store's `store-id`, or what changed meanwhile.
///
/// ``requestScan()`` never blocks: requests are coalesced, one HTTP call in
/// flight at a time on a private queue, and at most one more queued behind it
/// for every commit made meanwhile. When Syncthing does not answer, that is
/// logged once, calls are retried at most once per ``retryDelay`` (writes keep
/// going, and Syncthing's own watcher and rescans still carry them), and
/// logged again when it answers.
public final class SyncthingScanner: Sendable {
    /// The least time between two calls while Syncthing does not answer.
    public static let retryDelay: TimeInterval = 1
    /// How long one call may take (a scan call returns when the scan is done).
    static let callTimeout: TimeInterval = 10

    private struct State {
        var running = false
        var pending = false
        var stopped = false
        var folder: SyncthingFolder?
        var failing = false
        var scanWholeDirectory = true
    }

    private let endpoint: SyncthingEndpoint
    private let syncDirectory: String
    private let deviceFolder: String
    private let log: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "kvfs.syncthing")

    /// A scanner for the device folder `devices/<device>` of `syncDirectory`,
    /// telling `log` when Syncthing stops or starts answering.
    public init(endpoint: SyncthingEndpoint, syncDirectory: URL, device: String, log: @escaping @Sendable (String) -> Void) {
        self.endpoint = endpoint
        self.syncDirectory = syncDirectory.path
        deviceFolder = "devices/" + device
        self.log = log
    }

    /// Asks for a scan soon; returns at once.
    public func requestScan() {
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if state.running {
                state.pending = true
                return false
            }
            state.running = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Makes no more calls (one in flight finishes on its own).
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Stops, after one last scan of this device's folder made now and
    /// waited for (at most `timeout` seconds): what closing the store wrote
    /// (its final reading progress, which tells the others it stopped) leaves
    /// before the daemon exits. Skipped while Syncthing does not answer.
    public func finish(timeout: TimeInterval) {
        let folder = state.withLock { state -> SyncthingFolder? in
            defer { state.stopped = true }
            return state.failing || state.stopped ? nil : state.folder
        }
        guard let folder else { return }
        _ = try? PlainHTTP.send("POST", host: endpoint.host, port: endpoint.port, path: Self.scanPath(folder, sub: folder.sub),
                                headers: ["X-API-Key": endpoint.apiKey], timeout: timeout)
    }

    /// Scans until no request is pending.
    private func drain() {
        while true {
            if !scanOnce() { Thread.sleep(forTimeInterval: Self.retryDelay) }
            let again = state.withLock { state -> Bool in
                if state.pending && !state.stopped {
                    state.pending = false
                    return true
                }
                state.running = false
                return false
            }
            if !again { return }
        }
    }

    /// One scan call (after finding the folder, the first time); false when it failed.
    private func scanOnce() -> Bool {
        do throws(SyncthingError) {
            let folder: SyncthingFolder
            if let known = state.withLock({ $0.folder }) { folder = known } else { folder = try findFolder() }
            let whole = state.withLock { $0.scanWholeDirectory }
            let sub = whole ? folder.syncDirectory : folder.sub
            let response = try call("POST", Self.scanPath(folder, sub: sub))
            guard response.status == 200 else {
                state.withLock { $0.folder = nil }  // the folders may have changed: look again next time
                throw SyncthingError("scan of \(folder.id)/\(sub) refused: HTTP \(response.status) \(Self.text(response.body))")
            }
            if whole { state.withLock { $0.scanWholeDirectory = false } }
            let recovered = state.withLock { state in
                defer { state.failing = false }
                return state.failing
            }
            if recovered { log("Syncthing at \(endpoint) answers again; scanning after each commit") }
            return true
        } catch {
            let first = state.withLock { state in
                defer {
                    state.failing = true
                    state.scanWholeDirectory = true
                }
                return !state.failing
            }
            if first { log("\(error); writes still reach Syncthing through its own watcher, and kvfs keeps trying") }
            return false
        }
    }

    /// Finds (and remembers) the Syncthing folder holding the sync directory.
    private func findFolder() throws(SyncthingError) -> SyncthingFolder {
        let response = try call("GET", "/rest/config/folders")
        guard response.status == 200 else {
            throw SyncthingError("Syncthing at \(endpoint) refused GET /rest/config/folders: HTTP \(response.status) \(Self.text(response.body)) (is the API key right?)")
        }
        guard let folder = SyncthingFolder.find(in: response.body, syncDirectory: syncDirectory, deviceFolder: deviceFolder) else {
            throw SyncthingError("no folder of Syncthing at \(endpoint) holds \(syncDirectory)")
        }
        state.withLock { $0.folder = folder }
        log("Syncthing at \(endpoint): scanning \(folder.sub) of folder \"\(folder.id)\" after each commit")
        return folder
    }

    private func call(_ method: String, _ path: String) throws(SyncthingError) -> HTTPResponse {
        do throws(SyncthingError) {
            return try PlainHTTP.send(method, host: endpoint.host, port: endpoint.port, path: path,
                                      headers: ["X-API-Key": endpoint.apiKey], timeout: Self.callTimeout)
        } catch {
            throw SyncthingError("Syncthing at \(endpoint) does not answer (\(error))")
        }
    }

    /// `/rest/db/scan` of `sub` in `folder` (all of it when `sub` is empty).
    private static func scanPath(_ folder: SyncthingFolder, sub: String) -> String {
        "/rest/db/scan?folder=\(encode(folder.id))" + (sub.isEmpty ? "" : "&sub=\(encode(sub))")
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? text
    }

    private static func text(_ body: [UInt8]) -> String {
        String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
