#include "core/pool.h"
/* See §5: a bare reference with no document named before it in the file is the architecture document's. */
