/// Why a bucket request failed, sorted so that a caller can decide: a
/// precondition that did not hold is news (someone else wrote), a missing
/// object may be expected, a server or network failure is worth a retry, and
/// a refusal is not.
public enum S3Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// 412: `If-None-Match: *` found the object there, or `If-Match` another ETag.
    case preconditionFailed
    /// 404: no such object (or bucket: `code` says which).
    case notFound(code: String?)
    /// 409: a conflicting operation on the same object was under way.
    case conflict(code: String?)
    /// 5xx: the service failed; try again later.
    case server(status: Int, code: String?)
    /// Any other answer: access denied, a bad request, a feature the provider does not implement.
    case refused(status: Int, code: String?, message: String?)
    /// No answer: the connection failed, was reset, or timed out.
    case network(String)
    /// An answer that is not what the request asked for: a body cut short, unparsable XML.
    case malformed(String)

    /// Whether trying the same request again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .server, .network, .conflict, .malformed: true
        case .preconditionFailed, .notFound, .refused: false
        }
    }

    /// One line, without credentials (no error holds any).
    public var description: String {
        switch self {
        case .preconditionFailed: "412 Precondition Failed"
        case .notFound(let code): "404 \(code ?? "Not Found")"
        case .conflict(let code): "409 \(code ?? "Conflict")"
        case .server(let status, let code): "\(status) \(code ?? "server error")"
        case .refused(let status, let code, let message): "\(status) \([code, message].compactMap(\.self).joined(separator: ": "))"
        case .network(let reason): "network: \(reason)"
        case .malformed(let reason): "malformed answer: \(reason)"
        }
    }

    /// The error for an answer's status and its XML error body (`<Error><Code>…</Code><Message>…</Message></Error>`).
    static func from(status: Int, body: [UInt8]) -> S3Error {
        let document = XMLNode.parse(body)
        let code = document?.first("Code")?.text
        let message = document?.first("Message")?.text
        switch status {
        case 412: return .preconditionFailed
        case 404: return .notFound(code: code)
        case 409: return .conflict(code: code)
        case 500...599 where code != "NotImplemented": return .server(status: status, code: code)
        default: return .refused(status: status, code: code, message: message)
        }
    }
}
