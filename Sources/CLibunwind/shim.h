// Local unwinding only: the walk runs inside the process that faulted.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
