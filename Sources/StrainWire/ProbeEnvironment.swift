/// The names `strain exec` and the probe it preloads (`CStrainPreload`) agree on:
/// the environment a program under exec starts with. The probe reads them in C
/// (`strain_preload.c`); on the Swift side they are spelled here only.
package enum ProbeEnvironment {
    /// Where the probe library is (`LD_PRELOAD` names it too); also how a user names it elsewhere.
    package static let library = "STRAIN_PROBE_LIBRARY"
    /// The run's probe folder, where the probe writes fault records and dumps.
    package static let folder = "STRAIN_PROBE_DIR"
    /// `strain`'s pid, which the probe answers.
    package static let parent = "STRAIN_PROBE_PARENT"
    /// The profile's pthread stack size for the program's threads, in bytes.
    package static let threadStack = "STRAIN_PROBE_THREAD_STACK"
    /// The profile's main-thread stack size, in bytes.
    package static let mainStack = "STRAIN_PROBE_MAIN_STACK"
    /// `ignore`: the program was started with SIGCHLD ignored, and the probe gives that back before its main.
    package static let childSignal = "STRAIN_PROBE_CHILD_SIGNAL"
    /// `1`: the probe follows the program's execs and children (puts itself back into each one's environment).
    package static let follow = "STRAIN_PROBE_FOLLOW"
    /// The program's pid, which a following probe passes on (set by the probe, never by strain).
    package static let root = "STRAIN_PROBE_ROOT"
    /// The image-name prefixes (`:`-separated) of the runtimes that install handlers of their
    /// own: only a process running one notes its handler installs (`handlers-PID.txt`).
    package static let handlerImages = "STRAIN_PROBE_HANDLER_IMAGES"
}
