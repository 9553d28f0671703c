import Foundation

/// What this machine knows of one bucket between rounds, in
/// `$XDG_STATE_HOME/kvfs/buckets/<hash of the bucket's URL>/ledger.json`
/// (never in the sync root): its machine id there, its head's last ETag, the
/// chunks it uploaded and those it applied of each peer's files.
struct SyncLedger: Codable, Equatable {
    /// What this machine uploaded of one of its files.
    struct Upload: Codable, Equatable {
        var chunks: [Head.Chunk]
        /// The file's size and modification time when last read: a file that did not change is not read again.
        var size: Int
        var modified: Int
        /// For a plain `progress.json`: the SHA-256 of what it says besides its heartbeat (`at`), as uploaded.
        var withoutHeartbeat: String?
    }

    /// The head write under way: its sequence and the SHA-256 of its bytes, so that a write whose answer was
    /// lost is recognised as this machine's own.
    struct PendingHead: Codable, Equatable {
        var sequence: Int
        var hash: String
    }

    /// What this machine read of a peer.
    struct Peer: Codable, Equatable {
        /// The sequence of the peer's head last applied.
        var sequence = 0
        /// The ETag of the peer's head last applied.
        var etag: String?
        /// Each of its files, by path: the objects applied, in order.
        var files: [String: [String]] = [:]
    }

    /// This machine's id in the bucket: 16 random bytes in hex, made on the first round.
    var machine: String
    /// The sequence of this machine's last head written.
    var sequence = 0
    /// The ETag of this machine's head as it last wrote it (nil before the first write).
    var headETag: String?
    var pending: PendingHead?
    /// The files of the head as this machine last wrote it.
    var headFiles: [String: [Head.Chunk]] = [:]
    /// Whether another machine was found writing this one's head: then no round runs until the ledger goes.
    var isClone = false
    /// This machine's files as uploaded, by path in the sync root.
    var uploads: [String: Upload] = [:]
    /// This machine's objects its head no longer names, and since when: deleted once past the margin.
    var garbage: [String: Date] = [:]

    /// The objects the head names, as written or about to be: never garbage.
    var namedObjects: Set<String> {
        Set(uploads.values.flatMap(\.chunks).map(\.object) + headFiles.values.joined().map(\.object))
    }
    /// Each peer, by machine id.
    var peers: [String: Peer] = [:]
    /// When the heads were last listed (to find new peers).
    var listed: Date?
    var lastUpload: Date?
    var lastDownload: Date?
    var lastError: String?
    /// The clock hour (hours since 1970) that `requests` counts, and the requests this machine made in it.
    var requestHour = 0
    var requests = 0

    /// Counts `count` more requests at `date`, starting over in a new clock hour.
    mutating func add(requests count: Int, at date: Date) {
        let hour = Int(date.timeIntervalSince1970 / 3600)
        if hour != requestHour { (requestHour, requests) = (hour, 0) }
        requests += count
    }

    /// The requests made in the clock hour of `date`.
    func requests(inHourOf date: Date) -> Int { Int(date.timeIntervalSince1970 / 3600) == requestHour ? requests : 0 }

    /// The ledger of the bucket at `location` for this machine's state (`$XDG_STATE_HOME/kvfs/buckets/…`).
    static func url(for location: BucketLocation, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory() + "/.local/state"
        let name = String(SignatureV4.sha256Hex(Array(location.description.utf8)).prefix(16))
        return URL(fileURLWithPath: "\(state)/kvfs/buckets/\(name)/ledger.json")
    }

    /// The ledger at `url`, or a new one (with a new machine id) when there is none.
    static func load(_ url: URL) throws(BucketError) -> SyncLedger {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return SyncLedger(machine: SignatureV4.hex((0..<16).map { _ in UInt8.random(in: 0...255) }))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { return try decoder.decode(SyncLedger.self, from: data) } catch {
            throw .local("\(url.path) is not a bucket ledger: remove it to start again (this machine then uploads as a new one)")
        }
    }

    /// Writes the ledger at `url`, atomically.
    func save(_ url: URL) throws(BucketError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(self) else { throw .local("cannot encode the bucket ledger") }
        try LocalFiles.replace(url, with: Array(data))
    }
}
