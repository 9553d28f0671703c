/// Why a bucket command or round failed, in one line that names what to do.
public enum BucketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A bad argument: a malformed `s3://` URL or endpoint.
    case usage(String)
    /// The AWS chain holds no credentials for the profile.
    case noCredentials(profile: String)
    /// The bucket does not do what kvfs relies on (found by ``ConditionalWriteProbe``).
    case unsupported(String)
    /// Another machine writes as this one: its head in the bucket is not the one this machine wrote.
    case clone(machine: String)
    /// A request failed: what was asked, and the answer.
    case request(String, S3Error)
    /// A file of this machine could not be read or written.
    case local(String)
    /// No bucket of that name is configured, or one already is.
    case configuration(String)

    /// The line a command prints after `Error: `.
    public var description: String {
        switch self {
        case .usage(let text), .unsupported(let text), .local(let text), .configuration(let text): text
        case .noCredentials(let profile):
            "no AWS credentials for profile '\(profile)': set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add the profile to ~/.aws/credentials"
        case .clone(let machine):
            "this machine's bucket head (\(machine)) was written by another machine with a copy of this state directory: "
                + "nothing was overwritten; remove $XDG_STATE_HOME/kvfs/buckets/ on the copy to make it a machine of its own"
        case .request(let what, let error): "\(what): \(error)"
        }
    }

    /// Whether the failure is a usage error (exit status 64).
    public var isUsage: Bool {
        if case .usage = self { return true }
        return false
    }
}
