import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The S3 calls kvfs makes on one bucket, path-style (`ENDPOINT/BUCKET/KEY`,
/// which every S3-compatible service takes), each signed with SigV4. A call
/// either does what it says or throws an ``S3Error``; none retries: the
/// caller decides.
public final class S3Client: Sendable {
    /// The service's URL: scheme, host and port (`https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`).
    public let endpoint: URL
    /// The bucket's name.
    public let bucket: String
    private let signer: SignatureV4
    private let exchange: HTTPExchange
    /// The requests this client made.
    public let counter = RequestCounter()

    /// A client of `bucket` at `endpoint`, signing for `region` with `credentials`; a request without progress for
    /// `timeout` seconds fails as ``S3Error/network(_:)``.
    public init(endpoint: URL, bucket: String, region: String, credentials: Credentials, timeout: TimeInterval = 30) {
        self.endpoint = endpoint
        self.bucket = bucket
        signer = SignatureV4(credentials: credentials, region: region)
        exchange = HTTPExchange(timeout: timeout)
    }

    /// What `PutObject` requires of the object already there.
    public enum PutCondition: Sendable, Equatable {
        /// Nothing: the object is written whatever is there.
        case none
        /// `If-None-Match: *`: the object must not exist (else 412).
        case absent
        /// `If-Match: ETAG`: the object must be the one with this ETag (else 412).
        case matching(String)
    }

    /// An object's bytes (or the range asked for) and its ETag.
    public struct Object: Sendable, Equatable {
        /// The bytes.
        public var body: [UInt8]
        /// The object's ETag, quotes included, as the service gave it.
        public var etag: String?
    }

    /// One object of a listing.
    public struct Listed: Sendable, Equatable {
        /// Its key.
        public var key: String
        /// Its size in bytes.
        public var size: Int
    }

    /// One page of a listing, and the token that asks for the next (nil on the last).
    public struct ListPage: Sendable, Equatable {
        /// The objects of this page, in key order.
        public var objects: [Listed]
        /// The `continuation-token` of the next page, or nil.
        public var nextToken: String?
    }

    /// A multipart upload that was started and neither completed nor aborted.
    public struct Upload: Sendable, Equatable {
        /// Its object's key.
        public var key: String
        /// Its upload id.
        public var uploadID: String
    }

    /// PutObject: writes `body` under `key` if `condition` holds; returns the new object's ETag.
    @discardableResult
    public func put(_ key: String, _ body: [UInt8], condition: PutCondition = .none) throws(S3Error) -> String? {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/octet-stream")]
        switch condition {
        case .none: break
        case .absent: headers.append(("If-None-Match", "*"))
        case .matching(let etag): headers.append(("If-Match", etag))
        }
        return try send("PUT", key: key, headers: headers, body: body).headers["etag"]
    }

    /// GetObject: the object at `key`, or only its bytes `range` (which must lie within the object: a body of
    /// another length is ``S3Error/malformed(_:)``).
    public func get(_ key: String, range: Range<Int>? = nil) throws(S3Error) -> Object {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        let answer = try send("GET", key: key, headers: headers)
        if let range, answer.body.count != range.count {
            throw .malformed("\(answer.body.count) bytes of the \(range.count) asked for")
        }
        if let length = answer.headers["content-length"].flatMap(Int.init), length != answer.body.count {
            throw .malformed("a body of \(answer.body.count) bytes where \(length) were announced")
        }
        return Object(body: answer.body, etag: answer.headers["etag"])
    }

    /// HeadObject: the object's size and ETag, without its bytes.
    public func head(_ key: String) throws(S3Error) -> (size: Int, etag: String?) {
        let answer = try send("HEAD", key: key)
        return (answer.headers["content-length"].flatMap(Int.init) ?? 0, answer.headers["etag"])
    }

    /// DeleteObject: removes `key` (no error if it was not there, as S3 answers).
    public func delete(_ key: String) throws(S3Error) {
        _ = try send("DELETE", key: key)
    }

    /// DeleteObjects: removes up to 1,000 keys in one request; returns the keys the answer says were not deleted.
    public func delete(keys: [String]) throws(S3Error) -> [String] {
        let objects = keys.map { "<Object><Key>\(Self.escaped($0))</Key></Object>" }.joined()
        let body = Array("<Delete><Quiet>true</Quiet>\(objects)</Delete>".utf8)
        let md5 = Data(Insecure.MD5.hash(data: body)).base64EncodedString()
        // A Content-Type of its own: URLSession's default for a POST (a form) has servers parse the body as one.
        let answer = try send("POST", key: nil, query: [("delete", "")], headers: [("Content-MD5", md5), ("Content-Type", "application/xml")],
                              body: body)
        return XMLNode.parse(answer.body)?.all("Error").compactMap { $0.child("Key") } ?? []
    }

    /// ListObjectsV2: one page of the keys under `prefix`, at most `maxKeys` of them, from `token` on.
    public func list(prefix: String, maxKeys: Int? = nil, after token: String? = nil) throws(S3Error) -> ListPage {
        var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix)]
        if let maxKeys { query.append(("max-keys", String(maxKeys))) }
        if let token { query.append(("continuation-token", token)) }
        let answer = try send("GET", key: nil, query: query)
        guard let document = XMLNode.parse(answer.body), document.name == "ListBucketResult" else {
            throw .malformed("a listing that is not a ListBucketResult")
        }
        let objects = document.all("Contents").compactMap { entry -> Listed? in
            guard let key = entry.child("Key") else { return nil }
            return Listed(key: key, size: entry.child("Size").flatMap(Int.init) ?? 0)
        }
        let truncated = document.child("IsTruncated") == "true"
        let next = document.child("NextContinuationToken")
        if truncated && next == nil { throw .malformed("a truncated listing without a continuation token") }
        return ListPage(objects: objects, nextToken: truncated ? next : nil)
    }

    /// Every key under `prefix`, page after page.
    public func listAll(prefix: String) throws(S3Error) -> [Listed] {
        var objects: [Listed] = []
        var token: String?
        repeat {
            let page = try list(prefix: prefix, after: token)
            objects += page.objects
            token = page.nextToken
        } while token != nil
        return objects
    }

    /// ListMultipartUploads: the uploads under `prefix` that were started and never completed or aborted
    /// (the first 1,000: more than that is left for the next call).
    public func multipartUploads(prefix: String) throws(S3Error) -> [Upload] {
        let answer = try send("GET", key: nil, query: [("uploads", ""), ("prefix", prefix)])
        guard let document = XMLNode.parse(answer.body) else { throw .malformed("an upload listing that is not XML") }
        return document.all("Upload").compactMap { upload in
            guard let key = upload.child("Key"), let id = upload.child("UploadId") else { return nil }
            return Upload(key: key, uploadID: id)
        }
    }

    /// AbortMultipartUpload: drops an upload's parts.
    public func abort(_ upload: Upload) throws(S3Error) {
        _ = try send("DELETE", key: upload.key, query: [("uploadId", upload.uploadID)])
    }

    /// Signs and sends one request on the bucket (`key` nil) or one of its objects; a status other than 2xx throws.
    private func send(_ method: String, key: String?, query: [(name: String, value: String)] = [],
                      headers: [(name: String, value: String)] = [], body: [UInt8] = []) throws(S3Error) -> HTTPExchange.Answer {
        let path = "/" + SignatureV4.encoded(bucket) + (key.map { "/" + SignatureV4.encoded($0, keepingSlashes: true) } ?? "/")
        let queryText = query.map { "\(SignatureV4.encoded($0.name))=\(SignatureV4.encoded($0.value))" }.joined(separator: "&")
        guard let url = URL(string: endpoint.absoluteString.trimmingSuffix("/") + path + (query.isEmpty ? "" : "?" + queryText)) else {
            throw .malformed("no URL for \(path)")
        }
        let unsigned = SignatureV4.Request(method: method, path: path, query: query, headers: headers + [("Host", Self.host(of: endpoint))],
                                           payloadHash: SignatureV4.sha256Hex(body))
        var request = URLRequest(url: url)
        request.httpMethod = method
        // Host is URLSession's to send; it is signed with the value it sends.
        for (name, value) in signer.signed(unsigned, at: Date()).headers where name != "Host" {
            request.addValue(value, forHTTPHeaderField: name)
        }
        if !body.isEmpty || method == "PUT" { request.httpBody = Data(body) }
        counter.count(method == "GET" && key == nil ? "LIST" : method)
        let answer = try exchange.send(request)
        guard (200...299).contains(answer.status) else { throw S3Error.from(status: answer.status, body: answer.body) }
        return answer
    }

    /// The `Host` header for `url`: its host, and its port unless that is the scheme's default.
    private static func host(of url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, !(url.scheme == "http" && port == 80), !(url.scheme == "https" && port == 443) else { return host }
        return "\(host):\(port)"
    }

    /// `text` with XML's five special characters escaped.
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
