import Foundation
import KVStore

/// Brings this machine's copies of a peer's files up to its head: for a file
/// whose objects so far are the ones applied, it appends the new objects'
/// bytes; for any other (new, replaced, or cut back), it writes the whole file
/// anew through a temporary file. Each object is checked against its name
/// (its SHA-256) and length before a byte of it is written, so a truncated
/// or altered answer is never merged. Files the head no longer lists (its
/// owner compacted them away) are removed, if this machine wrote them.
struct Downloader {
    let client: S3Client
    let location: BucketLocation
    let root: SyncRoot

    /// Applies `head` of `machine` over what `peer` says was applied; true when any file changed.
    func apply(_ head: Head, of machine: String, to peer: inout SyncLedger.Peer) throws(BucketError) -> Bool {
        let ownDevices = root.ownDevices()
        var changed = false
        for path in peer.files.keys where head.files[path] == nil {
            try LocalFiles.remove(root.url(path))
            peer.files[path] = nil
            changed = true
        }
        // store-id first: a store's folder is never without it once its devices' files are there.
        let paths = head.files.keys.filter { root.acceptsFromPeer($0, ownDevices: ownDevices) }
            .sorted { ($0.hasSuffix("/store-id") ? 0 : 1, $0) < ($1.hasSuffix("/store-id") ? 0 : 1, $1) }
        for path in paths {
            let chunks = head.files[path]!
            let applied = peer.files[path] ?? []
            guard chunks.map(\.object) != applied else { continue }
            let url = root.url(path)
            if path.hasSuffix("/store-id"), LocalFiles.status(url) != nil {
                peer.files[path] = chunks.map(\.object)  // this machine's own store id stands (a different one is an account change)
                continue
            }
            let appliedLength = Head.length(Array(chunks.prefix(applied.count)))
            if !applied.isEmpty, chunks.prefix(applied.count).map(\.object) == applied,
               LocalFiles.status(url)?.size == appliedLength, SyncRoot.growth(ofDeviceFile: url.lastPathComponent) == .appended {
                for chunk in chunks.dropFirst(applied.count) {
                    try LocalFiles.append(try fetch(chunk, of: machine), to: url)
                    peer.files[path, default: []].append(chunk.object)
                }
            } else {
                var bytes: [UInt8] = []
                for chunk in chunks { bytes += try fetch(chunk, of: machine) }
                try LocalFiles.replace(url, with: bytes)
                peer.files[path] = chunks.map(\.object)
            }
            changed = true
        }
        return changed
    }

    /// The bytes of `chunk`, checked against its name and length.
    private func fetch(_ chunk: Head.Chunk, of machine: String) throws(BucketError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try client.get(location.key(BucketSync.objectKey(machine: machine, object: chunk.object))).body } catch {
            throw .request("downloading an object of machine \(machine)", error)
        }
        guard bytes.count == chunk.length, SignatureV4.sha256Hex(bytes) == chunk.object else {
            throw .request("downloading an object of machine \(machine)", .malformed("its bytes are not the ones its head names"))
        }
        return bytes
    }
}
