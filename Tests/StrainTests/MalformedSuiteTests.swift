import Foundation
import StrainKit
import StrainRunner
import StrainScenarios
import StrainSuite
import Testing

/// Malformed suites, each with the exact error Strain gives: the place, what is wrong and what to write.
/// Re-record by running `strain run FILE --list` on each and pasting its standard error.
struct MalformedSuite: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    var error: String
    var testDescription: String { name }

    /// The lists the messages name, as the catalog and the records spell them now.
    static let strategies = StrategySpec.catalog.map(\.syntax).joined(separator: ", ")
    static let outcomes = TrialOutcome.Kind.allCases.filter { $0 != .harnessError }.map(\.rawValue).joined(separator: ", ")
}

extension MalformedSuite {
    static let all: [MalformedSuite] = [
        // Found by the suite parser's fuzzer (Tests/Fuzz): YAML breaks lines at \r too, and
        // placing the second use of a duplicated key trapped on a range past the file's \n count.
        MalformedSuite(name: "fuzz-duplicate-key-after-carriage-returns", yaml: "runs: []\rname: s\rname: t\r",
                       error: "bad.yaml:3:1: error: the key 'name' appears twice in one mapping (first at line 2); keep one of them"),
        MalformedSuite(name: "empty", yaml: "",
                       error: "bad.yaml: error: the suite file is empty; it needs at least `name:` and `runs:`"),
        MalformedSuite(name: "only-comment", yaml: "# nothing\n",
                       error: "bad.yaml: error: the suite file is empty; it needs at least `name:` and `runs:`"),
        MalformedSuite(name: "not-a-mapping", yaml: "- a\n- b\n",
                       error: "bad.yaml:1:1: error: the suite must be a mapping of keys to values (name, description, repetitions, timeout, stall, profiles, gate, measure, runs)"),
        MalformedSuite(name: "scalar-root", yaml: "hello\n",
                       error: "bad.yaml:1:1: error: the suite must be a mapping of keys to values (name, description, repetitions, timeout, stall, profiles, gate, measure, runs)"),
        MalformedSuite(name: "no-name", yaml: "runs:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:1:1: error: the suite has no `name:`; add one, e.g. `name: stack`"),
        MalformedSuite(name: "empty-name", yaml: "name: ''\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:1:7: error: `name:` is empty; give the suite a name, e.g. `name: stack`"),
        MalformedSuite(name: "no-runs", yaml: "name: s\n",
                       error: "bad.yaml:1:1: error: the suite has no `runs:`; add a list of runs, each with `scenario:` and `strategies:`"),
        MalformedSuite(name: "runs-not-list", yaml: "name: s\nruns: noop\n",
                       error: "bad.yaml:2:7: error: `runs:` must be a list of runs, each starting with `- scenario: NAME`"),
        MalformedSuite(name: "runs-empty", yaml: "name: s\nruns: []\n",
                       error: "bad.yaml:2:7: error: `runs:` must be a list of runs, each starting with `- scenario: NAME`"),
        MalformedSuite(name: "unknown-top-key", yaml: "name: s\nrepetition: 2\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:1: error: unknown key 'repetition' in the suite (did you mean 'repetitions'?); valid keys: name, description, repetitions, timeout, stall, profiles, gate, measure, runs"),
        MalformedSuite(name: "unknown-top-key-far", yaml: "name: s\nzzz: 2\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:1: error: unknown key 'zzz' in the suite; valid keys: name, description, repetitions, timeout, stall, profiles, gate, measure, runs"),
        MalformedSuite(name: "unknown-measure", yaml: "name: s\nmeasure: [instructions, instrucions, cycles]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:25: error: unknown measure 'instrucions' (did you mean 'instructions'?); valid measures: instructions\nbad.yaml:2:38: error: unknown measure 'cycles'; valid measures: instructions"),
        MalformedSuite(name: "measure-twice", yaml: "name: s\nmeasure: [instructions, instructions]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:25: error: measure 'instructions' is listed twice; list each once"),
        MalformedSuite(name: "measure-not-list", yaml: "name: s\nmeasure: {instructions: yes}\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: measure must be a value or a list of values"),
        MalformedSuite(name: "unknown-run-key", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expects: completed\n",
                       error: "bad.yaml:5:5: error: unknown key 'expects' in a run (did you mean 'expect'?); valid keys: scenario, parameters, strategies, profiles, repetitions, timeout, stall, memory-limit, thread-limit, expect, gate"),
        MalformedSuite(name: "unknown-run-key-strategy", yaml: "name: s\nruns:\n  - scenario: noop\n    strategy: [main]\n",
                       error: "bad.yaml:3:5: error: the run of 'noop' has no `strategies:`; add a list such as [gcd-global, thread(512KiB)]\nbad.yaml:4:5: error: unknown key 'strategy' in a run (did you mean 'strategies'?); valid keys: scenario, parameters, strategies, profiles, repetitions, timeout, stall, memory-limit, thread-limit, expect, gate"),
        MalformedSuite(name: "run-not-mapping", yaml: "name: s\nruns:\n  - noop\n",
                       error: "bad.yaml:3:5: error: a run must be a mapping of keys to values (scenario, parameters, strategies, profiles, repetitions, timeout, stall, memory-limit, thread-limit, expect, gate)"),
        MalformedSuite(name: "no-scenario", yaml: "name: s\nruns:\n  - strategies: [main]\n",
                       error: "bad.yaml:3:5: error: this run has no `scenario:`; valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))"),
        MalformedSuite(name: "unknown-scenario", yaml: "name: s\nruns:\n  - scenario: nop\n    strategies: [main]\n",
                       error: "bad.yaml:3:15: error: unknown scenario 'nop' (did you mean 'noop'?); valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))"),
        MalformedSuite(name: "unknown-scenario-far", yaml: "name: s\nruns:\n  - scenario: quantum\n    strategies: [main]\n",
                       error: "bad.yaml:3:15: error: unknown scenario 'quantum'; valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))"),
        MalformedSuite(name: "scenario-list", yaml: "name: s\nruns:\n  - scenario: [noop]\n    strategies: [main]\n",
                       error: "bad.yaml:3:15: error: scenario must be a single value, not a list or mapping"),
        MalformedSuite(name: "no-strategies", yaml: "name: s\nruns:\n  - scenario: noop\n",
                       error: "bad.yaml:3:5: error: the run of 'noop' has no `strategies:`; add a list such as [gcd-global, thread(512KiB)]"),
        MalformedSuite(name: "empty-strategies", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: []\n",
                       error: "bad.yaml:4:17: error: strategies is an empty list; give at least one value"),
        MalformedSuite(name: "unknown-strategy", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [gcd-globl]\n",
                       error: "bad.yaml:4:18: error: unknown strategy 'gcd-globl' (did you mean 'gcd-global'?); valid strategies: \(MalformedSuite.strategies)"),
        MalformedSuite(name: "unknown-strategy-far", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [turbo]\n",
                       error: "bad.yaml:4:18: error: unknown strategy 'turbo'; valid strategies: \(MalformedSuite.strategies)"),
        MalformedSuite(name: "strategy-twice", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main, main]\n",
                       error: "bad.yaml:4:24: error: strategy 'main' is listed twice; list each once"),
        MalformedSuite(name: "thread-no-stack", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread]\n",
                       error: "bad.yaml:4:18: error: 'thread' needs a stack size; write e.g. thread(512KiB)"),
        MalformedSuite(name: "thread-unclosed", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(512KiB]\n",
                       error: "bad.yaml:4:18: error: 'thread(512KiB' opens a parenthesis it does not close; write e.g. thread(512KiB)"),
        MalformedSuite(name: "thread-bad-size", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(lots)]\n",
                       error: "bad.yaml:4:18: error: 'lots' in 'thread(lots)' is not a stack size; write a size such as 512KiB, 1MiB or 8MiB"),
        MalformedSuite(name: "thread-4KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(4KiB)]\n",
                       error: "bad.yaml:4:18: error: stack size 4KiB in 'thread(4KiB)' is under 32KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use 32KiB or more"),
        MalformedSuite(name: "thread-16KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(16KiB)]\n",
                       error: "bad.yaml:4:18: error: stack size 16KiB in 'thread(16KiB)' is under 32KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use 32KiB or more"),
        MalformedSuite(name: "thread-1025KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(1025KiB)]\n",
                       error: "bad.yaml:4:18: error: the stack size in 'thread(1025KiB)' is not a whole number of 4KiB pages; did you mean thread(1028KiB)?"),
        MalformedSuite(name: "thread-40000", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(40000)]\n",
                       error: "bad.yaml:4:18: error: the stack size in 'thread(40000)' is not a whole number of 4KiB pages; did you mean thread(40KiB)?"),
        MalformedSuite(name: "thread-2GiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread(2GiB)]\n",
                       error: "bad.yaml:4:18: error: stack size 2GiB in 'thread(2GiB)' is over 1GiB, which Foundation clamps; use 1GiB or less"),
        MalformedSuite(name: "thread-queue-1025KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread-queue(1025KiB)]\n",
                       error: "bad.yaml:4:18: error: the stack size in 'thread-queue(1025KiB)' is not a whole number of 4KiB pages; did you mean thread-queue(1028KiB)?"),
        MalformedSuite(name: "pool-0", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"thread-pool(0, 512KiB)\"]\n",
                       error: "bad.yaml:4:18: error: '0' in 'thread-pool(0, 512KiB)' is not a thread count from 1 to 4096; write e.g. thread-pool(64, 512KiB)"),
        MalformedSuite(name: "pool-4097", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"thread-pool(4097, 512KiB)\"]\n",
                       error: "bad.yaml:4:18: error: '4097' in 'thread-pool(4097, 512KiB)' is not a thread count from 1 to 4096; write e.g. thread-pool(64, 512KiB)"),
        MalformedSuite(name: "pool-4096-16KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"thread-pool(4096, 16KiB)\"]\n",
                       error: "bad.yaml:4:18: error: stack size 16KiB in 'thread-pool(4096, 16KiB)' is under 32KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use 32KiB or more"),
        MalformedSuite(name: "pool-4096-8MiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"thread-pool(4096, 8MiB)\"]\n",
                       error: "bad.yaml:4:18: error: 'thread-pool(4096, 8MiB)' reserves 32GiB of stacks; the limit is 16GiB: use fewer threads or smaller stacks"),
        MalformedSuite(name: "pool-one-arg", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"thread-pool(8)\"]\n",
                       error: "bad.yaml:4:18: error: 'thread-pool(8)' needs a thread count and a stack size; write e.g. thread-pool(64, 512KiB)"),
        MalformedSuite(name: "pool-unquoted", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [thread-pool(8, 512KiB)]\n",
                       error: "bad.yaml:4:18: error: 'thread-pool(8' opens a parenthesis it does not close; in a [a, b] list a comma ends the item, so quote this strategy: \"thread-pool(64, 512KiB)\"\nbad.yaml:4:33: error: unknown strategy '512KiB)'; valid strategies: \(MalformedSuite.strategies)"),
        MalformedSuite(name: "gcd-bad-qos", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [gcd-global(fast)]\n",
                       error: "bad.yaml:4:18: error: unknown QoS 'fast' in 'gcd-global(fast)'; use one of background, utility, default, userInitiated, userInteractive"),
        MalformedSuite(name: "task-bad-priority", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [task(urgent)]\n",
                       error: "bad.yaml:4:18: error: unknown task priority 'urgent' in 'task(urgent)'; use one of background, utility, low, medium, high, userInitiated"),
        MalformedSuite(name: "timeout-inf", yaml: "name: s\ntimeout: inf\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: 'inf' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "timeout-infinity", yaml: "name: s\ntimeout: infinity\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: 'infinity' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "timeout-nan", yaml: "name: s\ntimeout: nan\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: 'nan' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "timeout-1e300s", yaml: "name: s\ntimeout: 1e300s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout '1e300s' is out of range; write a duration from 10ms to 24h"),
        MalformedSuite(name: "timeout-huge-h", yaml: "name: s\ntimeout: 99999999999h\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout '99999999999h' is out of range; write a duration from 10ms to 24h"),
        MalformedSuite(name: "timeout-zero", yaml: "name: s\ntimeout: 0s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout '0s' is out of range; write a duration from 10ms to 24h"),
        MalformedSuite(name: "timeout-tiny", yaml: "name: s\ntimeout: 1e-300s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout '1e-300s' is out of range; write a duration from 10ms to 24h"),
        MalformedSuite(name: "timeout-negative", yaml: "name: s\ntimeout: -5s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout '-5s' is out of range; write a duration from 10ms to 24h"),
        MalformedSuite(name: "timeout-words", yaml: "name: s\ntimeout: soon\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: 'soon' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "timeout-hex", yaml: "name: s\ntimeout: 0x10\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: '0x10' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "timeout-list", yaml: "name: s\ntimeout: [1s]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:10: error: timeout must be a single value, not a list or mapping"),
        MalformedSuite(name: "stall-infinity", yaml: "name: s\nstall: infinity\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:8: error: 'infinity' is not a valid value for stall; write a duration from 100ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "stall-1e300s", yaml: "name: s\nstall: 1e300s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:8: error: stall '1e300s' is out of range; write a duration from 100ms to 24h"),
        MalformedSuite(name: "stall-tiny", yaml: "name: s\nstall: 1ms\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:8: error: stall '1ms' is out of range; write a duration from 100ms to 24h"),
        // A refused stall is not then compared with the timeout as the default it fell back to, a value the file
        // never wrote (`stall 2s is not shorter than the timeout 1s` under `stall: 10ms`: re-trial 35q, F5).
        MalformedSuite(name: "expect-harness-error", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: [completed, harnessError]\n",
                       error: "bad.yaml:5:25: error: harnessError cannot be expected: it is Strain's own failure, never the code under test's, and always fails the run (exit code 3); remove it from expect"),
        MalformedSuite(name: "run-stall-tiny-short-timeout",
                       yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    stall: 10ms\n    timeout: 1s\n",
                       error: "bad.yaml:5:12: error: stall '10ms' is out of range; write a duration from 100ms to 24h"),
        MalformedSuite(name: "suite-stall-tiny-short-timeout", yaml: "name: s\nstall: 10ms\ntimeout: 1s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:8: error: stall '10ms' is out of range; write a duration from 100ms to 24h"),
        MalformedSuite(name: "stall-over-timeout", yaml: "name: s\ntimeout: 5s\nstall: 10s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:3:8: error: stall 10s is not shorter than the timeout 5s, so the watchdog could never step in; make stall shorter than timeout"),
        MalformedSuite(name: "run-timeout-inf", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    timeout: inf\n",
                       error: "bad.yaml:5:14: error: 'inf' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m"),
        MalformedSuite(name: "run-stall-tiny", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    stall: 5ms\n",
                       error: "bad.yaml:5:12: error: stall '5ms' is out of range; write a duration from 100ms to 24h"),
        MalformedSuite(name: "repetitions-zero", yaml: "name: s\nrepetitions: 0\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:14: error: '0' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "repetitions-max", yaml: "name: s\nrepetitions: 9223372036854775807\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:14: error: '9223372036854775807' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "repetitions-over", yaml: "name: s\nrepetitions: 10001\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:14: error: '10001' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "repetitions-word", yaml: "name: s\nrepetitions: many\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:14: error: 'many' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "repetitions-float", yaml: "name: s\nrepetitions: 2.5\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:14: error: '2.5' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "run-repetitions-negative", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    repetitions: -1\n",
                       error: "bad.yaml:5:18: error: '-1' is not a valid value for repetitions; write a whole number from 1 to 10000"),
        MalformedSuite(name: "unknown-profile", yaml: "name: s\nprofiles: [iso]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:12: error: unknown profile 'iso' (did you mean 'ios'?); valid profiles: linux, ios, macos"),
        MalformedSuite(name: "unknown-profile-far", yaml: "name: s\nprofiles: [windows]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:12: error: unknown profile 'windows'; valid profiles: linux, ios, macos"),
        MalformedSuite(name: "empty-profiles", yaml: "name: s\nprofiles: []\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:11: error: profiles is an empty list; give at least one value"),
        MalformedSuite(name: "params-on-noop", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    parameters: {size: 3}\n",
                       error: "bad.yaml:5:17: error: scenario 'noop' takes no parameters; remove `parameters:`"),
        MalformedSuite(name: "unknown-param", yaml: "name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {sise: 3}\n    strategies: [main]\n",
                       error: "bad.yaml:4:18: error: unknown key 'sise' in the parameters of 'cyclic-graph' (did you mean 'size'?); valid keys: operation, shape, size, players, games"),
        MalformedSuite(name: "param-bad-choice", yaml: "name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {operation: archve}\n    strategies: [main]\n",
                       error: "bad.yaml:4:29: error: 'archve' is not a valid value for operation; use one of archive, unarchive, traverse (did you mean 'archive'?)"),
        MalformedSuite(name: "param-out-of-range", yaml: "name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {size: 0}\n    strategies: [main]\n",
                       error: "bad.yaml:4:24: error: '0' is not a valid value for size; use a whole number from 1 to 1000000"),
        MalformedSuite(name: "param-empty-list", yaml: "name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {size: []}\n    strategies: [main]\n",
                       error: "bad.yaml:4:24: error: parameter 'size' is an empty list; give at least one value"),
        MalformedSuite(name: "param-mapping", yaml: "name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: [size]\n    strategies: [main]\n",
                       error: "bad.yaml:4:17: error: the parameters of 'cyclic-graph' must be a mapping of keys to values (operation, shape, size, players, games)"),
        MalformedSuite(name: "unknown-outcome", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: complete\n",
                       error: "bad.yaml:5:13: error: unknown outcome 'complete' (did you mean 'completed'?); valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
        MalformedSuite(name: "unknown-outcome-far", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: exploded\n",
                       error: "bad.yaml:5:13: error: unknown outcome 'exploded'; valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
        MalformedSuite(name: "harness-error-expected", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: harnessError\n",
                       error: "bad.yaml:5:13: error: harnessError cannot be expected: it is Strain's own failure, never the code under test's, and always fails the run (exit code 3); remove it from expect"),
        MalformedSuite(name: "expect-other-strategy", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect:\n      gcd-serial: completed\n",
                       error: "bad.yaml:6:7: error: expect names 'gcd-serial', which this run does not list in `strategies:` (main); name one of those or `default`"),
        MalformedSuite(name: "expect-profile-not-run", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect:\n      ios: completed\n",
                       error: "bad.yaml:6:7: error: expect names profile 'ios', which this run does not run on (`profiles:` linux); add it to the run's `profiles:` or remove this entry"),
        MalformedSuite(name: "expect-profiles-nested", yaml: "name: s\nprofiles: [linux, ios]\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect:\n      ios:\n        linux: completed\n",
                       error: "bad.yaml:8:9: error: expect's ios names profile 'linux' inside it; profiles do not nest: under ios, name strategies or `default`, and give linux its own entry beside ios"),
        MalformedSuite(name: "expect-profile-other-strategy", yaml: "name: s\nprofiles: [linux, ios]\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect:\n      ios: {gcd-serial: completed}\n",
                       error: "bad.yaml:7:13: error: expect names 'gcd-serial', which this run does not list in `strategies:` (main); name one of those or `default`"),
        MalformedSuite(name: "expect-profile-bad-outcome", yaml: "name: s\nprofiles: [linux, ios]\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: {ios: [stackOverflw], linux: completed}\n",
                       error: "bad.yaml:6:20: error: unknown outcome 'stackOverflw' (did you mean 'stackOverflow'?); valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
        MalformedSuite(name: "expect-bad-strategy", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect:\n      gcd-turbo: completed\n",
                       error: "bad.yaml:6:7: error: unknown strategy 'gcd-turbo'; valid strategies: \(MalformedSuite.strategies)"),
        MalformedSuite(name: "tab-indent", yaml: "name: s\nruns:\n\t- scenario: noop\n\t  strategies: [main]\n",
                       error: "bad.yaml:3:1: error: a tab indents this line; YAML indents with spaces only: replace the tab with spaces\nbad.yaml:4:1: error: a tab indents this line; YAML indents with spaces only: replace the tab with spaces"),
        MalformedSuite(name: "unclosed-bracket", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main, gcd-serial\n    expect: completed\n",
                       error: "bad.yaml:4:17: error: the `[` opened here is not closed; close it with `]` (did not find expected ',' or ']')"),
        MalformedSuite(name: "unclosed-brace", yaml: "name: s\nruns:\n  - scenario: noop\n    parameters: {a: 1\n    strategies: [main]\n",
                       error: "bad.yaml:4:17: error: the `{` opened here is not closed; close it with `}` (did not find expected ',' or '}')"),
        MalformedSuite(name: "duplicate-key", yaml: "name: s\nname: t\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:1: error: the key 'name' appears twice in one mapping (first at line 1); keep one of them"),
        MalformedSuite(name: "duplicate-run-key", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    strategies: [main]\n",
                       error: "bad.yaml:5:5: error: the key 'strategies' appears twice in one mapping (first at line 4); keep one of them"),
        MalformedSuite(name: "bad-indent", yaml: "name: s\nruns:\n  - scenario: noop\n   strategies: [main]\n",
                       error: "bad.yaml:4:4: error: not valid YAML: did not find expected '-' indicator"),
        MalformedSuite(name: "escape-in-name", yaml: "name: s\nruns:\n  - scenario: \"noop\\e[2J\"\n    strategies: [main]\n",
                       error: "bad.yaml:3:15: error: unknown scenario 'noop\\u{1b}[2J'; valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))"),
        MalformedSuite(name: "non-scalar-key", yaml: "name: s\n? [a]\n: 1\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:1: error: a complex key (`?`); suite keys are plain names: write `key: value`"),
        // Bounded before it is built: keys Yams would hash expanded, values listed twice (two trials
        // with one ID, one of them lost), limits one rule applies whatever the strategy or level.
        MalformedSuite(name: "alias-key", yaml: "a: &a [x]\n*a : y\nname: s\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:1: error: a complex key (an alias `*name` used as a key); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "alias-key-no-space", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: &m [main]\n    *m: 1\n",
                       error: "bad.yaml:5:5: error: a complex key (an alias `*name` used as a key); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "alias-key-in-flow", yaml: "a: &a [x]\nname: s\nruns: [{scenario: noop, strategies: [main], *a : 1}]\n",
                       error: "bad.yaml:3:45: error: a complex key (an alias `*name` used as a key); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "anchored-flow-key", yaml: "name: s\n&k [a]: 1\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:6: error: a complex key (a list or mapping used as a key); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "flow-key-inside-flow", yaml: "name: s\nruns: [{scenario: noop, strategies: [main], [a]: 2}]\n",
                       error: "bad.yaml:2:47: error: a complex key (a list or mapping used as a key); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "explicit-key-in-flow", yaml: "name: s\nruns: [{scenario: noop, strategies: [main], ? a : 2}]\n",
                       error: "bad.yaml:2:45: error: a complex key (`?`); suite keys are plain names: write `key: value`"),
        MalformedSuite(name: "quoted-star-colon-is-text", yaml: "name: 's *a : b'\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: crashed(99999)\n",
                       error: "bad.yaml:5:13: error: 'crashed(99999)' names no signal a process can die of; write a name such as crashed(SIGSEGV) or a number from 1 to 64"),
        MalformedSuite(name: "expect-crashed-0", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: crashed(0)\n",
                       error: "bad.yaml:5:13: error: 'crashed(0)' names no signal a process can die of; write a name such as crashed(SIGSEGV) or a number from 1 to 64"),
        MalformedSuite(name: "profile-twice", yaml: "name: s\nprofiles: [linux, ios, linux]\nruns:\n  - scenario: noop\n    strategies: [main]\n",
                       error: "bad.yaml:2:24: error: profile 'linux' is listed twice; list each once"),
        MalformedSuite(name: "run-profile-twice", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    profiles: [ios, ios]\n",
                       error: "bad.yaml:5:21: error: profile 'ios' is listed twice; list each once"),
        MalformedSuite(name: "parameter-value-twice", yaml: "name: s\nruns:\n  - scenario: stack-depth\n    parameters: {limit: [5, 6, 5]}\n    strategies: [main]\n",
                       error: "bad.yaml:4:32: error: value '5' of parameter 'limit' is listed twice; list each once"),
        MalformedSuite(name: "runs-overlap", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [main, gcd-serial]\n  - scenario: noop\n    strategies: [gcd-serial]\n",
                       error: "bad.yaml:5:5: error: this run plans noop gcd-serial linux, which the run at line 3 plans too; a trial runs once per repetition: remove the overlap from one of them (or raise `repetitions:`)"),
        MalformedSuite(name: "runs-overlap-one-line", yaml: "name: s\nruns: [{scenario: noop, strategies: [main]}, {scenario: noop, strategies: [main]}]\n",
                       error: "bad.yaml:2:46: error: this run plans noop main linux, which the run at line 2 plans too; a trial runs once per repetition: remove the overlap from one of them (or raise `repetitions:`)"),
        MalformedSuite(name: "expect-two-spellings", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [gcd-global]\n    expect:\n      gcd-global: completed\n      gcd-global(default): crashed\n",
                       error: "bad.yaml:7:7: error: expect names gcd-global twice, as 'gcd-global' at line 6 and as 'gcd-global(default)' here; keep one of them"),
        MalformedSuite(name: "task-executor-4096-1GiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"task-executor(4096, 1GiB)\"]\n",
                       error: "bad.yaml:4:18: error: 'task-executor(4096, 1GiB)' reserves 4096GiB of stacks; the limit is 16GiB: use fewer threads or smaller stacks"),
        MalformedSuite(name: "task-executor-2-16KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"task-executor(2, 16KiB)\"]\n",
                       error: "bad.yaml:4:18: error: stack size 16KiB in 'task-executor(2, 16KiB)' is under 32KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use 32KiB or more"),
        MalformedSuite(name: "task-executor-2-33KiB", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [\"task-executor(2, 33KiB)\"]\n",
                       error: "bad.yaml:4:18: error: the stack size in 'task-executor(2, 33KiB)' is not a whole number of 4KiB pages; did you mean task-executor(2, 36KiB)?"),
        MalformedSuite(name: "suite-stall-over-run-timeout", yaml: "name: s\nstall: 10s\nruns:\n  - scenario: noop\n    timeout: 5s\n    strategies: [main]\n",
                       error: "bad.yaml:5:14: error: timeout 5s is not longer than the suite's stall 10s, so the watchdog could never step in; make timeout longer, or give this run a shorter `stall:`"),
        MalformedSuite(name: "plan-too-large", yaml: "name: s\nrepetitions: 10000\nruns:\n  - scenario: noop\n    strategies: [main, gcd-serial, gcd-concurrent, gcd-global, gcd-serial-queues, task, thread(512KiB), thread-queue(512KiB), \"thread-pool(2, 512KiB)\", \"operation-queue(2)\", \"task-executor(2, 512KiB)\"]\n",
                       error: "bad.yaml:4:5: error: the plan has 110000 trials (parameter values × profiles × repetitions × strategies, summed over the runs), past the limit of 100000 from this run on; sweep fewer values, or split the suite"),
        MalformedSuite(name: "five-mistakes", yaml: "name: s\ntimeout: forever\nruns:\n  - scenario: nop\n    strategies: [gcd-globl, thread(1025KiB)]\n    expect: complete\n",
                       error: "bad.yaml:2:10: error: 'forever' is not a valid value for timeout; write a duration from 10ms to 24h, such as 500ms, 60s or 5m\nbad.yaml:4:15: error: unknown scenario 'nop' (did you mean 'noop'?); valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))\nbad.yaml:5:18: error: unknown strategy 'gcd-globl' (did you mean 'gcd-global'?); valid strategies: \(MalformedSuite.strategies)\nbad.yaml:5:29: error: the stack size in 'thread(1025KiB)' is not a whole number of 4KiB pages; did you mean thread(1028KiB)?\nbad.yaml:6:13: error: unknown outcome 'complete' (did you mean 'completed'?); valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
        // An outcome's name is read whatever the scenario and strategies are; with no
        // strategy read, the one `expect:` names is not "not listed" (re-trial 35l).
        MalformedSuite(name: "outcome-after-unknown-scenario", yaml: "name: s\nruns:\n  - scenario: cyclic-grap\n    strategies: [main]\n    expect: completd\n",
                       error: "bad.yaml:3:15: error: unknown scenario 'cyclic-grap' (did you mean 'cyclic-graph'?); valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))\nbad.yaml:5:13: error: unknown outcome 'completd' (did you mean 'completed'?); valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
        MalformedSuite(name: "outcome-after-bad-strategy", yaml: "name: s\nruns:\n  - scenario: noop\n    strategies: [gcd-globl]\n    expect: {gcd-global: completd}\n",
                       error: "bad.yaml:4:18: error: unknown strategy 'gcd-globl' (did you mean 'gcd-global'?); valid strategies: \(MalformedSuite.strategies)\nbad.yaml:5:26: error: unknown outcome 'completd' (did you mean 'completed'?); valid outcomes: \(MalformedSuite.outcomes) (crashed takes a signal: crashed(SIGSEGV))"),
    ]
}

@Suite struct MalformedSuiteTests {
    @Test(arguments: MalformedSuite.all)
    func everyMalformedSuiteIsRefusedWithItsExactErrors(_ suite: MalformedSuite) {
        do {
            _ = try SuiteParser(catalog: .builtIn).parse(suite.yaml, path: "bad.yaml")
            Issue.record("\(suite.name) was accepted")
        } catch {
            #expect(error.description == suite.error)
        }
    }

    @Test func atLeastSixtyMalformedSuitesAreChecked() {
        #expect(MalformedSuite.all.count >= 60)
        #expect(Set(MalformedSuite.all.map(\.name)).count == MalformedSuite.all.count)
    }

    /// Inputs the fuzzers (Tests/Fuzz) found, kept in Tests/Fuzz/regressions/suite:
    /// each must be refused or accepted, never trap or hang (a hang fails at the
    /// test's time limit; how fast a parse is belongs to the benchmarks, not here).
    /// No test's limit is under 10 minutes: a limit counts from when the test is
    /// scheduled, and on 2 cores, while other suites block their threads waiting on
    /// child processes, a test can wait minutes for one (this one, a 0.05 s parse,
    /// failed its old 1-minute limit after 88 s in a CI run beside two busy loops).
    @Test(.timeLimit(.minutes(10))) func everyInputTheFuzzerFoundIsHandledWithoutTrappingOrHanging() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/regressions/suite")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count >= 2)
        for file in files {
            let data = try Data(contentsOf: folder.appendingPathComponent(file))
            // As the harness does: any bytes, repaired to UTF-8.
            let text = String(decoding: data, as: UTF8.self)
            do {
                _ = try SuiteParser(catalog: .builtIn).parse(text, path: file)
            } catch {
                if file.hasPrefix("complex-keys") {
                    // The fix: complex keys are refused before Yams' duplicate-key check,
                    // which ran past a minute on this input.
                    #expect("\(error)".contains("a complex key"), "\(error)")
                }
                continue
            }
            #expect(!file.hasPrefix("complex-keys"), "the complex keys were refused")
        }
    }
}
