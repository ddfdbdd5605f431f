import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// Builds a real `NSCoding` object graph and archives, unarchives or walks it on
/// the trial's strategy: the articles' crash, where a cyclic model decoded on a
/// GCD queue runs out of a 512 KiB stack.
struct CyclicGraphScenario: Scenario {
    static let name = "cyclic-graph"
    static let summary = "archive, unarchive or traverse an NSCoding graph: a cyclic league of teams, or an acyclic chain"
    static let objects = Metric<Int>.count("objects", better: nil, noise: .deterministic, summary: "objects in the graph")
    static let archiveBytes = Metric<Int>.bytes("archiveBytes", better: .lowerIsBetter, noise: .deterministic, summary: "bytes of the keyed archive")
    static let metrics: [any MetricDeclaration] = [objects, archiveBytes]
    /// What the work does with the graph.
    enum Operation: String, CaseIterable, Sendable { case archive, unarchive, traverse }
    /// The graph's shape.
    enum Shape: String, CaseIterable, Sendable { case league, chain }

    static let operation = Parameter<Operation>("operation", default: .archive,
                                                help: "NSKeyedArchiver, NSKeyedUnarchiver (requiresSecureCoding = false), or a recursive walk")
    static let shape = Parameter<Shape>("shape", default: .league,
                                        help: "league: teams, games holding both teams, players pointing back (cyclic); chain: each node holds the next")
    static let size = Parameter<Int>("size", in: 1...1_000_000, default: 20, help: "teams in the league, or nodes in the chain")
    static let players = Parameter<Int>("players", in: 0...100, default: 3, help: "players per team (league only)")
    static let games = Parameter<Int>("games", in: 1...100, default: 4, help: "games each team hosts (league only)")
    static let parameters: [any ParameterDeclaration] = [operation, shape, size, players, games]
    static let typicalOutcomes = [
        TypicalOutcome(.stackOverflow, because: "NSKeyedUnarchiver recurses without end on a cyclic league; archiving recurses once per object, so a big graph overflows a 512 KiB stack"),
        TypicalOutcome(.completed, because: "an acyclic chain, or a graph small enough for the stack"),
    ]
    static let starterRuns = [
        // The league archives on any stack; Linux's unarchiver recurses without end on its cycles.
        StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"]),
        StarterRun(parameters: ["operation": "unarchive"], strategies: ["thread(512KiB)", "thread(8MiB)"], expect: [.stackOverflow]),
    ]

    let operation: Operation
    let shape: Shape
    let size: Int
    let players: Int
    let gamesPerTeam: Int

    /// Reads the graph's operation, shape and size.
    init(parameters: ParameterValues) {
        operation = parameters[Self.operation]
        shape = parameters[Self.shape]
        size = parameters[Self.size]
        players = parameters[Self.players]
        gamesPerTeam = parameters[Self.games]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let graph = Prepared(makeGraph(seed: context.seed))
        let root = graph.value
        let expectedObjects = countObjects(root)
        context.record(Self.objects, expectedObjects)
        // The decoded graph is handed back and released here, after the
        // measurement, not on the work's thread: releasing a long chain recurses too.
        let keepAlive = Mutex<[Prepared<AnyObject>]>([])

        switch operation {
        case .archive:
            return { executor in
                try executor.perform {
                    let data = try NSKeyedArchiver.archivedData(withRootObject: graph.value, requiringSecureCoding: false)
                    context.record(Self.archiveBytes, data.count)
                }
            }
        case .unarchive:
            // Archiving needs deep recursion too; prepare runs on a large harness stack.
            let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false)
            context.record(Self.archiveBytes, data.count)
            return { executor in
                try executor.perform {
                    let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
                    unarchiver.requiresSecureCoding = false
                    let decoded = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
                    unarchiver.finishDecoding()
                    guard let decoded = decoded as AnyObject? else {
                        throw InvariantViolation("the unarchiver returned no root object (error: \(unarchiver.error.map { "\($0)" } ?? "none"))")
                    }
                    let objects = countObjects(decoded)
                    keepAlive.withVisibleLock { $0.append(Prepared(decoded)) }
                    try context.check(objects == expectedObjects, "decoded \(objects) objects, archived \(expectedObjects)")
                }
            }
        case .traverse:
            return { executor in
                try executor.perform {
                    let objects = walk(graph.value)
                    try context.check(objects == expectedObjects, "walked \(objects) objects, built \(expectedObjects)")
                }
            }
        }
    }

    func makeGraph(seed: UInt64) -> AnyObject {
        switch shape {
        case .chain:
            var node: ChainNode?
            for value in stride(from: size, to: 0, by: -1) {
                node = ChainNode(value: value, next: node)
            }
            return node ?? ChainNode(value: 0, next: nil)
        case .league:
            var random = SplitMix64(seed: seed)
            let teams = (0..<size).map { Team(name: "Team \($0)") }
            var games: [Game] = []
            for (index, home) in teams.enumerated() where size > 1 {
                for round in 1...gamesPerTeam {
                    var awayIndex = (index + round) % size
                    if awayIndex == index { awayIndex = (awayIndex + 1) % size }
                    let away = teams[awayIndex]
                    let game = Game(home: home, away: away, homeScore: Int(random.next() % 50), awayScore: Int(random.next() % 50))
                    home.games.append(game)
                    away.games.append(game)
                    games.append(game)
                }
            }
            for team in teams {
                team.players = (0..<players).map { Player(name: "\(team.name) player \($0)", team: team) }
                team.bestRecord = Record(title: "Most points", year: 2000 + Int(random.next() % 25),
                                         statistic: Int(random.next() % 100), holder: team.players.first)
            }
            return League(teams: teams, games: games)
        }
    }
}

/// Counts the distinct model objects reachable from `root`, without recursion.
func countObjects(_ root: AnyObject) -> Int {
    var seen = Set<ObjectIdentifier>()
    var pending: [AnyObject] = [root]
    while let object = pending.popLast() {
        guard seen.insert(ObjectIdentifier(object)).inserted else { continue }
        pending.append(contentsOf: children(of: object))
    }
    return seen.count
}

/// Counts the same objects by a depth-first recursive walk, marking the depth:
/// the shape of recursion an app's own graph code has.
func walk(_ root: AnyObject) -> Int {
    var seen = Set<ObjectIdentifier>()
    func visit(_ object: AnyObject) {
        guard seen.insert(ObjectIdentifier(object)).inserted else { return }
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        for child in children(of: object) { visit(child) }
    }
    visit(root)
    return seen.count
}

private func children(of object: AnyObject) -> [AnyObject] {
    switch object {
    case let league as League: return league.teams + league.games
    case let team as Team: return team.games + team.players + (team.bestRecord.map { [$0] } ?? [])
    case let game as Game: return [game.home, game.away]
    case let player as Player: return player.team.map { [$0] } ?? []
    case let record as Record: return record.holder.map { [$0] } ?? []
    case let node as ChainNode: return node.next.map { [$0] } ?? []
    default: return []
    }
}

/// A small, fast, seedable generator, so a trial's graph can be rebuilt exactly.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
