// Defined in core/a.cpp, configured by core/gone.h (removed long ago).
#pragma once
int a();
