import Foundation
import KVStore

/// One bucket's synchronizer of the sync root: each ``round(downloading:)`` uploads what
/// changed in this machine's device folders and writes its head, then reads
/// each peer's head and brings this machine's copies of its files up to it.
///
/// In the bucket, under the location's prefix:
/// - `heads/<machine>`: each machine's head (a JSON list of its files and their objects), written with `If-Match` on
///   the ETag this machine last wrote (`If-None-Match: *` the first time);
/// - `objects/<machine>/<sha-256>`: the bytes, each written once, create-only.
///
/// Peers are found by listing `heads/` once when the synchronizer starts and
/// then once a day; between listings a round reads only the heads it knows,
/// so an idle hour makes no LIST (docs/buckets.md § What it costs).
public final class BucketSync {
    /// How often a running synchronizer lists the heads again to find machines that joined.
    public static let listingInterval: TimeInterval = 24 * 3600

    /// What one round did.
    public struct Round: Sendable, Equatable {
        /// Whether this machine's head was written (something of its changed).
        public var uploaded: Bool
        /// Whether a peer's files were written here.
        public var downloaded: Bool
    }

    private let client: S3Client
    private let location: BucketLocation
    private let root: SyncRoot
    private let ledgerURL: URL
    private var ledger: SyncLedger
    /// The client's requests already added to the ledger's hour.
    private var counted = 0
    private let collector: Collector
    private var started = false

    /// How long an object this machine's head stopped naming stays in the bucket by default, so that a reader
    /// that read the head before it changed still finds every object that head named.
    public static let collectionMargin: TimeInterval = 24 * 3600

    /// The synchronizer of the sync root `root` with the bucket `client` reaches at `location`, keeping what it
    /// knows in `ledgerURL` (by default under `$XDG_STATE_HOME/kvfs/buckets/`); this machine's device of each store
    /// is the one whose id is in `stateDirectory(store folder)` (by default the store's default state directory).
    /// Objects its head no longer names are deleted `collectionMargin` seconds after.
    public init(client: S3Client, location: BucketLocation, root: StoreRoot = .default, ledgerURL: URL? = nil,
                stateDirectory: @escaping @Sendable (URL) -> URL = { DeviceStore.defaultStateDirectory(for: $0) },
                collectionMargin: TimeInterval = BucketSync.collectionMargin) throws(BucketError) {
        self.client = client
        self.location = location
        collector = Collector(client: client, location: location, margin: collectionMargin)
        self.root = SyncRoot(root: root, stateDirectory: stateDirectory)
        self.ledgerURL = ledgerURL ?? SyncLedger.url(for: location)
        ledger = try SyncLedger.load(self.ledgerURL)
    }

    /// This machine's id in the bucket.
    public var machine: String { ledger.machine }

    /// The key of an object of `machine` named `object`, under the prefix.
    static func objectKey(machine: String, object: String) -> String { "objects/\(machine)/\(object)" }

    private static func headKey(_ machine: String) -> String { "heads/\(machine)" }

    /// One round: upload, then download (unless `downloading` is false: a round for a write on this machine).
    /// A failure is kept as the ledger's last error and thrown.
    @discardableResult
    public func round(downloading: Bool = true) throws(BucketError) -> Round {
        do throws(BucketError) {
            guard !ledger.isClone else { throw BucketError.clone(machine: ledger.machine) }
            let uploaded = try upload()
            let downloaded = downloading ? try download() : false
            ledger.lastError = nil
            countRequests()
            try ledger.save(ledgerURL)
            return Round(uploaded: uploaded, downloaded: downloaded)
        } catch {
            ledger.lastError = error.description
            countRequests()
            try? ledger.save(ledgerURL)
            throw error
        }
    }

    /// Adds the requests made since the last count to the ledger's hour.
    private func countRequests() {
        let sum = client.counter.sum
        ledger.add(requests: sum - counted, at: Date())
        counted = sum
    }

