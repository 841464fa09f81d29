/* The mcubench.h implementation in a file of its own (the "separate" layout of the parity
 * matrix, firmware/c/build.sh): the region markers, exception handlers and globals. */
#define MCUBENCH_IMPL
#include "mcubench.h"
