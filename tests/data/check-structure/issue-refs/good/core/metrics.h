#pragma once
// What a lossy routing policy changed: the tissue 3 of this sentence is not an issue reference.
const char* kMessage = "issue 5 in a string literal is not a comment";
const char* kRaw = R"x(a lone " then // issue 3 inside a raw string)x";
