import Foundation
@testable import KVBucket
import Testing

/// The signer against AWS's Signature Version 4 test suite, as aws-c-auth
/// keeps it (github.com/awslabs/aws-c-auth, tests/aws-signing-test-suite/v4/,
/// commit 495329c2): each case's request, its expected canonical request
/// (`header-canonical-request.txt`), string to sign (`header-string-to-sign.txt`)
/// and Authorization header (`header-signed-request.txt`). Every case signs
/// with the suite's key, in us-east-1, for the service `service`, at
/// 2015-08-30T12:36:00Z.
@Suite("SigV4 matches AWS's test vectors")
struct SignatureV4Tests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let name: String
        let method: String
        let query: [(name: String, value: String)]
        let headers: [(name: String, value: String)]
        let body: String
        /// Whether the case signs the body (its context's `sign_body`): then `x-amz-content-sha256` is a header.
        let signsBody: Bool
        let sessionToken: String?
        let canonicalRequest: String
        let stringToSign: String
        let authorization: String
        var testDescription: String { name }
    }

    static let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let host = ("Host", "example.amazonaws.com")
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
    static let unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    static func authorization(_ signedHeaders: String, _ signature: String) -> String {
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    static let vectors: [Vector] = [
        Vector(name: "get-vanilla", method: "GET", query: [], headers: [host], body: "", signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
               authorization: authorization("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")),
        Vector(name: "post-vanilla", method: "POST", query: [], headers: [host], body: "", signsBody: false, sessionToken: nil,
               canonicalRequest: "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
               authorization: authorization("host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")),
        Vector(name: "get-vanilla-query-order-key-case", method: "GET", query: [("Param2", "value2"), ("Param1", "value1")],
               headers: [host], body: "", signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
               authorization: authorization("host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")),
        Vector(name: "get-vanilla-empty-query-key", method: "GET", query: [("Param1", "value1")], headers: [host], body: "",
               signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n1e24db194ed7d0eec2de28d7369675a243488e08526e8c1c73571282f7c517ab",
               authorization: authorization("host;x-amz-date", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb")),
        Vector(name: "get-vanilla-query-unreserved", method: "GET", query: [(unreserved, unreserved)], headers: [host], body: "",
               signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\n\(unreserved)=\(unreserved)\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nc30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
               authorization: authorization("host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197")),
        Vector(name: "get-header-key-duplicate", method: "GET", query: [],
               headers: [host, ("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")], body: "",
               signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\ndc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
               authorization: authorization("host;my-header1;x-amz-date", "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea")),
        Vector(name: "get-header-value-trim", method: "GET", query: [],
               headers: [host, ("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")], body: "", signsBody: false, sessionToken: nil,
               canonicalRequest: "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\na726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
               authorization: authorization("host;my-header1;my-header2;x-amz-date", "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736")),
        Vector(name: "post-x-www-form-urlencoded", method: "POST", query: [],
               headers: [("Content-Type", "application/x-www-form-urlencoded"), host, ("Content-Length", "13")], body: "Param1=value1",
               signsBody: true, sessionToken: nil,
               canonicalRequest: "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\nx-amz-date:20150830T123600Z\n\ncontent-length;content-type;host;x-amz-content-sha256;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nb1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
               authorization: authorization("content-length;content-type;host;x-amz-content-sha256;x-amz-date", "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b")),
        Vector(name: "post-sts-header-before", method: "POST", query: [], headers: [host], body: "", signsBody: false, sessionToken: token,
               canonicalRequest: "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\nx-amz-security-token:\(token)\n\nhost;x-amz-date;x-amz-security-token\n\(emptyHash)",
               stringToSign: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nc237e1b440d4c63c32ca95b5b99481081cb7b13c7e40434868e71567c1a882f6",
               authorization: authorization("host;x-amz-date;x-amz-security-token", "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead")),
    ]

    @Test("canonical request, string to sign and Authorization header", arguments: vectors)
    func vector(_ vector: Vector) throws {
        let signer = SignatureV4(credentials: Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                                          sessionToken: vector.sessionToken),
                                 region: "us-east-1", service: "service")
        let request = SignatureV4.Request(method: vector.method, path: "/", query: vector.query, headers: vector.headers,
                                          payloadHash: SignatureV4.sha256Hex(Array(vector.body.utf8)))
        let signed = signer.signed(request, at: Self.date, sendsPayloadHash: vector.signsBody)
        let withoutAuthorization = SignatureV4.Request(method: signed.method, path: signed.path, query: signed.query,
                                                       headers: signed.headers.filter { $0.name != "Authorization" },
                                                       payloadHash: signed.payloadHash)
        let canonical = signer.canonicalRequest(withoutAuthorization).text
        #expect(canonical == vector.canonicalRequest)
        #expect(signer.stringToSign(canonical: canonical, at: Self.date) == vector.stringToSign)
        #expect(signed.headers.last?.name == "Authorization")
        #expect(signed.headers.last?.value == vector.authorization)
    }

    @Test("a credential's description names its key id, never its secret or token")
    func credentialsDescription() {
        let credentials = Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "SECRET", sessionToken: "TOKEN")
        #expect("\(credentials)" == "access key AKIDEXAMPLE")
        #expect(!String(reflecting: credentials).contains("SECRET"))
    }
}
