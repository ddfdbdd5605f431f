// A release-built event loop whose work blocks on a semaphore, as a team's package
// over an event loop does. `forwarder`: the queued task's closure, and its wait,
// are compiled into the closure's partial-apply forwarder, which the loop's frames
// call. `inlined`: the team's own method is inlined into the loop's frame. Under
// `strain exec --stall` a stall's summary must name LoopPieces, not the idle loop.
import Dispatch
import Glibc

struct ScheduledTask {
    let body: () -> Void
}

final class Counter {
    var woken = 0
}

final class EventLoop {
    private var tasks: [ScheduledTask] = []
    var pieces: LoopPieces?

    @inline(never) func execute(_ task: @escaping () -> Void) { tasks.append(ScheduledTask(body: task)) }

    @inline(never) func runOneLoopTick() {
        if let pieces {
            self.pieces = nil
            pieces.waitForAnswer()
            return
        }
        let due = tasks
        tasks = []
        for task in due { task.body() }
    }

    @inline(never) func run() {
        while !tasks.isEmpty || pieces != nil { runOneLoopTick() }
    }
}

struct LoopPieces {
    let loop: EventLoop
    let done = DispatchSemaphore(value: 0)
    let counter = Counter()

    func scheduleBlockingWait() {
        loop.execute { [done, counter] in
            done.wait()
            counter.woken += 1
        }
    }

    func waitForAnswer() {
        done.wait()
        counter.woken += 1
    }
}

let loop = EventLoop()
let pieces = LoopPieces(loop: loop)
if CommandLine.arguments.dropFirst().first == "inlined" {
    loop.pieces = pieces
} else {
    pieces.scheduleBlockingWait()
}
print("ready \(getpid())")
fflush(stdout)
loop.run()
