#include "traces/trace.h"
#include "fx_build_info.h"  // written by core/CMakeLists.txt, so a core/ header
