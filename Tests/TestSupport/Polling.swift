import Foundation

/// The one way the tests wait for something that happens by itself (a file
/// arriving, a daemon answering, a notification posted): look every
/// `interval` seconds until `condition` holds, or until `seconds` have passed
/// and one last look has failed. Returns whether it held.
///
/// While the time runs, a condition that throws has not held yet; the last
/// look's error is thrown. Async code has its own form, which sleeps without holding a thread.
@discardableResult
public func poll(seconds: Double, every interval: Double = 0.01, until condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? condition()) == true { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try condition()
}

/// ``poll(seconds:every:until:)`` for async tests: it sleeps without holding a thread.
public func poll(seconds: Double, every interval: Double = 0.01, until condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? condition()) == true { return true }
        try? await Task.sleep(for: .seconds(interval))
    }
    return try condition()
}

/// ``poll(seconds:every:until:)`` that throws ``TimedOut`` when `condition`
/// never held: for a step that everything after it needs.
/// `failure` says what the state was then; the last look's error, if it threw, is said too.
public func waitUntil(seconds: Double, _ what: String, every interval: Double = 0.01, _ condition: () throws -> Bool,
                      failure: () -> String = { "" }) throws {
    let held: Bool
    var reason = ""
    do {
        held = try poll(seconds: seconds, every: interval, until: condition)
    } catch {
        held = false
        reason = ": \(error)"
    }
    guard held else {
        let state = failure()
        throw TimedOut(description: "waited \(Int(seconds)) s for \(what)\(reason)" + (state.isEmpty ? "" : "\n" + state))
    }
}

/// What ``waitUntil(seconds:_:every:_:failure:)`` throws.
public struct TimedOut: Error, CustomStringConvertible {
    /// What was waited for, how long, and the state at the end.
    public var description: String
}