    /// Uploads this machine's changes and writes its head when it no longer says what the files are (a head
    /// write that failed is tried again at the next round); collects what no head names past the margin. True
    /// when the head was written.
    private func upload() throws(BucketError) -> Bool {
        let uploader = Uploader(client: client, location: location, root: root)
        try uploader.upload(&ledger)
        let files = ledger.uploads.mapValues(\.chunks)
        guard files != ledger.headFiles || ledger.headETag == nil && !files.isEmpty else {
            _ = try collector.collect(&ledger, at: Date())
            return false
        }
        let head = Head(machine: ledger.machine, sequence: ledger.sequence + 1, files: files)
        let bytes = Self.encode(head)
        ledger.pending = SyncLedger.PendingHead(sequence: head.sequence, hash: SignatureV4.sha256Hex(bytes))
        try ledger.save(ledgerURL)
        let key = location.key(Self.headKey(ledger.machine))
        var etag: String?
        do {
            etag = try client.put(key, bytes, condition: ledger.headETag.map { .matching($0) } ?? .absent)
        } catch .preconditionFailed {
            etag = try ownLostWrite(key)
        } catch {
            throw .request("writing this machine's head", error)
        }
        ledger.headETag = etag
        ledger.sequence = head.sequence
        ledger.pending = nil
        ledger.lastUpload = Date()
        Collector.note(before: ledger.headFiles, after: files, in: &ledger, at: Date())
        ledger.headFiles = files
        return true
    }

    /// After a 412 on this machine's head: its ETag if the head there is the very write this machine attempted
    /// (its answer was lost); otherwise another machine writes as this one, a clone, and nothing is overwritten.
    private func ownLostWrite(_ key: String) throws(BucketError) -> String? {
        let there: S3Client.Object
        do { there = try client.get(key) } catch { throw .request("reading this machine's head after a 412", error) }
        guard let pending = ledger.pending, SignatureV4.sha256Hex(there.body) == pending.hash else {
            ledger.isClone = true
            throw .clone(machine: ledger.machine)
        }
        return there.etag
    }

    /// Reads each peer's head and applies what changed; true when a file was written here.
    private func download() throws(BucketError) -> Bool {
        if !started || ledger.listed.map({ Date().timeIntervalSince($0) > Self.listingInterval }) ?? true {
            try listPeers()
            try collector.findStrays(&ledger, at: Date())
            started = true
        }
        let downloader = Downloader(client: client, location: location, root: root)
        var changed = false
        for machine in ledger.peers.keys.sorted() {
            let object: S3Client.Object
            do { object = try client.get(location.key(Self.headKey(machine))) } catch .notFound {
                continue  // its owner removed it; what arrived stays
            } catch {
                throw .request("reading the head of machine \(machine)", error)
            }
            var peer = ledger.peers[machine]!
            guard object.etag == nil || object.etag != peer.etag else { continue }
            guard let head = try? JSONDecoder().decode(Head.self, from: Data(object.body)), head.machine == machine, head.format == 1 else {
                throw .request("reading the head of machine \(machine)", .malformed("it is not a head of format 1"))
            }
            guard head.sequence >= peer.sequence else {
                throw .request("reading the head of machine \(machine)",
                               .malformed("it went back from write \(peer.sequence) to \(head.sequence): the bucket rolled it back"))
            }
            if try downloader.apply(head, of: machine, to: &peer) { changed = true }
            peer.sequence = head.sequence
            peer.etag = object.etag
            ledger.peers[machine] = peer
            try ledger.save(ledgerURL)
        }
        if changed { ledger.lastDownload = Date() }
        return changed
    }

    /// Lists the heads to learn the machines that write to the bucket.
    private func listPeers() throws(BucketError) {
        let prefix = location.key("heads/")
        let listed: [S3Client.Listed]
        do { listed = try client.listAll(prefix: prefix) } catch { throw .request("listing the heads", error) }
        for object in listed {
            let machine = String(object.key.dropFirst(prefix.count))
            guard machine != ledger.machine, machine.count == 32, machine.allSatisfy(\.isHexDigit),
                  ledger.peers[machine] == nil else { continue }
            ledger.peers[machine] = SyncLedger.Peer()
        }
        ledger.listed = Date()
    }

    private static func encode(_ head: Head) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(head)) ?? Data())
    }
}
