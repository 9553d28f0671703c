import Foundation

/// Where a bucket's requests go and what signs them, found as the AWS CLI and
/// SDKs find them, so that a person's existing setup works as it is:
///
/// - credentials: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
///   `AWS_SESSION_TOKEN`), else the profile's in `~/.aws/credentials`
///   (`AWS_SHARED_CREDENTIALS_FILE`), else in `~/.aws/config` (`AWS_CONFIG_FILE`);
/// - the profile: `--profile`, else `AWS_PROFILE`, else `default`;
/// - the region: `--region`, else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`;
/// - the endpoint: `--endpoint`, else `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`,
///   else AWS's for the region.
///
/// Nothing found here is written anywhere or printed: only the access key id appears in messages.
public struct AWSEnvironment: Sendable {
    /// The credentials, or nil when the chain has none.
    public let credentials: Credentials?
    /// The region requests are signed for.
    public let region: String
    /// The service's URL.
    public let endpoint: URL
    /// The profile the chain read.
    public let profile: String

    /// The chain's answer for `profile`, `region` and `endpoint` (each nil when not given on the command line),
    /// reading `environment` and the files under `home` (by default the environment's `HOME`).
    public init(profile: String? = nil, region: String? = nil, endpoint: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment,
                home: String? = nil) throws(BucketError) {
        let home = home ?? environment["HOME"] ?? NSHomeDirectory()
        let profile = profile ?? environment["AWS_PROFILE"] ?? "default"
        let credentialsFile = AWSConfigFile(path: environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials")
        let configFile = AWSConfigFile(path: environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config")
        let config = configFile?.configProfile(profile) ?? [:]
        let region = region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? config["region"] ?? "us-east-1"
        let endpointText = endpoint ?? environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"] ?? config["endpoint_url"]
            ?? "https://s3.\(region).amazonaws.com"
        guard let url = URL(string: endpointText), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw .usage("'\(endpointText)' is not an endpoint URL (give one such as https://ACCOUNT.r2.cloudflarestorage.com)")
        }
        self.profile = profile
        self.region = region
        self.endpoint = url
        credentials = Self.fromEnvironment(environment)
            ?? Self.fromProfile(credentialsFile?.credentialsProfile(profile) ?? [:])
            ?? Self.fromProfile(config)
    }

    private static func fromEnvironment(_ environment: [String: String]) -> Credentials? {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
        return Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
    }

    private static func fromProfile(_ settings: [String: String]) -> Credentials? {
        guard let id = settings["aws_access_key_id"], let secret = settings["aws_secret_access_key"] else { return nil }
        return Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: settings["aws_session_token"])
    }
}
