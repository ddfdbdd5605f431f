import Glibc

/// getrusage(RUSAGE_SELF), in the units the records use.
package struct ResourceUsage {
    package var userSeconds: Double
    package var systemSeconds: Double
    package var peakRSSBytes: Int
    package var voluntaryContextSwitches: Int
    package var involuntaryContextSwitches: Int

    package static func current() -> ResourceUsage {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return ResourceUsage(usage)
    }

    package init(_ usage: rusage) {
        userSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        systemSeconds = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        peakRSSBytes = usage.ru_maxrss * 1024
        voluntaryContextSwitches = usage.ru_nvcsw
        involuntaryContextSwitches = usage.ru_nivcsw
    }
}
