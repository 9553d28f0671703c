import Foundation

/// Measured latencies (seconds) and their summary figures.
struct Latencies {
    private(set) var samples: [Double] = []

    mutating func add(_ seconds: Double) { samples.append(seconds) }

    /// The value below which `fraction` of the samples lie (nearest rank).
    func percentile(_ fraction: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
    }

    var median: Double { percentile(0.5) }
    var maximum: Double { samples.max() ?? .nan }

    /// Milliseconds, to a precision that suits the magnitude.
    static func format(_ seconds: Double) -> String {
        let milliseconds = seconds * 1000
        return milliseconds < 10 ? String(format: "%.2f ms", milliseconds) : String(format: "%.0f ms", milliseconds)
    }
}
