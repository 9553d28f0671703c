import Foundation
@testable import KVBucket
import TestSupport
import Testing

/// The AWS chain, as the CLI and SDKs read it: environment first, then the
/// profile's credentials file, then its config file.
@Suite("Credentials, region and endpoint from the AWS chain")
struct AWSEnvironmentTests {
    /// A home with `~/.aws/credentials` and `~/.aws/config` holding `credentials` and `config`.
    static func home(credentials: String, config: String) throws -> TemporaryFolder {
        let folder = TemporaryFolder("kvfs-aws-home")
        try FileManager.default.createDirectory(atPath: folder.path + "/.aws", withIntermediateDirectories: true)
        try credentials.write(toFile: folder.path + "/.aws/credentials", atomically: true, encoding: .utf8)
        try config.write(toFile: folder.path + "/.aws/config", atomically: true, encoding: .utf8)
        return folder
    }

    static let credentialsFile = """
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = defaultsecret
        # a comment
        [work]
        aws_access_key_id=WORKKEY
        aws_secret_access_key=worksecret
        aws_session_token=worktoken
        """
    static let configFile = """
        [default]
        region = eu-west-1
        [profile work]
        region = auto
        endpoint_url = https://account.r2.cloudflarestorage.com
        [profile inconfig]
        aws_access_key_id = CONFIGKEY
        aws_secret_access_key = configsecret
        """

    @Test("the environment's keys come before any file's; the region and endpoint default to AWS's")
    func environmentFirst() throws {
        let home = try Self.home(credentials: Self.credentialsFile, config: "")
        defer { home.cleanup() }
        let aws = try AWSEnvironment(environment: ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret",
                                                   "AWS_SESSION_TOKEN": "envtoken"], home: home.path)
        #expect(aws.credentials == Credentials(accessKeyID: "ENVKEY", secretAccessKey: "envsecret", sessionToken: "envtoken"))
        #expect(aws.region == "us-east-1")
        #expect(aws.endpoint.absoluteString == "https://s3.us-east-1.amazonaws.com")
    }

    @Test("the default profile's files give the credentials and region")
    func defaultProfile() throws {
        let home = try Self.home(credentials: Self.credentialsFile, config: Self.configFile)
        defer { home.cleanup() }
        let aws = try AWSEnvironment(environment: [:], home: home.path)
        #expect(aws.credentials == Credentials(accessKeyID: "DEFAULTKEY", secretAccessKey: "defaultsecret"))
        #expect(aws.region == "eu-west-1")
        #expect(aws.endpoint.absoluteString == "https://s3.eu-west-1.amazonaws.com")
    }

    @Test("AWS_PROFILE, or --profile over it, picks a profile with its token, region and endpoint_url")
    func namedProfile() throws {
        let home = try Self.home(credentials: Self.credentialsFile, config: Self.configFile)
        defer { home.cleanup() }
        for aws in [try AWSEnvironment(environment: ["AWS_PROFILE": "work"], home: home.path),
                    try AWSEnvironment(profile: "work", environment: ["AWS_PROFILE": "default"], home: home.path)] {
            #expect(aws.credentials == Credentials(accessKeyID: "WORKKEY", secretAccessKey: "worksecret", sessionToken: "worktoken"))
            #expect(aws.region == "auto")
            #expect(aws.endpoint.absoluteString == "https://account.r2.cloudflarestorage.com")
        }
        let inConfig = try AWSEnvironment(profile: "inconfig", environment: [:], home: home.path)
        #expect(inConfig.credentials == Credentials(accessKeyID: "CONFIGKEY", secretAccessKey: "configsecret"))
    }

    @Test("--endpoint and --region come first, then AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION")
    func endpointOrder() throws {
        let home = try Self.home(credentials: "", config: Self.configFile)
        defer { home.cleanup() }
        let environment = ["AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_REGION": "us-west-2"]
        #expect(try AWSEnvironment(environment: environment, home: home.path).endpoint.absoluteString == "http://127.0.0.1:9000")
        #expect(try AWSEnvironment(environment: environment.merging(["AWS_ENDPOINT_URL_S3": "http://s3.local"]) { $1 }, home: home.path)
            .endpoint.absoluteString == "http://s3.local")
        let given = try AWSEnvironment(region: "ap-south-1", endpoint: "https://minio.example", environment: environment, home: home.path)
        #expect(given.endpoint.absoluteString == "https://minio.example" && given.region == "ap-south-1")
        #expect(try AWSEnvironment(environment: environment, home: home.path).region == "us-west-2")
    }

    @Test("no credentials anywhere is nil (kvfs says how to give some); an endpoint that is no http(s) URL is a usage error")
    func missing() throws {
        let home = TemporaryFolder("kvfs-aws-home")
        defer { home.cleanup() }
        #expect(try AWSEnvironment(environment: [:], home: home.path).credentials == nil)
        #expect(throws: BucketError.self) { try AWSEnvironment(endpoint: "ftp://host", environment: [:], home: home.path) }
        let settings = BucketSettings(location: try BucketLocation(parsing: "s3://bucket"))
        #expect(throws: BucketError.noCredentials(profile: "default")) { try settings.client(environment: ["HOME": home.path]) }
    }

    @Test("s3://BUCKET[/PREFIX] is parsed, slashes trimmed; anything else is a usage error")
    func locations() throws {
        let location = try BucketLocation(parsing: "s3://my-bucket/kvfs/laptop/")
        #expect(location.bucket == "my-bucket" && location.prefix == "kvfs/laptop" && location.key("heads/x") == "kvfs/laptop/heads/x")
        #expect(try BucketLocation(parsing: "s3://my-bucket").key("heads/x") == "heads/x")
        for bad in ["my-bucket", "s3://", "s3://UPPER", "s3://ab", "s3://bucket/../x", "https://bucket"] {
            #expect(throws: BucketError.self, "\(bad)") { try BucketLocation(parsing: bad) }
        }
    }
}
