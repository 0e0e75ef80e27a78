// Decides by a plug-in's name, twice.
bool exact_curve(const char* policy) { return policy == "lru"; }
bool queue_order(const char* policy) {
  return "fifo" != policy;
}
