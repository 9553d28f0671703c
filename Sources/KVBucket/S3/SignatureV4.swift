import Crypto
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) in the Authorization header,
/// as https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
/// gives it; checked against AWS's published test vectors (BucketTests'
/// `SignatureV4Tests`).
///
/// Paths are taken as already URI-encoded (S3 encodes each key segment once
/// and does not normalize), so the signer never encodes them again.
public struct SignatureV4: Sendable {
    /// The key that signs.
    public let credentials: Credentials
    /// The region, as in `us-east-1`.
    public let region: String
    /// The service, `s3` for buckets.
    public let service: String

    /// A signer for `service` in `region` with `credentials`.
    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty body, in hex: the payload hash of a request without one.
    public static let emptyPayloadHash = sha256Hex([])

    /// The SHA-256 of `bytes`, in lower-case hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String { hex(SHA256.hash(data: bytes)) }

    /// A request before signing: its method, URI-encoded path, query items
    /// (not encoded), headers (with `host`), and its body's SHA-256 in hex.
    public struct Request: Sendable {
        /// `GET`, `PUT`, ….
        public var method: String
        /// The path, URI-encoded as it goes on the wire, starting with `/`.
        public var path: String
        /// The query's items, in any order, not encoded.
        public var query: [(name: String, value: String)]
        /// The headers, names in any case; a name given more than once has all its values signed, in order.
        public var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the body.
        public var payloadHash: String

        /// A request from its parts.
        public init(method: String, path: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)], payloadHash: String = SignatureV4.emptyPayloadHash) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// `request` with `X-Amz-Date`, `X-Amz-Security-Token` (for temporary
    /// credentials), `x-amz-content-sha256` when `sendsPayloadHash` (S3 wants
    /// it on every request) and the `Authorization` header added, signed at `date`.
    public func signed(_ request: Request, at date: Date, sendsPayloadHash: Bool = true) -> Request {
        var request = request
        request.headers.append(("X-Amz-Date", Self.timestamp(date)))
        if let token = credentials.sessionToken { request.headers.append(("X-Amz-Security-Token", token)) }
        if sendsPayloadHash { request.headers.append(("x-amz-content-sha256", request.payloadHash)) }
        let canonical = canonicalRequest(request)
        let signature = self.signature(of: stringToSign(canonical: canonical.text, at: date), at: date)
        request.headers.append(("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(at: date)), "
            + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"))
        return request
    }

    /// The canonical request's text, and its signed headers' names joined by `;`.
    func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        var headers: [String: [String]] = [:]
        for (name, value) in request.headers {
            headers[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = headers.keys.sorted()
        let headerLines = names.map { "\($0):\(headers[$0]!.joined(separator: ","))\n" }.joined()
        let pairs: [(name: String, value: String)] = request.query.map { (Self.encoded($0.name), Self.encoded($0.value)) }
        let sorted = pairs.sorted { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name != b.name ? a.name < b.name : a.value < b.value
        }
        let query = sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let signedHeaders = names.joined(separator: ";")
        let text = [request.method, request.path, query, headerLines, signedHeaders, request.payloadHash].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// The string to sign for a canonical request made at `date`.
    func stringToSign(canonical: String, at date: Date) -> String {
        ["AWS4-HMAC-SHA256", Self.timestamp(date), scope(at: date), Self.sha256Hex(Array(canonical.utf8))]
            .joined(separator: "\n")
    }

    /// The signature of `stringToSign`, in hex, with the key derived for `date`'s day.
    func signature(of stringToSign: String, at date: Date) -> String {
        var key = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [Self.day(date), region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    private func scope(at date: Date) -> String { "\(Self.day(date))/\(region)/\(service)/aws4_request" }

    /// A header value with its ends trimmed and inner runs of spaces made one.
    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }

    /// `text` URI-encoded as SigV4 wants: every byte but `A-Z a-z 0-9 - . _ ~` as `%XX`, upper-case.
    public static func encoded(_ text: String, keepingSlashes: Bool = false) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                result.append("/")
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    static func timestamp(_ date: Date) -> String { format(date, "yyyyMMdd'T'HHmmss'Z'") }

    private static func day(_ date: Date) -> String { format(date, "yyyyMMdd") }

    private static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }

    /// Lower-case hex of a digest or MAC.
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
