import ArgumentParser
import Foundation
import KVBucket

/// `kvfs bucket add|ls|rm`: the S3-compatible buckets this machine syncs the
/// sync root with (docs/buckets.md), kept in `$XDG_CONFIG_HOME/kvfs/buckets.json`.
struct BucketCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bucket", abstract: "Add, list or remove the S3-compatible buckets that carry the sync root (docs/buckets.md).",
        discussion: """
            A bucket carries every store of the sync root between machines that need never be on together: `kvfs \
            sync` uploads this machine's device folders to it and downloads the others'. Credentials come from the \
            AWS chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, ~/.aws/credentials \
            and config, AWS_ENDPOINT_URL) and are never written, logged or printed.
            """,
        subcommands: [BucketAddCommand.self, BucketListCommand.self, BucketRemoveCommand.self])
}

/// `kvfs bucket add s3://BUCKET[/PREFIX]`: probes the bucket and keeps it.
struct BucketAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a bucket, once a probe finds that it honours conditional writes.",
        discussion: """
            The probe writes an object under PREFIX/probes/ create-only twice (If-None-Match: *) and once with \
            If-Match on a wrong ETag, and removes it: a bucket where either of the later writes succeeds (or that \
            does not implement them) is refused, as kvfs could not keep a copied machine from overwriting another.
            """)
    @Argument(help: ArgumentHelp("The bucket, and the prefix under which kvfs keeps its objects.", valueName: "s3://BUCKET[/PREFIX]"))
    var url: String
    @Option(help: "The service's URL, for R2, MinIO and other S3-compatible services (default: AWS_ENDPOINT_URL, the profile's endpoint_url, else AWS).")
    var endpoint: String?
    @Option(help: "The region requests are signed for (default: AWS_REGION, the profile's region, else us-east-1).")
    var region: String?
    @Option(help: "The AWS profile whose credentials and settings to use (default: AWS_PROFILE, else default).")
    var profile: String?

    func run() throws {
        let settings = BucketSettings(location: try BucketLocation(parsing: url), endpoint: endpoint, region: region, profile: profile)
        let list = BucketList()
        var buckets = try list.load()
        guard !buckets.contains(where: { $0.location == settings.location }) else {
            throw BucketError.configuration("\(settings.location) is added already (kvfs bucket rm it first to change its settings)")
        }
        try ConditionalWriteProbe.check(try settings.client(), settings.location)
        buckets.append(settings)
        try list.save(buckets)
        print("added \(settings.location): it honours conditional writes; `kvfs sync` carries the sync root through it")
    }
}

/// `kvfs bucket ls`: the buckets, one a line.
struct BucketListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the buckets, with their endpoint, region and profile.")

    func run() throws {
        let rows = [["BUCKET", "ENDPOINT", "REGION", "PROFILE"]] + (try BucketList().load()).map { bucket in
            [bucket.location.description, bucket.endpoint ?? "-", bucket.region ?? "-", bucket.profile ?? "-"]
        }
        print(TextTable.format(rows), terminator: "")
    }
}

/// `kvfs bucket rm s3://BUCKET[/PREFIX]`: forgets a bucket; what is in it stays.
struct BucketRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Stop syncing with a bucket (its objects stay in it).")
    @Argument(help: ArgumentHelp("The bucket, as `kvfs bucket ls` names it.", valueName: "s3://BUCKET[/PREFIX]"))
    var url: String

    func run() throws {
        let location = try BucketLocation(parsing: url)
        let list = BucketList()
        let buckets = try list.load()
        guard buckets.contains(where: { $0.location == location }) else {
            throw BucketError.configuration("no bucket \(location) is added (kvfs bucket ls lists them)")
        }
        try list.save(buckets.filter { $0.location != location })
    }
}
