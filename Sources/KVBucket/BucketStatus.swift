import Foundation

/// What `kvfs status` says of a bucket: what its last rounds on this machine did.
public struct BucketStatus: Sendable, Equatable {
    /// The bucket and prefix.
    public let location: BucketLocation
    /// When this machine last wrote its head, if ever.
    public let lastUpload: Date?
    /// When this machine last wrote a file another machine uploaded, if ever.
    public let lastDownload: Date?
    /// The requests this machine's rounds made in the current clock hour.
    public let requestsThisHour: Int
    /// The last round's failure, or nil when it succeeded (or none ran).
    public let lastError: String?

    /// The status of each added bucket, as its ledger under `$XDG_STATE_HOME/kvfs/buckets/` keeps it.
    public static func all(environment: [String: String] = ProcessInfo.processInfo.environment) throws(BucketError) -> [BucketStatus] {
        try BucketList(environment: environment).load().map { bucket throws(BucketError) in
            let url = SyncLedger.url(for: bucket.location, environment: environment)
            let ledger = FileManager.default.fileExists(atPath: url.path) ? try SyncLedger.load(url) : nil
            return BucketStatus(location: bucket.location, lastUpload: ledger?.lastUpload, lastDownload: ledger?.lastDownload,
                                requestsThisHour: ledger?.requests(inHourOf: Date()) ?? 0, lastError: ledger?.lastError)
        }
    }
}
