import Foundation

/// The pieces of the etcd keys ``EtcdPropertyStore`` writes: names escaped so that a `/`
/// stays inside its piece, and write ids written so that keys sort as the numbers do.
enum StoreKey {
    /// `%` and `/` written as `%25` and `%2F`.
    static func escape(_ name: String) -> String {
        var escaped = ""
        for character in name {
            switch character {
            case "%": escaped += "%25"
            case "/": escaped += "%2F"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// The name ``escape(_:)`` wrote.
    static func unescape(_ piece: Substring) -> String {
        piece.replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%")
    }

    /// A write id as 16 hexadecimal digits.
    static func writeID(_ id: UInt64) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
