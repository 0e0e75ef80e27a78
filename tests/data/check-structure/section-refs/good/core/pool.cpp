#include "core/pool.h"

// Rank-based dispatch as in ZipMoE's paper.

// Its tolerance in ranks (§3.4): no document named in this block, so the one this file's comments named last.

/* Another block, BuddyMoE §5.1, and its
   §3.3 on the next line. */
