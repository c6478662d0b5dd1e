import StateBusWire

/// The value columns of a version-2 run or snapshot part (fields 6 to 12) held entry by
/// entry, so that a generator can damage them before they are written, and write them in
/// forms other than a host's.
///
/// Damage is what a reader must refuse without trapping: a column that ends before its cells
/// do, entries no cell reads, a cell of another encoding or of an index past the object's
/// properties, a string that is not UTF-8, a value nested past the depth limit, an element
/// operation nobody knows. Forms: a host's (each packed column once), unpacked and split
/// columns (valid protobuf the fast readers hand to the generated code), interleaved
/// repeated columns (valid, and read in place).
struct RawColumns {
    /// How the columns are laid out in their message.
    enum Form: CaseIterable {
        /// As a host writes them: each packed column once, in field order.
        case canonical
        /// `cells`, `ints` and `doubles` one field per entry (protobuf's unpacked form).
        case unpacked
        /// Each packed column in two pieces (protobuf concatenates them).
        case split
        /// The packed columns last, the repeated ones interleaved.
        case interleaved
    }

    /// `property index << 3 | encoding`, as varints (wider than 32 bits when damaged).
    var cells: [UInt64] = []
    /// Varints as written (zigzag already applied).
    var ints: [UInt64] = []
    /// Bit patterns.
    var doubles: [UInt64] = []
    /// Raw bytes: not always UTF-8.
    var strings: [[UInt8]] = []
    var blobs: [[UInt8]] = []
    /// Encoded `Value` bodies.
    var values: [[UInt8]] = []
    /// Encoded `PathedChange` bodies (runs only).
    var pathed: [[UInt8]] = []

    init() {}

    /// The columns of `changes`, entry for entry as a host's `ValueColumns` writes them.
    init(_ changes: [IndexedChange]) {
        for change in changes { append(change) }
    }

    /// Appends one change.
    mutating func append(_ change: IndexedChange) {
        func cell(_ encoding: CellEncoding) { cells.append(UInt64(UInt32(truncatingIfNeeded: change.property) << 3 | encoding.rawValue)) }
        guard change.replacesWholeValue else {
            cell(.pathed)
            var body = WireWriter()
            PathCodec.writePathed(change, into: &body)
            pathed.append(body.bytes)
            return
        }
        switch change.value {
        case .int(let number):
            cell(.int)
            ints.append(UInt64(bitPattern: (number << 1) ^ (number >> 63)))
        case .bool(let flag):
            cell(.bool)
            ints.append(flag ? 2 : 0)
        case .double(let number):
            cell(.double)
            doubles.append(number.bitPattern)
        case .string(let text):
            cell(.string)
            strings.append(Array(text.utf8))
        case .bytes(let data):
            cell(.bytes)
            blobs.append(Array(data))
        case .null:
            cell(.null)
        case .list, .map:
            cell(.value)
            values.append(ValueCodec.encoded(change.value))
        }
    }

    // MARK: Damage

    /// Applies one to three kinds of damage; `propertyCount` is how many properties the
    /// object has (indexes at and past it are out of range).
    mutating func damage(propertyCount: Int, using random: inout SeededRandom) {
        for _ in 0..<Int.random(in: 1...3, using: &random) { damageOnce(propertyCount: propertyCount, using: &random) }
    }

    private mutating func damageOnce(propertyCount: Int, using random: inout SeededRandom) {
        switch Int.random(in: 0..<11, using: &random) {
        case 0:  // a column ends early
            dropEntry(using: &random)
        case 1:  // an entry no cell reads
            addEntry(using: &random)
        case 2 where !cells.isEmpty:  // another encoding
            let at = Int.random(in: 0..<cells.count, using: &random)
            cells[at] = cells[at] & ~7 | UInt64.random(in: 0...7, using: &random)
        case 3 where !cells.isEmpty:  // an index past the properties, far past, or at the limit of the cell's 29 bits
            let at = Int.random(in: 0..<cells.count, using: &random)
            let index = [propertyCount, propertyCount + 1, 1000, 1 << 28, (1 << 29) - 1].randomElement(using: &random)!
            cells[at] = UInt64(index) << 3 | cells[at] & 7
        case 4 where !cells.isEmpty:  // bits above 32 (both decoders drop them) or a cell that is not a varint at all
            let at = Int.random(in: 0..<cells.count, using: &random)
            cells[at] |= random.oneIn(2) ? 1 << 40 : 1 << 63
        case 5:  // a string that is not UTF-8
            let bad: [[UInt8]] = [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]
            let bytes = bad.randomElement(using: &random)!
            if strings.isEmpty || random.oneIn(3) {
                strings.append(bytes)
            } else {
                strings[Int.random(in: 0..<strings.count, using: &random)] += bytes
            }
        case 6:  // a value that is not one, or nested too deep
            values.append(Self.hostileValue(using: &random))
        case 7:  // a pathed change that is not one
            pathed.append(Self.hostilePathed(using: &random))
        case 8:  // an int that is not a varint (eleven bytes)
            ints.append(UInt64.max)
            ints.append(UInt64.max)
        case 9:  // a huge run of nulls (no column), or of bools
            let encoding: CellEncoding = random.oneIn(2) ? .null : .bool
            let count = Int.random(in: 100...5000, using: &random)
            cells += (0..<count).map { _ in UInt64(Int.random(in: 0..<max(1, propertyCount), using: &random)) << 3 | UInt64(encoding.rawValue) }
            if encoding == .bool { ints += Array(repeating: 2, count: count) }
        default:  // every column emptied but the cells
            (ints, doubles, strings, blobs, values, pathed) = ([], [], [], [], [], [])
        }
    }

