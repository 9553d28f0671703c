import Synchronization

/// How many requests a client made, by kind: what a round adds to the
/// requests of the hour that `kvfs status` shows, and what the tests count.
public final class RequestCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// A counter at zero.
    public init() {}

    /// Counts one request of `kind`: its method, or `LIST` for a listing (priced apart from a GET).
    func count(_ kind: String) {
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    /// The requests made so far, by kind (`GET`, `LIST`, `PUT`, `HEAD`, `POST`, `DELETE`).
    public var total: [String: Int] { counts.withLock { $0 } }

    /// The requests made so far, of every kind.
    public var sum: Int { counts.withLock { $0.values.reduce(0, +) } }
}
