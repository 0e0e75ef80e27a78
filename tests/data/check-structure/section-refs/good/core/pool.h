#pragma once

// Where this file sits: docs/architecture.md §2.

// Pools by rank (ZipMoE §3.4 "Pool Dispatching").
// The split tensor of §3.1 (the last document this comment block named is ZipMoE's paper).

// Cumulative-probability routing, Mixture of Cache-Conditional Experts, §3.2.

// Frame header (RFC 8878 §3.1.1).

// The layout rule (docs/architecture.md §1, §3), as the folder table spells it
// (docs/architecture.md
// §2).

const char* kHelp = "ARCHITECTURE.md §9 in a string is not a comment";
const char* kRaw = R"x(// ARCHITECTURE.md §9 in a raw string)x";
int kBig = 1'000'000;  // a digit separator is not a character literal: docs/architecture.md §3
