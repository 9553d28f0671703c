import Foundation

/// One bucket this machine syncs with, as `kvfs bucket add` kept it: where it
/// is and how to reach it, never a credential (those stay in the AWS chain).
public struct BucketSettings: Sendable, Codable, Equatable {
    /// The bucket and prefix.
    public var location: BucketLocation
    /// `--endpoint`, if given.
    public var endpoint: String?
    /// `--region`, if given.
    public var region: String?
    /// `--profile`, if given.
    public var profile: String?

    /// Settings from their parts.
    public init(location: BucketLocation, endpoint: String? = nil, region: String? = nil, profile: String? = nil) {
        self.location = location
        self.endpoint = endpoint
        self.region = region
        self.profile = profile
    }

    /// A client of the bucket, with credentials, region and endpoint from the AWS chain under these settings.
    public func client(environment: [String: String] = ProcessInfo.processInfo.environment) throws(BucketError) -> S3Client {
        let aws = try AWSEnvironment(profile: profile, region: region, endpoint: endpoint, environment: environment)
        guard let credentials = aws.credentials else { throw .noCredentials(profile: aws.profile) }
        return S3Client(endpoint: aws.endpoint, bucket: location.bucket, region: aws.region, credentials: credentials)
    }
}

/// The buckets of this machine: `$XDG_CONFIG_HOME/kvfs/buckets.json`
/// (`~/.config/kvfs/`), never in the sync root, so that no synchronizer
/// carries one machine's settings to another.
public struct BucketList: Sendable {
    /// The file.
    public let url: URL

    /// The list in `$XDG_CONFIG_HOME/kvfs/` of `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory() + "/.config"
        url = URL(fileURLWithPath: config + "/kvfs/buckets.json")
    }

    /// The buckets, in the order they were added.
    public func load() throws(BucketError) -> [BucketSettings] {
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        do { return try JSONDecoder().decode([BucketSettings].self, from: data) } catch {
            throw .local("\(url.path) is not a bucket list: fix or remove it")
        }
    }

    /// Writes `buckets` as the list, atomically, 0600 in a 0700 folder.
    public func save(_ buckets: [BucketSettings]) throws(BucketError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(buckets) else { throw .local("cannot encode the bucket list") }
        try LocalFiles.replace(url, with: Array(data))
    }
}
