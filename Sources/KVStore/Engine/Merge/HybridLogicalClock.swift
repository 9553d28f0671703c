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

    /// The latest timestamp a record may carry: the last millisecond of the
    /// year 9999, with the largest counter. The journal's reader refuses any
    /// later stamp (honouring one would push every clock that reads it to the
    /// end of the 48-bit range), and the clock never issues one, so this
    /// device never writes a record its own reader would drop.
    public static let latest = HLCTimestamp(milliseconds: 253_402_300_799_999, counter: .max)

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

 /// Earlier: the wall-clock part first, then the counter.
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

 /// Earlier: by time, then, for equal times, by device id.
    public static func < (a: Self, b: Self) -> Bool {
        (a.time, a.device) < (b.time, b.device)
    }
}

/// A hybrid logical clock: never goes backwards, and moves past every
/// timestamp it has seen, so a device that read a write always writes after it.
///
/// A timestamp it reads moves it only within ``maximumOffset`` of this
/// device's wall clock, as CockroachDB's clock refuses a remote wall time
/// past its max-offset and the HLC paper bounds how far the logical clock
/// may run ahead of the physical one: one record stamped in the year 9999
/// must not drag every later write of this device there. The store holds
/// such a record of another device back until the wall clock comes within
/// reach of it, and rewrites such a record of its own with a stamp of now.
public final class HybridLogicalClock: Sendable {
    /// How far ahead of this device's wall clock a remote stamp may be and
    /// still move the clock: 24 hours. Wide enough for clocks that are merely
    /// wrong (a time zone kept in the hardware clock is off by up to 14 hours),
    /// narrow enough that a wrong date cannot carry every device's writes along.
    public static let maximumOffset: UInt64 = 24 * 3600 * 1000

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
    ///
    /// - Throws: ``KVStoreError/clockOutOfRange(_:)`` when that timestamp
    ///   would pass ``HLCTimestamp/latest`` (the wall clock, or a stamp this
    ///   device wrote earlier, reads past the year 9999): a record stamped so
    ///   would be refused by every reader, this one included.
    public func now() throws(KVStoreError) -> HLCTimestamp {
        let wall = wallClock()
        return try last.withLock { (last) throws(KVStoreError) -> HLCTimestamp in
            let next: HLCTimestamp
            if wall > last.milliseconds {
                next = HLCTimestamp(milliseconds: min(wall, HLCTimestamp.latest.milliseconds + 1), counter: 0)
            } else if last.counter == .max {
                next = HLCTimestamp(milliseconds: last.milliseconds + 1, counter: 0)
            } else {
                next = HLCTimestamp(milliseconds: last.milliseconds, counter: last.counter + 1)
            }
            guard next <= HLCTimestamp.latest else { throw .clockOutOfRange(next) }
            last = next
            return next
        }
    }

    /// The wall clock's reading now, in milliseconds since 1970 (what history's age limit counts from).
    public func wallTime() -> UInt64 { wallClock() }

    /// The latest remote timestamp the clock follows now: ``maximumOffset`` past the wall clock.
    public func horizon() -> HLCTimestamp {
        let milliseconds = wallClock().addingReportingOverflow(Self.maximumOffset)
        guard !milliseconds.overflow, milliseconds.partialValue < HLCTimestamp.latest.milliseconds else { return .latest }
        return HLCTimestamp(milliseconds: milliseconds.partialValue, counter: .max)
    }

    /// Moves the clock past a timestamp read from any folder, this device's
    /// own included, unless it is past ``horizon()``: then the clock stays,
    /// and this returns false.
    ///
    /// This device's own stamps get the same bound: a record it wrote while
    /// its clock was wrong (or one another program wrote into its folder)
    /// would otherwise carry every later write of this device past the
    /// other devices' horizons, where they hold it back, or to the year 9999,
    /// where every write fails. Such a record is rewritten instead
    /// (`EngineState.rewriteOwnRecordsAhead()`).
    @discardableResult
    public func observe(_ time: HLCTimestamp) -> Bool {
        guard time <= horizon() else { return false }
        last.withLock { last in last = max(last, time) }
        return true
    }
}
