#pragma once
// Durations measured on a real run, fed back to the simulator.
// On a 2-core machine the two workers and the GPU stream's thread share the cores.
// The benchmark may run 10 times; each run 2 threads.
const char* kTitle = "exec on this machine (measured)";
