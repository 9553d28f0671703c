import Foundation
import Synchronization

/// How many requests a client made, by method, since it started and in the
/// current clock hour: what `kvfs status` shows, and what tells an idle hour's
/// cost (docs/buckets.md § What it costs).
public final class RequestCounter: Sendable {
    private let counts = Mutex<(total: [String: Int], hour: Int, thisHour: Int)>(([:], 0, 0))

    /// A counter at zero.
    public init() {}

    /// Counts one request of `kind`: its method, or `LIST` for a listing (priced apart from a GET).
    func count(_ kind: String) {
        let hour = Int(Date().timeIntervalSince1970 / 3600)
        counts.withLock { counts in
            counts.total[kind, default: 0] += 1
            if counts.hour != hour { counts = (counts.total, hour, 0) }
            counts.thisHour += 1
        }
    }

    /// The requests made so far, by kind (`GET`, `LIST`, `PUT`, `HEAD`, `POST`, `DELETE`).
    public var total: [String: Int] { counts.withLock { $0.total } }

    /// The requests made in the current clock hour.
    public var thisHour: Int {
        counts.withLock { $0.hour == Int(Date().timeIntervalSince1970 / 3600) ? $0.thisHour : 0 }
    }
}
