/// What `kvfs bucket add` checks before it takes a bucket: that it answers
/// at all with these credentials, and that it honours the conditional writes
/// every guarantee of the bucket sync rests on. A create-only PUT
/// (`If-None-Match: *`) of a name already there must fail with 412, and so
/// must a PUT with `If-Match` on an ETag the object does not have. A bucket
/// that ignores either could let a cloned machine overwrite another's head,
/// so it is refused rather than used with a weaker guarantee.
public enum ConditionalWriteProbe {
    /// Probes the bucket at `location` through `client` with an object of its own under `probes/`, removed after;
    /// throws ``BucketError/unsupported(_:)`` with a one-line reason, or the request's failure.
    public static func check(_ client: S3Client, _ location: BucketLocation) throws(BucketError) {
        let key = location.key("probes/" + SignatureV4.hex((0..<16).map { _ in UInt8.random(in: 0...255) }))
        defer { try? client.delete(key) }
        do {
            try client.put(key, Array("kvfs probe 1".utf8), condition: .absent)
        } catch .refused(let status, let code, _) where status == 501 || code == "NotImplemented" {
            throw .unsupported("\(location) refuses create-only writes (If-None-Match: *, \(status) \(code ?? "")): kvfs needs them to never overwrite a record")
        } catch {
            throw .request("writing a probe object to \(location)", error)
        }
        try expectPreconditionFailed(client.put(key, Array("kvfs probe 2".utf8), condition: .absent), location,
                                     "a second create-only write (If-None-Match: *) of one name succeeded")
        try expectPreconditionFailed(client.put(key, Array("kvfs probe 3".utf8), condition: .matching("\"0123456789abcdef0123456789abcdef\"")),
                                     location, "a write with If-Match on another ETag succeeded")
    }

    private static func expectPreconditionFailed(_ write: @autoclosure () throws(S3Error) -> String?, _ location: BucketLocation,
                                                 _ what: String) throws(BucketError) {
        do {
            _ = try write()
        } catch .preconditionFailed {
            return
        } catch .refused(let status, let code, _) where status == 501 || code == "NotImplemented" {
            throw .unsupported("\(location) does not implement conditional writes (\(status) \(code ?? "")): kvfs needs them to never overwrite a record")
        } catch {
            throw .request("probing conditional writes on \(location)", error)
        }
        throw .unsupported("\(location) ignores conditional writes (\(what)): kvfs needs them to never overwrite a record")
    }
}
