import Foundation

/// Deletes this machine's objects that its head no longer names (a segment
/// its device compacted away, the old content of a replaced file), once they
/// have been unnamed for longer than a margin, so that a reader that read
/// the head before still finds every object it names. Only the owner deletes,
/// and only its own objects (`objects/<machine>/`).
///
/// An object that a DeleteObjects answer did not name as failed may still be
/// there (some services answer 200 without deleting): the listing of this
/// machine's objects when the synchronizer starts, and then daily, finds it
/// again and it is collected anew.
struct Collector {
    let client: S3Client
    let location: BucketLocation
    /// How long an object stays after its head stopped naming it.
    let margin: TimeInterval

    /// Marks the objects `before` named and `after` does not as garbage since `date`, and takes back from the
    /// garbage any that `after` names again.
    static func note(before: [String: [Head.Chunk]], after: [String: [Head.Chunk]], in ledger: inout SyncLedger, at date: Date) {
        let named = Set(after.values.joined().map(\.object))
        for object in before.values.joined().map(\.object) where !named.contains(object) && ledger.garbage[object] == nil {
            ledger.garbage[object] = date
        }
        for object in named { ledger.garbage[object] = nil }
    }

    /// Deletes the garbage older than the margin, 1,000 objects a request; true when it deleted any.
    func collect(_ ledger: inout SyncLedger, at date: Date) throws(BucketError) -> Bool {
        let named = ledger.namedObjects
        let due = ledger.garbage.filter { date.timeIntervalSince($0.value) >= margin && !named.contains($0.key) }.keys.sorted()
        guard !due.isEmpty else { return false }
        for batch in stride(from: 0, to: due.count, by: 1000).map({ Array(due[$0..<min($0 + 1000, due.count)]) }) {
            let keys = batch.map { location.key(BucketSync.objectKey(machine: ledger.machine, object: $0)) }
            let failed: Set<String>
            do { failed = Set(try client.delete(keys: keys)) } catch { throw .request("deleting objects no head names", error) }
            for (object, key) in zip(batch, keys) where !failed.contains(key) { ledger.garbage[object] = nil }
        }
        return true
    }

    /// Lists this machine's objects and marks as garbage (since `date`) every one its head does not name:
    /// what a crash between an upload and its head left, or a delete that did not happen.
    func findStrays(_ ledger: inout SyncLedger, at date: Date) throws(BucketError) {
        let prefix = location.key(BucketSync.objectKey(machine: ledger.machine, object: ""))
        let listed: [S3Client.Listed]
        do { listed = try client.listAll(prefix: prefix) } catch { throw .request("listing this machine's objects", error) }
        let named = ledger.namedObjects
        for object in listed.map({ String($0.key.dropFirst(prefix.count)) }) where !named.contains(object) && ledger.garbage[object] == nil {
            ledger.garbage[object] = date
        }
    }
}
