import Foundation
import StrainKit

// The object model of the articles' sports game: a league of teams, each game
// holding its home and away team, each team the array of its games, players
// pointing back to their team, records held by a player. Every class adopts
// NSCoding the way an app would, so NSKeyedArchiver/Unarchiver recurse through it.

final class League: NSObject, NSCoding {
    var teams: [Team]
    var games: [Game]

    init(teams: [Team], games: [Game]) {
        self.teams = teams
        self.games = games
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(teams as NSArray, forKey: "teams")
        coder.encode(games as NSArray, forKey: "games")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        teams = coder.decodeObject(forKey: "teams") as? [Team] ?? []
        games = coder.decodeObject(forKey: "games") as? [Game] ?? []
    }
}

final class Team: NSObject, NSCoding {
    var name: String
    var games: [Game] = []
    var players: [Player] = []
    var bestRecord: Record?

    init(name: String) { self.name = name }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(name as NSString, forKey: "name")
        coder.encode(games as NSArray, forKey: "games")
        coder.encode(players as NSArray, forKey: "players")
        coder.encode(bestRecord, forKey: "bestRecord")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        name = (coder.decodeObject(forKey: "name") as? NSString).map(String.init) ?? ""
        games = coder.decodeObject(forKey: "games") as? [Game] ?? []
        players = coder.decodeObject(forKey: "players") as? [Player] ?? []
        bestRecord = coder.decodeObject(forKey: "bestRecord") as? Record
    }
}

final class Game: NSObject, NSCoding {
    var home: Team
    var away: Team
    var homeScore: Int
    var awayScore: Int

    init(home: Team, away: Team, homeScore: Int, awayScore: Int) {
        self.home = home
        self.away = away
        self.homeScore = homeScore
        self.awayScore = awayScore
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(home, forKey: "home")
        coder.encode(away, forKey: "away")
        coder.encode(homeScore, forKey: "homeScore")
        coder.encode(awayScore, forKey: "awayScore")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        guard let home = coder.decodeObject(forKey: "home") as? Team,
              let away = coder.decodeObject(forKey: "away") as? Team
        else { return nil }
        self.home = home
        self.away = away
        homeScore = coder.decodeInteger(forKey: "homeScore")
        awayScore = coder.decodeInteger(forKey: "awayScore")
    }
}

final class Player: NSObject, NSCoding {
    var name: String
    weak var team: Team?

    init(name: String, team: Team) {
        self.name = name
        self.team = team
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(name as NSString, forKey: "name")
        coder.encode(team, forKey: "team")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        name = (coder.decodeObject(forKey: "name") as? NSString).map(String.init) ?? ""
        team = coder.decodeObject(forKey: "team") as? Team
    }
}

final class Record: NSObject, NSCoding {
    var title: String
    var year: Int
    var statistic: Int
    var holder: Player?

    init(title: String, year: Int, statistic: Int, holder: Player?) {
        self.title = title
        self.year = year
        self.statistic = statistic
        self.holder = holder
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(title as NSString, forKey: "title")
        coder.encode(year, forKey: "year")
        coder.encode(statistic, forKey: "statistic")
        coder.encode(holder, forKey: "holder")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        title = (coder.decodeObject(forKey: "title") as? NSString).map(String.init) ?? ""
        year = coder.decodeInteger(forKey: "year")
        statistic = coder.decodeInteger(forKey: "statistic")
        holder = coder.decodeObject(forKey: "holder") as? Player
    }
}

/// The acyclic shape: each node holds the next, so the coders recurse once per node.
final class ChainNode: NSObject, NSCoding {
    var value: Int
    var next: ChainNode?

    init(value: Int, next: ChainNode?) {
        self.value = value
        self.next = next
    }

    func encode(with coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        coder.encode(value, forKey: "value")
        coder.encode(next, forKey: "next")
    }

    init?(coder: NSCoder) {
        RecursionDepth.enter()
        defer { RecursionDepth.leave() }
        value = coder.decodeInteger(forKey: "value")
        next = coder.decodeObject(forKey: "next") as? ChainNode
    }
}
