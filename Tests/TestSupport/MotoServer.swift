import Foundation

/// moto's S3 emulator (PyPI `moto[server]`), started on a free port of
/// 127.0.0.1 for one test and stopped when it is done, whatever happens (the
/// process is a ``ChildProcess``). Its log, one line a request
/// (`"GET /bucket/key HTTP/1.1" 200 -`), is what the request counts read.
///
/// Found as `$KVFS_MOTO_SERVER`, else `moto_server` on `PATH`, else where
/// mount-scripts/install-deps.sh installs it
/// (`${XDG_CACHE_HOME:-~/.cache}/kvfs/moto/bin/moto_server`).
public final class MotoServer {
    /// The emulator's URL, `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The file its log goes to.
    public let log: String
    private let process: ChildProcess

    /// The emulator's program, or nil when it is not installed.
    public static let program: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["KVFS_MOTO_SERVER"], FileManager.default.isExecutableFile(atPath: path) { return path }
        if let path = ChildProcess.find("moto_server") { return path }
        let cache = environment["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache"
        let installed = cache + "/kvfs/moto/bin/moto_server"
        return FileManager.default.isExecutableFile(atPath: installed) ? installed : nil
    }()

    /// Starts the emulator, its log in `folder`, and waits (up to 30 s) until it answers. With `unsignedRequests`,
    /// it takes only that many requests (the one that finds it answering among them) without a valid signature,
    /// and checks every later one against the access keys its IAM holds (moto's INITIAL_NO_AUTH_ACTION_COUNT).
    public init(logIn folder: String, unsignedRequests: Int? = nil) throws {
        guard let program = Self.program else { throw ChildProcessError.notInstalled("moto_server") }
        let port = ChildProcess.freePort()
        endpoint = "http://127.0.0.1:\(port)"
        log = folder + "/moto.log"
        process = try ChildProcess(program, ["-H", "127.0.0.1", "-p", String(port)],
                                   environment: unsignedRequests.map { ["INITIAL_NO_AUTH_ACTION_COUNT": String($0)] } ?? [:], log: log)
        let answers = poll(seconds: 30, every: 0.1) {
            (try? ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", endpoint + "/"]))?.output == "200"
        }
        guard answers else {
            process.stop()
            throw ChildProcessError.failed("moto_server", (try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log")
        }
    }

    deinit { stop() }

    /// Stops the emulator and waits for it.
    public func stop() { process.stop(grace: 5) }

    /// Creates the bucket `name` (an unsigned request).
    public func createBucket(_ name: String) throws {
        let result = try ChildProcess.run("curl", ["-s", "-f", "-X", "PUT", "\(endpoint)/\(name)"])
        guard result.status == 0 else { throw ChildProcessError.failed("creating bucket \(name)", result.output) }
    }

    /// Makes an IAM user allowed every S3 action and returns its access key id and secret, in four unsigned
    /// requests (IAM's query API: CreateUser, CreateAccessKey, CreatePolicy, AttachUserPolicy).
    public func createUser() throws -> (id: String, secret: String) {
        func iam(_ form: String) throws -> String {
            // An Authorization header only to name the service: the emulator checks no signature yet.
            let result = try ChildProcess.run("curl", ["-s", "-f", "-X", "POST", endpoint + "/", "-H",
                "Authorization: AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0",
                "--data", "Version=2010-05-08&" + form])
            guard result.status == 0 else { throw ChildProcessError.failed("IAM \(form.prefix(30))", result.output) }
            return result.output
        }
        func element(_ name: String, _ text: String) -> String? {
            text.firstRange(of: "<\(name)>").flatMap { start in text[start.upperBound...].firstRange(of: "</\(name)>").map { String(text[start.upperBound..<$0.lowerBound]) } }
        }
        _ = try iam("Action=CreateUser&UserName=kvfs")
        let key = try iam("Action=CreateAccessKey&UserName=kvfs")
        let document = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        let policy = try iam("Action=CreatePolicy&PolicyName=s3&PolicyDocument=" + document.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        guard let id = element("AccessKeyId", key), let secret = element("SecretAccessKey", key), let arn = element("Arn", policy) else {
            throw ChildProcessError.failed("IAM", key + policy)
        }
        _ = try iam("Action=AttachUserPolicy&UserName=kvfs&PolicyArn=" + arn.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        return (id, secret)
    }

    /// The requests the emulator has logged so far, each as `METHOD PATH` (query included).
    public func requests() -> [String] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.firstIndex(of: "\""), let end = line[line.index(after: start)...].firstIndex(of: "\"") else { return nil }
            let request = line[line.index(after: start)..<end].split(separator: " ")
            guard request.count == 3, request[2].hasPrefix("HTTP/") else { return nil }
            return "\(request[0]) \(request[1])"
        }
    }
}
