internal import CStrainTools
import Glibc

extension ProcessSpawn {
    /// Adds glibc's own signals 32 and 33 to a spawn's default set unless strain was started
    /// with them ignored: glibc's posix_spawn ignores them in the child otherwise, an ignore
    /// that survives the exec, where a shell's fork and exec would have left them as they were.
    static func defaultGlibcsOwnSignals(in set: inout sigset_t) {
        strain_default_internal_signals(&set)
    }
}
