import Foundation

/// Rows of text as aligned columns, two spaces apart, one row a line: how
/// `kvfs devices` and `kvfs stores` print their tables.
enum TextTable {
    static func format(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }
}
