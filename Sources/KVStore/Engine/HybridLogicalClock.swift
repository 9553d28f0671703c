import Foundation
import Synchronization

/// A hybrid logical clock reading: wall-clock milliseconds and a counter that
/// orders events within one millisecond (or while the wall clock lags).
public struct HLCTimestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970 (48 bits) and a 16-bit counter, packed so that
    /// integer order is clock order.
    public var rawValue: UInt64

    /// A timestamp from its packed form.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A timestamp from its parts.
    public init(milliseconds: UInt64, counter: UInt16) {
        rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// The wall-clock part, in milliseconds since 1970.
    public var milliseconds: UInt64 { rawValue >> 16 }
    /// The logical part.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    /// The wall-clock part as a date.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// `2026-11-22T10:15:02.345Z+3`: the time, and the counter when it is not zero.
    public var description: String {
        DateText.format(date) + (counter == 0 ? "" : "+\(counter)")
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Who wrote a record and when: the order of last-writer-wins.
///
/// Per key the greatest stamp wins; the device id breaks ties between equal clocks.
public struct Stamp: Comparable, Hashable, Sendable {
    /// The writer's clock reading.
    public var time: HLCTimestamp
    /// The writer.
    public var device: DeviceID

    /// A stamp from its parts.
    public init(time: HLCTimestamp, device: DeviceID) {
        self.time = time
        self.device = device
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.time, a.device) < (b.time, b.device)
    }
}

/// A hybrid logical clock: never goes backwards, and moves past every
/// timestamp it has seen, so a device that read a write always writes after it.
public final class HybridLogicalClock: Sendable {
    private let last = Mutex(HLCTimestamp(rawValue: 0))
    private let wallClock: @Sendable () -> UInt64

    /// A clock over the system's wall clock, or over `wallClock` (milliseconds) for tests.
    public init(wallClock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.systemMilliseconds) {
        self.wallClock = wallClock
    }

    /// Milliseconds since 1970 from the system clock.
    public static func systemMilliseconds() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }

    /// A timestamp later than every one this clock has issued or observed.
    public func now() -> HLCTimestamp {
        let wall = wallClock()
        return last.withLock { last in
            if wall > last.milliseconds {
                last = HLCTimestamp(milliseconds: wall, counter: 0)
            } else if last.counter == .max {
                last = HLCTimestamp(milliseconds: last.milliseconds + 1, counter: 0)
            } else {
                last = HLCTimestamp(milliseconds: last.milliseconds, counter: last.counter + 1)
            }
            return last
        }
    }

    /// Moves the clock past a timestamp read from elsewhere.
    public func observe(_ time: HLCTimestamp) {
        last.withLock { last in last = max(last, time) }
    }
}
