/// An AWS access key: what signs requests. Its description never shows the
/// secret or the token, so that no log line or error message can leak them.
public struct Credentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key id (`AKIA…`): not secret, it names the key.
    public let accessKeyID: String
    /// The secret access key.
    public let secretAccessKey: String
    /// The session token of temporary credentials, if any.
    public let sessionToken: String?

    /// Credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key id alone.
    public var description: String { "access key \(accessKeyID)" }
}
