// Compares only strings that name no plug-in; "lru" == x in a comment is not code, and a string that holds
// the words is not a comparison.
const char* kHelp = "policy == \"lru\"";
bool fast(const char* mode) { return mode == "fast" || "slow" != mode; }
