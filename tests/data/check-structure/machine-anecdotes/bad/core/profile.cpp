#include "core/profile.h"
/* This VM's disk made one calibration run
   slower; on this machine that is 18%. */
