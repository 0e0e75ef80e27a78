#include "core/a.h"
// #include "core/ghost.h" is a comment, not an include
