@testable import KVBucket
import Testing

/// Each answer a bucket may give becomes the error its caller decides on.
@Suite("S3 answers as typed errors")
struct S3ErrorTests {
    static func body(_ code: String) -> [UInt8] {
        Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>\(code)</Code><Message>said</Message></Error>".utf8)
    }

    @Test("412, 404, 409, 5xx, 501 NotImplemented and 403 each have their case, and only some are worth a retry")
    func statuses() {
        #expect(S3Error.from(status: 412, body: Self.body("PreconditionFailed")) == .preconditionFailed)
        #expect(S3Error.from(status: 404, body: Self.body("NoSuchKey")) == .notFound(code: "NoSuchKey"))
        #expect(S3Error.from(status: 409, body: Self.body("ConditionalRequestConflict")) == .conflict(code: "ConditionalRequestConflict"))
        #expect(S3Error.from(status: 503, body: Self.body("SlowDown")) == .server(status: 503, code: "SlowDown"))
        #expect(S3Error.from(status: 500, body: []) == .server(status: 500, code: nil))
        #expect(S3Error.from(status: 501, body: Self.body("NotImplemented")) == .refused(status: 501, code: "NotImplemented", message: "said"))
        #expect(S3Error.from(status: 403, body: Self.body("AccessDenied")) == .refused(status: 403, code: "AccessDenied", message: "said"))
        #expect(S3Error.conflict(code: nil).isTransient && S3Error.server(status: 503, code: nil).isTransient)
        #expect(!S3Error.preconditionFailed.isTransient && !S3Error.refused(status: 403, code: nil, message: nil).isTransient)
    }
}
