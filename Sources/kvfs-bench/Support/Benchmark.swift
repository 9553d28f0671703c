/// One `kvfs-bench` subcommand.
protocol Benchmark {
    /// The subcommand's name (`kvfs-bench NAME`).
    static var name: String { get }
    /// Its usage line.
    static var usage: String { get }
    /// What it measures, in a line.
    static var summary: String { get }
    /// Measures, and prints the figures.
    static func run(_ options: Options) throws
}