    private mutating func dropEntry(using random: inout SeededRandom) {
        switch Int.random(in: 0..<7, using: &random) {
        case 0: _ = ints.popLast()
        case 1: _ = doubles.popLast()
        case 2: _ = strings.popLast()
        case 3: _ = blobs.popLast()
        case 4: _ = values.popLast()
        case 5: _ = pathed.popLast()
        default: _ = cells.popLast()
        }
    }

    private mutating func addEntry(using random: inout SeededRandom) {
        switch Int.random(in: 0..<7, using: &random) {
        case 0: ints.append(UInt64.random(in: 0...UInt64.max, using: &random))
        case 1: doubles.append(ValueGenerator.doubles.randomElement(using: &random)!.bitPattern)
        case 2: strings.append(Array(ValueGenerator.string(maxBytes: 32, using: &random).utf8))
        case 3: blobs.append(random.bytes(random.length(upTo: 64)))
        case 4: values.append(ValueCodec.encoded(Value(wire: ValueGenerator.value(depth: 2, maxBytes: 64, using: &random))))
        case 5: pathed.append(Self.hostilePathed(using: &random))
        default: cells.append(UInt64.random(in: 0...64, using: &random))
        }
    }

    /// The body of a `Value` message that is not a valid one, or is one nested too deep.
    static func hostileValue(using random: inout SeededRandom) -> [UInt8] {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return (try? ValueGenerator.deep(levels: Int.random(in: 25...90, using: &random), using: &random).serializedBytes()) ?? []
        case 1: return random.bytes(random.length(upTo: 64))
        case 2: return [0x2A, 0x05, 0x61]  // a string field whose length runs past the end
        case 3: return [0x3A, 0x02, 0x0A, 0x7F]  // a list whose item's length runs past the list
        case 4: return [0x18]  // an int field without its varint
        default: return [0xF8, 0x07, 0x01] + ValueCodec.encoded(.int(1))  // an unknown kind, then an int
        }
    }

    /// The body of a `PathedChange` that is not a valid one, or is an odd valid one.
    static func hostilePathed(using random: inout SeededRandom) -> [UInt8] {
        var body = WireWriter()
        switch Int.random(in: 0..<6, using: &random) {
        case 0:  // an element operation nobody knows
            body.field(2, message: { ValueCodec.write(.int(1), into: &$0) })
            body.field(3, varint: UInt64([4, 9, 255, UInt64(UInt32.max)].randomElement(using: &random)!))
        case 1:  // a far position, an index step past any list
            body.field(1, message: { $0.field(2, varint: UInt64(UInt32.max)) })
            body.field(3, varint: UInt64.random(in: 1...3, using: &random))
            body.field(4, varint: UInt64(UInt32.max))
        case 2:  // an id step nested too deep
            let deep: [UInt8] = (try? ValueGenerator.deep(levels: Int.random(in: 30...90, using: &random), using: &random).serializedBytes()) ?? []
            body.field(1, message: { $0.field(3, bytes: deep) })
        case 3:  // a path step with a field of the wrong wire type
            body.field(1, message: { $0.field(1, varint: 7) })
        case 4:  // steps of every kind, some odd
            for step in ValueGenerator.path(using: &random) {
                body.field(1, bytes: (try? step.serializedBytes()) ?? [])
            }
            body.field(2, message: { ValueCodec.write(Value(wire: ValueGenerator.value(depth: 2, maxBytes: 32, using: &random)), into: &$0) })
        default:
            return random.bytes(random.length(upTo: 48))
        }
        return body.bytes
    }

    // MARK: Writing

    /// Writes the columns as fields 6 to 11 (and 12, `pathed`, when `withPathed`) of their
    /// message, laid out as `form` says.
    func write(into writer: inout WireWriter, form: Form, withPathed: Bool) {
        func packed(_ number: UInt32, _ entries: [UInt64], fixed: Bool) {
            guard !entries.isEmpty else { return }
            func body(_ slice: ArraySlice<UInt64>) -> WireWriter {
                var column = WireWriter()
                for entry in slice { if fixed { column.fixed64(entry) } else { column.varint(entry) } }
                return column
            }
            switch form {
            case .unpacked:
                for entry in entries {
                    writer.tag(number, fixed ? .fixed64 : .varint)
                    if fixed { writer.fixed64(entry) } else { writer.varint(entry) }
                }
            case .split where entries.count > 1:
                let half = entries.count / 2
                writer.field(number, packed: body(entries[..<half]))
                writer.field(number, packed: body(entries[half...]))
            default:
                writer.field(number, packed: body(entries[...]))
            }
        }
        func repeated(_ number: UInt32, _ entries: [[UInt8]], into out: inout WireWriter) {
            for entry in entries {
                out.tag(number, .lengthDelimited)
                out.varint(UInt64(entry.count))
                out.append(contentsOf: entry)
            }
        }
        var lists: [(UInt32, [[UInt8]])] = [(9, strings), (10, blobs), (11, values)]
        if withPathed { lists.append((12, pathed)) }
        if form == .interleaved {
            // Round-robin over the repeated columns, then the packed ones.
            let longest = lists.map(\.1.count).max() ?? 0
            for index in 0..<longest {
                for (number, entries) in lists where index < entries.count { repeated(number, [entries[index]], into: &writer) }
            }
            packed(6, cells, fixed: false)
            packed(7, ints, fixed: false)
            packed(8, doubles, fixed: true)
            return
        }
        packed(6, cells, fixed: false)
        packed(7, ints, fixed: false)
        packed(8, doubles, fixed: true)
        for (number, entries) in lists { repeated(number, entries, into: &writer) }
    }
}
