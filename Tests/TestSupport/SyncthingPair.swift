import Foundation

/// Two Syncthing instances on 127.0.0.1 keeping two folders identical, set up
/// by `mount-scripts/syncthing-pair.sh` (so the tests run the users' script)
/// and started here, so that they are always stopped and waited for.
///
/// Shared by `kvfs-bench` and the SyncTests target.
public final class SyncthingPair {
    /// The two synchronized folders.
    public let folders: [String]
    private let work: String
    private var instances: [ChildProcess] = []
    private var endpoints: [(gui: String, key: String)] = []

    /// The first program missing for a pair, if any.
    public static var missingProgram: String? { ["syncthing", "curl", "bash"].first { ChildProcess.find($0) == nil } }

    /// `mount-scripts/syncthing-pair.sh` in the source tree this file was built from.
    public static let script = Repository.path("mount-scripts/syncthing-pair.sh")

    /// Configures, starts and links a pair for `folders`, keeping its homes and logs in `work`.
    public init(work: String, folders: [String]) throws {
        self.folders = folders
        self.work = work
        let ports = (0..<4).map { _ in String(ChildProcess.freePort()) }.joined(separator: ",")
        try Self.script(["--configure-only", "--ports", ports, work] + folders)
        let environment = try Self.readEnvironment(work + "/pair.env")
        for n in 1...2 {
            endpoints.append((environment["ST\(n)_GUI"] ?? "", environment["ST\(n)_APIKEY"] ?? ""))
            // The listening side (st1) must be up before st2 dials it.
            instances.append(try ChildProcess(
                "syncthing", ["serve", "--home=\(work)/st\(n)", "--no-browser", "--no-restart", "--no-upgrade"],
                environment: ["STNOUPGRADE": "1", "STMONITORED": "yes", "STHASHING": "minio"], log: "\(work)/st\(n).log"))
            try waitUntil(seconds: 30, "syncthing st\(n) answering") { try request(n - 1, "GET", "/rest/system/ping") != "" }
        }
        try Self.script(["--link", work])
    }

    deinit { stop() }

    /// Instance `index`'s REST URL (`http://127.0.0.1:PORT`).
    public func url(_ index: Int) -> String { "http://" + endpoints[index].gui }

    /// Instance `index`'s `config.xml`, where `kvfs mount --syncthing-config` reads the API key.
    public func configFile(_ index: Int) -> String { "\(work)/st\(index + 1)/config.xml" }

    /// Stops both instances and waits for them.
    public func stop() {
        for instance in instances.reversed() { instance.stop() }
        instances = []
    }

    /// Asks instance `index` (0 or 1) to scan its folder now (or only `path` in it), rather than within its watcher's second.
    public func scan(_ index: Int, path: String? = nil) throws {
        let sub = path.map { "&sub=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        try request(index, "POST", "/rest/db/scan?folder=kvfs" + sub)
    }

    /// One REST call; returns the response body.
    @discardableResult
    public func request(_ index: Int, _ method: String, _ path: String) throws -> String {
        let (gui, key) = endpoints[index]
        let result = try ChildProcess.run("curl", ["-sf", "-X", method, "-H", "X-API-Key: \(key)", "http://\(gui)\(path)"])
        guard result.status == 0 else { throw ChildProcessError.failed("\(method) \(path)", result.output) }
        return result.output
    }

    private static func script(_ arguments: [String]) throws {
        let result = try ChildProcess.run("bash", [script] + arguments)
        guard result.status == 0 else { throw ChildProcessError.failed("syncthing-pair.sh \(arguments.first ?? "")", result.output) }
    }

    private static func readEnvironment(_ path: String) throws -> [String: String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }
}
