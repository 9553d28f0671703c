import Foundation

// kvfs-bench SUBCOMMAND [OPTIONS]: measurements of kvfs, one subcommand per
// file (each a `Benchmark`); add a new one to `benchmarks`.
let benchmarks: [any Benchmark.Type] = [PropagationBenchmark.self, MountPropagationBenchmark.self, WaitBenchmark.self, HistoryBenchmark.self, HistoryWritesBenchmark.self, DeviceAppendBenchmark.self,
                                        SealedCostBenchmark.self]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks.first(where: { $0.name == name }) else {
    print("usage: kvfs-bench SUBCOMMAND [OPTIONS]\n\nsubcommands:")
    for benchmark in benchmarks { print("  \(benchmark.usage)\n      \(benchmark.summary)") }
    exit(arguments.isEmpty || ["-h", "--help", "help"].contains(arguments[0]) ? 0 : 2)
}
let given = Array(arguments.dropFirst())
if given.contains(where: { ["-h", "--help"].contains($0) }) {
    print("usage: kvfs-bench \(benchmark.usage)\n\n\(benchmark.summary)")
    exit(0)
}
// Every option a benchmark takes is in its usage line: anything else is a typo, not a default.
let options = Options(given)
let known = Set(benchmark.usage.matches(of: /--([a-z-]+)/).map { String($0.1) })
if let unknown = options.names.subtracting(known).sorted().first {
    FileHandle.standardError.write(Data("kvfs-bench \(name): unknown option --\(unknown)\nusage: kvfs-bench \(benchmark.usage)\n".utf8))
    exit(64)
}
do {
    try benchmark.run(options)
} catch {
    FileHandle.standardError.write(Data("kvfs-bench \(name): \(error)\n".utf8))
    exit(1)
}
