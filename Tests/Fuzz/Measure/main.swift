// Runs inputs through a fuzz target without libFuzzer or sanitizers, and
// prints the slowest input's time and the process's peak memory: the
// figures for "worst decode time and memory" (mount-scripts/fuzz.sh --measure).
// Usage: kvfs-measure TARGET FILE|FOLDER…

import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let target = fuzzTargets[name] else {
    FileHandle.standardError.write(Data("usage: kvfs-measure TARGET FILE|FOLDER… (targets: \(fuzzTargets.keys.sorted()))\n".utf8))
    exit(2)
}
var files: [String] = []
for path in arguments.dropFirst() {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
    if isFolder.boolValue {
        files += ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
    } else {
        files.append(path)
    }
}
var slowest = (seconds: 0.0, file: "")
let clock = ContinuousClock()
for file in files {
    guard let bytes = FileManager.default.contents(atPath: file) else { continue }
    let elapsed = clock.measure {
        do {
            try bytes.withUnsafeBytes { try target($0) }
        } catch {
            fatalError("\(name): \(file): \(error)")
        }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    if seconds > slowest.seconds { slowest = (seconds, file) }
}
var usage = rusage()
getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
print("\(name): \(files.count) inputs; slowest \(String(format: "%.1f", slowest.seconds * 1000)) ms (\((slowest.file as NSString).lastPathComponent)); peak RSS \(usage.ru_maxrss / 1024) MiB")
