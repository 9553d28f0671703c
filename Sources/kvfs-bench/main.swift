import Foundation

// kvfs-bench SUBCOMMAND [OPTIONS]: measurements of kvfs, one subcommand per
// file (each a `Benchmark`); add a new one to `benchmarks`.
let benchmarks: [any Benchmark.Type] = [PropagationBenchmark.self, MountPropagationBenchmark.self, HistoryBenchmark.self]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks.first(where: { $0.name == name }) else {
    print("usage: kvfs-bench SUBCOMMAND [OPTIONS]\n\nsubcommands:")
    for benchmark in benchmarks { print("  \(benchmark.usage)\n      \(benchmark.summary)") }
    exit(arguments.isEmpty || ["-h", "--help", "help"].contains(arguments[0]) ? 0 : 2)
}
do {
    try benchmark.run(Options(Array(arguments.dropFirst())))
} catch {
    FileHandle.standardError.write(Data("kvfs-bench \(name): \(error)\n".utf8))
    exit(1)
}
