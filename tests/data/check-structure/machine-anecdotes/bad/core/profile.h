#pragma once
// A prefill read is slower: on the 2-core VM it took up to 36% longer.
// (bench/results/validate.md, runs 28-43)
// An NVIDIA H100 recovers at 96% of a device copy.
