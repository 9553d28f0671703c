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

    /// Starts the emulator, its log in `folder`, and waits (up to 30 s) until it answers.
    public init(logIn folder: String) throws {
        guard let program = Self.program else { throw ChildProcessError.notInstalled("moto_server") }
        let port = ChildProcess.freePort()
        endpoint = "http://127.0.0.1:\(port)"
        log = folder + "/moto.log"
        process = try ChildProcess(program, ["-H", "127.0.0.1", "-p", String(port)], log: log)
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

    /// Creates the bucket `name` (moto asks for no signature).
    public func createBucket(_ name: String) throws {
        let result = try ChildProcess.run("curl", ["-s", "-f", "-X", "PUT", "\(endpoint)/\(name)"])
        guard result.status == 0 else { throw ChildProcessError.failed("creating bucket \(name)", result.output) }
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
