/// A seeded generator (xoshiro256**, seeded through SplitMix64), so a run is repeatable
/// from its `--seed`. `SystemRandomNumberGenerator` cannot be seeded.
struct SeededRandom: RandomNumberGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init(seed: UInt64) {
        var mix = seed
        func next() -> UInt64 {
            mix &+= 0x9E37_79B9_7F4A_7C15
            var z = mix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (next(), next(), next(), next())
    }

    mutating func next() -> UInt64 {
        let result = ((state.1 &* 5) << 7 | (state.1 &* 5) >> 57) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = state.3 << 45 | state.3 >> 19
        return result
    }

    /// `true` with probability `1 / n`.
    mutating func oneIn(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &self) == 0 }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A length skewed towards small values, sometimes up to `maximum`: most bugs need
    /// short inputs, a few need long ones.
    mutating func length(upTo maximum: Int) -> Int {
        switch Int.random(in: 0..<10, using: &self) {
        case 0..<6: Int.random(in: 0...min(16, maximum), using: &self)
        case 6..<9: Int.random(in: 0...min(512, maximum), using: &self)
        default: Int.random(in: 0...maximum, using: &self)
        }
    }
}
