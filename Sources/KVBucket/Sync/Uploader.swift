import Foundation

/// Uploads what changed in this machine's files since the last round: a
/// segment's new bytes as one more object, a replaced file as a new object,
/// each create-only and named by its SHA-256 (so a retry after a lost answer
/// finds it there: 412, which is success here).
struct Uploader {
    /// The largest object a file's new bytes make; more bytes make more objects.
    static let chunkLimit = 8 << 20

    let client: S3Client
    let location: BucketLocation
    let root: SyncRoot

    /// Brings `ledger.uploads` up to date with the files on disk.
    func upload(_ ledger: inout SyncLedger) throws(BucketError) {
        let files = root.ownFiles()
        for path in ledger.uploads.keys where files[path] == nil {
            ledger.uploads[path] = nil
        }
        for (path, growth) in files.sorted(by: { $0.key < $1.key }) {
            let url = root.url(path)
            guard let status = LocalFiles.status(url) else { continue }
            let known = ledger.uploads[path]
            if let known, known.size == status.size, known.modified == status.modified { continue }
            let chunks: [Head.Chunk]
            var withoutHeartbeat: String?
            switch growth {
            case .replaced:
                let bytes = try LocalFiles.read(url, 0..<status.size)
                withoutHeartbeat = url.lastPathComponent == "progress.json" ? Self.withoutHeartbeat(bytes) : nil
                if let known, withoutHeartbeat != nil, known.withoutHeartbeat == withoutHeartbeat {
                    chunks = known.chunks  // only the heartbeat moved: an idle hour uploads nothing
                } else {
                    chunks = [try put(bytes, machine: ledger.machine)]
                }
            case .appended:
                chunks = try appended(url, size: status.size, after: known?.chunks ?? [], machine: ledger.machine)
            }
            ledger.uploads[path] = SyncLedger.Upload(chunks: chunks, size: status.size, modified: status.modified,
                                                     withoutHeartbeat: withoutHeartbeat)
        }
    }

    /// The chunks of a segment of `size` bytes whose first bytes were uploaded as `chunks`: those, and its new
    /// bytes. A segment that is shorter than what was uploaded, or whose last uploaded bytes changed (its writer
    /// cut a torn tail), is uploaded again from its start.
    private func appended(_ url: URL, size: Int, after chunks: [Head.Chunk], machine: String) throws(BucketError) -> [Head.Chunk] {
        var chunks = chunks
        var uploaded = Head.length(chunks)
        if let last = chunks.last {
            let start = uploaded - last.length
            let lastBytes = size >= uploaded ? try LocalFiles.read(url, start..<uploaded) : []
            if SignatureV4.sha256Hex(lastBytes) != last.object { (chunks, uploaded) = ([], 0) }
        }
        while uploaded < size {
            let bytes = try LocalFiles.read(url, uploaded..<min(size, uploaded + Self.chunkLimit))
            guard !bytes.isEmpty else { break }
            chunks.append(try put(bytes, machine: machine))
            uploaded += bytes.count
        }
        return chunks
    }

    /// The SHA-256 of a plain `progress.json` without its `at` (docs/format.md § Read progress): a device
    /// rewrites it every 30 s while its store is open, as a heartbeat, though it read nothing new. Nil for what
    /// is not such JSON (a sealed store's signed file), which is uploaded whenever it changes.
    static func withoutHeartbeat(_ bytes: [UInt8]) -> String? {
        guard var progress = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return nil }
        progress["at"] = nil
        guard let data = try? JSONSerialization.data(withJSONObject: progress, options: .sortedKeys) else { return nil }
        return SignatureV4.sha256Hex(Array(data))
    }

    /// Writes `bytes` as the object named by their SHA-256, if it is not there already.
    private func put(_ bytes: [UInt8], machine: String) throws(BucketError) -> Head.Chunk {
        let object = SignatureV4.sha256Hex(bytes)
        do {
            try client.put(location.key(BucketSync.objectKey(machine: machine, object: object)), bytes, condition: .absent)
        } catch .preconditionFailed {
            // There already: the same name is the same bytes.
        } catch {
            throw .request("uploading an object", error)
        }
        return Head.Chunk(object: object, length: bytes.count)
    }
}
