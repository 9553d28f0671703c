import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One HTTP request and its answer, waited for: kvfs's bucket rounds are
/// sequential, so a blocking call reads better than callbacks. Over one
/// `URLSession`, which keeps connections alive between requests, with TLS
/// and the timeouts its configuration gives.
struct HTTPExchange: Sendable {
    /// An answer: its status, headers (names lower-cased) and body.
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    private let session: URLSession

    /// An exchange that gives up on a request after `timeout` seconds without progress, and after `4 × timeout` in all.
    init(timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 4
        configuration.httpMaximumConnectionsPerHost = 2
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    /// Sends `request` and waits for its whole answer.
    func send(_ request: URLRequest) throws(S3Error) -> Answer {
        let result = Mutex<Result<Answer, S3Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            let outcome: Result<Answer, S3Error>
            if let error {
                outcome = .failure(.network(Self.reason(error)))
            } else if let response = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for case let (name as String, value as String) in response.allHeaderFields { headers[name.lowercased()] = value }
                outcome = .success(Answer(status: response.statusCode, headers: headers, body: data.map(Array.init) ?? []))
            } else {
                outcome = .failure(.network("no HTTP answer"))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }.resume()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// A URL error in a few words: its description, never the request's headers.
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? URLError else { return "\(type(of: error))" }
        switch error.code {
        case .timedOut: return "timed out"
        case .cannotConnectToHost: return "cannot connect"
        case .networkConnectionLost: return "connection lost"
        case .cannotFindHost: return "host not found"
        default: return "URL error \(error.code.rawValue)"
        }
    }
}
